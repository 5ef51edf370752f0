"""TVMScript parser: each kernel family parses to the expected TIR."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm import tir
from tvm.script import namespaces
from tvm.script import tir as T
from tvm.tir import ForKind
from tvm.tir.dtype import SCALAR_DTYPES

import script_kernels as K


def loops(stmt):
    """For loops in source (pre-)order."""
    out = []

    class V(tir.StmtExprVisitor):
        def visit_For(self, s):
            out.append(s)
            super().visit_For(s)

    V().visit_stmt(stmt)
    return out


def nodes(stmt, cls):
    out = []
    tir.functor.post_order_visit(stmt, lambda n: out.append(n) if isinstance(n, cls) else None)
    return out


@pytest.mark.parametrize("dtype", SCALAR_DTYPES)
def test_elementwise_every_dtype(dtype):
    f = K.ELEMENTWISE[dtype]
    assert isinstance(f, tir.PrimFunc)
    assert all(p.dtype == "handle" for p in f.params) and len(f.params) == 3
    bufs = [f.buffer_map[p] for p in f.params]
    assert [b.dtype for b in bufs] == [dtype] * 3
    (store,) = nodes(f.body, tir.BufferStore)
    assert store.value.dtype == dtype
    assert store.buffer is bufs[2]
    tir.transform.verify(f)


def test_match_buffer_binds_handle_and_symbolic_shape():
    f = K.ELEMENTWISE["float32"]
    a = f.params[0]
    A = f.buffer_map[a]
    assert A.data is a  # documented invariant of the parser
    (n,) = A.shape
    assert isinstance(n, tir.Var) and n.name == "n" and n.dtype == "int32"
    assert f.buffer_map[f.params[1]].shape[0] is n
    (loop,) = loops(f.body)
    assert loop.extent is n and loop.loop_var.dtype == "int32"
    assert f.attrs["global_symbol"] == "ew"


def test_reduction_and_attrs():
    f = K.row_sum
    assert f.attrs == {"tir.noalias": True, "global_symbol": "row_sum"}
    outer, inner = loops(f.body)
    assert outer.kind is ForKind.PARALLEL and inner.kind is ForKind.SERIAL
    assert [b.shape[0].value for b in f.buffer_map.values()] == [64, 64]


def test_softmax_local_buffers_and_augassign():
    f = K.row_softmax
    allocs = nodes(f.body, tir.Allocate)
    assert {a.buffer.name for a in allocs} == {"mx", "s"}
    assert all(a.buffer.scope == "local" for a in allocs)
    kinds = [l.kind for l in loops(f.body)]
    assert kinds == [ForKind.PARALLEL, ForKind.SERIAL, ForKind.SERIAL, ForKind.VECTORIZED]
    calls = {c.op for c in nodes(f.body, tir.Call)}
    assert calls == {"exp"}
    # s[0] += x is a load-add-store
    adds = [s for s in nodes(f.body, tir.BufferStore) if s.buffer.name == "s"]
    assert isinstance(adds[1].value, tir.Add) and isinstance(adds[1].value.a, tir.BufferLoad)


def test_tiled_matmul_thread_bindings_and_shared():
    f = K.tiled_matmul
    ls = loops(f.body)
    assert [(l.kind, l.thread_tag) for l in ls[:2]] == [
        (ForKind.THREAD_BINDING, "blockIdx.x"),
        (ForKind.THREAD_BINDING, "threadIdx.x"),
    ]
    assert ForKind.UNROLLED in [l.kind for l in ls]
    scopes = {a.buffer.name: a.buffer.scope for a in nodes(f.body, tir.Allocate)}
    assert scopes == {"As": "shared", "acc": "local"}
    (sync,) = [e for e in nodes(f.body, tir.Evaluate)]
    assert sync.value.op == "tvm_storage_sync" and sync.value.args[0].value == "shared"
    assert f.attrs["global_symbol"] == "tiled_matmul"


def test_thread_binding_with_start():
    (bx, tx, tx2, k) = loops(K.two_kernels.body)
    assert bx.min.value == 0 and bx.extent.value == 8 and bx.thread_tag == "blockIdx.x"
    alpha = K.two_kernels.params[2]
    assert alpha.dtype == "float32" and alpha not in K.two_kernels.buffer_map


def test_symbolic_int64_and_let():
    f = K.symbolic_2d
    m = f.params[2]
    assert m.dtype == "int64"
    A = f.buffer_map[f.params[0]]
    assert A.shape[1] is m and A.shape[0].dtype == "int64"
    i, j = loops(f.body)
    assert i.loop_var.dtype == "int64" and j.loop_var.dtype == "int64"
    (let,) = nodes(f.body, tir.LetStmt)
    assert let.var.name == "x" and let.var.dtype == "float16"
    (call,) = nodes(f.body, tir.Call)
    assert call.op == "if_then_else" and call.dtype == "float16"


def test_private_and_casts():
    f = K.clamp_cast
    assert "global_symbol" not in f.attrs
    (store,) = nodes(f.body, tir.BufferStore)
    assert isinstance(store.value, tir.Cast) and store.value.dtype == "int8"
    assert isinstance(store.value.value, tir.Min)


def test_annotated_let():
    (let,) = nodes(K.gelu_like.body, tir.LetStmt)
    assert let.var.dtype == "float32"


def test_symbolic_var_declared_in_body_used_in_annotation():
    @T.prim_func
    def f(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):  # noqa: F821 - TVMScript binds n after the annotation
        n = T.int64()
        for i in range(n):
            B[i] = A[i]

    A = f.buffer_map[f.params[0]]
    assert A.shape[0].dtype == "int64"
    assert loops(f.body)[0].loop_var.dtype == "int64"


def test_scalar_param_used_in_annotation_before_declared():
    @T.prim_func
    def f(A: T.Buffer((n, 4), "float32"), n: T.int32):  # noqa: F821 - TVMScript binds n after the annotation
        for i, j in T.grid(n, 4):
            A[i, j] = T.float32(1)

    assert f.buffer_map[f.params[0]].shape[0] is f.params[1]


def test_string_dims_declare_shape_vars():
    @T.prim_func
    def f(A: T.Buffer(("n",), "int32"), B: T.Buffer(("n",), "int32")):
        for i in range(A.shape[0]):
            B[i] = A[i] * 2

    a, b = (f.buffer_map[p] for p in f.params)
    assert a.shape[0] is b.shape[0] and a.shape[0].name == "n"


def test_python_constants_closure_and_if_static():
    N = 16
    use_exp = False

    @T.prim_func
    def f(A: T.Buffer((N * 2,), "float32")):
        for i in range(N * 2):
            if use_exp:
                A[i] = T.exp(A[i])
            else:
                A[i] = A[i] * 2
        for i in range(N):
            if i < 4:
                A[i] = T.float32(0)
            else:
                A[i] = T.float32(1)

    ls = loops(f.body)
    assert ls[0].extent.value == 32
    assert not nodes(f.body, tir.Call)
    assert len(nodes(f.body, tir.IfThenElse)) == 1


def test_names_only_annotations_use_come_from_the_enclosing_function():
    """``A: T.Buffer((n,), dtype)`` in a function that makes kernels: Python evaluates
    annotations in the enclosing function, so ``n`` and ``dtype`` are not closure variables of
    the kernel (and this module's ``from __future__ import annotations`` leaves them text)."""

    def make(n: int, dtype: str):
        @T.prim_func
        def f(A: T.Buffer((n,), dtype)):
            T.evaluate(0)

        return f

    for n, dtype in [(8, "float16"), (32, "int8")]:
        (buf,) = make(n, dtype).buffer_map.values()
        assert (buf.shape[0].value, buf.dtype) == (n, dtype)

    def own_parameter():
        n = 16  # not the kernel's n: the annotation names the kernel's own (later) parameter

        @T.prim_func
        def g(A: T.Buffer((n,), "float32"), n: T.int32):
            T.evaluate(0)

        return g

    g = own_parameter()
    (buf,) = g.buffer_map.values()
    assert buf.shape[0] is g.params[1]

    def shadowing_a_builtin(type: str):  # noqa: A002  (Apache TVM's tests name a dtype `type`)
        @T.prim_func
        def h(A: T.Buffer((4,), type)):
            T.evaluate(0)

        return h

    (buf,) = shadowing_a_builtin("uint16").buffer_map.values()
    assert buf.dtype == "uint16"


def test_every_intrinsic_via_T():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "int32")):
        for i in range(8):
            A[i] = (
                T.exp(A[i])
                + T.log(A[i])
                + T.sqrt(A[i])
                + T.rsqrt(A[i])
                + T.tanh(A[i])
                + T.pow(A[i], T.float32(2))
                + T.fabs(A[i])
                + T.abs(A[i])
                + T.floor(A[i])
                + T.ceil(A[i])
                + T.erf(A[i])
                + T.sin(A[i])
                + T.cos(A[i])
                + T.sigmoid(A[i])
                + T.exp2(A[i])
                + T.log2(A[i])
                + T.round(A[i])
                + T.trunc(A[i])
                + T.infinity("float32")
                + T.max_value("float32")
                + T.min_value("float32")
                + T.Select(A[i] > 0, A[i], T.float32(0))
                + A[i] ** 2
            )
            B[i] = (
                T.truncdiv(B[i], 3)
                + T.truncmod(B[i], 3)
                + T.floordiv(B[i], 3)
                + T.floormod(B[i], 3)
                + T.min(B[i], 1)
                + T.max(B[i], 0)
                + B[i] // 2
                + B[i] % 2
                + T.Cast("int32", A[i])
                + T.max_value("int32")
                + T.min_value("int32")
                + T.abs(B[i])
            )

    ops = {c.op for c in nodes(f.body, tir.Call)}
    assert {
        "exp",
        "log",
        "sqrt",
        "rsqrt",
        "tanh",
        "pow",
        "fabs",
        "floor",
        "ceil",
        "erf",
        "sin",
        "cos",
        "sigmoid",
        "exp2",
        "log2",
        "round",
        "trunc",
        "abs",
    } <= ops
    kinds = {type(e).__name__ for e in nodes(f.body, tir.PrimExpr)}
    assert {"Div", "Mod", "FloorDiv", "FloorMod", "Min", "Max", "Cast", "Select"} <= kinds
    tir.transform.verify(f)


