"""The ``T`` namespace of TVMScript: ``from tvm.script import tir as T``.

The dialect is Apache TVM's loop-level TVMScript::

    @T.prim_func                                  # or @T.prim_func(private=True)
    def add(a: T.handle, B: T.Buffer((128,), "float32"), alpha: T.float32):
        T.func_attr({"tir.noalias": True})
        n = T.int64()                             # symbolic dimension
        A = T.match_buffer(a, (n,), "float32")
        for bx in T.thread_binding(T.int64(4), thread="blockIdx.x"):
            for tx in T.thread_binding(T.int64(32), thread="threadIdx.x"):
                S = T.alloc_buffer((32,), "float32", scope="shared")
                ...

Parameters: ``T.Buffer(shape, dtype)`` annotations, ``T.handle`` + ``T.match_buffer``, scalar
dtypes (``n: T.int32``). Loops: ``range``, ``T.serial``, ``T.parallel``, ``T.vectorized``,
``T.unroll``, ``T.thread_binding``, ``T.grid``. Expressions: Python operators, ``T.<dtype>(x)``
constants/casts, ``T.Cast``, ``T.Select``, ``T.if_then_else``, ``T.min``/``T.max`` and every
intrinsic of :mod:`tvm.tir.op`, ``T.<backend>.<fn>`` from backend namespaces. Blocks
(``T.block``, ``T.reads``, ``T.writes``, ``T.axis`` ...) are not supported and raise a clear error.
Statement semantics and implicit casts are described in :mod:`tvm.script.parser.core`.

Functions here are what names like ``T.exp`` or ``T.serial`` resolve to while the parser
(:mod:`tvm.script.parser`) interprets a ``@T.prim_func`` body. Intrinsics return TIR nodes
directly; the structural helpers (``T.serial``, ``T.grid``, ``T.match_buffer``,
``T.alloc_buffer``, ``T.func_attr``, ``T.int32()`` without arguments ...) return small marker
objects the parser turns into statements. ``T.<ns>.<fn>`` reaches backend namespaces registered in
:mod:`tvm.script.namespaces`.
"""

from __future__ import annotations

import builtins as _builtins
import functools as _functools
import math
import re as _re
import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from tvm.tir import dtype as _dt
from tvm.tir import op as _op
from tvm.tir.expr import Call as _Call
from tvm.tir.expr import FloatImm, IntImm, PrimExpr, StringImm
from tvm.tir.expr import FRAGMENT_SCOPES
from tvm.script.fragments import (  # noqa: F401 (T.<name>)
    tvm_access_ptr,
    tvm_fill_fragment,
    tvm_load_matrix_sync,
    tvm_mma_sync,
    tvm_store_matrix_sync,
    type_annotation,
)
from tvm.script.llvm_intrinsics import call_llvm_intrin, call_llvm_pure_intrin  # noqa: F401 (T.<name>)
from tvm.tir.composite_math import acosh, asinh, atanh, copysign, hypot, ldexp  # noqa: F401 (T.<name>)
from tvm.tir.op import (  # noqa: F401  (re-exported as T.<name>)
    abs,
    acos,
    address_of,
    asin,
    atan,
    atan2,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    call_extern,
    call_intrin,
    call_packed,
    call_pure_extern,
    ceil,
    ceildiv,
    clz,
    cos,
    cosh,
    erf,
    exp,
    exp2,
    exp10,
    fabs,
    floor,
    floordiv,
    floormod,
    fma,
    fmod,
    if_then_else,
    infinity,
    isfinite,
    isinf,
    isnan,
    likely,
    log,
    log1p,
    log2,
    log10,
    logical_and,
    logical_not,
    logical_or,
    max,
    max_value,
    min,
    min_value,
    nearbyint,
    popcount,
    pow,
    q_multiply_shift,
    q_multiply_shift_per_axis,
    round,
    rsqrt,
    shift_left,
    shift_right,
    sigmoid,
    sin,
    sinh,
    sqrt,
    tan,
    tanh,
    trunc,
    truncdiv,
    truncmod,
    tvm_storage_sync,
    tvm_warp_activemask,
    tvm_warp_shuffle,
    tvm_warp_shuffle_down,
    tvm_warp_shuffle_up,
    tvm_warp_shuffle_xor,
)
from tvm.tir.stmt import THREAD_TAGS, ForKind


# --------------------------------------------------------------------------- markers


@dataclass
class LoopSpec:
    """One loop header (``T.serial`` ... ``T.thread_binding``)."""

    kind: ForKind
    start: Any
    stop: Any
    thread: Optional[str] = None
    annotations: dict = field(default_factory=dict)
    #: A step other than 1 (``range(0, n, 2)``, ``T.serial(0, n, step=2)``): a nonzero constant, or
    #: an integer expression known at run time (which must then be positive).
    step: Any = 1

    def __iter__(self):
        raise TypeError(
            "a loop header (range, T.serial ...) is used only as 'for i in range(...)'; enumerate, zip and "
            "list() of loops are not supported"
        )

    def __reversed__(self):
        raise TypeError("reversed(range(...)) is not supported: count down with range(stop - 1, start - 1, -1)")


@dataclass
class GridSpec:
    """``T.grid(*extents)``: perfectly nested serial loops."""

    extents: tuple


def _annotation_text(annotation: Any) -> str:
    """How ``annotation`` is written (for messages): ``T.int32``, ``T.Buffer((4,), "float32")``."""
    if isinstance(annotation, BufferSpec):
        return f"T.Buffer({annotation.shape!r}, {annotation.dtype!r})"
    if isinstance(annotation, type):
        return annotation.__name__
    return repr(annotation)


class _OptionalAnnotation:
    """``X | None`` of an annotation ``X`` is ``X`` (a macro's optional parameter,
    ``mask: T.Buffer | None = None``, which Python evaluates when the macro is defined). Any other
    union (``T.int32 | T.float32``) is a TypeError: a parameter has one type."""

    def __or__(self, other: Any) -> Any:
        return self._optional(other, f"{_annotation_text(self)} | {_annotation_text(other)}")

    def __ror__(self, other: Any) -> Any:
        return self._optional(other, f"{_annotation_text(other)} | {_annotation_text(self)}")

    def _optional(self, other: Any, written: str) -> Any:
        if other is None:
            return self
        raise TypeError(
            f"annotation {written}: a union of two types is not supported; only 'X | None' is (an optional "
            "parameter, X or None): annotate one type"
        )


