"""tvm.tir.analysis and tvm.tir.functor: structural equality, free variables, visitor/mutator."""

from __future__ import annotations

from tvm import tir
from tvm.script import tir as T
from tvm.tir.analysis import free_vars, structural_equal, used_buffers
from tvm.tir.functor import StmtExprMutator, StmtExprVisitor, substitute


def test_structural_equal_exprs_up_to_bound_vars():
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    assert structural_equal(x + 1, x + 1)
    assert not structural_equal(x + 1, y + 1)  # free vars must match...
    assert structural_equal(x + 1, y + 1, map_free_vars=True)  # ...unless mapped
    assert not structural_equal(x + 1, x + 2)
    assert not structural_equal(x + 1, x - 1)
    assert not structural_equal(tir.const(1, "int32"), tir.const(1, "int64"))


def test_structural_equal_loops_rename():
    def build(name):
        i = tir.Var(name, "int32")
        A = tir.Buffer("A" + name, (8,), "float32")
        return A, tir.For(i, tir.const(0), tir.const(8), tir.ForKind.SERIAL, tir.BufferStore(A, A[i] * 2.0, (i,)))

    A1, s1 = build("i")
    A2, s2 = build("j")
    assert structural_equal(tir.PrimFunc([A1.data], s1, {A1.data: A1}), tir.PrimFunc([A2.data], s2, {A2.data: A2}))
    s3 = tir.For(s2.loop_var, s2.min, s2.extent, tir.ForKind.PARALLEL, s2.body)
    assert not structural_equal(s2, s3)


def test_free_vars_and_used_buffers():
    @T.prim_func
    def f(A: T.Buffer((n,), "float32"), n: T.int32, alpha: T.float32):  # noqa: F821 - TVMScript binds n after the annotation
        for i in range(n):
            tmp = T.alloc_buffer((1,), "float32", scope="local")
            tmp[0] = A[i] * alpha
            A[i] = tmp[0]

    fv = free_vars(f.body)
    names = [v.name for v in fv]
    assert names == ["n", "alpha"]
    assert [b.name for b in used_buffers(f.body)] == ["A"]


def test_visitor_counts_and_mutator_rewrites():
    @T.prim_func
    def f(A: T.Buffer((4, 4), "float32")):
        for i, j in T.grid(4, 4):
            A[i, j] = A[i, j] * T.float32(2) + T.float32(1)

    class Count(StmtExprVisitor):
        def __init__(self):
            self.loads = self.muls = 0

        def visit_BufferLoad(self, e):
            self.loads += 1
            super().visit_BufferLoad(e)

        def visit_Mul(self, e):
            self.muls += 1
            super().visit_BinaryOp(e)

    c = Count()
    c.visit_stmt(f.body)
    assert (c.loads, c.muls) == (1, 1)

    class MulToAdd(StmtExprMutator):
        def visit_Mul(self, e):
            e = self.visit_BinaryOp(e)
            return tir.Add(e.a, e.b)

    body = MulToAdd().visit_stmt(f.body)
    assert body is not f.body
    kinds = []
    tir.functor.post_order_visit(body, lambda n: kinds.append(type(n).__name__))
    assert "Mul" not in kinds and kinds.count("Add") == 2
    # unchanged subtrees are shared, not copied
    same = StmtExprMutator().visit_stmt(f.body)
    assert same is f.body


def test_substitute():
    x = tir.Var("x", "int32")
    e = substitute(x * 2 + x, {x: tir.const(3)})
    # the nodes themselves: the operators fold constants (const(3) * 2 is 6)
    assert structural_equal(e, tir.Add(tir.Mul(tir.const(3), tir.const(2)), tir.const(3)))


def test_loads_of_two_alike_buffers_are_not_equal_unless_free_names_may_be_mapped():
    """A[i] and B[i] of two int32 buffers of one shape read different memory: the simplifier
    once rejoined (A[i] // 4) * 4 + B[i] % 4 into A[i], and a cross-thread argmax compared the
    kept index with the new value."""
    import numpy as np
    import tvm

    a = tir.decl_buffer((8,), "int32", name="A")
    b = tir.decl_buffer((8,), "int32", name="B")
    i = tir.Var("i", "int32")
    assert structural_equal(a[i], a[i]) and not structural_equal(a[i], b[i])
    assert structural_equal(a[i], b[i], map_free_vars=True)
    assert structural_equal(a, b)  # compared as declarations, two alike buffers are equal

    @T.prim_func
    def rejoin(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32"), C: T.Buffer((8,), "int32")):
        for i in range(8):
            C[i] = A[i] // 4 * 4 + B[i] % 4

    x, y = np.arange(8, dtype="int32") * 5, np.arange(8, dtype="int32") * 3 + 1
    out = np.zeros(8, "int32")
    tvm.compile(rejoin, "c")["rejoin"](x, y, out)
    np.testing.assert_array_equal(out, x // 4 * 4 + y % 4)