def test_promotion_int_mixing_and_implicit_store_cast():
    @T.prim_func
    def f(A: T.Buffer((8,), "float16"), B: T.Buffer((8,), "int64"), n: T.int32):
        for i in range(8):
            A[i] = A[i] * T.float32(2)  # float32 result stored into float16: implicit cast
            B[i] = B[i] + n  # int64 + int32 -> int64

    s1, s2 = (
        nodes(f.body, tir.BufferStore)[::-1]
        if False
        else sorted(nodes(f.body, tir.BufferStore), key=lambda s: s.buffer.name)
    )
    assert isinstance(s1.value, tir.Cast) and s1.value.dtype == "float16"
    assert s2.value.dtype == "int64" and isinstance(s2.value.b, tir.Cast)
    tir.transform.verify(f)


def test_dtype_helpers_constants_and_casts():
    @T.prim_func
    def f(A: T.Buffer((4,), "float64"), B: T.Buffer((4,), "uint8")):
        for i in range(4):
            A[i] = T.float64(i) + T.float64("inf") + T.float64(2)
            B[i] = T.uint8(255)

    consts = [e for e in nodes(f.body, tir.FloatImm)]
    assert {c.dtype for c in consts} == {"float64"}
    (u,) = [e for e in nodes(f.body, tir.IntImm) if e.dtype == "uint8"]
    assert u.value == 255