@dataclass
class BufferSpec(_OptionalAnnotation):
    """``T.Buffer(shape, dtype, ...)`` before it has a name (``T.Buffer((4,), "float32") | None``,
    a macro's optional parameter, is itself)."""

    shape: tuple
    dtype: str = "float32"
    strides: tuple = ()
    elem_offset: Any = 0
    scope: str = "global"
    align: int = 64
    data: Any = None


@dataclass
class MatchBufferSpec:
    """``T.match_buffer(handle, shape, dtype)``."""

    handle: Any
    spec: BufferSpec


@dataclass
class AllocSpec:
    """``T.alloc_buffer(shape, dtype, scope=...)``."""

    spec: BufferSpec

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(
            f"T.alloc_buffer(...) has no '{name}' until it is a buffer: assign it to a name in the kernel or a "
            "macro's body (B = T.alloc_buffer(...)), then use B"
        )


@dataclass
class LaunchThreadSpec:
    """``T.launch_thread(thread, extent)``: the rest of the block (or a ``with`` body) runs bound
    to ``thread``, a tag such as ``"threadIdx.x"`` or a variable from :func:`env_thread`."""

    thread: Any
    extent: Any


@dataclass
class EnvThreadSpec:
    """``T.env_thread(tag)``: a thread variable, launched later by :func:`launch_thread`."""

    tag: str


@dataclass
class VarSpec:
    """``T.int32()`` / ``T.int64()`` / ``T.var(dtype)``: declare a symbolic variable."""

    dtype: str


@dataclass
class FuncAttrSpec:
    """``T.func_attr({...})``."""

    attrs: dict


class HandleType(_OptionalAnnotation):
    """``T.handle``: annotation of an opaque pointer parameter (bound by ``T.match_buffer``)."""

    dtype = "handle"

    def __call__(self, *args, **kwargs):
        return self

    def __repr__(self) -> str:
        return "T.handle"


class _AnnotationFunction(_OptionalAnnotation):
    """A ``T.`` function that is also an annotation (``T.Buffer``, ``T.int32``): called, it is
    the function; in ``X | None`` it is itself."""

    def __init__(self, fn: Callable):
        _functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__wrapped__(*args, **kwargs)

    def __repr__(self) -> str:
        return f"T.{self.__name__}"


handle = HandleType()


class UnsupportedError(ValueError):
    """A TVMScript construct this implementation does not support."""


# --------------------------------------------------------------------------- prim_func


def prim_func(
    func: Optional[Callable] = None, *, private: bool = False, check_well_formed: bool = True, s_tir: bool = False
):
    """Decorator: parse the decorated Python function as TIR and return a :class:`PrimFunc`.

    ``@T.prim_func(private=True)`` omits the ``global_symbol`` attribute (the default is the
    function's name). ``s_tir=True`` (Apache TVM's marker for functions written with blocks) is
    accepted and changes nothing (blocks themselves are not in this subset yet). With
    ``check_well_formed`` (default) the result is checked by
    :func:`tvm.tir.transform.verify` (target-independent checks) and problems are reported as
    :class:`tvm.script.TVMScriptError` at the offending line."""
    from .parser import parse_function

    def wrap(f: Callable):
        return parse_function(f, private=private, check_well_formed=check_well_formed)

    return wrap if func is None else wrap(func)


# --------------------------------------------------------------------------- loops


def _norm_range(start, stop):
    if stop is None:
        return 0, start
    return start, stop


def _loop_step(step: Any) -> Any:
    """A loop's step: a nonzero int, or an integer expression (its sign is checked when the loop
    runs); ValueError for anything else."""
    if isinstance(step, IntImm):
        step = int(step.value)
    if isinstance(step, PrimExpr) and _dt.is_integer(str(step.dtype)) and _dt.lanes(str(step.dtype)) == 1:
        return step
    if isinstance(step, _builtins.bool) or not isinstance(step, _builtins.int) or step == 0:
        raise ValueError(f"a loop step must be a nonzero integer or an integer expression, got {step!r}")
    return step


def _loop(kind: ForKind, name: str, doc: str) -> Callable[..., LoopSpec]:
    def loop(start, stop=None, step: Any = 1, *, annotations: Optional[dict] = None, unroll: Any = None) -> LoopSpec:
        if unroll is not None and not isinstance(unroll, _builtins.int):
            raise TypeError(f"T.{name}(unroll=...) takes True, False or a count, got {unroll!r}")
        a, b = _norm_range(start, stop)
        return LoopSpec(kind, a, b, None, dict(annotations or {}), _loop_step(step))

    loop.__name__ = loop.__qualname__ = name
    loop.__doc__ = doc
    return loop


serial = _loop(
    ForKind.SERIAL,
    "serial",
    "Sequential loop ``range(start, stop)`` (or ``range(start)``); ``unroll=`` is a hint for the device compiler.",
)
parallel = _loop(ForKind.PARALLEL, "parallel", "Loop whose iterations run in parallel (OpenMP on the CPU).")
vectorized = _loop(ForKind.VECTORIZED, "vectorized", "Loop to vectorize.")
unroll = _loop(ForKind.UNROLLED, "unroll", "Loop to unroll.")


def thread_binding(start, stop=None, thread: Optional[str] = None, *, annotations: Optional[dict] = None) -> LoopSpec:
    """Loop bound to a GPU thread index: ``T.thread_binding(n, thread="threadIdx.x")`` or
    ``T.thread_binding(0, n, thread="blockIdx.x")``."""
    if isinstance(stop, str) and thread is None:
        stop, thread = None, stop
    if thread is None:
        raise TypeError('T.thread_binding needs thread="threadIdx.x" (or blockIdx.*, threadIdx.*)')
    a, b = _norm_range(start, stop)
    if thread in VIRTUAL_THREAD_TAGS:
        # virtual threads never synchronize with each other: running them in order is exact
        return LoopSpec(ForKind.SERIAL, a, b, None, {**(annotations or {}), "virtual_thread": thread})
    if thread not in THREAD_TAGS:
        raise ValueError(f"unknown thread tag {thread!r}; expected one of {', '.join(THREAD_TAGS)}")
    return LoopSpec(ForKind.THREAD_BINDING, a, b, thread, dict(annotations or {}))


