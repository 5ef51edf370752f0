"""Device kernels written directly in TIR, in the shape ``tvm.tir.transform.lower`` gives them
(handle params + flattened 1-D buffers, thread-bound loops, ``launch_params``), with NumPy
references and launch extents. Shared by the CPU tests (codegen + NVRTC) and the GPU tests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from tvm import tir
from tvm.tir import (
    Allocate,
    Buffer,
    BufferStore,
    Call,
    Cast,
    Evaluate,
    FloatImm,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    PrimFunc,
    Select,
    StringImm,
    Var,
    seq,
)

from tvm_backend_cuda import script as cuda
from tvm.testing.kernels import reference_softmax


def i32(v: int) -> IntImm:
    return IntImm("int32", v)


def thread(var: Var, extent: Any, tag: str, body: Any) -> For:
    ext = i32(extent) if isinstance(extent, int) else extent
    return For(var, i32(0), ext, ForKind.THREAD_BINDING, body, thread_tag=tag)


def serial(var: Var, extent: Any, body: Any, kind: ForKind = ForKind.SERIAL) -> For:
    ext = i32(extent) if isinstance(extent, int) else extent
    return For(var, i32(0), ext, kind, body)


def sync() -> Evaluate:
    return Evaluate(Call("void", "tvm_storage_sync", (StringImm("shared"),)))


def buf(name: str, dtype: str, shape: tuple = None, scope: str = "global") -> tuple[Var, Buffer]:
    data = Var(name, "handle")
    n = Var(name + "_n", "int32")
    return data, Buffer(name, shape or (n,), dtype, data, scope=scope)


def kernel(name: str, params: list, buffers: dict, body: Any, launch: list[str]) -> PrimFunc:
    return PrimFunc(params, body, buffers, {"global_symbol": name, "launch_params": launch}, name=name)


@dataclass
class Case:
    """A kernel, how to make its inputs, its reference and its launch extents."""

    func: PrimFunc
    make_args: Callable[[np.random.Generator], list[np.ndarray]]
    scalars: list[Any]
    launch: list[int]
    reference: Callable[[list[np.ndarray]], np.ndarray]
    out_index: int
    rtol: float = 1e-5

    def run(self, mod: Any, dev: Any, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Launch the kernel of ``mod`` on ``dev`` with fresh inputs: (result, NumPy reference)."""
        from tvm.runtime import tensor

        host = self.make_args(np.random.default_rng(seed))
        tensors = [tensor(a, dev) for a in host]
        mod[self.func.global_symbol](*tensors, *self.scalars, *self.launch)
        dev.sync()
        return tensors[self.out_index].numpy(), self.reference(host)


def _np(dtype: str):
    from tvm.runtime import numpy_dtype

    return numpy_dtype(dtype)


