"""tvm.tir.transform: verify, simplify, flatten_buffers and lower (the host/device split)."""

from __future__ import annotations

import dataclasses

import pytest

from tvm import tir
from tvm.script import tir as T
from tvm.target import Target
from tvm.testing import kernels
from tvm.target.target import TargetKind, register_target_kind, unregister_target_kind
from tvm.tir import ForKind
from tvm.tir.analysis import any_node, structural_equal
from tvm.tir.transform import (
    SingleThreadKernelWarning,
    TIRVerifyError,
    flatten_buffers,
    lower,
    simplify,
    simplify_expr,
    verify,
)

import script_kernels as K


@pytest.fixture
def gpu():
    register_target_kind(TargetKind("testgpu", 12, "test", ("gpu",), {}, codegen=lambda k, t: None))
    yield Target("testgpu")
    unregister_target_kind("testgpu")


def nodes(stmt, cls):
    out = []
    tir.functor.post_order_visit(stmt, lambda n: out.append(n) if isinstance(n, cls) else None)
    return out


def mkfunc(body, *bufs, scalars=()):
    return tir.PrimFunc(
        [b.data for b in bufs] + list(scalars), body, {b.data: b for b in bufs}, {"global_symbol": "f"}, "f"
    )


# ----------------------------------------------------------------------------- verify


def test_verify_accepts_all_kernels(gpu):
    for f in (K.row_sum, K.row_softmax, K.symbolic_2d, K.clamp_cast):
        verify(f)
        verify(f, Target("c"))
    for f in (K.tiled_matmul, K.two_kernels, K.gelu_like):
        verify(f, gpu)


def test_verify_undefined_variable():
    A = tir.Buffer("A", (4,), "float32")
    ghost = tir.Var("ghost", "int32")
    f = mkfunc(tir.BufferStore(A, tir.FloatImm("float32", 0.0), (ghost,)), A)
    with pytest.raises(TIRVerifyError, match="'ghost' is used but not defined"):
        verify(f)


def test_verify_loop_var_out_of_scope():
    A = tir.Buffer("A", (4,), "float32")
    i = tir.Var("i", "int32")
    loop = tir.For(
        i, tir.const(0), tir.const(4), ForKind.SERIAL, tir.BufferStore(A, tir.FloatImm("float32", 0.0), (i,))
    )
    after = tir.BufferStore(A, tir.FloatImm("float32", 1.0), (i,))
    with pytest.raises(TIRVerifyError, match="'i' is used but not defined"):
        verify(mkfunc(tir.seq(loop, after), A))


def test_verify_operand_dtype_mismatch():
    A = tir.Buffer("A", (4,), "float32")
    i = tir.Var("i", "int32")
    bad = tir.Add(A[i], tir.FloatImm("float64", 1.0))
    f = mkfunc(tir.For(i, tir.const(0), tir.const(4), ForKind.SERIAL, tir.BufferStore(A, bad, (i,))), A)
    with pytest.raises(TIRVerifyError, match="different dtypes float32 and float64"):
        verify(f)


def test_verify_store_dtype_and_float_index():
    A = tir.Buffer("A", (4,), "int32")
    i = tir.Var("i", "int32")
    st = tir.BufferStore(A, tir.FloatImm("float32", 1.0), (i,))
    f = mkfunc(tir.For(i, tir.const(0), tir.const(4), ForKind.SERIAL, st), A)
    with pytest.raises(TIRVerifyError, match="storing a float32 value into int32 buffer"):
        verify(f)
    x = tir.Var("x", "float32")
    g = mkfunc(tir.BufferStore(A, tir.const(1), (x,)), A, scalars=(x,))
    with pytest.raises(TIRVerifyError, match="index of buffer 'A' must be an integer"):
        verify(g)


def test_verify_redefinition_of_param():
    A = tir.Buffer("A", (4,), "int32")
    n = tir.Var("n", "int32")
    f = mkfunc(tir.LetStmt(n, tir.const(1), tir.BufferStore(A, n, (tir.const(0),))), A, scalars=(n,))
    with pytest.raises(TIRVerifyError, match="defined twice"):
        verify(f)


