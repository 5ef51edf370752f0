"""TIR expressions: immutable nodes with a dtype string ("int32", "float32", "bool", "handle", ...).

Every node is a frozen dataclass hashed by identity so nodes can be dict keys; ``==`` and ``!=``
build ``EQ`` / ``NE`` expressions (as in Apache TVM) whose truth value is identity (constants
compare by value); use :func:`tvm.tir.analysis.structural_equal` for structural comparison. Python operators build
expressions (``a + 1``, ``a < b``) as TVMScript's do: ``i * 0.5`` is a float32 product, and ``/``
of two integers is refused (write ``//`` or :func:`tvm.tir.truncdiv`); use :func:`tvm.tir.op`
helpers for everything else. Node constructors convert Python numbers, as Apache TVM's do
(``For(i, 0, 4, ...)``, ``BufferStore(B, 1.0, [0])``), and refuse what they cannot convert with a
TypeError naming the node and field.
"""

from __future__ import annotations

import numbers

from dataclasses import dataclass, field
from typing import Any, Optional, Tuple

from . import dtype as _dt


class PrimExpr:
    """Base of all expressions. Subclasses are dataclasses with a ``dtype`` field."""

    dtype: str
    span: Any = None

    # --- operator sugar: builds IR; two constants of one dtype give the constant (as in Apache
    # TVM: ``const(3) + 4`` is 7), computed as at run time (_folded) ---
    def __add__(self, o):
        return _arith(Add, self, o)

    def __radd__(self, o):
        return _arith(Add, o, self)

    def __sub__(self, o):
        return _arith(Sub, self, o)

    def __rsub__(self, o):
        return _arith(Sub, o, self)

    def __mul__(self, o):
        return _arith(Mul, self, o)

    def __rmul__(self, o):
        return _arith(Mul, o, self)

    def __truediv__(self, o):
        return _true_division(self, o)

    def __rtruediv__(self, o):
        return _true_division(o, self)

    def __floordiv__(self, o):
        return _arith(FloorDiv, self, o)

    def __rfloordiv__(self, o):
        return _arith(FloorDiv, o, self)

    def __mod__(self, o):
        return _arith(FloorMod, self, o)

    def __rmod__(self, o):
        return _arith(FloorMod, o, self)

    def __neg__(self):
        if _dt.is_float(self.dtype):  # -x of +0.0 is -0.0, which 0 - x is not
            return Mul(self, const_like(-1.0, self))
        return Sub(const_like(0, self), self)

    def __lt__(self, o):
        return _arith(LT, self, o)

    def __le__(self, o):
        return _arith(LE, self, o)

    def __gt__(self, o):
        return _arith(GT, self, o)

    def __ge__(self, o):
        return _arith(GE, self, o)

    # & | ^ ~ << >>: bitwise on integers, logical on bools (& | ~), as in TVMScript (tvm.tir.op)
    def __and__(self, o):
        return _bitwise_operator("bitwise_and", self, o)

    def __rand__(self, o):
        return _bitwise_operator("bitwise_and", o, self)

    def __or__(self, o):
        return _bitwise_operator("bitwise_or", self, o)

    def __ror__(self, o):
        return _bitwise_operator("bitwise_or", o, self)

    def __xor__(self, o):
        return _bitwise_operator("bitwise_xor", self, o)

    def __rxor__(self, o):
        return _bitwise_operator("bitwise_xor", o, self)

    def __lshift__(self, o):
        return _bitwise_operator("shift_left", self, o)

    def __rlshift__(self, o):
        return _bitwise_operator("shift_left", o, self)

    def __rshift__(self, o):
        return _bitwise_operator("shift_right", self, o)

    def __rrshift__(self, o):
        return _bitwise_operator("shift_right", o, self)

    def __invert__(self):
        from .op import invert

        return invert(self)

    def __eq__(self, o: Any) -> Any:
        """``self == o`` as Apache TVM has it: an ``EQ`` expression for the IR (a condition a
        Python helper builds, ``T.Select(v == 0, ...)``) whose Python truth value says whether
        both sides are the same node, so ``in``, dict keys and ``if a == b`` compare nodes by
        identity; two constants compare by value (``T.int32(3) == 3`` is True)."""
        return _compared(EQ, self, o)

    def __ne__(self, o: Any) -> Any:
        """``self != o``: the ``NE`` of :meth:`__eq__`."""
        return _compared(NE, self, o)

    def equal(self, o) -> "EQ":
        """``self == o`` as IR, folded when both are constants."""
        return _folded(EQ, self, const_like(o, self))

    def not_equal(self, o) -> "NE":
        """``self != o`` as IR."""
        return _folded(NE, self, const_like(o, self))

    def astype(self, dtype: str) -> "PrimExpr":
        """Cast to ``dtype`` (no-op when equal)."""
        return self if dtype == self.dtype else Cast(str(dtype), self)

    @property
    def ty(self) -> "Any":
        """The expression's type as Apache TVM's newer API has it: a :class:`tvm.ir.PrimType`
        of its dtype (``e.ty.dtype == "float32"``), or the :class:`tvm.ir.PointerType` a
        variable was made with."""
        from tvm.ir.type import PrimType, Type

        return self.dtype if isinstance(self.dtype, Type) else PrimType.of(self.dtype)

    def __bool__(self):
        raise TypeError("a TIR expression has no Python truth value; use T.if_then_else / if on IR")

    __hash__ = object.__hash__


