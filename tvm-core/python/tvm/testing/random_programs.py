"""Random integer expressions and an exact model of what TIR defines them to compute, for
differential tests of code generators (the conformance suite's ``test_random_integer_expressions``).

An expression is a tree of tuples ``(kind, dtype, *operands)``; :func:`evaluate` computes it with
Python integers (wrapping to the dtype's width, floor and truncated division and modulo by 0
giving 0, arithmetic right shifts for signed dtypes), :func:`kernel` makes the PrimFunc that
stores it for every element, and :func:`describe` prints it for a failure message.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from tvm.tir import expr as E
from tvm.tir import op as _op
from tvm.tir import stmt as S
from tvm.tir.function import PrimFunc

_BINARY = {
    "add": E.Add,
    "sub": E.Sub,
    "mul": E.Mul,
    "floordiv": E.FloorDiv,
    "floormod": E.FloorMod,
    "truncdiv": E.Div,
    "truncmod": E.Mod,
    "min": E.Min,
    "max": E.Max,
    "and": _op.bitwise_and,
    "or": _op.bitwise_or,
    "xor": _op.bitwise_xor,
    "shl": _op.shift_left,
    "shr": _op.shift_right,
}
_DIVISIONS = ("floordiv", "floormod", "truncdiv", "truncmod")
_COMPARE = {"lt": E.LT, "le": E.LE, "gt": E.GT, "ge": E.GE, "eq": E.EQ, "ne": E.NE}
#: The other binary kinds on Python integers (wrapped afterwards; right shifts of negative values
#: are arithmetic, as TIR's of signed dtypes).
_PYTHON = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "min": min,
    "max": max,
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
    "shl": lambda a, b: a << b,
    "shr": lambda a, b: a >> b,
}


def _bits(dtype: str) -> int:
    return int(dtype.lstrip("uint"))


def wrap(dtype: str, value: int) -> int:
    """``value`` wrapped to integer ``dtype``'s width (two's complement for signed dtypes)."""
    bits = _bits(dtype)
    value &= (1 << bits) - 1
    return value - (1 << bits) if dtype.startswith("int") and value >= 1 << (bits - 1) else value


def random_expression(rng: random.Random, dtype: str, dtypes: list[str], depth: int) -> tuple:
    """A random expression of ``dtype`` over loads of one buffer per dtype in ``dtypes``, the
    element's index and constants, with Let bindings; divisors are loads or non-zero constants
    (a divisor that folds to the constant 0 is a compile-time error by design)."""

    def constant(d: str) -> tuple:
        bits = _bits(d)
        special = [0, 1, -1, 2, 7, 255, 2 ** (bits - 1) - 1, -(2 ** (bits - 1)), 2**bits - 1]
        value = rng.choice(special) if rng.random() < 0.4 else rng.randrange(-(2 ** (bits - 1)), 2**bits)
        return ("const", d, wrap(d, value))

    def divisor(d: str) -> tuple:
        if rng.random() < 0.5:
            return ("load", d)
        value = wrap(d, rng.choice([1, 2, 3, 4, 7, 16, -1, -2, -(2 ** (_bits(d) - 1))]))
        return ("const", d, value or 1)

    def expr(d: str, left: int) -> tuple:
        if left == 0 or rng.random() < 0.2:
            r = rng.random()
            return ("load", d) if r < 0.6 else ("index", d) if r < 0.75 else constant(d)
        kind = rng.choice([*_BINARY, "not", "select", "cast", "let"])
        if kind == "let":
            return ("let", d, expr(d, left - 1), expr(d, left - 1), rng.choice(["add", "mul", "xor", "sub"]))
        if kind == "not":
            return ("not", d, expr(d, left - 1))
        if kind == "cast":
            return ("cast", d, expr(rng.choice(dtypes), left - 1))
        if kind == "select":
            c = rng.choice(dtypes)
            test = (rng.choice(list(_COMPARE)), c, expr(c, left - 1), expr(c, left - 1))
            return ("select", d, test, expr(d, left - 1), expr(d, left - 1))
        if kind in ("shl", "shr"):
            return (kind, d, expr(d, left - 1), ("const", d, rng.randrange(_bits(d))))
        if kind in _DIVISIONS:
            return (kind, d, expr(d, left - 1), divisor(d))
        return (kind, d, expr(d, left - 1), expr(d, left - 1))

    return expr(dtype, depth)


def to_tir(tree: tuple, loads: dict[str, E.PrimExpr]) -> E.PrimExpr:
    """The TIR of ``tree``; ``loads[dtype]`` is the element of that dtype's input and
    ``loads["index"]`` the element's index."""
    kind, d = tree[0], tree[1]
    if kind == "const":
        return E.IntImm(d, tree[2])
    if kind == "load":
        return loads[d]
    if kind == "index":
        index = loads["index"]
        return index if index.dtype == d else E.Cast(d, index)
    if kind == "let":
        v = E.Var(f"v{id(tree) % 10000}", d)
        return E.Let(v, to_tir(tree[2], loads), _BINARY[tree[4]](v, to_tir(tree[3], loads)))
    if kind == "not":
        return _op.bitwise_not(to_tir(tree[2], loads))
    if kind == "cast":
        return E.Cast(d, to_tir(tree[2], loads))
    if kind == "select":
        name, _, a, b = tree[2]
        test = _COMPARE[name](to_tir(a, loads), to_tir(b, loads))
        return E.Select(test, to_tir(tree[3], loads), to_tir(tree[4], loads))
    return _BINARY[kind](to_tir(tree[2], loads), to_tir(tree[3], loads))