#: Apache TVM's virtual-thread tags: loops that a schedule interleaves; here, serial loops.
VIRTUAL_THREAD_TAGS = ("vthread", "vthread.x", "vthread.y", "vthread.z")


def _node(name: str, op: str) -> Callable[..., PrimExpr]:
    def make(a: Any, b: Any) -> PrimExpr:
        return _op.binary(op, a, b, fold=False)

    make.__name__ = name
    make.__doc__ = f"``T.{name}(a, b)``: the {name} expression node (Apache TVM's printed IR), not folded."
    return make


for _name, _binop in (
    ("Add", "add"), ("Sub", "sub"), ("Mul", "mul"), ("Div", "div"), ("Mod", "truncmod"),
    ("FloorDiv", "floordiv"), ("FloorMod", "floormod"), ("Min", "min"), ("Max", "max"),
    ("EQ", "eq"), ("NE", "ne"), ("LT", "lt"), ("LE", "le"), ("GT", "gt"), ("GE", "ge"),
    ("And", "and"), ("Or", "or"),
):  # fmt: skip
    globals()[_name] = _node(_name, _binop)


def reinterpret(*args: Any, dtype: Optional[str] = None) -> PrimExpr:
    """The bits of a value read as a dtype of the same width: ``T.reinterpret("int32", x)`` or
    ``T.reinterpret(x, dtype="int32")``."""
    if dtype is not None:
        args = (dtype, *args)
    if len(args) != 2:
        raise TypeError('T.reinterpret takes a dtype and a value: T.reinterpret("int32", x)')
    return _op.reinterpret(args[0], args[1])


def grid(*extents) -> GridSpec:
    """Nested serial loops over ``extents`` (``for i, j in T.grid(n, m)``)."""
    if not extents:
        raise TypeError("T.grid needs at least one extent")
    return GridSpec(tuple(extents))


# --------------------------------------------------------------------------- buffers


def _shape(shape) -> tuple:
    if isinstance(shape, (list, tuple)):
        return tuple(shape)
    return (shape,)


def storage_scope(scope: str) -> str:
    """The scope a buffer of Apache TVM's ``scope`` lives in here: ``"warp"`` memory (threads of
    a warp reading each other's elements) in shared memory, which holds it on every GPU; tagged
    scopes (``"local.L0A"``, ``"global.texture"``) in their base scope; tensor-core fragments
    (``"wmma.matrix_a"`` ...) keep theirs (:mod:`tvm.script.fragments`). ValueError otherwise."""
    if scope in ("global", "shared", "local", "shared.dyn") or scope in FRAGMENT_SCOPES:
        return scope
    if scope == "warp":
        return "shared"
    base = scope.split(".", 1)[0]
    if base in ("global", "local") and "." in scope:
        return base
    raise ValueError(
        f"unknown storage scope {scope!r}; expected 'global', 'shared', 'shared.dyn', 'local', 'warp', "
        f"a tensor-core fragment ({', '.join(sorted(FRAGMENT_SCOPES))}) or a tagged 'global.*' / 'local.*'"
    )


#: Short dtype names Apache TVM's kernels use, and the dtype each means.
DTYPE_ALIASES = {"float": "float32", "int": "int32", "uint": "uint32"}


@_AnnotationFunction
def Buffer(
    shape,
    dtype: str = "float32",
    data=None,
    strides=None,
    elem_offset=None,  # noqa: N802
    scope: str = "global",
    align: int = 64,
    **_ignored,
) -> BufferSpec:
    """Buffer annotation of a parameter: ``A: T.Buffer((n, m), "float32")``; in a body,
    ``A_flat = T.Buffer((n * m,), "float32", data=A.data)`` declares another view of ``A``'s memory.
    ``"float"`` and ``"int"`` mean float32 and int32 (:data:`DTYPE_ALIASES`)."""
    dtype = DTYPE_ALIASES.get(dtype, dtype)
    _dt.parse(dtype)
    return BufferSpec(
        _shape(shape),
        dtype,
        tuple(strides or ()),
        0 if elem_offset is None else elem_offset,
        storage_scope(scope),
        align,
        data,
    )


def match_buffer(
    param,
    shape=None,
    dtype: Optional[str] = None,
    data=None,
    strides=None,
    elem_offset=None,
    scope: str = "global",
    align: int = 64,
    **_ignored,
) -> MatchBufferSpec:
    """Bind a ``T.handle`` parameter to a buffer view: ``A = T.match_buffer(a, (n,), "float32")``;
    a view of a region (``T.match_buffer(A[0:4, j], (4,))``) takes, when not given, the region's
    extents as its shape and the buffer's dtype (shape None and dtype None here: the parser
    fills them in)."""
    spec = Buffer(() if shape is None else shape, dtype or "float32", None, strides, elem_offset, scope, align)
    if shape is None or dtype is None:
        spec = dataclasses.replace(spec, shape=spec.shape if shape is not None else None, dtype=dtype and spec.dtype)
    return MatchBufferSpec(param, spec)


def alloc_buffer(
    shape,
    dtype: str = "float32",
    data=None,
    strides=None,
    elem_offset=None,
    scope: str = "global",
    align: int = 64,
    **_ignored,
) -> "AllocSpec | BufferSpec":
    """Allocate a buffer (``scope="shared"`` or ``"local"`` in kernels) for the rest of the block;
    with ``data=X.data``, declare a view of ``X``'s memory instead (nothing is allocated: writes
    through the view are writes to ``X``), as ``T.Buffer(..., data=X.data)`` does."""
    scope = storage_scope(scope)
    if data is not None:
        return Buffer(shape, dtype, data, strides, elem_offset, scope, align)
    return AllocSpec(Buffer(shape, dtype, None, strides, elem_offset, scope, align))


#: ``T.decl_buffer(shape, dtype)`` allocates; ``T.decl_buffer(shape, dtype, data=X.data)`` aliases ``X``.
decl_buffer = alloc_buffer
#: Apache TVM's name for an allocation in a block (``T.sblock_alloc_buffer``): the same here.
sblock_alloc_buffer = block_alloc_buffer = alloc_buffer


