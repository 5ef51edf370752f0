"""ExprFunctor: a value per expression, the base a non-C emitter builds on (here: an evaluator)."""

from __future__ import annotations

import pytest

from tvm.tir import expr as E
from tvm.tir.functor import ExprFunctor


class Evaluate(ExprFunctor[int]):
    def visit_IntImm(self, e: E.IntImm) -> int:
        return e.value

    def visit_Add(self, e: E.Add) -> int:
        return self.visit_expr(e.a) + self.visit_expr(e.b)

    def visit_BinaryOp(self, e: E.BinaryOp) -> int:  # every other arithmetic operator
        a, b = self.visit_expr(e.a), self.visit_expr(e.b)
        return {"*": a * b, "-": a - b, "//": a // b}[e.op]

    def visit_CmpOp(self, e: E.CmpOp) -> int:  # every comparison
        a, b = self.visit_expr(e.a), self.visit_expr(e.b)
        return int({"<": a < b, "==": a == b}[e.op])


def i32(v: int) -> E.IntImm:
    return E.IntImm("int32", v)


def test_dispatch_by_class_then_comparison_then_arithmetic():
    ev = Evaluate()
    assert ev.visit_expr(E.Add(i32(2), E.Mul(i32(3), i32(4)))) == 14
    assert ev.visit_expr(E.FloorDiv(i32(-7), i32(2))) == -4
    assert ev.visit_expr(E.LT(i32(1), E.Sub(i32(5), i32(3)))) == 1


def test_an_unsupported_expression_names_itself():
    with pytest.raises(TypeError, match="Evaluate cannot handle expression Select"):
        Evaluate().visit_expr(E.Select(E.EQ(i32(1), i32(1)), i32(1), i32(2)))
