"""``T.undef()``: a value left unspecified. ``remove_undef_stores`` drops every store whose value
depends on one (directly, or through a let variable bound to one): storing an unspecified value
may leave the element as it was. The let variables bound to one go too. An unspecified value
anywhere else (an index, a condition, a loop bound, an extern call's argument) has no meaning:
TIRVerifyError naming where it is.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

from tvm.tir.analysis import any_node
from tvm.tir.expr import BufferLoad, Call, Var
from tvm.tir.function import PrimFunc
from tvm.tir.functor import StmtExprMutator
from tvm.tir.stmt import BufferStore, LetStmt, Stmt

from .verify import TIRVerifyError, with_span


def _is_undef(node: Any) -> bool:
    return isinstance(node, Call) and str(node.op).removeprefix("tir.") == "undef"


class _RemoveUndefStores(StmtExprMutator):
    def __init__(self) -> None:
        self.undefined: set[Var] = set()  # let variables bound to an unspecified value

    def _unspecified(self, node: Any) -> bool:
        return any_node(node, lambda n: _is_undef(n) or (isinstance(n, Var) and n in self.undefined))

    def _check_indices(self, s: BufferStore) -> None:
        def bad_index(n: Any) -> bool:
            return isinstance(n, (BufferLoad, BufferStore)) and any(self._unspecified(i) for i in n.indices)

        if bad_index(s) or any_node(s.value, bad_index):
            raise TIRVerifyError(
                with_span(
                    f"T.undef() in an index of a store to '{s.buffer.name}': an element at an unspecified "
                    f"place cannot be read or written",
                    s.span,
                )
            )

    def visit_BufferStore(self, s: BufferStore) -> Optional[Stmt]:
        self._check_indices(s)
        return None if self._unspecified(s.value) else super().visit_BufferStore(s)

    def visit_LetStmt(self, s: LetStmt) -> Optional[Stmt]:
        if not self._unspecified(s.value):
            return super().visit_LetStmt(s)
        self.undefined.add(s.var)
        return self.visit_stmt(s.body)


def remove_undef_stores(func: PrimFunc, target: Any = None) -> PrimFunc:
    """``func`` without its stores of ``T.undef()`` values (see the module docstring); ``func``
    itself when it has none."""
    if not any_node(func.body, _is_undef):
        return func
    mutator = _RemoveUndefStores()
    body = mutator._body(mutator.visit_stmt(func.body))
    if mutator._unspecified(body):
        raise TIRVerifyError(
            f"in function '{func.name}': T.undef() (or a variable bound to it) is used where its value "
            f"matters; only a value that is stored may be unspecified"
        )
    return dataclasses.replace(func, body=body, buffer_map=dict(func.buffer_map))


__all__ = ["remove_undef_stores"]