def alloc_shared(shape, dtype: str = "float32", **kwargs: Any) -> "AllocSpec | BufferSpec":
    """``T.alloc_buffer(shape, dtype, scope="shared")``: memory every thread of a block shares."""
    return alloc_buffer(shape, dtype, **{**kwargs, "scope": "shared"})


def alloc_local(shape, dtype: str = "float32", **kwargs: Any) -> "AllocSpec | BufferSpec":
    """``T.alloc_buffer(shape, dtype, scope="local")``: memory of one thread."""
    return alloc_buffer(shape, dtype, **{**kwargs, "scope": "local"})


def func_attr(attrs: dict) -> FuncAttrSpec:
    """Set function attributes (``{"global_symbol": "main", "tir.noalias": True}``)."""
    if not isinstance(attrs, dict):
        raise TypeError("T.func_attr expects a dict")
    return FuncAttrSpec({k: _attr_value(v) for k, v in attrs.items()})


def _attr_value(v: Any) -> Any:
    """Attribute values are plain Python: ``T.bool(True)`` -> True, ``T.int32(4)`` -> 4."""
    if isinstance(v, IntImm):
        return _builtins.bool(v.value) if v.dtype == "bool" else v.value
    if isinstance(v, FloatImm):
        return v.value
    if isinstance(v, StringImm):
        return v.value
    if isinstance(v, (list, tuple)):
        return type(v)(_attr_value(x) for x in v)
    if isinstance(v, dict):
        return {k: _attr_value(x) for k, x in v.items()}
    return v


def tvm_thread_invariant(cond: Any) -> Any:
    """A condition with the same value on every thread of a block (a hint for barrier placement);
    ``cond`` unchanged."""
    return cond


def ignore_loop_partition(cond: Any) -> Any:
    """A condition loop partitioning should not split on (a scheduling hint); ``cond`` unchanged."""
    return cond


def target(spec, host=None):
    """``T.target("cuda")``: a :class:`tvm.target.Target` (for ``T.func_attr``)."""
    from tvm.target import Target

    return Target(spec, host)


def var(dtype: str, name: str = "") -> VarSpec:
    """Declare a symbolic variable: ``n = T.var("int32")``."""
    _dt.parse(dtype)
    return VarSpec(dtype)


# --------------------------------------------------------------------------- expressions


def Cast(dtype: str, value) -> PrimExpr:  # noqa: N802
    """Convert ``value`` to ``dtype``."""
    return _op.cast(dtype, value)


def Call(*args: Any, ret_ty: Any = None) -> PrimExpr:  # noqa: N802
    """A call built from its operator: ``T.Call(tvm.ir.Op.get("tir.call_extern"), ["f", x],
    ret_ty="float32")`` (Apache TVM's newer spelling) or ``T.Call("float32", op, [args])``; the
    operator is an ``Op`` or its name. Calls of packed and extern functions go through
    ``T.call_packed`` / ``T.call_extern`` and their checks."""
    from tvm.ir.op import Op

    if len(args) == 3:
        ret_ty, op, operands = args
    elif len(args) == 2:
        op, operands = args
    else:
        raise TypeError("T.Call takes (op, args, ret_ty=dtype) or (dtype, op, args)")
    op = op if isinstance(op, Op) else Op.get(op)
    dtype = str(getattr(ret_ty, "dtype", ret_ty) or "int32")
    operands = list(operands)
    if op.short_name in ("call_extern", "call_pure_extern"):
        return _op.call_extern(*operands, dtype=dtype)
    if op.short_name == "tvm_call_packed":
        if not operands or not isinstance(operands[0], (str, StringImm)):
            raise TypeError(f"T.Call of {op.name} needs the function's name (a string) as its first argument")
        name = operands[0].value if isinstance(operands[0], StringImm) else operands[0]
        call = _op.call_packed(name, *operands[1:])
        return _Call(dtype, call.op, call.args, call.span)
    return _op.call_intrin(dtype, op.name, *operands)


def Select(cond, true_value, false_value) -> PrimExpr:  # noqa: N802
    """``cond ? true_value : false_value``; both sides may be evaluated."""
    return _op.select(cond, true_value, false_value)


def ramp(base: Any, stride: Any, lanes: Any) -> PrimExpr:
    """The integer vector ``[base, base + stride, ..., base + (lanes - 1) * stride]``: the index of
    a vector load or store, ``C[T.ramp(i * 4, 1, 4)] = A[T.ramp(i * 4, 1, 4)] + 1.0``."""
    return _op.ramp(base, stride, lanes)


def broadcast(value: Any, lanes: Any) -> PrimExpr:
    """A vector of ``lanes`` copies of ``value``."""
    return _op.broadcast(value, lanes)


def shuffle(vectors: Any, indices: Any) -> PrimExpr:
    """The lanes ``indices`` picks from the concatenation of ``vectors``:
    ``T.shuffle([x, y], [1, 0])``."""
    return _op.shuffle(vectors, indices)


Ramp, Broadcast, Shuffle = ramp, broadcast, shuffle  # Apache TVM's node-style spellings
Not, And, Or = logical_not, logical_and, logical_or


def evaluate(value) -> PrimExpr:
    """Evaluate an expression as a statement."""
    if isinstance(value, ThreadAllreduceSpec):
        return value
    return _op.convert(value)


def _dtype_helper(name: str):
    def f(value: Any = None, *args, **kwargs):
        if value is None:
            return VarSpec(name)
        if isinstance(value, str):
            if not _dt.is_float(name):
                raise TypeError(f"T.{name} expects a number, got {value!r}")
            return FloatImm(name, float(value))
        if isinstance(value, PrimExpr):
            return value.astype(name)
        if isinstance(value, (_builtins.bool, int, float)):
            if _dt.is_float(name):
                _dt.check_fits(float(value), name)
                return FloatImm(name, float(value))
            if isinstance(value, float) and not math.isfinite(value):
                raise TypeError(f"cannot make {name} from {value!r}")
            if _dt.is_bool(name):
                return IntImm("bool", int(_builtins.bool(value)))
            iv = int(value)
            _dt.check_fits(iv, name)
            return IntImm(name, iv)
        raise TypeError(f"T.{name} cannot convert {type(value).__name__}")

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (
        f"``T.{name}(x)``: a {name} constant (Python number) or cast (expression); "
        f"``T.{name}()`` declares a symbolic variable; ``x: T.{name}`` annotates a scalar."
    )
    f._tir_dtype = name  # type: ignore[attr-defined]
    return f


