"""A NumPy emulator of lowered CUDA kernels that use the ``T.cuda`` tensor-core intrinsics.

It executes the *lowered TIR* (the same ``PrimFunc`` the CUDA printer prints) for one thread
block at a time, SIMT style: every expression is evaluated for all threads of the block at once
(NumPy arrays indexed by ``threadIdx.x``); control flow must be uniform. The warp-level
instructions are modelled from NVIDIA's PTX ISA text, independently of the code generator:

* ``ldmatrix.m8n8.x{1,2,4}[.trans].b16``: lanes ``8j..8j+7`` give the row addresses of matrix
  ``j``; lane ``l`` receives, in register ``j``, row ``l // 4``, columns ``2*(l % 4)``, ``+1``
  (transposed with ``.trans``); the lower column is the low half.
* ``mma.m16n8k16.row.col.f32.f16.f16.f32``: with ``g = l // 4``, ``t = l % 4``: A element
  ``a_i`` sits at row ``g`` (i < 2 or 4 <= i < 6) else ``g + 8``, column ``2t + (i & 1)`` (+8 for
  i >= 4); B element ``b_i`` at row (k) ``2t + (i & 1)`` (+8 for i >= 2), column ``g``; C/D
  element ``c_i`` at row ``g`` (+8 for i >= 2), column ``2t + (i & 1)``.
* ``cp.async``: copies are queued per commit group and land at ``cp.async.wait_group``; a
  barrier makes them visible to other threads.
* ``wgmma.mma_async.m64nNk16.f32.f16.f16`` (per warpgroup of 128 threads): A and B are read
  through the no-swizzle canonical layouts of 8x8 core matrices (PTX ISA, "Shared Memory Matrix
  Layout": K-major ``(m, k)`` at ``(m % 8) * 8 + k % 8`` elements plus ``m // 8`` stride-byte
  and ``k // 8`` leading-byte offsets; MN-major B ``(k, n)`` at ``(k % 8) * 8 + n % 8`` plus
  ``n // 8`` stride-byte and ``k // 8`` leading-byte offsets); warp ``w`` of the group holds
  rows ``16w..16w+15`` of D as the m16n8 C fragment, repeated every 8 columns. Products are
  async: a group of them is pending from its commit to the ``wgmma.wait_group`` that retires
  it, and its tiles and accumulators must not be touched meanwhile. Shared data they read must
  have been fenced for the async proxy (``fence.proxy.async``) after it landed, and accumulators
  written by other instructions need a ``wgmma.fence`` first.

Besides the arithmetic it checks what the hardware would not report: shared reads of data that
has not landed or not been published by a barrier, shared writes (cp.async) to addresses read
since the last barrier (write-after-read race), misaligned cp.async/ldmatrix addresses, and
``ldmatrix`` phases whose 8 row addresses hit the same bank group (conflicts); for wgmma, the
ordering rules above.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tvm.tir import expr as E
from tvm.tir import stmt as S

LANE = np.arange(32)
G, TQ = LANE // 4, LANE % 4


class EmulationError(AssertionError):
    pass


# ---------------------------------------------------------------------------- PTX models
def pack_f16x2(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    lo16 = np.asarray(lo, np.float16).view(np.uint16).astype(np.uint32)
    hi16 = np.asarray(hi, np.float16).view(np.uint16).astype(np.uint32)
    return lo16 | (hi16 << np.uint32(16))


def unpack_f16x2(r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r = np.asarray(r, np.uint32)
    lo = (r & np.uint32(0xFFFF)).astype(np.uint16).view(np.float16)
    hi = (r >> np.uint32(16)).astype(np.uint16).view(np.float16)
    return lo, hi


def ldmatrix_model(rows: np.ndarray, trans: bool) -> np.ndarray:
    """rows: (num, 8, 8) float16, matrix j's row r as given by lane 8j+r -> (32, num) uint32."""
    num = rows.shape[0]
    out = np.zeros((32, num), np.uint32)
    for j in range(num):
        m = rows[j].T if trans else rows[j]
        out[:, j] = pack_f16x2(m[G, 2 * TQ], m[G, 2 * TQ + 1])
    return out