def _bitwise_operator(name: str, a: Any, b: Any) -> PrimExpr:
    from .op import bitwise_operator  # (op builds on this module)

    return bitwise_operator(name, a, b)


def _compared(node: Any, a: PrimExpr, o: Any) -> Any:
    """``a == o`` (``node`` EQ) or ``a != o`` (NE) from Python's operators (see
    :meth:`PrimExpr.__eq__`), with the operand promotions of TVMScript's own ``==``."""
    if not isinstance(o, (PrimExpr, int, float)):
        return NotImplemented  # None, strings, buffers ...: Python's identity answers
    if isinstance(a, _CONSTANTS) and isinstance(o, (int, float, *_CONSTANTS)):  # by value, any dtypes
        same = a.value == (o.value if isinstance(o, _CONSTANTS) else o)
        return IntImm("bool", int(same if node is EQ else not same))
    from .op import binary

    try:
        return binary("eq" if node is EQ else "ne", a, o)
    except (TypeError, ValueError):  # no promotion joins them: the verifier names the mismatch
        try:
            return node(a, const_like(o, a))
        except (TypeError, ValueError):  # no comparison at all (a handle and a float ...)
            return (a is o) if node is EQ else (a is not o)


def _folded(node: Any, a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """``node(a, b)``, or the constant it computes when both are scalar constants of one dtype
    (as Apache TVM folds them): integers wrapped as the operation wraps at run time, float32 and
    float64 rounded as computed there (:mod:`tvm.tir.fold`). A division by zero, a bool or
    16-bit float operation and an operand its dtype cannot hold (the verifier's to refuse) keep
    the node."""
    e = node(a, b)
    if type(a) not in _CONSTANTS or type(b) not in _CONSTANTS or a.dtype != b.dtype or _dt.is_bool(a.dtype):
        return e
    if type(a) is IntImm and not (_dt.fits(a.value, a.dtype) and _dt.fits(b.value, b.dtype)):
        return e
    value = _fold.fold_binary(e)
    return e if value is None else value


#: What ``/`` of two integer expressions says (as TVMScript's ``/`` does): the choices it has.
INTEGER_TRUE_DIVISION = (
    "'/' of two integers: Python's gives a float and C's truncates; write a // b (Python's floor "
    "division), T.truncdiv(a, b) (C's), or convert one side to a float (T.Cast('float32', a) / b)"
)


def _arith(node: Any, a: Any, b: Any) -> PrimExpr:
    """``a <node> b`` from a Python operator: the operands of :func:`_operands`, folded when both
    are constants (:func:`_folded`)."""
    a, b = _operands(a, b)
    return _folded(node, a, b)


def _true_division(a: Any, b: Any) -> PrimExpr:
    """``a / b`` from Python's operator: a float division; two integer operands are refused
    (:data:`INTEGER_TRUE_DIVISION`), as TVMScript and Apache TVM refuse them."""
    a, b = _operands(a, b)
    if not (_dt.is_float(a.dtype) or _dt.is_float(b.dtype)):
        raise TypeError(f"{INTEGER_TRUE_DIVISION}; got {a.dtype} / {b.dtype}")
    return _folded(Div, a, b)


def _operands(a: Any, b: Any) -> Tuple[PrimExpr, PrimExpr]:
    """The operands of a Python operator as expressions: a Python number takes the other
    operand's dtype (:func:`const_like`), except that a Python float next to an integer or bool
    expression makes that expression a float32 (``T.Cast``), as TVMScript promotes ``i * 0.5``;
    a NumPy scalar counts as the Python number it holds."""
    if isinstance(a, PrimExpr) and isinstance(b, PrimExpr):
        return a, b
    a, b = python_number(a), python_number(b)
    if isinstance(b, float) and isinstance(a, PrimExpr):
        a = _as_float(a)
    elif isinstance(a, float) and isinstance(b, PrimExpr):
        b = _as_float(b)
    if isinstance(a, PrimExpr):
        return a, const_like(b, a)
    return const_like(a, b), b


def _as_float(e: PrimExpr) -> PrimExpr:
    """``e`` itself when it is a float (or not a number), else ``e`` cast to float32 (of its lanes)."""
    if not isinstance(e.dtype, str) or not (_dt.is_integer(e.dtype) or _dt.is_bool(e.dtype)):
        return e
    return Cast(_dt.with_lanes("float32", _dt.lanes(e.dtype)), e)


def python_number(value: Any) -> Any:
    """A NumPy scalar (a size or factor computed with NumPy) as the Python number it holds, so it
    converts as a Python number does; ``value`` otherwise."""
    if isinstance(value, (bool, int, float, PrimExpr)) or not isinstance(value, numbers.Number):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    return float(value) if isinstance(value, numbers.Real) else value


def const_like(value: Any, like: Any = None) -> PrimExpr:
    """``value`` as an expression; Python numbers take the dtype family of ``like`` (an
    expression, a buffer or a dtype string); without ``like``, the dtype :func:`const` gives."""
    if isinstance(value, PrimExpr):
        return value
    value = python_number(value)
    if isinstance(value, bool):
        return IntImm("bool", int(value))
    if like is None and isinstance(value, (int, float)):
        return const(value)
    like_dtype = like if isinstance(like, str) else like.dtype
    if isinstance(value, int):
        dt = like_dtype if _dt.is_integer(like_dtype) or _dt.is_float(like_dtype) else "int32"
        return FloatImm(dt, float(value)) if _dt.is_float(dt) else IntImm(dt, value)
    if isinstance(value, float):
        dt = like_dtype if _dt.is_float(like_dtype) else "float32"
        return FloatImm(dt, value)
    raise TypeError(f"cannot use {type(value).__name__} {value!r} in a TIR expression")


def value_text(value: Any) -> str:
    """``value`` for a message: its type and (the start of) its repr."""
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 80 else text[:77] + '...'}"