for _name in _dt.SCALAR_DTYPES + _dt.FLOAT8_DTYPES:
    globals()[_name] = _AnnotationFunction(_dtype_helper(_name))
del _name

boolean = globals()["bool"]
#: Apache TVM's short dtype names (``val: T.f32``, ``T.u32(0)``).
_SHORT_DTYPE_NAMES = {"f16": "float16", "f32": "float32", "f64": "float64", "bf16": "bfloat16"}
_SHORT_DTYPE_NAMES.update({f"{k[0]}{bits}": f"{k}{bits}" for k in ("int", "uint") for bits in (8, 16, 32, 64)})
for _short, _name in _SHORT_DTYPE_NAMES.items():
    globals()[_short] = globals()[_name]
del _short, _name


def _unsupported(name: str, hint: str = ""):
    def f(*args, **kwargs):
        raise UnsupportedError(f"T.{name} is not supported by this TVMScript implementation{hint}")

    f.__name__ = name
    return f


def launch_thread(thread: Any, extent: Any) -> LaunchThreadSpec:
    """Bind the rest of the block to GPU thread ``thread`` (a tag like ``"blockIdx.x"``, or a
    variable from :func:`env_thread`) over ``extent``: ``tx = T.launch_thread("threadIdx.x", 128)``,
    ``T.launch_thread(tx, 128)`` or ``with T.launch_thread(tx, 128):``. The same as a
    ``T.thread_binding`` loop around those statements."""
    return LaunchThreadSpec(thread, extent)


@dataclass
class IterVarSpec:
    """``T.iter_var(var, dom, iter_type, thread_tag)``: ``var`` as a thread of ``thread_tag``, for
    ``T.attr(<it>, "thread_extent", n)`` (Apache TVM's older spelling of :func:`launch_thread`)."""

    var: Any
    tag: str


def iter_var(var: Any, dom: Any = None, iter_type: Any = None, thread_tag: str = "") -> IterVarSpec:
    """The thread variable ``var`` of ``thread_tag`` (``dom`` and ``iter_type`` change nothing:
    the ``thread_extent`` attribute gives the extent)."""
    if thread_tag not in THREAD_TAGS:
        raise ValueError(f"T.iter_var: thread tag must be one of {', '.join(THREAD_TAGS)}, got {thread_tag!r}")
    return IterVarSpec(var, thread_tag)


def Range(begin: Any, end: Any = None) -> tuple:  # noqa: N802 - Apache TVM's spelling
    """``T.Range(begin, end)``: a half-open domain, as ``(begin, end)``."""
    return (begin, end) if end is not None else (0, begin)


def env_thread(tag: str) -> EnvThreadSpec:
    """A thread variable for ``tag`` (``"threadIdx.x"`` ...), launched by :func:`launch_thread`."""
    if tag not in THREAD_TAGS:
        raise ValueError(f"unknown thread tag '{tag}'; expected one of {', '.join(THREAD_TAGS)}")
    return EnvThreadSpec(tag)


# --------------------------------------------------------------------------- device regions


@dataclass
class DeviceEntrySpec:
    """``T.device_entry()``: the statements after it, to the end of the function, are one kernel."""

    DESCRIBED = "T.device_entry(), which is a statement of its own"


@dataclass
class ScopeIdSpec:
    """A scope id of a device region (``T.cta_id([n])``, ``T.thread_id([m])``, ``T.warp_id([w])``
    ...): ``kind`` names the scope pair (``"cta"``: a block in the grid, ``"thread"``: a thread in
    its block, ``"warp"``, ``"lane"``, ``"warpgroup"``, ``"warp_in_wg"``, ``"thread_in_wg"``),
    ``extents`` one extent per variable (None: inferred from the other ids)."""

    kind: str
    extents: Optional[list]
    dtype: str
    call: str

    #: what messages call it
    DESCRIBED = "a scope id (it names a variable only as tx = T.thread_id([n]) at the device region's level)"


def device_entry() -> DeviceEntrySpec:
    """Start the device region: the statements after it, to the end of the function, run as one
    kernel launched over the scope ids declared in it (``T.cta_id`` blocks, ``T.thread_id``
    threads; one thread when it declares none). What comes before it runs on the host."""
    return DeviceEntrySpec()


def _scope_id(kind: str, call: str) -> Callable[..., ScopeIdSpec]:
    def declare(extents: Any = None, preferred: Any = None, dtype: str = "int32") -> ScopeIdSpec:
        if extents is not None and not isinstance(extents, (list, tuple)):
            extents = [extents]
        return ScopeIdSpec(kind, None if extents is None else list(extents), str(dtype), call)

    declare.__name__ = declare.__qualname__ = call
    declare.__doc__ = f'``T.{call}([extents], dtype="int32")``: {_SCOPE_ID_MEANING[kind]}, in a device region.'
    return declare


_SCOPE_ID_MEANING = {
    "cta": "the index of the thread block in the grid (blockIdx.x, .y, .z for one to three extents)",
    "thread": "the index of the thread in its block (threadIdx.x, .y, .z)",
    "warp": "the warp of the thread in its block (its linear thread index // 32)",
    "lane": "the thread's lane in its warp (its linear thread index % 32)",
    "warpgroup": "the thread's group of four warps in its block (linear thread index // 128)",
    "warp_in_wg": "the thread's warp in its warpgroup (warp % 4)",
    "thread_in_wg": "the thread's index in its warpgroup (linear thread index % 128)",
}
cta_id = _scope_id("cta", "cta_id")
thread_id = _scope_id("thread", "thread_id")
warp_id = _scope_id("warp", "warp_id")
lane_id = _scope_id("lane", "lane_id")
warpgroup_id = _scope_id("warpgroup", "warpgroup_id")
warp_id_in_wg = _scope_id("warp_in_wg", "warp_id_in_wg")
thread_id_in_wg = _scope_id("thread_in_wg", "thread_id_in_wg")


# --------------------------------------------------------------------------- blocks


@dataclass
class BlockSpec:
    """``T.block(name)`` / ``T.sblock(name)``: a ``with`` scope lowered to plain statements (the
    block's iteration variables become bindings, ``T.init`` a guarded statement)."""

    name: str