def a_fragment_coords(i: int) -> tuple[np.ndarray, np.ndarray]:
    row = G if (i < 2 or 4 <= i < 6) else G + 8
    col = 2 * TQ + (i & 1) + (8 if i >= 4 else 0)
    return row, col


def b_fragment_coords(i: int) -> tuple[np.ndarray, np.ndarray]:
    return 2 * TQ + (i & 1) + (8 if i >= 2 else 0), G


def c_fragment_coords(i: int) -> tuple[np.ndarray, np.ndarray]:
    return G + (8 if i >= 2 else 0), 2 * TQ + (i & 1)


def mma_model(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a: (32, 4) uint32, b: (32, 2) uint32, c: (32, 4) float32 -> d: (32, 4) float32."""
    A = np.full((16, 16), np.nan, np.float32)
    B = np.full((16, 8), np.nan, np.float32)
    C = np.full((16, 8), np.nan, np.float32)
    for i in range(8):
        r, col = a_fragment_coords(i)
        A[r, col] = unpack_f16x2(a[:, i // 2])[i % 2]
    for i in range(4):
        r, col = b_fragment_coords(i)
        B[r, col] = unpack_f16x2(b[:, i // 2])[i % 2]
        r, col = c_fragment_coords(i)
        C[r, col] = c[:, i]
    D = A.astype(np.float64) @ B.astype(np.float64) + C
    d = np.zeros((32, 4), np.float32)
    for i in range(4):
        r, col = c_fragment_coords(i)
        d[:, i] = D[r, col]
    return d


# ---------------------------------------------------------------------------- interpreter
class _Mem:
    def __init__(self, buf: E.Buffer, data: np.ndarray, threads: int = 0):
        self.buf, self.data, self.threads = buf, data, threads


class BlockEmulator:
    """Runs one lowered kernel (``PrimFunc`` from ``tvm.tir.transform.lower``) block by block."""

    def __init__(self, kernel: Any, args: dict[str, np.ndarray]):
        self.kernel = kernel
        self.globals: dict[Any, _Mem] = {}
        for p in kernel.params:
            buf = kernel.buffer_map.get(p)
            if buf is not None:
                self.globals[buf.data] = _Mem(buf, args[buf.name].reshape(-1))
        self.stats = {"mma": 0, "ldmatrix": 0, "cp_async": 0, "bank_conflicts": 0, "barriers": 0}

    # -- running
    def run_grid(self) -> None:
        self._grid_loops(self.kernel.body, {})

    def _grid_loops(self, s: S.Stmt, env: dict) -> None:
        if isinstance(s, S.For) and s.kind is S.ForKind.THREAD_BINDING and s.thread_tag.startswith("blockIdx"):
            for b in range(self._int(s.extent, env)):
                self._grid_loops(s.body, {**env, s.loop_var: b})
            return
        self.run_block(s, env)

    def run_block(self, s: S.Stmt, env: dict) -> None:
        self.mem: dict[Any, _Mem] = dict(self.globals)
        self.groups: list[list] = []
        self.current: list = []
        self.unsynced: set = set()  # (data var, index) landed but not yet published by a barrier
        self.read_since_barrier: set = set()
        self.pending: set = set()  # (data var, index) of copies issued, not yet landed
        self.unfenced: set = set()  # landed copies not yet fenced for the async proxy
        self.wgmma_current: list = []  # (shared reads, accumulator var) issued since the last commit
        self.wgmma_groups: list[list] = []  # committed, not yet retired
        self.acc_touched: set = set()  # local buffers written by plain stores since a wgmma.fence
        self.T = None
        self.env = dict(env)
        self.stmt(s)
        if self.pending:
            raise EmulationError(f"block ended with {len(self.pending)} cp.async elements never waited for")
        if self.wgmma_groups or self.wgmma_current:
            raise EmulationError("block ended with wgmma products never waited for")

    def _int(self, e: E.PrimExpr, env: dict | None = None) -> int:
        if env is not None:
            saved, self.env = getattr(self, "env", {}), env
            try:
                v = self.expr(e)
            finally:
                self.env = saved
        else:
            v = self.expr(e)
        v = np.asarray(v)
        if v.ndim and not np.all(v == v.flat[0]):
            raise EmulationError(f"non-uniform value where a uniform one is needed: {e!r}")
        return int(v.flat[0]) if v.ndim else int(v)

    # -- statements
    def stmt(self, s: S.Stmt) -> None:
        getattr(self, "s_" + type(s).__name__)(s)

    def s_SeqStmt(self, s: S.SeqStmt) -> None:
        for x in s.seq:
            self.stmt(x)

    def s_For(self, s: S.For) -> None:
        if s.kind is S.ForKind.THREAD_BINDING:
            if s.thread_tag != "threadIdx.x":
                raise EmulationError(f"emulator handles threadIdx.x only, got {s.thread_tag}")
            self.T = self._int(s.extent)
            self.env[s.loop_var] = np.arange(self.T)
            self.stmt(s.body)
            return
        lo, n = self._int(s.min), self._int(s.extent)
        for i in range(lo, lo + n):
            self.env[s.loop_var] = i
            self.stmt(s.body)

    def s_LetStmt(self, s: S.LetStmt) -> None:
        self.env[s.var] = self.expr(s.value)
        self.stmt(s.body)

    def s_IfThenElse(self, s: S.IfThenElse) -> None:
        c = np.asarray(self.expr(s.condition))
        if c.ndim and not np.all(c == c.flat[0]):
            raise EmulationError("divergent if in a tensor-core kernel")
        if bool(c.flat[0] if c.ndim else c):
            self.stmt(s.then_case)
        elif s.else_case is not None:
            self.stmt(s.else_case)

    def s_Allocate(self, s: S.Allocate) -> None:
        buf = s.buffer
        size = int(np.prod([int(d.value) for d in buf.shape]))
        dt = np.dtype(buf.dtype)
        if buf.scope == "local":
            self.mem[buf.data] = _Mem(buf, np.full((self.T, size), np.nan if dt.kind == "f" else 0, dt), self.T)
        else:
            self.mem[buf.data] = _Mem(buf, np.full(size, np.nan if dt.kind == "f" else 0, dt))
        self.stmt(s.body)

    def s_Evaluate(self, s: S.Evaluate) -> None:
        self.expr(s.value)

    def s_BufferStore(self, s: S.BufferStore) -> None:
        m = self.mem[s.buffer.data]
        self._check_not_in_flight(s.buffer.data, "written")
        if m.threads:
            self.acc_touched.add(s.buffer.data)
        idx = self._bcast(self.expr(s.indices[0]))
        val = self._bcast(self.expr(s.value)).astype(m.data.dtype)
        if m.threads:
            m.data[np.arange(self.T), idx] = val
        else:
            if len(np.unique(idx)) != len(idx):
                raise EmulationError(f"several threads store to one element of {s.buffer.name}")
            m.data[idx] = val
            if m.buf.scope == "global":
                self.stores = getattr(self, "stores", {})
                cnt = self.stores.setdefault(s.buffer.name, np.zeros(m.data.shape, np.int32))
                np.add.at(cnt, idx, 1)

    def _bcast(self, v: Any) -> np.ndarray:
        return np.broadcast_to(np.asarray(v), (self.T,)).copy()

    # -- expressions
    def expr(self, e: E.PrimExpr) -> Any:
        if isinstance(e, E.IntImm):
            return int(e.value)
        if isinstance(e, E.FloatImm):
            return np.float32(e.value) if e.dtype == "float32" else np.float64(e.value)
        if isinstance(e, E.Var):
            return self.env[e]
        if isinstance(e, E.Cast):
            return np.asarray(self.expr(e.value)).astype(np.dtype(e.dtype))
        if isinstance(e, E.BufferLoad):
            m = self.mem[e.buffer.data]
            self._check_not_in_flight(e.buffer.data, "read")
            idx = self.expr(e.indices[0])
            return m.data[np.arange(self.T), self._bcast(idx)] if m.threads else m.data[idx]
        if isinstance(e, E.Call):
            return getattr(self, "c_" + e.op.replace(".", "_"))(e)
        if isinstance(e, E.BinaryOp):
            a, b = self.expr(e.a), self.expr(e.b)
            ops = {
                "Add": np.add,
                "Sub": np.subtract,
                "Mul": np.multiply,
                "FloorDiv": np.floor_divide,
                "FloorMod": np.mod,
                "LT": np.less,
                "LE": np.less_equal,
                "GT": np.greater,
                "GE": np.greater_equal,
                "EQ": np.equal,
                "NE": np.not_equal,
                "And": np.logical_and,
                "Or": np.logical_or,
                "Min": np.minimum,
                "Max": np.maximum,
            }
            name = type(e).__name__
            if name in ("Div", "Mod") and "int" in e.dtype:
                a, b = np.asarray(a), np.asarray(b)
                if np.any(a < 0) or np.any(np.asarray(b) < 0):
                    raise EmulationError("truncating division of negative values")
                return a // b if name == "Div" else a % b
            return ops[name](a, b)
        raise EmulationError(f"emulator cannot evaluate {type(e).__name__}")

    # -- intrinsics
    def _addr(self, load: E.BufferLoad) -> tuple[_Mem, np.ndarray]:
        return self.mem[load.buffer.data], self._bcast(self.expr(load.indices[0]))

    def c_tvm_storage_sync(self, call: E.Call) -> None:
        self.stats["barriers"] += 1
        self.unsynced.clear()
        self.read_since_barrier.clear()

    def c_cuda_cp_async(self, call: E.Call) -> None:
        (dm, di), (sm, si) = self._addr(call.args[0]), self._addr(call.args[1])
        nbytes = int(call.args[2].value)
        esz = dm.data.dtype.itemsize
        n = nbytes // esz
        for what, idx in (("shared", di), ("global", si)):
            if np.any(idx * esz % nbytes):
                raise EmulationError(f"cp.async {what} address not {nbytes}-byte aligned")
        in_flight = self._wgmma_reads()
        for t in range(self.T):
            for k in range(n):
                key = (dm.buf.data, int(di[t]) + k)
                if key in self.read_since_barrier:
                    raise EmulationError("cp.async overwrites shared data read since the last barrier (WAR race)")
                if key in in_flight:
                    raise EmulationError("cp.async overwrites shared data a pending wgmma group reads (race)")
        self.current.append((dm, di, sm, si, n))
        self.pending.update((dm.buf.data, int(x) + k) for x in di for k in range(n))
        self.stats["cp_async"] += 1

    def c_cuda_cp_async_commit(self, call: E.Call) -> None:
        self.groups.append(self.current)
        self.current = []

    def c_cuda_cp_async_wait(self, call: E.Call) -> None:
        keep = int(call.args[0].value)
        while len(self.groups) > keep:
            for dm, di, sm, si, n in self.groups.pop(0):
                for k in range(n):
                    dm.data[di + k] = sm.data[si + k]
                    keys = [(dm.buf.data, int(x)) for x in di + k]
                    self.unsynced.update(keys)
                    self.unfenced.update(keys)
                    self.pending.difference_update(keys)

    def _pending(self, data: Any, addrs: np.ndarray) -> bool:
        return any((data, int(a)) in self.pending for a in addrs)

    def _uniform(self, idx: np.ndarray, group: int, what: str, size: int = 32) -> int:
        """The value every thread of ``group`` (a warp, or with ``size`` 128 a warpgroup) gives."""
        seg = idx[size * group : size * group + size]
        if not np.all(seg == seg[0]):
            unit = "warp" if size == 32 else "warpgroup"
            raise EmulationError(f"{what}: an operand differs between the threads of {unit} {group}")
        return int(seg[0])

    def c_cuda_ldmatrix(self, call: E.Call) -> None:
        (dm, di), (sm, si) = self._addr(call.args[0]), self._addr(call.args[1])
        num, trans = int(call.args[2].value), bool(call.args[3].value)
        esz = sm.data.dtype.itemsize
        for w in range(self.T // 32):
            base = self._uniform(di, w, "ldmatrix")
            lanes = si[32 * w : 32 * w + 32]
            rows = np.zeros((num, 8, 8), np.float16)
            for j in range(num):
                addrs = lanes[8 * j : 8 * j + 8]
                if np.any(addrs * esz % 16):
                    raise EmulationError("ldmatrix row address not 16-byte aligned")
                if len(set(int(a) * esz // 16 % 8 for a in addrs)) != 8:
                    self.stats["bank_conflicts"] += 1
                span = (addrs[:, None] + np.arange(8)[None, :]).reshape(-1)
                if any((sm.buf.data, int(a)) in self.unsynced for a in span):
                    raise EmulationError("ldmatrix reads cp.async data before a barrier published it")
                if self._pending(sm.buf.data, span):
                    raise EmulationError("ldmatrix reads shared data whose cp.async has not been waited for")
                self.read_since_barrier.update((sm.buf.data, int(a)) for a in span)
                rows[j] = sm.data[span].reshape(8, 8)
            regs = ldmatrix_model(rows, trans)
            dm.data[32 * w : 32 * w + 32, base : base + num] = regs
            self.stats["ldmatrix"] += 1

    def c_cuda_mma_m16n8k16_f16f32(self, call: E.Call) -> None:
        (dm, di), (am, ai), (bm, bi), (cm, ci) = (self._addr(a) for a in call.args)
        for w in range(self.T // 32):
            sl = slice(32 * w, 32 * w + 32)
            d0, a0, b0, c0 = (self._uniform(x, w, "mma") for x in (di, ai, bi, ci))
            d = mma_model(am.data[sl, a0 : a0 + 4], bm.data[sl, b0 : b0 + 2], cm.data[sl, c0 : c0 + 4])
            if np.isnan(d).any():
                raise EmulationError("mma consumed uninitialised (NaN) data")
            dm.data[sl, d0 : d0 + 4] = d
            self.stats["mma"] += 1

    # -- warpgroup products (wgmma)
    def _wgmma_reads(self) -> set:
        return {key for group in self.wgmma_groups + [self.wgmma_current] for reads, _ in group for key in reads}

    def _check_not_in_flight(self, data: Any, what: str) -> None:
        if any(acc is data for group in self.wgmma_groups + [self.wgmma_current] for _, acc in group):
            raise EmulationError(f"accumulators {what} while a wgmma group writing them is pending (no wait)")

    def c_cuda_fence_proxy_async(self, call: E.Call) -> None:
        self.unfenced.clear()

    def c_cuda_wgmma_fence(self, call: E.Call) -> None:
        self.acc_touched.discard(call.args[0].buffer.data)

    def c_cuda_wgmma_commit(self, call: E.Call) -> None:
        self.wgmma_groups.append(self.wgmma_current)
        self.wgmma_current = []

    def c_cuda_wgmma_wait(self, call: E.Call) -> None:
        keep = int(call.args[0].value)
        while len(self.wgmma_groups) > keep:
            for reads, _ in self.wgmma_groups.pop(0):
                self.read_since_barrier.update(reads)

    def _core_layout(self, m: _Mem, base: int, rows: int, cols: int, lbo: int, sbo: int, k_major: bool) -> tuple:
        """(rows x cols) elements of a no-swizzle tile at ``base``: rows are M or N, cols are K
        when ``k_major``, else rows are K and cols N (MN-major). Returns the values and indices."""
        esz = m.data.dtype.itemsize
        if base * esz % 16:
            raise EmulationError("wgmma operand not 16-byte aligned")
        r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
        mn, k = (r, c) if k_major else (c, r)
        inner = (mn % 8) * 8 + k % 8 if k_major else (k % 8) * 8 + mn % 8
        idx = base + inner + (mn // 8) * (sbo // esz) + (k // 8) * (lbo // esz)
        return m.data[idx], idx

    def c_cuda_wgmma_m64k16_f16f32(self, call: E.Call) -> None:
        (dm, di), (am, ai), (bm, bi) = self._addr(call.args[0]), self._addr(call.args[1]), self._addr(call.args[4])
        a_lbo, a_sbo, b_lbo, b_sbo, n, mn_major = (int(call.args[i].value) for i in (2, 3, 5, 6, 7, 8))
        if dm.buf.data in self.acc_touched:
            raise EmulationError("wgmma accumulators written by other instructions since the last wgmma.fence")
        if self.T % 128:
            raise EmulationError("wgmma needs whole warpgroups of 128 threads")
        for g in range(self.T // 128):
            sl = slice(128 * g, 128 * g + 128)
            d0, a0, b0 = (self._uniform(x, g, "wgmma", 128) for x in (di, ai, bi))
            A, a_idx = self._core_layout(am, a0, 64, 16, a_lbo, a_sbo, True)
            if mn_major:
                B, b_idx = self._core_layout(bm, b0, 16, n, b_lbo, b_sbo, False)
            else:
                Bt, b_idx = self._core_layout(bm, b0, n, 16, b_lbo, b_sbo, True)
                B = Bt.T
            reads = {(am.buf.data, int(x)) for x in a_idx.reshape(-1)} | {
                (bm.buf.data, int(x)) for x in b_idx.reshape(-1)
            }
            if any(key in self.pending for key in reads):
                raise EmulationError("wgmma reads shared data whose cp.async has not been waited for")
            if reads & self.unsynced:
                raise EmulationError("wgmma reads cp.async data before a barrier published it")
            if reads & self.unfenced:
                raise EmulationError("wgmma reads cp.async data not fenced for the async proxy (fence.proxy.async)")
            D = A.astype(np.float64) @ B.astype(np.float64)
            if np.isnan(D).any():
                raise EmulationError("wgmma consumed uninitialised (NaN) data")
            lane = np.arange(128)
            for j in range(n // 8):
                for i in range(4):
                    row = lane // 32 * 16 + lane % 32 // 4 + i // 2 * 8
                    col = j * 8 + lane % 4 * 2 + i % 2
                    dm.data[sl, d0 + 4 * j + i] += D[row, col].astype(np.float32)
            self.wgmma_current.append((reads, dm.buf.data))
            self.stats["wgmma"] = self.stats.get("wgmma", 0) + 1

    def _int2(self, call: E.Call) -> tuple:
        return tuple(np.asarray(self.expr(a), np.int64) for a in call.args)

    def c_bitwise_xor(self, call: E.Call) -> Any:
        a, b = self._int2(call)
        return a ^ b

    def c_bitwise_and(self, call: E.Call) -> Any:
        a, b = self._int2(call)
        return a & b

    def c_bitwise_or(self, call: E.Call) -> Any:
        a, b = self._int2(call)
        return a | b

    def c_shift_right(self, call: E.Call) -> Any:
        a, b = self._int2(call)
        return a >> b

    def c_shift_left(self, call: E.Call) -> Any:
        a, b = self._int2(call)
        return a << b


def emulate(kernel: Any, args: dict[str, np.ndarray]) -> BlockEmulator:
    """Run ``kernel`` over its whole grid on ``args`` (buffer name -> array, modified in place)."""
    emu = BlockEmulator(kernel, args)
    emu.run_grid()
    return emu