def expr_field(node: str, name: str, value: Any, like: Any = None) -> PrimExpr:
    """The field ``name`` of the node ``node`` as its constructor stores it (as Apache TVM's
    constructors convert): an expression as it is, a Python number or bool as a constant of
    ``like``'s dtype family (:func:`const_like`); anything else is a TypeError naming the field."""
    if isinstance(value, PrimExpr):
        return value
    value = python_number(value)
    if isinstance(value, (bool, int, float)):
        converted = const_like(value, like)
        if not isinstance(value, bool) and not _dt.fits(value, converted.dtype):
            raise TypeError(
                f"tir.{node}: {name} {value!r} does not fit {converted.dtype}, the dtype it takes here; pass "
                f"tvm.tir.const({value!r}, dtype) of a dtype that holds it"
            )
        return converted
    raise TypeError(
        f"tir.{node}: {name} must be a PrimExpr or a Python number, got {value_text(value)}; "
        f"pass an expression (a Var, tir.const(...), a buffer load ...)"
    )


def index_fields(node: str, indices: Any) -> Tuple[PrimExpr, ...]:
    """A load's or store's indices as a tuple of expressions (Python ints as int32 constants)."""
    if isinstance(indices, (PrimExpr, int)):
        indices = (indices,)
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"tir.{node}: indices must be a list or tuple of PrimExprs, got {value_text(indices)}")
    if type(indices) is tuple and all(isinstance(i, PrimExpr) for i in indices):
        return indices
    return tuple(expr_field(node, f"indices[{k}]", i, "int32") for k, i in enumerate(indices))