def test_backend_namespace():
    import sys
    import types

    mod = types.ModuleType("fake_ns_mod")
    mod.shfl = lambda x, lane: tir.Call(x.dtype, "fakens.shfl", (x, tir.const(lane)))
    sys.modules["fake_ns_mod"] = mod
    namespaces.register("fakens", "fake_ns_mod")
    try:

        @T.prim_func
        def f(A: T.Buffer((32,), "float32")):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                A[tx] = T.fakens.shfl(A[tx], 1)

        (call,) = nodes(f.body, tir.Call)
        assert call.op == "fakens.shfl" and call.dtype == "float32"
    finally:
        namespaces.unregister("fakens")
        del sys.modules["fake_ns_mod"]


def test_apache_tvm_style_kernel_parses_unchanged():
    # written exactly as one writes a loop-level kernel for Apache TVM
    @T.prim_func
    def main(var_A: T.handle, var_B: T.handle, var_C: T.handle):
        T.func_attr({"tir.noalias": True, "global_symbol": "add_kernel"})
        n = T.int64()
        A = T.match_buffer(var_A, (n,), "float32")
        B = T.match_buffer(var_B, (n,), "float32")
        C = T.match_buffer(var_C, (n,))
        for i_0 in T.thread_binding((n + T.int64(255)) // T.int64(256), thread="blockIdx.x"):
            for i_1 in T.thread_binding(T.int64(256), thread="threadIdx.x"):
                if i_0 * T.int64(256) + i_1 < n:
                    C[i_0 * T.int64(256) + i_1] = A[i_0 * T.int64(256) + i_1] + B[i_0 * T.int64(256) + i_1]

    assert main.attrs["global_symbol"] == "add_kernel"
    assert all(l.loop_var.dtype == "int64" for l in loops(main.body))


def test_prim_func_from_source_text():
    src = """
@T.prim_func
def k(A: T.Buffer((4,), "int32")):
    for i in T.serial(1, 4):
        A[i] = A[i - 1] + 1
"""
    f = tvm.script.parse(src)
    (l,) = loops(f.body)
    assert l.min.value == 1 and l.extent.value == 3


def test_python_builtins_min_max_abs_and_likely():
    @T.prim_func
    def f(A: T.Buffer((8,), "int32"), n: T.int32):
        T.func_attr({"tir.noalias": T.bool(True), "n": T.int32(3)})
        for i in range(8):
            if T.likely(i < n):
                A[i] = max(min(A[i], n), 0) + abs(A[i])

    assert f.attrs["tir.noalias"] is True and f.attrs["n"] == 3
    kinds = {type(e).__name__ for e in nodes(f.body, tir.PrimExpr)}
    assert {"Min", "Max"} <= kinds
    assert {c.op for c in nodes(f.body, tir.Call)} == {"abs"}


DIMS: tuple = ()
DEBUG = False


@T.macro
def _mark(A):
    A[0] = 5


def _checked(A):  # a Python helper the kernel runs only in debug builds
    _mark(A)
    return A[0] == 5


def test_and_or_of_python_values_short_circuit_as_in_python():
    """``len(DIMS) > 0 and DIMS[0] > i`` raised IndexError (both operands were evaluated), and
    ``DEBUG and helper(A)`` expanded the helper's macro although Python never calls it."""

    @T.prim_func
    def kernel(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32")):
        for i in range(4):
            if len(DIMS) > 0 and DIMS[0] > i:
                A[i] = 1
            else:
                A[i] = 2
            if (len(DIMS) == 0 or DIMS[0] > i) and not (DEBUG and _checked(B)):
                B[i] = 3

    mod = tvm.compile(kernel, target="llvm")
    a, b = (tvm.runtime.tensor(np.zeros(4, "int32")) for _ in range(2))
    mod(a, b)
    assert a.numpy().tolist() == [2, 2, 2, 2] and b.numpy().tolist() == [3, 3, 3, 3]


#: A module-level name that a kernel factory's own parameter hides, as in Python.
factory_dtype = "int32"
factory_size = 3


def test_a_factory_parameter_hides_a_module_global_in_annotations():
    def make_add(factory_dtype, factory_size):
        @T.prim_func
        def add(A: T.Buffer((factory_size,), factory_dtype), B: T.Buffer((factory_size,), factory_dtype)):
            for i in range(factory_size):
                B[i] = A[i] + A[i]

        return add

    func = make_add("float16", 8)
    assert [b.dtype for b in func.buffer_map.values()] == ["float16", "float16"]
    a = np.arange(8, dtype="float16")
    b = np.zeros(8, "float16")
    tvm.compile(func, target="c")(a, b)
    np.testing.assert_array_equal(b, a * 2)


class _Maker:
    """A caller whose method shares a name with the factory below and holds another ``factory_dtype``."""

    def make_double(self, factory_dtype="int8"):
        return make_double()


def make_double():
    @T.prim_func
    def double(A: T.Buffer((4,), factory_dtype), B: T.Buffer((4,), factory_dtype)):
        for i in range(4):
            B[i] = A[i] + A[i]

    return double


def test_a_caller_sharing_a_name_with_the_factory_does_not_lend_its_names():
    func = _Maker().make_double()
    assert [b.dtype for b in func.buffer_map.values()] == [factory_dtype, factory_dtype]
