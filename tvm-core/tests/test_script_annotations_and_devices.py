"""Union annotations and device indices: ``X | None`` is the only union an annotation may be
(``T.int32 | T.float32`` was silently ``T.int32``), a shaped buffer may be optional too
(``T.Buffer((4,), "float32") | None`` raised Python's TypeError), and ``tvm.device(name, -1)`` is
refused as ``tvm.device("name:-1")`` is (it gave a device of index -1)."""

import numpy as np
import pytest
import tvm
from tvm.script import TVMScriptError
from tvm.script import tir as T

UNION = r"annotation {}: a union of two types is not supported; only 'X \| None' is"


@pytest.mark.parametrize(
    "annotation, written",
    [
        ("T.int32 | T.float32", r"T.int32 \| T.float32"),
        ("T.float32 | T.int32", r"T.float32 \| T.int32"),
        ("T.handle | T.int64", r"T.handle \| T.int64"),
        ("int | T.int32", r"int \| T.int32"),
        ("T.Buffer((1,), 'float32') | T.int32", r"T.Buffer\(\(1,\), 'float32'\) \| T.int32"),
    ],
)
def test_a_union_of_two_types_is_refused_with_the_annotation(annotation, written):
    source = f"@T.prim_func\ndef f(A: T.Buffer((1,), 'float32'), x: {annotation}):\n    A[0] = T.Cast('float32', x)\n"
    with pytest.raises(TVMScriptError, match=UNION.format(written)) as err:
        tvm.script.from_source(source)
    assert err.value.lineno == 2  # the parameter's line
    with pytest.raises(TypeError, match=UNION.format(written)):  # Python evaluates a macro's annotations

        @T.macro
        def m(A, x: eval(annotation)):  # noqa: S307 - the annotation under test
            A[0] = x


@T.macro
def masked_scale(target, source, mask: T.Buffer((4,), "float32") | None = None, factor: None | T.float32 = None):
    for i in range(4):
        if mask is not None:  # decided while parsing
            target[i] = source[i] * mask[i]
        else:
            target[i] = source[i] * (factor if factor is not None else T.float32(1))


def test_a_shaped_buffer_annotation_may_be_optional():
    @T.prim_func
    def kernel(A: T.Buffer((4,), "float32"), M: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"),
               C: T.Buffer((4,), "float32")):  # fmt: skip
        masked_scale(B, A, M)
        masked_scale(C, A, factor=T.float32(3))

    a, m = np.arange(1, 5, dtype="float32"), np.array([0, 1, 2, 0.5], "float32")
    b, c = np.zeros(4, "float32"), np.zeros(4, "float32")
    tvm.compile(kernel, target="llvm")(a, m, b, c)
    np.testing.assert_array_equal(b, a * m)
    np.testing.assert_array_equal(c, a * 3)
    assert (T.Buffer((4,), "float32") | None) == T.Buffer((4,), "float32")
    assert (None | T.Buffer((4,), "float32")) == T.Buffer((4,), "float32")


@pytest.mark.parametrize("args", [("cpu", -1), (1, -2), ("llvm", -3)])
def test_a_negative_device_index_is_refused_as_in_a_name(args):
    with pytest.raises(ValueError, match=r"the index after ':' must be 0 or more"):
        tvm.device("cpu:-1")
    with pytest.raises(ValueError, match=rf"device {args[0]!r}, index {args[1]}: the index must be 0 or more"):
        tvm.device(*args)


def test_a_device_index_of_zero_or_more_is_kept():
    assert str(tvm.device("cpu", 0)) == "cpu:0" and tvm.device("cpu", 2).index == 2
    assert tvm.device(1, 1) == tvm.device("cpu:1") and tvm.device("cpu", np.int64(1)).index == 1