def evaluate(tree: tuple, inputs: dict[str, int]) -> int:
    """What TIR defines ``tree`` to compute, ``inputs[dtype]`` being the loaded elements."""
    kind, d = tree[0], tree[1]
    if kind == "const":
        return tree[2]
    if kind == "load":
        return inputs[d]
    if kind == "index":
        return wrap(d, inputs["index"])
    if kind == "let":
        return wrap(d, _PYTHON[tree[4]](evaluate(tree[2], inputs), evaluate(tree[3], inputs)))
    if kind in ("not", "cast"):
        value = evaluate(tree[2], inputs)
        return wrap(d, ~value if kind == "not" else value)
    if kind == "select":
        name, _, a, b = tree[2]
        x, y = evaluate(a, inputs), evaluate(b, inputs)
        taken = {"lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y, "eq": x == y, "ne": x != y}[name]
        return evaluate(tree[3] if taken else tree[4], inputs)
    a, b = evaluate(tree[2], inputs), evaluate(tree[3], inputs)
    if kind in _DIVISIONS:
        if b == 0:
            return 0
        if kind.startswith("floor"):
            return wrap(d, a // b if kind == "floordiv" else a % b)
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b > 0) else -1)
        return wrap(d, q if kind == "truncdiv" else a - q * b)
    return wrap(d, _PYTHON[kind](a, b))


def kernel(tree: tuple, dtypes: list[str], n: int, *, threads: bool, name: str = "expression") -> PrimFunc:
    """``out[i] = tree`` over inputs ``in_<dtype>[i]`` (parameters in ``dtypes`` order, then
    ``out``); one thread per element when ``threads``, else a serial loop."""
    i = E.Var("i", "int32")
    inputs = {d: E.Buffer(f"in_{d}", (n,), d) for d in dtypes}
    out = E.Buffer("out", (n,), tree[1])
    loads: dict[str, E.PrimExpr] = {d: E.BufferLoad(b, (i,)) for d, b in inputs.items()}
    store = S.BufferStore(out, to_tir(tree, {**loads, "index": i}), (i,))
    kind, tag = (S.ForKind.THREAD_BINDING, "threadIdx.x") if threads else (S.ForKind.SERIAL, None)
    body = S.For(i, E.IntImm("int32", 0), E.IntImm("int32", n), kind, store, thread_tag=tag)
    buffers = [*inputs.values(), out]
    return PrimFunc([b.data for b in buffers], body, {b.data: b for b in buffers}, attrs={"global_symbol": name})


def random_inputs(rng: np.random.Generator, dtypes: list[str], n: int) -> dict[str, np.ndarray]:
    """One input per dtype: its extremes, 0 and -1 first, then random values."""
    out = {}
    for d in dtypes:
        info = np.iinfo(d)
        a = rng.integers(info.min, info.max, n, dtype=d, endpoint=True)
        a[:4] = np.array([info.min, info.max, 0, info.max if info.min == 0 else -1], dtype=object).astype(d)
        out[d] = a
    return out


def expected(tree: tuple, inputs: dict[str, np.ndarray]) -> np.ndarray:
    """:func:`evaluate` for every element."""
    n = len(next(iter(inputs.values())))
    values = [evaluate(tree, {"index": j, **{d: int(a[j]) for d, a in inputs.items()}}) for j in range(n)]
    return np.array(values, dtype=object).astype(tree[1])


def describe(tree: Any) -> str:
    """``tree`` as text (``add:int8(in_int8, 3)``)."""
    kind = tree[0]
    if kind == "const":
        return str(tree[2])
    if kind == "load":
        return f"in_{tree[1]}"
    if kind == "index":
        return f"i:{tree[1]}"
    if kind == "let":
        return f"let:{tree[1]}(v = {describe(tree[2])} in v {tree[4]} {describe(tree[3])})"
    if kind == "select":
        name, _, a, b = tree[2]
        return f"select({describe(a)} {name} {describe(b)}, {describe(tree[3])}, {describe(tree[4])})"
    return f"{kind}:{tree[1]}(" + ", ".join(describe(x) for x in tree[2:]) + ")"