def operand_pair(node: str, names: Tuple[str, str], a: Any, b: Any) -> Tuple[PrimExpr, PrimExpr]:
    """Two operands of one dtype (of a binary node, a Select's values) as the constructor stores
    them: a Python number takes the other operand's dtype family, two numbers :func:`const`'s."""
    if not isinstance(a, PrimExpr):
        a = expr_field(node, names[0], a, b if isinstance(b, PrimExpr) else None)
    if not isinstance(b, PrimExpr):
        b = expr_field(node, names[1], b, a)
    return a, b


def const(value: Any, dtype: Optional[str] = None) -> PrimExpr:
    """A constant of ``dtype`` (ValueError when ``value`` does not fit it). Without a dtype: a NumPy
    scalar's own, bool for bools, int32 for ints (int64 beyond int32), float32 for floats
    (float64 beyond float32)."""
    if dtype is not None and not isinstance(dtype, str):
        dtype = str(dtype)  # a NumPy dtype
    if type(value).__module__ == "numpy" and hasattr(value, "dtype") and value.shape == ():
        dtype = dtype or str(value.dtype)
        value = value.item()
    if dtype is not None and _dt.is_bool(dtype) and not isinstance(value, bool):
        if value not in (0, 1):
            raise ValueError(f"{value!r} is not a bool constant (True, False, 1 or 0)")
        value = bool(value)
    if isinstance(value, bool):
        if dtype is not None and _dt.is_float(dtype):
            return FloatImm(dtype, float(value))
        return IntImm(dtype or "bool", int(value))
    if isinstance(value, int):
        dtype = dtype or ("int32" if _dt.fits(value, "int32") else "int64")
        if _dt.is_float(dtype) and abs(value) > 2**1000:
            raise ValueError(f"{value} does not fit in {dtype}")
        _dt.check_fits(value, dtype)
        return FloatImm(dtype, float(value)) if _dt.is_float(dtype) else IntImm(dtype, value)
    if isinstance(value, float):
        dtype = dtype or ("float32" if _dt.fits(value, "float32") else "float64")
        if _dt.is_integer(dtype):
            if not value.is_integer():
                raise ValueError(f"{value} is not a {dtype} constant (it has a fraction, or is not finite)")
            return const(int(value), dtype)
        _dt.check_fits(value, dtype)
        return FloatImm(dtype, value)
    raise TypeError(f"cannot make a constant from {value!r}")


@dataclass(eq=False, frozen=True)
class Var(PrimExpr):
    """A scalar variable (loop variable, symbolic shape, scalar parameter, let binding).
    ``dtype == "handle"`` for pointer parameters."""

    name: str
    dtype: str = "int32"
    span: Any = None

    def __repr__(self) -> str:
        return f"Var({self.name}: {self.dtype})"