@dataclass
class AxisSpec:
    """One block iteration variable: ``kind`` "S" (spatial) or "R" (reduction), the domain's
    start (``dom`` given as an extent or as ``(start, stop)``), and the value it is bound to."""

    kind: str
    start: Any
    binding: Any


class InitSpec:
    """``with T.init():`` the reduction's initial value, run on the first reduction iteration."""


@dataclass
class WhereSpec:
    """``T.where(cond)``: the rest of the block runs only where ``cond`` holds."""

    condition: Any


class _Ignored:
    """A block annotation with no effect on the lowered statements (``T.reads`` ...)."""

    #: what messages call it
    DESCRIBED = "a block annotation (T.reads, T.writes, T.block_attr ...), which has no value"

    def __repr__(self) -> str:
        return self.DESCRIBED


def block(name: str = "", no_realize: bool = False) -> BlockSpec:
    """``with T.block("C"):``: a block of the loop nest (Apache TVM's scheduling unit). Its
    ``T.axis`` variables are bound to their values, ``T.init()`` runs on the first iteration of
    the block's reduction axes, ``T.where`` guards it; ``T.reads``/``T.writes``/``T.block_attr``
    are accepted and have no effect."""
    return BlockSpec(str(name))


sblock = block


def _domain_start(dom: Any) -> Any:
    if isinstance(dom, (tuple, list)) and len(dom) == 2:
        return dom[0]
    if isinstance(dom, range):
        return dom.start
    return 0


class _Axis:
    """``T.axis``: ``spatial``, ``reduce`` and ``remap`` of block iteration variables."""

    @staticmethod
    def spatial(dom: Any, binding: Any, dtype: str = "int32") -> AxisSpec:
        """A spatial iteration variable over ``dom`` bound to ``binding``."""
        return AxisSpec("S", _domain_start(dom), binding)

    @staticmethod
    def reduce(dom: Any, binding: Any, dtype: str = "int32") -> AxisSpec:
        """A reduction iteration variable over ``dom`` bound to ``binding``."""
        return AxisSpec("R", _domain_start(dom), binding)

    @staticmethod
    def remap(kinds: str, bindings: Any) -> tuple:
        """One iteration variable per letter of ``kinds`` ("S" or "R"), bound to ``bindings``
        (loop variables, whose loops start at their domains' start)."""
        bindings = list(bindings)
        if len(kinds) != len(bindings) or set(kinds) - {"S", "R"}:
            raise ValueError(f"T.axis.remap({kinds!r}, ...) needs one 'S' or 'R' per binding, got {len(bindings)}")
        return tuple(AxisSpec(k, None, b) for k, b in zip(kinds, bindings))

    scan = opaque = S = spatial
    R = reduce

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(
            f"T.axis.{name} is not part of TVMScript; T.axis has spatial, reduce, scan, opaque, remap, S and R"
        )


axis = _Axis()


def init() -> InitSpec:
    """``with T.init():`` inside a block: the statements run before the first reduction step."""
    return InitSpec()


def where(condition: Any) -> WhereSpec:
    """The block runs only where ``condition`` holds (a predicate of the loop variables)."""
    return WhereSpec(condition)


def reads(*regions: Any) -> _Ignored:
    """The block's read regions (accepted; the lowering does not need them)."""
    return _Ignored()


writes = block_attr = sblock_attr = reads


class _Let:
    """``x: T.let[T.float32] = value``: an annotated binding (``T.let[dtype]`` is ``dtype``);
    ``T.let(x, value, body)``: the expression ``body`` with ``x`` bound to ``value`` (``x`` a
    variable declared with ``x = T.int32()``)."""

    def __getitem__(self, annotation: Any) -> Any:
        return annotation

    def __call__(self, var: Any, value: Any, body: Any) -> PrimExpr:
        from tvm.tir.expr import Let, Var

        if not isinstance(var, Var):
            raise TypeError(f"T.let binds a variable (x = T.int32(); T.let(x, value, body)), got {var!r}")
        value = _op.convert(value, var.dtype)
        if value.dtype != var.dtype:
            raise TypeError(f"T.let: variable {var.name} is {var.dtype}, its value {value.dtype}")
        body = _op.convert(body)
        return Let(var, value, body, body.dtype)


let = _Let()


def Let(body: Any, where: dict) -> PrimExpr:  # noqa: N802 - Apache TVM's spelling
    """``T.Let(body, where={x: value, ...})``: ``body`` with each variable bound to its value
    (the first binding outermost)."""
    if not isinstance(where, dict) or not where:
        raise TypeError("T.Let(body, where={x: value}) needs at least one binding")
    out = _op.convert(body)
    for var, value in reversed(list(where.items())):
        out = let(var, value, out)
    return out


def macro(*args: Any, hygienic: bool = True) -> Any:
    """``@T.macro`` (or ``@T.macro(hygienic=False)``): a function whose statements are placed where
    a prim_func calls it, its parameters bound to the call's arguments. Its other names are
    those of its definition as they were when it was defined (when not hygienic: the caller's
    names first). See :mod:`tvm.script.parser.macros`."""
    from .parser.macros import decorator

    return decorator("T.macro", args, hygienic=hygienic)


def inline(*args: Any) -> Any:
    """``@T.inline``: as :func:`macro`, but the names of its definition are read at each call (as
    Python reads a closure's); defined inside a prim_func, it sees the kernel's names there."""
    from .parser.macros import decorator

    return decorator("T.inline", args, late_binding=True)


@dataclass
class BindSpec:
    """``T.bind(value, var=v)``: the declared variable ``v`` bound to ``value`` for the rest of
    the block."""

    var: Any
    value: Any