def test_verify_intrinsic_arity_and_type():
    A = tir.Buffer("A", (4,), "float32")
    bad = tir.Call("float32", "exp", (A[0], A[1]))
    with pytest.raises(TIRVerifyError, match="exp takes 1 argument"):
        verify(mkfunc(tir.BufferStore(A, bad, (tir.const(0),)), A))
    B = tir.Buffer("B", (4,), "int32")
    bad2 = tir.Call("int32", "sqrt", (B[0],))
    with pytest.raises(TIRVerifyError, match="needs a float argument"):
        verify(mkfunc(tir.BufferStore(B, bad2, (tir.const(0),)), B))


def test_verify_non_bool_condition():
    A = tir.Buffer("A", (4,), "int32")
    f = mkfunc(tir.IfThenElse(A[0], tir.BufferStore(A, tir.const(1), (tir.const(0),))), A)
    with pytest.raises(TIRVerifyError, match="if condition must be bool"):
        verify(f)


def test_verify_thread_binding_on_cpu_is_error():
    with pytest.raises(
        TIRVerifyError, match=r"is bound to blockIdx.x \(by T.thread_binding, .*which the CPU target \(here 'c'\)"
    ):
        verify(K.gelu_like, Target("c"))


def test_verify_shared_on_cpu_is_error():
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        S = T.alloc_buffer((4,), "float32", scope="shared")
        for i in range(4):
            S[i] = A[i]

    with pytest.raises(TIRVerifyError, match="shared buffer 'S' on CPU"):
        verify(f, Target("c"))


def test_verify_shared_outside_thread_loop_on_device(gpu):
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        S = T.alloc_buffer((4,), "float32", scope="shared")
        for k in range(2):  # a host loop: S would have to outlive each launch
            for tx in T.thread_binding(4, thread="threadIdx.x"):
                S[tx] = A[tx]

    with pytest.raises(TIRVerifyError, match="inside a thread-bound loop") as e:
        verify(f, gpu)
    assert "T.alloc_buffer" in str(e.value)  # points at the source line


def test_verify_nested_same_tag(gpu):
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        for tx in T.thread_binding(2, thread="threadIdx.x"):
            A[tx] = T.float32(0)

    # the parser reads a nested loop of the same tag as the same thread; IR built otherwise is checked
    outer = f.body
    inner = tir.For(tir.Var("ty", "int32"), outer.min, outer.extent, ForKind.THREAD_BINDING, outer.body, "threadIdx.x")
    nested = dataclasses.replace(f, body=dataclasses.replace(outer, body=inner))
    with pytest.raises(TIRVerifyError, match="bound twice"):
        verify(nested, gpu)


# ----------------------------------------------------------------------------- simplify


def test_simplify_constant_folding_and_identities():
    x = tir.Var("x", "int32")
    f = tir.Var("f", "float32")
    c = tir.const
    assert simplify_expr(c(2) * c(3) + c(4)).value == 10
    assert simplify_expr(x * 1 + 0) is x
    assert simplify_expr(1 * x - 0) is x
    assert simplify_expr(x * 0).value == 0
    assert simplify_expr(f * tir.FloatImm("float32", 1.0)) is f
    assert simplify_expr(tir.FloorDiv(c(-7), c(2))).value == -4
    assert simplify_expr(tir.FloorMod(c(-7), c(2))).value == 1
    assert simplify_expr(tir.Div(c(-7), c(2))).value == -3
    assert simplify_expr(tir.Mod(c(-7), c(2))).value == -1
    assert simplify_expr(tir.LT(c(1), c(2))).value == 1
    assert simplify_expr(tir.LT(c(1), c(2))).dtype == "bool"
    assert simplify_expr(tir.And(tir.LT(c(1), c(2)), tir.LT(x, c(3)))).__class__ is tir.LT
    assert simplify_expr(tir.Max(c(3), c(9))).value == 9
    assert simplify_expr(tir.IntImm("int8", 100) + tir.IntImm("int8", 100)).value == -56  # wraps
    assert simplify_expr(tir.Cast("int32", tir.FloatImm("float32", 2.7))).value == 2
    assert simplify_expr(tir.Div(x, c(0))).value == 0  # TIR defines a division by zero as 0 (a divisor folded to 0)
    assert simplify_expr((x + 3) - 3) is x
    assert simplify_expr(tir.FloatImm("float32", 0.1) + tir.FloatImm("float32", 0.2)).value == pytest.approx(
        0.3, rel=1e-6
    )