@dataclass(eq=False, frozen=True)
class IntImm(PrimExpr):
    """Integer (or bool) constant."""

    dtype: str
    value: int
    span: Any = None

    def __int__(self) -> int:
        return int(self.value)

    def __bool__(self) -> bool:
        """An integer constant's truth value is its value (``T.int32(3) == 3`` folds to True)."""
        return bool(self.value)


@dataclass(eq=False, frozen=True)
class FloatImm(PrimExpr):
    """Floating-point constant. ``value`` is the number as written (as in Apache TVM);
    :attr:`dtype_value` is what the machine computes with (``T.float32(16777217.0)`` is
    16777216.0 there), and folding and code generation use that."""

    dtype: str
    value: float
    span: Any = None

    @property
    def dtype_value(self) -> float:
        """``value`` rounded to ``dtype`` (to nearest even; infinity past its range)."""
        rounded = _dt.round_float(self.dtype, self.value)
        return float(self.value) if rounded is None else rounded

    def __float__(self) -> float:
        return float(self.value)


@dataclass(eq=False, frozen=True)
class StringImm(PrimExpr):
    """String constant (only as an intrinsic argument)."""

    value: str
    dtype: str = "handle"
    span: Any = None


@dataclass(eq=False, frozen=True)
class Cast(PrimExpr):
    """Type conversion."""

    dtype: str
    value: PrimExpr
    span: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.value, PrimExpr):
            object.__setattr__(self, "value", expr_field("Cast", "value", self.value))


class BinaryOp(PrimExpr):
    """Base of binary arithmetic; ``dtype`` is the operands' dtype. ``op`` is the C-like symbol."""

    a: PrimExpr
    b: PrimExpr
    op: str = "?"


def _binop(name: str, op: str, result_bool: bool = False):
    def __init__(self, a: PrimExpr, b: PrimExpr, span: Any = None):
        if not (isinstance(a, PrimExpr) and isinstance(b, PrimExpr)):
            a, b = operand_pair(name, ("a", "b"), a, b)
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "span", span)
        object.__setattr__(self, "dtype", "bool" if result_bool else a.dtype)

    def __repr__(self):
        return f"{name}({self.a!r}, {self.b!r})"

    def __reduce__(self):  # copy and pickle rebuild it through __init__ (its fields are frozen)
        return type(self), (self.a, self.b, self.span)

    base = CmpOp if result_bool else BinaryOp
    cls = type(
        name,
        (base,),
        {
            "__init__": __init__,
            "__repr__": __repr__,
            "__reduce__": __reduce__,
            "op": op,
            "__slots__": ("a", "b", "span", "dtype"),
            "__setattr__": _frozen_setattr,
            "__hash__": object.__hash__,
        },
    )
    return cls


def _frozen_setattr(self, key, value):
    raise AttributeError(f"{type(self).__name__} is immutable")


class CmpOp(BinaryOp):
    """Base of comparisons; result dtype is bool."""


Add = _binop("Add", "+")
Sub = _binop("Sub", "-")
Mul = _binop("Mul", "*")
#: Truncating division for integers (C semantics), true division for floats.
Div = _binop("Div", "/")
#: Truncating remainder (C ``%``).
Mod = _binop("Mod", "%")
#: Division rounding towards negative infinity (Python ``//``).
FloorDiv = _binop("FloorDiv", "//")
#: Remainder with the sign of the divisor (Python ``%``).
FloorMod = _binop("FloorMod", "%%")
Min = _binop("Min", "min")
Max = _binop("Max", "max")
EQ = _binop("EQ", "==", True)
NE = _binop("NE", "!=", True)
# The truth value of what Python's == and != give (PrimExpr.__eq__): whether the operands are one
# node (an operand that was a Python number is never the other's node); two constants are folded
# by the comparison, and a constant's truth value is its value.
EQ.__bool__ = lambda self: self.a is self.b
NE.__bool__ = lambda self: self.a is not self.b
LT = _binop("LT", "<", True)
LE = _binop("LE", "<=", True)
GT = _binop("GT", ">", True)
GE = _binop("GE", ">=", True)
And = _binop("And", "&&", True)
Or = _binop("Or", "||", True)


