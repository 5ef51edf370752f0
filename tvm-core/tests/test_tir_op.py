"""tvm.tir.op: intrinsic constructors, their dtypes, and implicit promotion."""

from __future__ import annotations

import math

import pytest

from tvm import tir
from tvm.tir import op
from tvm.tir.dtype import SCALAR_DTYPES

FLOATS = ("float16", "bfloat16", "float32", "float64")
UNARY_FLOAT = (
    "exp",
    "log",
    "sqrt",
    "rsqrt",
    "tanh",
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
)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", UNARY_FLOAT)
def test_unary_float_intrinsics(name, dtype):
    x = tir.Var("x", dtype)
    c = getattr(op, name)(x)
    assert isinstance(c, tir.Call) and c.op == name and c.dtype == dtype and c.args == (x,)
    n, rule = op.INTRINSICS[name]
    assert n == 1 and rule == "float"
    assert op.result_dtype(name, c.args) == dtype


@pytest.mark.parametrize("name", UNARY_FLOAT)
def test_unary_float_rejects_int(name):
    with pytest.raises(TypeError, match="float"):
        getattr(op, name)(tir.Var("i", "int32"))


def test_python_number_arguments():
    c = op.exp(1.0)
    assert c.dtype == "float32" and isinstance(c.args[0], tir.FloatImm)
    p = op.pow(tir.Var("x", "float64"), 2)
    assert p.dtype == "float64" and p.args[1].dtype == "float64" and p.op == "pow"


def test_abs_by_family():
    assert op.abs(tir.Var("x", "float16")).op == "fabs"
    a = op.abs(tir.Var("i", "int8"))
    assert a.op == "abs" and a.dtype == "int8"
    u = tir.Var("u", "uint32")
    assert op.abs(u) is u


def test_min_max_div_mod_nodes():
    i, j = tir.Var("i", "int32"), tir.Var("j", "int64")
    assert isinstance(op.min(i, 3), tir.Min) and isinstance(op.max(i, 3), tir.Max)
    m = op.max(i, j)
    assert m.dtype == "int64" and isinstance(m.a, tir.Cast)
    assert isinstance(op.truncdiv(i, 2), tir.Div)
    assert isinstance(op.truncmod(i, 2), tir.Mod)
    assert isinstance(op.floordiv(i, 2), tir.FloorDiv)
    assert isinstance(op.floormod(i, 2), tir.FloorMod)
    assert isinstance(op.min(i, 1, 2), tir.Min)
    f = tir.Var("f", "float32")
    assert isinstance(op.truncmod(f, 2.0), tir.Mod) and isinstance(op.floormod(f, 2.0), tir.FloorMod)
    with pytest.raises(TypeError, match="truncdiv needs integer operands"):
        op.truncdiv(f, 2.0)


@pytest.mark.parametrize(
    "a,b,out",
    [
        ("int32", "int64", "int64"),
        ("int8", "int32", "int32"),
        ("int32", "uint32", "int32"),
        ("int32", "float16", "float16"),
        ("float16", "float32", "float32"),
        ("float32", "float64", "float64"),
        ("bool", "int32", "int32"),
        ("uint8", "uint16", "uint16"),
    ],
)
def test_promotion(a, b, out):
    assert op.promote_dtypes(a, b) == out
    assert op.promote_dtypes(b, a) == out


def test_promotion_refuses_float16_bfloat16_mix():
    with pytest.raises(TypeError):
        op.promote_dtypes("float16", "bfloat16")


def test_if_then_else_select_cast():
    c = tir.Var("c", "bool")
    x = tir.Var("x", "float32")
    ite = op.if_then_else(c, x, 0.0)
    assert ite.op == "if_then_else" and ite.dtype == "float32" and op.INTRINSICS["if_then_else"] == (3, "arg1")
    assert isinstance(op.select(c, x, 1.0), tir.Select)
    with pytest.raises(TypeError):
        op.if_then_else(tir.Var("i", "int32"), x, x)
    assert isinstance(op.cast("int8", x), tir.Cast)
    assert op.cast("float32", x) is x
    assert op.cast("int32", 2.7).value == 2