def test_float_constants_and_their_folds_are_those_of_their_dtype():
    """A float constant keeps the number as written (as in Apache TVM) and computes with its
    dtype's value, and folds compute as the machine does at run time: one rounding per operation
    in the dtype, TIR's min/max on NaN and signed zeros, and a floor division as NumPy's
    ``floor_divide`` (Python's ``//``) computes it in the dtype."""
    import math

    f32, f16, f64 = (lambda v, d=d: tir.FloatImm(d, v) for d in ("float32", "float16", "float64"))
    assert f32(16777217.0).value == 16777217.0 and f32(16777217.0).dtype_value == 16777216.0
    assert f16(0.1).dtype_value == 0.0999755859375 and f16(1e-30).dtype_value == 0.0
    assert tir.FloatImm("bfloat16", 1.00390625).dtype_value == 1.0
    assert f32(1e39).dtype_value == math.inf and math.isnan(f32(math.nan).dtype_value)
    assert simplify_expr(tir.Cast("float64", f16(0.1))).value == 0.0999755859375
    assert simplify_expr(f32(2.0) * f32(1.00000001)).value == 2.0
    assert simplify_expr(f32(16777217.0) - f32(16777216.0)).value == 0.0
    assert simplify_expr(tir.Cast("float64", f32(0.1))).value == 0.10000000149011612
    assert simplify_expr(tir.Cast("float32", tir.IntImm("int64", 2**60 + 2**36 + 1))).value == 2**60 + 2**37
    assert simplify_expr(tir.Cast("float32", tir.IntImm("int32", 16777217))).value == 16777216.0
    assert simplify_expr(tir.FloorDiv(f32(1.0), f32(0.1))).value == 9.0  # NumPy's; 1.0f / 0.1f rounds to 10
    assert simplify_expr(tir.FloorDiv(f64(1e308), f64(1e-10))).value == math.inf
    assert math.isnan(simplify_expr(tir.FloorDiv(f64(math.inf), f64(math.inf))).value)
    for a, b, want in ((-0.0, 1.0, -0.0), (0.0, -1.0, -0.0), (1.0, -math.inf, -1.0)):  # as NumPy's
        got = simplify_expr(tir.FloorDiv(f32(a), f32(b))).value
        assert got == want and math.copysign(1, got) < 0
    assert simplify_expr(tir.Min(f32(math.nan), f32(1.0))).value == 1.0  # x < y ? x : y
    assert simplify_expr(tir.Max(f32(math.nan), f32(1.0))).value == 1.0
    assert math.copysign(1, simplify_expr(tir.Min(f32(-0.0), f32(0.0))).value) > 0
    assert math.copysign(1, simplify_expr(tir.Max(f32(0.0), f32(-0.0))).value) < 0
    f = tir.Var("f", "float32")
    assert simplify_expr(f - f32(0.0)) is f
    assert simplify_expr(f - f32(-0.0)) is not f  # -0.0 - (-0.0) is 0.0


def test_simplify_statements():
    @T.prim_func
    def f(A: T.Buffer((8, 1), "float32")):
        for i in range(8):
            for j in range(1):
                if 2 > 1:
                    A[i, j] = A[i, j] * T.float32(1) + T.float32(-0.0)  # x + 0.0 is not x for x = -0.0
                else:
                    A[i, j] = T.float32(5)
        for k in range(0):
            A[k, 0] = T.float32(7)

    g = simplify(f)
    (loop,) = nodes(g.body, tir.For)
    (store,) = nodes(g.body, tir.BufferStore)
    assert loop.loop_var.name == "i"
    assert isinstance(store.value, tir.BufferLoad)
    assert store.indices[1].value == 0
    assert not nodes(g.body, tir.IfThenElse)


def test_simplify_keeps_thread_loops_of_extent_one(gpu):
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            for tx in T.thread_binding(4, thread="threadIdx.x"):
                A[bx * 4 + tx] = T.float32(0)

    g = simplify(f)
    assert len(nodes(g.body, tir.For)) == 2


# ----------------------------------------------------------------------------- flatten