@dataclass(eq=False, frozen=True)
class Not(PrimExpr):
    """Logical not."""

    a: PrimExpr
    dtype: str = "bool"
    span: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.a, PrimExpr):
            object.__setattr__(self, "a", expr_field("Not", "a", self.a, "bool"))


@dataclass(eq=False, frozen=True)
class Select(PrimExpr):
    """``condition ? true_value : false_value`` (both sides may be evaluated)."""

    condition: PrimExpr
    true_value: PrimExpr
    false_value: PrimExpr
    dtype: str = ""
    span: Any = None

    def __post_init__(self) -> None:
        if not (isinstance(self.true_value, PrimExpr) and isinstance(self.false_value, PrimExpr)):
            true_value, false_value = operand_pair(
                "Select", ("true_value", "false_value"), self.true_value, self.false_value
            )
            object.__setattr__(self, "true_value", true_value)
            object.__setattr__(self, "false_value", false_value)
        if not isinstance(self.condition, PrimExpr):
            object.__setattr__(self, "condition", expr_field("Select", "condition", self.condition, "bool"))
        if not self.dtype:
            object.__setattr__(self, "dtype", self.true_value.dtype)


@dataclass(eq=False, frozen=True)
class Let(PrimExpr):
    """``let var = value in body`` as an expression."""

    var: Var
    value: PrimExpr
    body: PrimExpr
    dtype: str = ""
    span: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.var, Var):
            raise TypeError(
                f"tir.Let: var must be a tir.Var, got {value_text(self.var)}; bind a Var (tir.Var('x', 'int32'))"
            )
        if not isinstance(self.value, PrimExpr):
            object.__setattr__(self, "value", expr_field("Let", "value", self.value, self.var))
        if not isinstance(self.body, PrimExpr):
            object.__setattr__(self, "body", expr_field("Let", "body", self.body))
        if not self.dtype:
            object.__setattr__(self, "dtype", self.body.dtype)


@dataclass(eq=False, frozen=True)
class Call(PrimExpr):
    """Intrinsic call. ``op`` names an intrinsic from :mod:`tvm.tir.op` (``"exp"``, ``"sqrt"``,
    ``"if_then_else"``, ``"tvm_storage_sync"`` ...) or a backend intrinsic registered by a backend
    namespace (``"cuda.shfl_down"``)."""

    dtype: str
    op: str
    args: Tuple[PrimExpr, ...] = ()
    span: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.op, str):
            object.__setattr__(self, "op", _op_name(self.op))
        if type(self.args) is not tuple or not all(isinstance(a, PrimExpr) for a in self.args):
            object.__setattr__(self, "args", _call_args(self.args))


def _op_name(op: Any) -> str:
    """A call's operator as its name: a string as it is, a :class:`tvm.ir.Op` as its name
    (``tirx.`` names as the ``tir.`` ones, as :func:`tvm.tir.call_intrin` reads them)."""
    if isinstance(op, str):
        return op
    from tvm.ir.op import Op  # (tvm.ir builds on this module)

    if not isinstance(op, Op):
        raise TypeError(
            f"tir.Call: op must be an operator name (a str such as 'tir.exp') or a tvm.ir.Op, got {value_text(op)}"
        )
    return tir_op_name(op.name)


def tir_op_name(name: str) -> str:
    """An operator name as this project's IR spells it: Apache TVM's ``tirx.`` names as ``tir.``."""
    return "tir." + name[len("tirx.") :] if name.startswith("tirx.") else name