def bind(value: Any, type_annotation: Any = None, *, var: Any = None) -> Any:  # noqa: F811 - its parameter, as Apache TVM names it
    """``x = T.bind(value)``: bind a name to ``value`` for the rest of the block;
    ``T.bind(value, "int64")`` (or ``T.int64``) converts it first; ``T.bind(value, var=v)`` binds
    the variable ``v`` declared with ``v = T.int32()`` (the call's value is then ``v``)."""
    if type_annotation is not None:
        dtype = dtype_of_annotation(type_annotation)
        dtype = dtype or (type_annotation if isinstance(type_annotation, str) else None)
        if dtype is None:
            raise TypeError(f"T.bind: the type annotation {type_annotation!r} names no dtype")
        value = _op.cast(dtype, value)
    if var is None:
        return value
    from tvm.tir.expr import Var

    if not isinstance(var, Var) or var.dtype == "handle":
        raise TypeError(f"T.bind(value, var=v): v must be a scalar variable declared as v = T.int32(), got {var!r}")
    value = _op.convert(value, var.dtype) if not isinstance(value, PrimExpr) else value
    if value.dtype != var.dtype:
        if _dt.is_float(value.dtype) != _dt.is_float(var.dtype):
            raise TypeError(f"T.bind: a {value.dtype} value cannot bind {var.dtype} variable '{var.name}': cast it")
        value = value.astype(var.dtype)
    return BindSpec(var, value)


def meta_var(value: Any) -> Any:
    """A Python value used as is (``n = T.meta_var(100)``)."""
    return value


def assume(condition: Any) -> PrimExpr:
    """A fact the optimizer may use (``T.assume(i < n)``, also ``T.evaluate(T.assume(...))``);
    this implementation uses none, so it has no effect (a constant 0 to evaluate)."""
    return IntImm("int32", 0)


def cast(value: Any, dtype: str) -> Any:
    """``value`` converted to ``dtype`` (``T.cast(x, "float32")``, the same as ``T.Cast``)."""
    return Cast(dtype, value)


@dataclass
class AttrSpec:
    """``T.attr(node, key, value)``: an annotation over the rest of the block (or a ``with``
    body). The keys this implementation accepts change nothing in the lowered code, except
    ``reduce_scope``, whose node (a :class:`CommReducerSpec`) is the combiner of the
    ``T.tvm_thread_allreduce`` that follows."""

    key: str
    node: Any = None


@dataclass
class CommReducerSpec:
    """``T.comm_reducer(lambda x, y: ..., [identity])``: a commutative reduction of one value, or
    of several at once (``lambda x0, x1, y0, y1: (..., ...)`` with one identity each: argmax)."""

    combine: Callable[..., Any]
    identity: list

    def pairwise(self, xs: list, ys: list) -> list:
        """The combiner on two lists of values (the reducer's own and a partner's)."""
        out = self.combine(*xs, *ys)
        return list(out) if isinstance(out, (list, tuple)) else [out]


@dataclass
class ThreadAllreduceSpec:
    """``T.tvm_thread_allreduce(...)``: expanded by the parser in place (see
    ``tvm.script.parser.cross_thread``)."""

    args: tuple


def comm_reducer(combine: Callable[..., Any], identity: Any) -> CommReducerSpec:
    """A reducer for ``T.attr(reducer, "reduce_scope", ...)``: ``combine(x, y)`` and the
    identity element, a list of one value; for n values at once, ``combine(x0, .., y0, ..)``
    returns a tuple of n and the list holds n identities."""
    values = list(identity) if isinstance(identity, (list, tuple)) else [identity]
    if not values:
        raise ValueError("T.comm_reducer needs one identity element per reduced value")
    if not callable(combine):
        raise TypeError("T.comm_reducer needs a combiner such as lambda x, y: x + y")
    return CommReducerSpec(combine, values)


def tvm_thread_allreduce(*args: Any, dtype: str = "handle") -> ThreadAllreduceSpec:
    """``T.tvm_thread_allreduce(n, value, cond, result[i], thread_var, ...)``: ``result[i]`` of
    every thread becomes the reduction (of the enclosing ``reduce_scope``) of ``value`` over the
    threads that differ only in the thread variables listed; a statement (``T.evaluate``)."""
    return ThreadAllreduceSpec(args)


#: T.attr keys that name hardware scheduling hints only; the statements mean the same without
#: them (an async scope runs synchronously, a pragma is a hint, a double-buffering request leaves
#: one buffer).
IGNORED_ATTR_KEYS = (
    "async_",
    "pragma_",
    "compute_scope",
    "device_id",
    "device_type",
    "target",
    "storage_alignment",
    "double_buffer_",
    "tirx.launch_bounds_",
)


def attr(node: Any, key: Optional[str] = None, value: Any = None) -> AttrSpec | LaunchThreadSpec:
    """An annotation of the statements that follow; see :data:`IGNORED_ATTR_KEYS`.
    ``T.attr(tx, "thread_extent", n)`` (``tx`` from :func:`env_thread`) is
    ``T.launch_thread(tx, n)``, and ``T.attr(0, "device_scope", 0)`` a launch of one thread: the
    statements run on the device. ``T.attr({key: value, ...})`` (Apache TVM's TIRx form) takes
    hints only, such as ``"tirx.launch_bounds_min_blocks_per_sm"``."""
    if isinstance(node, dict) and key is None and value is None:
        for k in node:
            if not isinstance(k, str) or not k.startswith(IGNORED_ATTR_KEYS):
                raise UnsupportedError(f"T.attr key {k!r} is not supported by this TVMScript implementation")
        return AttrSpec("tirx.launch_bounds_")
    if not isinstance(key, str):
        got = f"T.attr({node!r})" if key is None else f"the key {key!r}"
        raise TypeError(
            f'T.attr takes a node, a string key and a value (T.attr(node, "pragma_...", value)) or a dict of '
            f'hints (T.attr({{"tirx.launch_bounds_...": ...}})); got {got}'
        )
    if key == "reduce_scope":
        if not isinstance(node, CommReducerSpec):
            raise TypeError("T.attr(..., 'reduce_scope', ...) needs a T.comm_reducer(...) as its node")
        return AttrSpec(key, node)
    if key in ("thread_extent", "virtual_thread"):
        return LaunchThreadSpec(node, value)
    if key == "device_scope":
        return LaunchThreadSpec("blockIdx.x", 1)
    if not key.startswith(IGNORED_ATTR_KEYS):
        raise UnsupportedError(f"T.attr key '{key}' is not supported by this TVMScript implementation")
    return AttrSpec(key)


def vscale() -> PrimExpr:
    """The scalable-vector multiple (SVE, RVV): the vector registers hold ``vscale`` times 128
    bits. Every target here has fixed-width vectors, so it is 1: a kernel written for scalable
    vectors, correct for every ``vscale``, runs with 128-bit vectors (``4 * T.vscale()`` float32
    lanes are 4)."""
    return IntImm("int32", 1)