def test_flatten_row_major_and_allocations():
    g = flatten_buffers(K.row_softmax)
    for st in nodes(g.body, tir.BufferStore):
        assert len(st.indices) == 1 and st.buffer.ndim == 1
    loads = nodes(g.body, tir.BufferLoad)
    a_loads = [l for l in loads if l.buffer.name == "A"]
    assert a_loads and all(l.buffer.shape[0].value == 64 * 128 for l in a_loads)
    # A[i, j] -> A[i * 128 + j], same data Var as the parameter buffer
    i = nodes(g.body, tir.For)[-1].loop_var  # outermost loop (post-order: last)
    idx = a_loads[0].indices[0]
    assert isinstance(idx, tir.Add) and isinstance(idx.a, tir.Mul) and idx.a.b.value == 128
    assert idx.a.a is i
    param_buf = K.row_softmax.buffer_map[K.row_softmax.params[0]]
    assert a_loads[0].buffer.data is param_buf.data
    # buffer_map keeps the original 2-D buffers for argument checking
    assert g.buffer_map[g.params[0]].ndim == 2


def test_flatten_symbolic_and_strided():
    n = tir.Var("n", "int32")
    A = tir.Buffer("A", (n, 4), "float32", strides=(tir.const(8), tir.const(1)), elem_offset=tir.const(2))
    i, j = tir.Var("i", "int32"), tir.Var("j", "int32")
    st = tir.BufferStore(A, tir.FloatImm("float32", 0.0), (i, j))
    g = flatten_buffers(mkfunc(st, A))
    (s,) = nodes(g.body, tir.BufferStore)
    assert structural_equal(simplify_expr(s.indices[0]), simplify_expr(tir.const(2) + i * 8 + j))
    B = tir.Buffer("B", (n, 3), "int8")
    g2 = flatten_buffers(mkfunc(tir.BufferStore(B, tir.IntImm("int8", 1), (i, j)), B))
    (s2,) = nodes(g2.body, tir.BufferStore)
    assert structural_equal(s2.indices[0], i * 3 + j)
    assert structural_equal(s2.buffer.shape[0], n * 3)


# ----------------------------------------------------------------------------- lower


def launches(host):
    return [
        e.value
        for e in nodes(host.body, tir.Evaluate)
        if isinstance(e.value, tir.Call) and e.value.op == "tir.launch_kernel"
    ]


def test_lower_cpu_no_kernels_keeps_loop_kinds():
    low = lower(K.row_softmax, Target("c"))
    assert low.kernels == []
    kinds = [l.kind for l in nodes(low.host.body, tir.For)]
    assert ForKind.PARALLEL in kinds and ForKind.VECTORIZED in kinds
    assert low.host.params == K.row_softmax.params
    assert low.host.buffer_map == K.row_softmax.buffer_map
    assert all(len(s.indices) == 1 for s in nodes(low.host.body, tir.BufferStore))


def test_lower_cpu_rejects_thread_binding():
    with pytest.raises(TIRVerifyError, match="CPU target"):
        lower(K.tiled_matmul, Target("c"))


def test_lower_tiled_matmul(gpu):
    f = K.tiled_matmul
    low = lower(f, gpu)
    (k,) = low.kernels
    assert k.attrs["global_symbol"] == "tiled_matmul_kernel0"
    assert k.attrs["launch_params"] == ["blockIdx.x", "threadIdx.x"]
    a, b, c = f.params
    n = f.buffer_map[a].shape[0]
    assert k.params == [a, b, c, n]
    for p in (a, b, c):
        kb = k.buffer_map[p]
        assert kb.ndim == 1 and kb.dtype == "float32" and kb.data is p
    assert structural_equal(k.buffer_map[a].shape[0], n * 64)
    # the kernel keeps its thread loops, the shared / local allocations and the barrier
    assert [l.thread_tag for l in nodes(k.body, tir.For) if l.kind is ForKind.THREAD_BINDING] == [
        "threadIdx.x",
        "blockIdx.x",
    ]
    assert {x.buffer.scope for x in nodes(k.body, tir.Allocate)} == {"shared", "local"}
    # host: original params/buffer_map, one launch with args then extents
    assert low.host.params == f.params and low.host.buffer_map == f.buffer_map
    (call,) = launches(low.host)
    assert call.dtype == "int32" and call.args[0].value == "tiled_matmul_kernel0"
    assert list(call.args[1:5]) == [a, b, c, n]
    assert structural_equal(call.args[5], tir.FloorDiv(n + 15, tir.const(16)))
    assert call.args[6].value == 16