def _call_args(args: Any) -> Tuple[PrimExpr, ...]:
    """A call's arguments as a tuple of expressions: Python numbers as :func:`const` makes them,
    strings as ``StringImm`` (as Apache TVM's ``Call`` converts them)."""
    if not isinstance(args, (tuple, list)):
        raise TypeError(f"tir.Call: args must be a list or tuple of PrimExprs, got {value_text(args)}")
    if type(args) is tuple and all(isinstance(a, PrimExpr) for a in args):
        return args
    return tuple(
        StringImm(a) if isinstance(a, str) else expr_field("Call", f"args[{k}]", a) for k, a in enumerate(args)
    )


@dataclass(eq=False, frozen=True)
class BufferLoad(PrimExpr):
    """``buffer[indices]``; one index per buffer dimension (one after flattening)."""

    buffer: "Buffer"
    indices: Tuple[PrimExpr, ...]
    dtype: str = ""
    span: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.buffer, Buffer):
            raise TypeError(
                f"tir.BufferLoad: buffer must be a tir.Buffer, got {value_text(self.buffer)}; "
                f"declare one with tir.decl_buffer"
            )
        if type(self.indices) is not tuple or not all(isinstance(i, PrimExpr) for i in self.indices):
            object.__setattr__(self, "indices", index_fields("BufferLoad", self.indices))
        if not self.dtype:
            object.__setattr__(self, "dtype", self.buffer.dtype)


#: Tensor-core fragment scopes (:mod:`tvm.script.fragments`) and the role of each.
FRAGMENT_SCOPES = {"wmma.matrix_a": "matrix_a", "wmma.matrix_b": "matrix_b", "wmma.accumulator": "accumulator"}


def is_per_thread(scope: str) -> bool:
    """Whether memory of ``scope`` belongs to one thread (``"local"``) or to its warp (a
    fragment): allocation placement and compaction treat both alike."""
    return scope == "local" or scope in FRAGMENT_SCOPES


@dataclass(eq=False)
class Buffer:
    """A typed, shaped view of memory.

    ``data`` is the handle Var of the backing pointer; ``scope`` is ``"global"`` (parameters),
    ``"shared"`` (per block / work-group) or ``"local"`` (per thread). ``strides`` empty means
    row-major contiguous. ``elem_offset`` is in elements.
    """

    name: str
    shape: Tuple[PrimExpr, ...]
    dtype: str = "float32"
    data: Optional[Var] = None
    strides: Tuple[PrimExpr, ...] = ()
    elem_offset: PrimExpr = field(default_factory=lambda: IntImm("int32", 0))
    scope: str = "global"
    align: int = 64
    span: Any = None

    def __post_init__(self):
        self.shape = tuple(const(s, "int32") if isinstance(s, int) else s for s in self.shape)
        self.strides = tuple(self.strides)
        if self.strides and len(self.strides) != len(self.shape):
            raise ValueError(
                f"buffer {self.name}: {len(self.strides)} stride(s) for {len(self.shape)} dimension(s); "
                f"give one stride per dimension, or none for a compact row-major buffer"
            )
        if self.data is None:
            self.data = Var(self.name, "handle")

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    @property
    def ty(self) -> "Any":
        """The buffer's type as Apache TVM's newer API has it (:class:`tvm.ir.BufferType`:
        ``dtype`` as a PrimType, ``shape``, ``strides``, ``elem_offset``, ``scope``)."""
        from tvm.ir.type import BufferType

        return BufferType(self)

    def __iter__(self):
        raise TypeError(f"buffer '{self.name}' is not a sequence of values: index it (A[i]) or use its shape")

    def __getitem__(self, idx) -> BufferLoad:
        idx = idx if isinstance(idx, tuple) else (idx,)
        return BufferLoad(self, tuple(const(i, "int32") if isinstance(i, int) else i for i in idx))

    def __repr__(self) -> str:
        return f"Buffer({self.name}, {self.dtype}, shape={self.shape}, scope={self.scope})"

    __hash__ = object.__hash__


_CONSTANTS = (IntImm, FloatImm)

from . import fold as _fold  # noqa: E402  (it builds on the classes above)