def vadd(dtype: str = "float32", n: int = 1000) -> Case:
    """C = A + B, one thread per element."""
    (a, A), (b, B), (c, C) = buf("A", dtype), buf("B", dtype), buf("C", dtype)
    nv = Var("n", "int32")
    bx, tx = Var("bx"), Var("tx")
    i = bx * 256 + tx
    body = thread(
        bx,
        (nv + 255) // 256,
        "blockIdx.x",
        thread(tx, 256, "threadIdx.x", IfThenElse(i < nv, BufferStore(C, A[i] + B[i], (i,)))),
    )
    f = kernel(f"vadd_{dtype}", [a, b, c, nv], {a: A, b: B, c: C}, body, ["blockIdx.x", "threadIdx.x"])
    nd = _np(dtype)
    return Case(
        f,
        lambda r: [r.standard_normal(n).astype(nd), r.standard_normal(n).astype(nd), np.zeros(n, nd)],
        [n],
        [(n + 255) // 256, 256],
        lambda xs: (xs[0].astype("float32") + xs[1].astype("float32")).astype(nd),
        2,
        {"float32": 1e-5, "float16": 1e-2}.get(dtype, 2e-2),
    )


def row_sum(m: int = 37, n: int = 1000) -> Case:
    """B[r] = sum(A[r, :]): 256 threads per row, warp_sum, shared memory, then shfl_down."""
    (a, A), (b, B) = buf("A", "float32"), buf("B", "float32")
    nv = Var("n", "int32")
    bx, tx, k = Var("bx"), Var("tx"), Var("k")
    acc = Buffer("acc", (1,), "float32", scope="local")
    red = Buffer("red", (8,), "float32", scope="shared")
    j = k * 256 + tx
    zero = FloatImm("float32", 0.0)
    first_warp = seq(
        BufferStore(acc, Select(tx < 8, red[tx], zero), (i32(0),)),
        *[BufferStore(acc, acc[0] + cuda.shfl_down(acc[0], d), (i32(0),)) for d in (4, 2, 1)],
        IfThenElse(tx.equal(0), BufferStore(B, acc[0], (bx,))),
    )
    inner = seq(
        BufferStore(acc, zero, (i32(0),)),
        serial(k, (nv + 255) // 256, IfThenElse(j < nv, BufferStore(acc, acc[0] + A[bx * nv + j], (i32(0),)))),
        BufferStore(acc, cuda.warp_sum(acc[0]), (i32(0),)),
        IfThenElse((tx % 32).equal(0), BufferStore(red, acc[0], (tx // 32,))),
        sync(),
        IfThenElse(tx < 32, first_warp),
    )
    body = thread(bx, m, "blockIdx.x", thread(tx, 256, "threadIdx.x", Allocate(acc, Allocate(red, inner))))
    f = kernel("row_sum", [a, b, nv], {a: A, b: B}, body, ["blockIdx.x", "threadIdx.x"])
    return Case(
        f,
        lambda r: [r.standard_normal((m, n)).astype("float32"), np.zeros(m, "float32")],
        [n],
        [m, 256],
        lambda xs: xs[0].sum(axis=1),
        1,
        1e-4,
    )


def matmul(dtype: str = "float32", M: int = 100, N: int = 70, K: int = 90, tile: int = 16) -> Case:
    """C = A @ B with 16x16 shared-memory tiles and float32 accumulation."""
    (a, A), (b, B), (c, C) = buf("A", dtype), buf("B", dtype), buf("C", dtype)
    Mv, Nv, Kv = Var("M", "int32"), Var("N", "int32"), Var("K", "int32")
    by, bx, ty, tx, kt, kk = Var("by"), Var("bx"), Var("ty"), Var("tx"), Var("kt"), Var("kk")
    As = Buffer("As", (tile * tile,), dtype, scope="shared")
    Bs = Buffer("Bs", (tile * tile,), dtype, scope="shared")
    acc = Buffer("acc", (1,), "float32", scope="local")
    row, col = by * tile + ty, bx * tile + tx
    ka, kb = kt * tile + tx, kt * tile + ty
    zero = FloatImm(dtype, 0.0)
    load = seq(
        BufferStore(As, Select((row < Mv) & (ka < Kv), A[row * Kv + ka], zero), (ty * tile + tx,)),
        BufferStore(Bs, Select((kb < Kv) & (col < Nv), B[kb * Nv + col], zero), (ty * tile + tx,)),
        sync(),
        serial(
            kk,
            tile,
            BufferStore(
                acc, acc[0] + Cast("float32", As[ty * tile + kk]) * Cast("float32", Bs[kk * tile + tx]), (i32(0),)
            ),
            ForKind.UNROLLED,
        ),
        sync(),
    )
    inner = seq(
        BufferStore(acc, FloatImm("float32", 0.0), (i32(0),)),
        serial(kt, (Kv + tile - 1) // tile, load),
        IfThenElse(
            (row < Mv) & (col < Nv),
            BufferStore(C, Cast(dtype, acc[0]) if dtype != "float32" else acc[0], (row * Nv + col,)),
        ),
    )
    body = thread(
        by,
        (Mv + tile - 1) // tile,
        "blockIdx.y",
        thread(
            bx,
            (Nv + tile - 1) // tile,
            "blockIdx.x",
            thread(
                ty,
                tile,
                "threadIdx.y",
                thread(tx, tile, "threadIdx.x", Allocate(As, Allocate(Bs, Allocate(acc, inner)))),
            ),
        ),
    )
    f = kernel(
        f"matmul_{dtype}",
        [a, b, c, Mv, Nv, Kv],
        {a: A, b: B, c: C},
        body,
        ["blockIdx.y", "blockIdx.x", "threadIdx.y", "threadIdx.x"],
    )
    return Case(
        f,
        lambda r: [
            r.standard_normal((M, K)).astype(dtype),
            r.standard_normal((K, N)).astype(dtype),
            np.zeros((M, N), dtype),
        ],
        [M, N, K],
        [(M + tile - 1) // tile, (N + tile - 1) // tile, tile, tile],
        lambda xs: (xs[0].astype("float32") @ xs[1].astype("float32")).astype(dtype),
        2,
        1e-4 if dtype == "float32" else 2e-2,
    )


def gelu_f16(n: int = 4096) -> Case:
    """float16 in/out, float math: y = x * sigmoid(1.702 x) * scale (scalar float16 param)."""
    (x, X), (y, Y) = buf("X", "float16"), buf("Y", "float16")
    nv, scale = Var("n", "int32"), Var("scale", "float16")
    bx, tx = Var("bx"), Var("tx")
    i = bx * 128 + tx
    v = X[i]
    val = v * Call("float16", "sigmoid", (v * FloatImm("float16", 1.702),)) * scale
    body = thread(
        bx,
        (nv + 127) // 128,
        "blockIdx.x",
        thread(tx, 128, "threadIdx.x", IfThenElse(i < nv, BufferStore(Y, val, (i,)))),
    )
    f = kernel("gelu_f16", [x, y, nv, scale], {x: X, y: Y}, body, ["blockIdx.x", "threadIdx.x"])

    def ref(xs):
        v = xs[0].astype("float32")
        return (v / (1 + np.exp(-1.702 * v)) * 0.5).astype("float16")

    return Case(
        f,
        lambda r: [r.standard_normal(n).astype("float16"), np.zeros(n, "float16")],
        [n, 0.5],
        [(n + 127) // 128, 128],
        ref,
        1,
        1e-2,
    )


def softmax(m: int = 19, n: int = 1000, threads: int = 256) -> Case:
    """Row softmax: one block per row; max and sum by warp reductions + shared memory."""
    (a, A), (b, B) = buf("A", "float32"), buf("B", "float32")
    nv = Var("n", "int32")
    bx, tx, k = Var("bx"), Var("tx"), Var("k")
    nwarps = threads // 32
    acc = Buffer("acc", (1,), "float32", scope="local")
    red = Buffer("red", (nwarps,), "float32", scope="shared")
    stat = Buffer("stat", (2,), "float32", scope="shared")
    j = k * threads + tx
    row = bx * nv
    steps = (nv + threads - 1) // threads
    neg_inf = FloatImm("float32", float("-inf"))
    zero = FloatImm("float32", 0.0)

    def block_reduce(kind: str, slot: int, identity: FloatImm) -> Any:
        warp = cuda.warp_max if kind == "max" else cuda.warp_sum
        return seq(
            BufferStore(acc, warp(acc[0]), (i32(0),)),
            IfThenElse((tx % 32).equal(0), BufferStore(red, acc[0], (tx // 32,))),
            sync(),
            IfThenElse(
                tx < 32,
                seq(
                    BufferStore(acc, Select(tx < nwarps, red[tx], identity), (i32(0),)),
                    BufferStore(acc, warp(acc[0]), (i32(0),)),
                    IfThenElse(tx.equal(0), BufferStore(stat, acc[0], (i32(slot),))),
                ),
            ),
            sync(),
        )

    inner = seq(
        BufferStore(acc, neg_inf, (i32(0),)),
        serial(k, steps, IfThenElse(j < nv, BufferStore(acc, tir.Max(acc[0], A[row + j]), (i32(0),)))),
        block_reduce("max", 0, neg_inf),
        BufferStore(acc, zero, (i32(0),)),
        serial(
            k,
            steps,
            IfThenElse(j < nv, BufferStore(acc, acc[0] + Call("float32", "exp", (A[row + j] - stat[0],)), (i32(0),))),
        ),
        block_reduce("sum", 1, zero),
        serial(
            k,
            steps,
            IfThenElse(j < nv, BufferStore(B, Call("float32", "exp", (A[row + j] - stat[0],)) / stat[1], (row + j,))),
        ),
    )
    body = thread(
        bx, m, "blockIdx.x", thread(tx, threads, "threadIdx.x", Allocate(acc, Allocate(red, Allocate(stat, inner))))
    )
    f = kernel("softmax", [a, b, nv], {a: A, b: B}, body, ["blockIdx.x", "threadIdx.x"])

    def ref(xs):
        return reference_softmax(xs[0])

    return Case(
        f,
        lambda r: [r.standard_normal((m, n)).astype("float32"), np.zeros((m, n), "float32")],
        [n],
        [m, threads],
        ref,
        1,
        1e-5,
    )


def empty_kernel() -> PrimFunc:
    """A kernel that does nothing (launch-overhead benchmarks)."""
    ((x, X),) = [buf("X", "float32")]
    tx = Var("tx")
    body = thread(tx, 32, "threadIdx.x", IfThenElse(tx < 0, BufferStore(X, FloatImm("float32", 0.0), (tx,))))
    return kernel("empty", [x], {x: X}, body, ["threadIdx.x"])


def warp_ops(n_warps: int = 4) -> Case:
    """Every T.cuda intrinsic in one kernel: per warp, out = [ballot(lane odd), activemask,
    lane 0's value (shfl_sync), shfl_up(1) at lane 31, warp_min, warp_max, warp_sum]."""
    (x, X), (o, O) = buf("X", "float32"), buf("O", "float32")
    bx, tx = Var("bx"), Var("tx")
    v = X[bx * 32 + tx]
    base = bx * 8
    lane = cuda.lane_id()
    t = Buffer("t", (3,), "float32", scope="local")
    # every lane takes part in each warp-wide operation; only the stores are conditional
    inner = seq(
        Evaluate(cuda.syncwarp()),
        BufferStore(t, Cast("float32", cuda.ballot((tx % 2).equal(1))), (i32(0),)),
        BufferStore(t, Cast("float32", cuda.activemask()), (i32(1),)),
        BufferStore(t, cuda.shfl_up(v, 1), (i32(2),)),
        IfThenElse(lane.equal(0), seq(BufferStore(O, t[0], (base,)), BufferStore(O, t[1], (base + 1,)))),
        BufferStore(O, cuda.shfl_sync(v, 0), (base + 2,)),
        IfThenElse(tx.equal(31), BufferStore(O, t[2], (base + 3,))),
        BufferStore(O, cuda.warp_min(v), (base + 4,)),
        BufferStore(O, cuda.warp_max(v), (base + 5,)),
        BufferStore(O, cuda.warp_sum(v), (base + 6,)),
    )
    body = thread(bx, n_warps, "blockIdx.x", thread(tx, 32, "threadIdx.x", Allocate(t, inner)))
    f = kernel("warp_ops", [x, o], {x: X, o: O}, body, ["blockIdx.x", "threadIdx.x"])

    def ref(xs):
        a = xs[0].reshape(n_warps, 32)
        out = np.zeros((n_warps, 8), "float32")
        out[:, 0] = float(0xAAAAAAAA)
        out[:, 1] = float(0xFFFFFFFF)
        out[:, 2] = a[:, 0]
        out[:, 3] = a[:, 30]
        out[:, 4], out[:, 5], out[:, 6] = a.min(axis=1), a.max(axis=1), a.sum(axis=1)
        return out.reshape(-1)

    return Case(
        f,
        lambda r: [r.standard_normal(32 * n_warps).astype("float32"), np.zeros(8 * n_warps, "float32")],
        [],
        [n_warps, 32],
        ref,
        1,
        1e-5,
    )


def dyn_smem_reverse(kib: int = 128) -> Case:
    """X[i] = 2 * X[255 - i] through ``kib`` KiB of dynamic shared memory (over 48 KiB needs the
    runtime to raise the kernel's dynamic shared memory limit before launching)."""
    ((x, X),) = [buf("X", "float32")]
    tx = Var("tx")
    words = kib * 1024 // 4
    smem = Buffer("smem", (words,), "float32", scope="shared.dyn")
    body = thread(
        tx,
        256,
        "threadIdx.x",
        Allocate(
            smem,
            seq(
                BufferStore(smem, X[tx], (tx + (words - 256),)),
                sync(),
                BufferStore(X, smem[(words - 1) - tx] * 2.0, (tx,)),
            ),
        ),
    )
    f = kernel("smem_big", [x], {x: X}, body, ["threadIdx.x", "dyn_shmem"])
    return Case(f, lambda r: [np.arange(256, dtype="float32")], [], [256, words * 4], lambda xs: xs[0][::-1] * 2.0, 0)


def all_cases() -> dict[str, Case]:
    """Every kernel the tests compile (and run, on a GPU)."""
    return {
        "vadd_f32": vadd("float32"),
        "vadd_f16": vadd("float16"),
        "row_sum": row_sum(),
        "matmul_f32": matmul("float32"),
        "matmul_f16": matmul("float16"),
        "gelu_f16": gelu_f16(),
        "softmax": softmax(),
        "vadd_bf16": vadd("bfloat16"),
        "warp_ops": warp_ops(),
        "dyn_smem_128k": dyn_smem_reverse(128),
    }
