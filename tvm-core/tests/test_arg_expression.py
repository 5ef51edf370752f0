"""The expressions device modules carry over a kernel's scalar arguments (buffer sizes, launch
bounds, loop bounds; ``tvm::runtime::ArgExpression``): parsed once, evaluated with floor
division and saturation, and anything malformed or hostile refused or ignored, never a crash."""

from __future__ import annotations

import pytest
import tvm  # noqa: F401  (loads the runtime)
import tvm_ffi

EVALUATE = tvm_ffi.get_global_func("runtime.ArgExpressionEvaluate")
TYPES = ["handle:float32", "int32", "int64", "float32"]  # $1 and $2 are integers


def value(text: str, n: int = 10, m: int = 3) -> int | None:
    return EVALUATE(TYPES, text, None, n, m, 1.5)


@pytest.mark.parametrize(
    "text, want",
    [
        ("7", 7),
        ("$1*4", 40),
        ("$1+$2*2", 16),
        ("($1+$2)*2", 26),
        ("$1-$2-1", 6),  # left to right
        ("$1-($2-1)", 8),
        ("$1/$2", 3),
        ("(0-$1)/$2", -4),  # floor division, as TIR's floordiv
        ("(0-$1)%$2", 2),  # floor modulo
        ("$1%(0-3)", -2),
        ("min($1,$2)*max($1,$2)", 30),
        ("($1+255)/256*256", 256),
        ("9223372036854775807+$1", 2**63 - 1),  # saturates
        ("99999999999999999999999", 2**63 - 1),  # a constant past int64: as large as can be
        ("(0-9223372036854775807)*$1", -(2**63)),
    ],
)
def test_values(text: str, want: int) -> None:
    assert value(text) == want


@pytest.mark.parametrize(
    "text",
    [
        "",
        "$0",  # a buffer, not a scalar
        "$3",  # a float scalar
        "$4",  # no such argument
        "$1 + 1",  # spaces
        "$1+",
        "($1",
        "min($1)",
        "max($1,$2,$1)",
        "$1**2",
        "-$1",
        "abs($1)",
        "1e3",
        "(" * 65 + "1" + ")" * 65,  # nested deeper than a code generator writes
        "(" * 100000,
        "1+" * 3000 + "1",  # longer than 4096 characters
    ],
)
def test_malformed_expressions_are_not_evaluated(text: str) -> None:
    assert value(text) is None


def test_unknown_for_these_arguments() -> None:
    assert value("$1/$2", m=0) is None  # division by zero
    assert value("$1%$2", m=0) is None
    assert EVALUATE(["int32"], "$0", "text") is None  # no integer: the packer reports it


def test_arguments_count_as_the_kernel_receives_them() -> None:
    assert value("$1*4", n=-1) == -4  # negative values as they are
    assert EVALUATE(["int32"], "$0", -(2**32) + 64) == 64  # wrapped to the parameter's width
    assert EVALUATE(["int8"], "$0+1", 300) == 45
    assert EVALUATE(["uint16"], "$0", -1) == 65535
    assert EVALUATE(["uint64"], "$0", -1) == 2**63 - 1  # past int64: as large as can be


def test_bounds_round_trip_through_the_module_bytes() -> None:
    ser = tvm_ffi.get_global_func("runtime.DeviceModuleSerialize")
    deser = tvm_ffi.get_global_func("runtime.DeviceModuleDeserialize")
    tags = ["blockIdx.x:($1+63)/64", "threadIdx.x:64", "dyn_shmem:$1*4"]
    funcs = [["k", ["handle:float32:$1+1", "int32"], tags]]
    _, got, _, _ = deser(ser("fmt", funcs, b"", []))
    assert [list(got[0][1]), list(got[0][2])] == [funcs[0][1], tags]


@pytest.mark.parametrize("bound", ["", "$1 ", "$0", "$5", "1/", "(" * 200, "x"])
def test_malformed_launch_bounds_are_refused(bound: str) -> None:
    ser = tvm_ffi.get_global_func("runtime.DeviceModuleSerialize")
    with pytest.raises(ValueError, match="has a malformed bound"):
        ser("fmt", [["k", ["handle", "int32"], [f"blockIdx.x:{bound}"]]], b"", [])