def test_lower_two_kernels(gpu):
    f = K.two_kernels
    low = lower(f, gpu)
    assert [k.attrs["global_symbol"] for k in low.kernels] == ["two_kernels_kernel0", "two_kernels_kernel1"]
    k0, k1 = low.kernels
    A, B, alpha = f.params
    assert k0.params == [A, B, alpha] and k0.params[2].dtype == "float32"
    assert k1.params == [A, B]
    assert k0.attrs["launch_params"] == ["blockIdx.x", "threadIdx.x"]
    assert k1.attrs["launch_params"] == ["threadIdx.x"]
    c0, c1 = launches(low.host)
    assert [x.value for x in c0.args[4:]] == [8, 128]
    assert [x.value for x in c1.args[3:]] == [256]
    assert isinstance(low.host.body, tir.SeqStmt) and len(low.host.body.seq) == 2


def test_lower_host_scalar_setup_becomes_kernel_param(gpu):
    @T.prim_func
    def f(A: T.Buffer((n,), "float32"), n: T.int32):  # noqa: F821 - TVMScript binds n after the annotation
        half = n // 2
        for bx in T.thread_binding((half + 63) // 64, thread="blockIdx.x"):
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                if bx * 64 + tx < half:
                    A[bx * 64 + tx] = T.float32(1)

    low = lower(f, gpu)
    (k,) = low.kernels
    assert [p.name for p in k.params] == ["A", "n", "half"]
    assert isinstance(low.host.body, tir.LetStmt)


def test_lower_device_function_without_threads_is_one_thread_kernel(gpu):
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = T.float32(0)

    with pytest.warns(SingleThreadKernelWarning, match="'f' has no thread-bound loop"):
        low = lower(f, gpu)
    (k,) = low.kernels
    assert k.attrs["launch_params"] == ["blockIdx.x"] and k.attrs["launch_bounds"] == [1]


def test_lower_device_runs_work_beside_launches_as_one_thread_kernels(gpu):
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = T.float32(0)
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            A[tx] = A[tx] + T.float32(1)

    with pytest.warns(SingleThreadKernelWarning, match="'f' reads or writes memory outside its thread-bound loops"):
        low = lower(f, gpu)
    first, second = low.kernels  # in program order: the zeroing loop in one thread, then the launch

    def binds(kernel, tag):
        return any_node(kernel.body, lambda n: isinstance(n, tir.For) and n.thread_tag == tag)

    assert any_node(first.body, lambda n: isinstance(n, tir.For) and n.kind is ForKind.SERIAL)
    assert not binds(first, "threadIdx.x") and binds(second, "threadIdx.x")


def test_lower_device_keeps_an_evaluate_that_computes_nothing_on_the_host(gpu):
    @T.prim_func
    def f(n: T.int32):
        T.evaluate(n + 1)

    low = lower(f, gpu)
    assert low.kernels == [] and isinstance(low.host.body, tir.Evaluate)

    @T.prim_func
    def g(A: T.Buffer((4,), "float32")):
        T.evaluate(T.call_extern("float32", "host_helper", A[0]))  # reads device memory on the host
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            A[tx] = T.float32(1)

    with pytest.warns(SingleThreadKernelWarning):
        assert len(lower(g, gpu).kernels) == 2  # the read happens in a kernel of one thread

    @T.prim_func
    def h(A: T.Buffer((4,), "float32")):
        T.evaluate(T.call_packed("host_only", A[0]))  # a packed call is the host's to make
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            A[tx] = T.float32(1)

    with pytest.raises(TIRVerifyError, match="Evaluate is outside any thread-bound loop"):
        lower(h, gpu)


def test_lower_extent_depending_on_kernel_local(gpu):
    @T.prim_func
    def f(A: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(8, thread="blockIdx.x"):
            for tx in T.thread_binding(bx + 1, thread="threadIdx.x"):
                A[bx * 8 + tx] = T.float32(0)

    with pytest.raises(TIRVerifyError, match="depends on kernel-local variable 'bx'"):
        lower(f, gpu)


def test_lower_dynamic_shared_memory(gpu):
    @T.prim_func
    def f(A: T.Buffer((n,), "float16"), n: T.int32):  # noqa: F821 - TVMScript binds n after the annotation
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            S = T.alloc_buffer((n,), "float16", scope="shared")
            if tx < n:  # (unguarded, n < 32 would index past A: a run-time check and its kernel)
                S[tx] = A[tx]
            T.tvm_storage_sync("shared")
            if tx < n:
                A[tx] = S[n - 1 - tx]  # the region used depends on n: the buffer keeps its size

    low = lower(f, gpu)
    (k,) = low.kernels
    assert k.attrs["launch_params"] == ["threadIdx.x", "dyn_shmem"]
    (call,) = launches(low.host)
    n = f.params[1]
    # n halves, rounded up to whole 32-byte units (every view starts 32-byte aligned)
    assert structural_equal(call.args[-1], tir.floordiv(n * 2 + 31, 32) * 32)


def test_static_shared_memory_past_the_static_limit_moves_to_dynamic():
    """cuda allows 48 KiB of static shared memory per block and opts in to up to 227 KiB of
    dynamic: a 64 KiB tile becomes dynamic shared memory; 32 KiB stays static; 256 KiB is refused."""
    from tvm.target import Target

    cuda = Target("cuda")
    kernel = lower(kernels.transpose_through_shared(128), cuda).kernels[0]
    assert kernel.attrs["launch_params"][-1] == "dyn_shmem"
    small = lower(kernels.transpose_through_shared(64), cuda).kernels[0]
    assert "dyn_shmem" not in small.attrs["launch_params"]
    with pytest.raises(TIRVerifyError, match=r"needs 262144 bytes of static .* up to 232448 bytes in all move to dyn"):
        lower(kernels.transpose_through_shared(512), cuda)


def test_lower_int64_symbolic(gpu):
    @T.prim_func
    def f(a: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n,), "float32")
        for bx in T.thread_binding((n + T.int64(127)) // T.int64(128), thread="blockIdx.x"):
            for tx in T.thread_binding(T.int64(128), thread="threadIdx.x"):
                if bx * T.int64(128) + tx < n:
                    A[bx * T.int64(128) + tx] = T.float32(0)

    low = lower(f, gpu)
    (k,) = low.kernels
    assert [p.dtype for p in k.params] == ["handle", "int64"]
    (call,) = launches(low.host)
    assert call.args[-2].dtype == "int64" and call.args[-1].dtype == "int64"


def test_lower_uneven_thread_extents_are_padded_and_guarded(gpu):
    @T.prim_func
    def f(A: T.Buffer((128,), "float32"), B: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            for tx in T.thread_binding(128, thread="threadIdx.x"):
                A[tx] = T.float32(0)
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                B[tx] = T.float32(1)

    low = lower(f, gpu)
    (k,) = low.kernels
    (call,) = launches(low.host)
    assert [x.value for x in call.args[3:]] == [1, 128]
    txs = [l for l in nodes(k.body, tir.For) if l.thread_tag == "threadIdx.x"]
    assert [l.extent.value for l in txs] == [128, 128]
    guards = nodes(k.body, tir.IfThenElse)
    assert len(guards) == 1 and guards[0].condition.b.value == 64


def test_lower_host_if_on_scalar(gpu):
    @T.prim_func
    def f(A: T.Buffer((n,), "float32"), n: T.int32):  # noqa: F821 - TVMScript binds n after the annotation
        if n > 0:
            for tx in T.thread_binding(n, thread="threadIdx.x"):
                A[tx] = T.float32(0)

    low = lower(f, gpu)
    assert isinstance(low.host.body, tir.IfThenElse)
    assert len(low.kernels) == 1


def test_simplify_integer_reassociation():
    x = tir.Var("x", "int32")
    c = tir.const
    assert structural_equal(simplify_expr((x * 4) * 8), x * 32)
    assert simplify_expr(tir.FloorDiv(x * 16, c(16))) is x
    assert simplify_expr(tir.Div(x * 16, c(16))) is x
    assert simplify_expr(tir.FloorMod(x * 16, c(16))).value == 0
    assert structural_equal(simplify_expr(tir.FloorDiv(x * 16, c(8))), x * 2)  # 8 divides 16: exact
    assert simplify_expr(tir.FloorMod(x * 16, c(8))).value == 0
    assert isinstance(simplify_expr(tir.FloorDiv(x * 8, c(16))), tir.FloorDiv)  # not rewritten
    assert isinstance(simplify_expr(tir.FloorMod(x * 8, c(16))), tir.FloorMod)
    f = tir.Var("f", "float32")
    assert isinstance(simplify_expr(f * tir.FloatImm("float32", 2.0) * tir.FloatImm("float32", 3.0)).a, tir.Mul)
