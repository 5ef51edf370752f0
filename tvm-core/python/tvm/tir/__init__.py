"""TIR: the tensor-level IR shared by every code generator.

Node definitions live in :mod:`.expr`, :mod:`.stmt` and :mod:`.function`; intrinsics in
:mod:`.op`; the TVMScript printer in :mod:`.printer`; passes in :mod:`.transform`.
"""

from . import dtype
from .expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    BinaryOp,
    Buffer,
    BufferLoad,
    Call,
    Cast,
    CmpOp,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    Let,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    Select,
    StringImm,
    Sub,
    Var,
    const,
)
from .function import IRModule, PrimFunc
from .stmt import (
    THREAD_TAGS,
    Allocate,
    AssertStmt,
    Break,
    BufferStore,
    Continue,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    SeqStmt,
    Stmt,
    While,
    seq,
)
from . import analysis, functor, op, transform
from .analysis import assert_structural_equal, free_vars, structural_equal
from .functor import StmtExprMutator, StmtExprVisitor
from .op import (
    INTRINSICS,
    abs,
    ceil,
    cos,
    erf,
    exp,
    exp2,
    fabs,
    floor,
    floordiv,
    floormod,
    if_then_else,
    infinity,
    log,
    log2,
    max,
    max_value,
    min,
    min_value,
    pow,
    round,
    rsqrt,
    sigmoid,
    sin,
    sqrt,
    tanh,
    trunc,
    truncdiv,
    truncmod,
)
from .apache_names import all, any, build, decl_buffer  # noqa: A004
from .printer import script
