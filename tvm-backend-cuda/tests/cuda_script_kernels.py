"""Kernels written in TVMScript (compiled with ``tvm.compile``); they live in a file because the
TVMScript parser reads function source. Standard kernels come from :mod:`tvm.testing.kernels`;
the CUDA-specific ones (``T.cuda`` intrinsics) are written here."""

from __future__ import annotations

from tvm.script import ir as I
from tvm.script import tir as T
from tvm.testing import kernels as zoo

# C = A + B over a symbolic length, 128 threads per block (the tests expect the name "vadd").
vadd = zoo.vector_add("float32", 128, name="vadd")


@T.prim_func
def warp_reduce(a: T.handle, b: T.handle):
    """B[i] = sum of the 32 values of row i, with T.cuda.warp_sum."""
    m = T.int32()
    A = T.match_buffer(a, (m, 32), "float32")
    B = T.match_buffer(b, (m,), "float32")
    for bx in T.thread_binding(m, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            s = T.cuda.warp_sum(A[bx, tx])
            if tx == 0:
                B[bx] = s


@T.prim_func
def active_lanes(m: T.handle):
    """M[0, i] = T.tvm_warp_activemask() in the branch lanes i % 32 < 20 take, M[1, i] in the
    other arm: each arm's own lanes."""
    M = T.match_buffer(m, (2, 64), "uint32")
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        M[0, tx] = T.uint32(0)
        M[1, tx] = T.uint32(0)
        if tx % 32 < 20:
            M[0, tx] = T.tvm_warp_activemask()
        else:
            M[1, tx] = T.tvm_warp_activemask()


def ptx_mma_tile(shape: str, a_type: str, b_type: str, c_type: str, saturate: bool = False):
    """C += A @ B.T on one warp with Apache TVM's ``T.ptx_legacy.mma``: each lane gathers its
    fragments from A (m x k), B (n x k) and C (m x n) as PTX's fragment layout places them, and
    scatters its D elements back into C. tf32 operands are float32 buffers."""
    m, n, k = (int(x) for x in shape[1:].replace("n", " ").replace("k", " ").split())
    stored = {t: "float32" if t == "tf32" else t for t in (a_type, b_type, c_type)}
    sa, sb, sc = stored[a_type], stored[b_type], stored[c_type]
    per_reg = {t: {"float16": 2, "bfloat16": 2, "int8": 4, "uint8": 4}.get(t, 1) for t in (a_type, b_type)}
    ea, eb = per_reg[a_type], per_reg[b_type]
    na, nb, nc = m * k // 32, k * n // 32, m * n // 32
    tall = m // 16  # A's odd registers hold rows g + 8 only when m is 16

    @T.prim_func
    def ptx_mma(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (m, k), sa)
        B = T.match_buffer(b, (n, k), sb)
        C = T.match_buffer(c, (m, n), sc)
        tx = T.env_thread("threadIdx.x")
        T.launch_thread(tx, 32)
        fa = T.decl_buffer([na], sa, scope="local")
        fb = T.decl_buffer([nb], sb, scope="local")
        acc = T.decl_buffer([nc], sc, scope="local")
        for j in range(na):
            fa[j] = A[tx // 4 + 8 * tall * (j // ea % 2), tx % 4 * ea + j % ea + k // 2 * (j // ea // 2)]
        for j in range(nb):
            fb[j] = B[tx // 4, tx % 4 * eb + j % eb + k // 2 * (j // eb)]
        for j in range(nc):
            acc[j] = C[tx // 4 + 8 * (j // 2), tx % 4 * 2 + j % 2]
        T.evaluate(
            T.ptx_legacy.mma(shape, "row", "col", a_type, b_type, c_type, fa.data, 0, fb.data, 0, acc.data, 0, saturate)
        )
        for j in range(nc):
            C[tx // 4 + 8 * (j // 2), tx % 4 * 2 + j % 2] = acc[j]

    return ptx_mma


def ptx_ldmatrix(num: int, trans: bool):
    """Out[lane, :] = the ``2 * num`` float16 this lane receives from ``T.ptx_legacy.ldmatrix`` of
    ``num`` 8x8 matrices of A (16 x 16, staged in shared memory): lane ``l`` passes the address
    of row ``l % 16``, column ``8 * (l // 16)``, so matrix j is the block (rows 8 (j % 2), columns
    8 (j // 2))."""

    @T.prim_func
    def ldmatrix(A: T.Buffer((16, 16), "float16"), Out: T.Buffer((32, 2 * num), "float16")):
        tx = T.env_thread("threadIdx.x")
        T.launch_thread(tx, 32)
        A_shared = T.alloc_buffer((16, 16), "float16", scope="shared")
        frag = T.alloc_buffer((2 * num,), "float16", scope="local")
        for i in range(8):
            A_shared[i * 2 + tx // 16, tx % 16] = A[i * 2 + tx // 16, tx % 16]
        T.tvm_storage_sync("shared")
        T.evaluate(
            T.ptx_legacy.ldmatrix(trans, num, ".b16", frag.data, 0, A_shared.data, 16 * (tx % 16) + 8 * (tx // 16))
        )
        for i in range(2 * num):
            Out[tx, i] = frag[i]

    return ldmatrix


@T.prim_func
def ptx_scalar_f32(a: T.handle, b: T.handle, c: T.handle):
    """C[0] = A + B, C[1] = A * B, C[2] = max(A, B) (a NaN operand gives the other) with Apache
    TVM's newer T.ptx namespace, between T.ptx.griddepcontrol.wait and launch_dependents."""
    A = T.match_buffer(a, (64,), "float32")
    B = T.match_buffer(b, (64,), "float32")
    C = T.match_buffer(c, (3, 64), "float32")
    bx = T.env_thread("blockIdx.x")
    tx = T.env_thread("threadIdx.x")
    T.launch_thread(bx, 2)
    T.launch_thread(tx, 32)
    T.ptx.griddepcontrol.wait()
    T.ptx.add.rn.f32(C[0, bx * 32 + tx], A[bx * 32 + tx], B[bx * 32 + tx])
    T.ptx.mul.rn.f32(C[1, bx * 32 + tx], A[bx * 32 + tx], B[bx * 32 + tx])
    T.ptx.max.f32(C[2, bx * 32 + tx], A[bx * 32 + tx], B[bx * 32 + tx])
    T.ptx.griddepcontrol.launch_dependents()


@T.prim_func
def ptx_async_groups(a: T.handle, b: T.handle):
    """B = A reversed per row, staged through shared memory by T.cuda.cp_async copies that
    T.ptx.cp.async_.commit_group / wait_group close and wait for."""
    A = T.match_buffer(a, (32, 4), "float32")
    B = T.match_buffer(b, (32, 4), "float32")
    tx = T.env_thread("threadIdx.x")
    T.launch_thread(tx, 32)
    S = T.alloc_buffer((32, 4), "float32", scope="shared")
    T.cuda.cp_async_16(S[tx, 0], A[tx, 0])
    T.evaluate(T.ptx.cp.async_.commit_group())
    T.evaluate(T.ptx.cp.async_.wait_group(0))
    T.tvm_storage_sync("shared")
    for i in range(4):
        B[tx, i] = S[31 - tx, 3 - i]


@I.ir_module
class split_host_device:
    """A module as Apache TVM's host/device split writes it: the host launches the kernel (a
    function of calling convention 2) with T.call_packed, passing its thread extent last."""

    @T.prim_func
    def main(A: T.Buffer(64, "float32"), n: T.int32):
        T.func_attr({"target": T.target("cuda", host="llvm")})
        T.call_packed("split_kernel", A.data, n, n)

    @T.prim_func
    def split_kernel(A_data: T.handle("float32"), n: T.int32):
        T.func_attr(
            {
                "target": T.target("cuda"),
                "calling_conv": 2,
                "tirx.kernel_launch_params": ["threadIdx.x"],
                "global_symbol": "split_kernel",
            }
        )
        A = T.decl_buffer(64, dtype="float32", data=A_data)
        i = T.launch_thread("threadIdx.x", n)
        A[i] = A[i] * T.float32(2) + T.Cast("float32", i)


@T.prim_func
def ptx_legacy_async_copy(a: T.handle, b: T.handle):
    """B = A doubled, staged through shared memory with T.ptx_legacy.cp_async (16 bytes per thread)."""
    A = T.match_buffer(a, (128,), "float32")
    B = T.match_buffer(b, (128,), "float32")
    tx = T.env_thread("threadIdx.x")
    T.launch_thread(tx, 32)
    S = T.alloc_buffer((128,), "float32", scope="shared")
    T.evaluate(T.ptx_legacy.cp_async("float32", S.data, tx * 4, A.data, tx * 4, 16))
    T.evaluate(T.ptx_legacy.commit_group())
    T.evaluate(T.ptx_legacy.wait_group(0))
    T.tvm_storage_sync("shared")
    for i in range(4):
        B[tx * 4 + i] = S[(tx * 4 + i + 4) % 128] * T.float32(2)


@T.prim_func
def s_tir_async_copy(a: T.handle, b: T.handle):
    """B = A doubled, staged through shared memory with both spellings of Apache TVM's
    T.s_tir.cp_async_raw (16 bytes per thread each, half of the elements each)."""
    A = T.match_buffer(a, (256,), "float32")
    B = T.match_buffer(b, (256,), "float32")
    tx = T.env_thread("threadIdx.x")
    T.launch_thread(tx, 32)
    S = T.alloc_buffer((256,), "float32", scope="shared")
    T.evaluate(T.s_tir.cp_async_raw("float32", S.data, tx * 4, A.data, tx * 4, 16))
    T.evaluate(T.s_tir.cp_async_raw.legacy(S.data, 128 + tx * 4, A.data, 128 + tx * 4, 16, dtype="float32"))
    T.evaluate(T.ptx.cp.async_.commit_group())
    T.evaluate(T.ptx.cp.async_.wait_group(0))
    T.tvm_storage_sync("shared")
    for i in range(8):
        B[tx * 8 + i] = S[tx * 8 + i] * T.float32(2)


@T.prim_func
def warp_collectives_everywhere(a: T.handle, b: T.handle):
    """B[0] warp_max and B[1] warp_min of a warp holding NaN and both zeros (every lane the
    same), B[2] a shuffle on the right of T.And, B[3] a let-bound shuffle in a T.Select arm,
    B[4] T.isinf and T.isfinite."""
    A = T.match_buffer(a, (32,), "float32")
    B = T.match_buffer(b, (5, 32), "float32")
    v = T.float32()
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        B[0, tx] = T.cuda.warp_max(A[tx], 32)
        B[1, tx] = T.cuda.warp_min(A[tx], 32)
        B[2, tx] = T.Select(T.And(tx % 2 == 0, T.cuda.shfl_xor(A[tx], 1) > T.float32(0)), T.float32(1), T.float32(0))
        B[3, tx] = T.Select(tx % 2 == 0, T.let(v, T.cuda.shfl_xor(A[tx], 1), v + T.float32(1)), A[tx])
        B[4, tx] = T.Cast("float32", T.isinf(A[tx])) + T.Cast("float32", T.isfinite(A[tx])) * T.float32(2)