def get_active_lane_mask(dtype: str, base: Any, limit: Any) -> PrimExpr:
    """The mask of a loop's tail (``dtype`` such as ``"uint1x4"``, ``"uint1xvscalex4"`` or
    ``"boolx4"`` gives the lanes):
    lane ``i`` is on when ``base + i < limit``; a ``predicate=`` of ``vload``/``vstore``."""
    match = _re.fullmatch(r"(?:uint1|bool)x(?:vscalex)?(\d+)", str(dtype))  # vscale is 1 (see vscale)
    if match is None:
        raise ValueError(f"dtype must be a mask such as 'uint1x4', 'uint1xvscalex4' or 'boolx4', got {dtype!r}")
    lanes = int(match.group(1))
    base, limit = _op.convert(base), _op.convert(limit)
    return _op.binary("lt", _op.ramp(base, 1, lanes), _op.broadcast(limit, lanes))


def isnullptr(handle: Any) -> PrimExpr:
    """Whether a ``handle`` is the null pointer (C-family targets)."""
    handle = _op.convert(handle)
    if handle.dtype != "handle":
        raise TypeError(f"T.isnullptr needs a handle, got {handle.dtype}")
    return _Call("bool", "isnullptr", (handle,))


def undef(dtype: str = "int32") -> PrimExpr:
    """An unspecified value: storing it (``A[i] = T.undef()``) stores nothing."""
    return _Call(dtype, "undef", ())


def start_profile_intrinsic(id: Any) -> PrimExpr:  # noqa: A002 - Apache TVM's parameter name
    """A profiling hook: nothing here (no profiler is attached), so the statement does nothing."""
    return _op.convert(0)


end_profile_intrinsic = start_profile_intrinsic


for _name in (
    "allocate",
    "decl_buffer_ptr",
):
    globals()[_name] = _unsupported(_name, "")
del _name


def _vector_dtype_helper(name: str):
    element, lanes = _dt.element_of(name), _dt.lanes(name)

    def f(value: Any = None):
        if value is None:
            return VarSpec(name)
        if isinstance(value, PrimExpr) and _dt.lanes(value.dtype) == lanes:
            return value.astype(name)
        scalar = globals()[element](value)
        numbers, flag = (_builtins.int, _builtins.float), _builtins.bool
        if isinstance(value, numbers) and not isinstance(value, flag) and isinstance(scalar, (IntImm, FloatImm)):
            return type(scalar)(name, scalar.value)  # the vector constant x * -1.0 builds, as printed
        return _op.broadcast(scalar, lanes)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``T.{name}(x)``: every lane ``x`` (a constant or a scalar); ``T.{name}()`` a variable."
    f._tir_dtype = name  # type: ignore[attr-defined]
    return f


_LOWERED = "it belongs to IR that Apache TVM's own passes produce; write the TVMScript it is lowered from"
_CLUSTERS = "thread-block clusters are not supported; a device region launches blocks with T.cta_id([n, ...])"
_TENSOR_CORE = "1-bit tensor-core fragments; the float16 ones (T.tvm_mma_sync) are supported"

#: Names of Apache TVM's TVMScript that are not implemented here, with what to do instead.
_UNSUPPORTED_APACHE_NAMES: dict[str, str] = {
    "ptx": "raw PTX; with tvm-backend-cuda use T.ptx_legacy.mma/ldmatrix or the T.cuda intrinsics (cp_async ...)",
    "ptx_legacy": "its mma and ldmatrix come with the cuda backend: pip install tvm-backend-cuda",
    "tvm_bmma_sync": _TENSOR_CORE,
    "tvm_stack_alloca": _LOWERED,
    "tvm_stack_make_array": _LOWERED,
    "tvm_stack_make_shape": _LOWERED,
    "tvm_struct_get": _LOWERED,
    "tvm_struct_set": _LOWERED,
    "thread_return": _LOWERED,
    "cluster_id": _CLUSTERS,
    "cta_id_in_cluster": _CLUSTERS,
    "cta_id_in_pair": _CLUSTERS,
    "local_scalar": "allocate one element, x = T.alloc_local((1,), dtype), and use x[0]",
    "shared_scalar": "allocate one element, x = T.alloc_shared((1,), dtype), and use x[0]",
}


def __getattr__(name: str):
    from . import namespaces

    if name.startswith("__"):
        raise AttributeError(name)
    if "x" in name and _dt.element_of(name) in _dt.SCALAR_DTYPES:
        try:
            if _dt.lanes(name) > 1:
                globals()[name] = _vector_dtype_helper(name)  # T.float32x4
                return globals()[name]
        except ValueError:
            pass
    try:
        mod = namespaces.get(name)
    except Exception as e:  # the backend's namespace module failed to import
        raise AttributeError(f"backend namespace T.{name} failed to load: {type(e).__name__}: {e}") from e
    if mod is None:
        from tvm.backend._registry import PUBLISHED_BACKENDS, closest_names, get_record, install_hint

        if name in PUBLISHED_BACKENDS:
            rec = get_record(name)
            if rec is None:
                raise AttributeError(
                    f"T.{name} is the namespace of the {name} backend, which is not installed. "
                    f"Fix: {install_hint(name)}"
                )
            raise AttributeError(f"T.{name}: the {name} backend ({rec.describe()}) provides no TVMScript namespace")
        if name in _UNSUPPORTED_APACHE_NAMES:
            raise AttributeError(
                f"T.{name} is Apache TVM TVMScript that this implementation does not support: "
                f"{_UNSUPPORTED_APACHE_NAMES[name]}"
            )
        known = [n for n in globals() if not n.startswith("_")] + namespaces.names()
        raise AttributeError(f"T.{name} is not part of TVMScript.{closest_names(name, known)}")
    return mod


def dtype_of_annotation(obj: Any) -> Optional[str]:
    """The scalar dtype an annotation object stands for (``T.int32`` or ``T.int32()`` -> "int32"),
    or None."""
    if obj is handle:
        return "handle"
    if isinstance(obj, VarSpec):
        return obj.dtype
    return getattr(obj, "_tir_dtype", None)


__all__ = [n for n in dir() if not n.startswith("_")]
