"""TIR: the tensor-level IR shared by every code generator.

Node definitions live in :mod:`.expr`, :mod:`.stmt` and :mod:`.function`; intrinsics in
:mod:`.op`; the TVMScript printer in :mod:`.printer`; passes in :mod:`.transform`.
"""

from . import dtype
from .expr import (
    EQ, GE, GT, LE, LT, NE, Add, And, BinaryOp, Buffer, BufferLoad, Call, Cast, CmpOp, Div,
    FloatImm, FloorDiv, FloorMod, IntImm, Let, Max, Min, Mod, Mul, Not, Or, PrimExpr, Select,
    StringImm, Sub, Var, const,
)
from .function import IRModule, PrimFunc
from .stmt import (
    THREAD_TAGS, Allocate, AssertStmt, BufferStore, Evaluate, For, ForKind, IfThenElse, LetStmt,
    SeqStmt, Stmt, seq,
)