@pytest.mark.parametrize("dtype", SCALAR_DTYPES)
def test_max_min_value(dtype):
    hi, lo = op.max_value(dtype), op.min_value(dtype)
    assert hi.dtype == dtype and lo.dtype == dtype
    assert hi.value > lo.value if dtype != "bool" else hi.value == 1


def test_limits_values():
    assert op.max_value("int8").value == 127 and op.min_value("int8").value == -128
    assert op.max_value("uint16").value == 65535
    assert op.max_value("float16").value == 65504.0
    assert math.isinf(op.infinity("float32").value)
    with pytest.raises(TypeError):
        op.infinity("int32")


def test_storage_sync_and_call_intrin():
    s = op.tvm_storage_sync("shared")
    assert s.op == "tvm_storage_sync" and s.dtype == "void" and s.args[0].value == "shared"
    with pytest.raises(ValueError):
        op.tvm_storage_sync("texture")
    c = op.call_intrin("float32", "cuda.shfl_down", tir.Var("x", "float32"), 1)
    assert c.dtype == "float32" and c.args[1].dtype == "int32"
    # Apache TVM's newer "tirx." names are the "tir." ones
    bits = op.call_intrin("float32", "tirx.reinterpret", tir.Var("u", "uint32"))
    assert bits.op == "tir.reinterpret" and bits.dtype == "float32"
    with pytest.raises(ValueError, match="reinterpret from uint32 to uint8 changes the width"):
        op.call_intrin("uint8", "tirx.reinterpret", tir.Var("u", "uint32"))


def test_warp_shuffles_take_the_moved_values_dtype():
    """Apache TVM's warp shuffles: the value's dtype, a uint32 mask and int32 lanes (integer
    arguments of other widths cast), printed as written and parsed back; vectors and float
    lanes are refused by name."""
    from tvm.script import parse
    from tvm.script import tir as T

    v = tir.Var("v", "float16")
    s = op.tvm_warp_shuffle_xor(0xFFFFFFFF, v, tir.Var("m", "int64"), 16, 32)
    assert s.op == "tvm_warp_shuffle_xor" and s.dtype == "float16"
    assert [a.dtype for a in s.args] == ["uint32", "float16", "int32", "int32", "int32"]
    assert op.result_dtype(s.op, s.args) == "float16"
    assert op.tvm_warp_activemask().dtype == "uint32"
    with pytest.raises(TypeError, match="T.tvm_warp_shuffle moves one scalar value per lane, got float32x4"):
        op.tvm_warp_shuffle(0xFFFFFFFF, tir.Var("w", "float32x4"), 0, 32, 32)
    with pytest.raises(TypeError, match="T.tvm_warp_shuffle_up: the lane must be a scalar integer, got float32"):
        op.tvm_warp_shuffle_up(0xFFFFFFFF, v, 1.5, 32, 32)

    @T.prim_func
    def shuffled(a: T.handle):
        A = T.match_buffer(a, (32,), "int8")
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            A[tx] = T.tvm_warp_shuffle_down(T.tvm_warp_activemask(), A[tx], 1, 32, 32)

    text = shuffled.script()
    assert "T.tvm_warp_shuffle_down(T.tvm_warp_activemask(), A[tx], 1, 32, 32)" in text
    tir.assert_structural_equal(parse(text), shuffled)

    spelled_as_a_call = """
@T.prim_func
def f(a: T.handle):
    A = T.match_buffer(a, (32,), "float32")
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        A[tx] = T.call_intrin("int32", "tvm_warp_shuffle", T.uint32(0xFFFFFFFF), A[tx], 3, 32, 32)
"""
    with pytest.raises(
        Exception, match="tvm_warp_shuffle moves a scalar float32 value, so it returns float32, not int32"
    ):
        parse(spelled_as_a_call, extra_vars={"T": T})


def test_intrinsics_table_is_complete():
    for name in UNARY_FLOAT + ("pow", "abs", "if_then_else", "tvm_storage_sync"):
        assert name in op.INTRINSICS
    for n, rule in op.INTRINSICS.values():
        assert rule in ("same", "float", "int", "arg1", "moved", "bool", "void", "int32", "uint32", "explicit")
