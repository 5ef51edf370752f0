"""Kernels that compiled into something other than what they say, and refusals that did not say
what was wrong: T.init of stepped loops, a match_buffer region smaller than its view, slices
updated in place, Python calls while parsing, buffers that one iteration reads after an earlier
one wrote them, local buffers of parallel loops, and the messages of malformed kernels."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.script.diagnostics import TVMScriptError
from tvm.tir.transform.verify import TIRVerifyError

pytestmark = pytest.mark.usefixtures("private_cache")


def _run(source: str, *arrays: np.ndarray) -> None:
    tvm.compile(tvm.script.parse(source), target="c")["f"](*arrays)


@pytest.mark.parametrize(
    "header, binding, want",
    [
        ("range(1, 8, 2)", 'T.axis.remap("R", [k])', 2 + 4 + 6 + 8),  # the init never ran
        ("range(7, -1, -1)", 'T.axis.remap("R", [k])', 36),  # it ran at the last step
        ("range(7)", 'T.axis.remap("R", [k + 1])', 35),  # a binding that is not a loop variable
    ],
)
def test_init_runs_at_the_first_step_of_a_remapped_reduction(header, binding, want):
    a, b = np.array([100.0] + [0.0] * 7, "float32"), np.arange(1, 9, dtype="float32")
    _run(
        f"""
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for k in {header}:
        with T.sblock("b"):
            vk = {binding}
            with T.init():
                A[0] = 0.0
            A[0] = A[0] + B[vk]
""",
        a,
        b,
    )
    assert a[0] == want


def test_a_region_smaller_than_its_view_is_refused():
    with pytest.raises(TVMScriptError, match=r"the region of A has extents \(4,\), the view's shape is \(8,\)"):
        tvm.script.parse(
            """
@T.prim_func
def f(A: T.Buffer((8,), "float32")):
    V = T.match_buffer(A[0:4], (8,), "float32")
    V[7] = -1.0
"""
        )


def test_a_slice_updated_in_place():
    """`A[0:4] += 1.0` was refused with 'storing a float32 value into float32 buffer'."""
    a = np.arange(8, dtype="float32")
    _run(
        """
@T.prim_func
def f(A: T.Buffer((8,), "float32")):
    A[0:4] += A[4:8]
    A[4:8] *= T.float32(2)
""",
        a,
    )
    np.testing.assert_array_equal(a, [4, 6, 8, 10, 8, 10, 12, 14])


def test_python_calls_while_parsing_are_named_at_their_line():
    """print() in a kernel printed while parsing and vanished; a Python helper's exception
    escaped raw, without a line."""
    with pytest.raises(
        TVMScriptError, match=r"print\(\.\.\.\) is Python, which runs while the kernel is parsed"
    ) as info:
        tvm.script.parse('@T.prim_func\ndef f(A: T.Buffer((1,), "float32")):\n    print(A[0])\n')
    assert "print(A[0])" in str(info.value)
    with pytest.raises(TVMScriptError, match=r"next\(\.\.\.\) raised StopIteration") as info:
        tvm.script.parse('@T.prim_func\ndef f(A: T.Buffer((1,), "float32")):\n    x = next(iter([]))\n    A[0] = x\n')
    assert "line 3" in str(info.value)


@pytest.mark.parametrize(
    "body, message",
    [
        (
            'def f(A: T.Buffer((1,), "float32"), A: T.Buffer((1,), "float32")):\n    A[0] = 1.0',
            "parameter 'A' is declared twice",
        ),
        (
            "def f():\n    with T.sblock('b'):\n        v = T.axis.spatail(4, 0)",
            r"T\.axis\.spatail is not part of TVMScript",
        ),
        (
            "def f():\n    for i, j in T.grid(2, 2):\n        with T.sblock('b'):\n"
            "            v = T.axis.remap('SS', [i, j])",
            r"binds 2 axes: give as many names",
        ),
        ("def f():\n    with T.sblock('b'), T.init():\n        pass", r"one context per 'with'"),
        ("def f():\n    x = T.let()", r"T\.let\(\) missing 3 required positional arguments"),
    ],
)
def test_malformed_kernels_are_told_what_is_wrong(body, message):
    with pytest.raises(TVMScriptError, match=message):
        tvm.script.parse("@T.prim_func\n" + body + "\n")


def test_errors_of_calls_between_module_functions_name_the_call():
    source = """
@I.ir_module
class Mod:
    @T.prim_func
    def helper(A: T.Buffer((8,), "float32")):
        A[0] = -1.0

    @T.prim_func
    def main(A: T.Buffer((8,), "float32")):
        Mod.helper(A.data, 1)
"""
    with pytest.raises((TIRVerifyError, TVMScriptError), match="main calls helper with 2 argument") as info:
        tvm.script.parse(source)
    assert "Mod.helper(A.data, 1)" in str(info.value)
    with pytest.raises(TVMScriptError, match="helper returns nothing: its call is a statement"):
        tvm.script.parse(source.replace("Mod.helper(A.data, 1)", "A[1] = Mod.helper(A.data)"))


def test_a_buffer_read_one_iteration_after_it_was_written_keeps_its_elements():
    """Compaction shrank C to one iteration's window because each iteration writes before it
    reads, though it also reads what the two before it wrote."""
    a, b = (np.arange(10) ** 2).astype("int32"), np.zeros(10, "int32")
    _run(
        """
@T.prim_func
def f(A: T.Buffer((10,), "int32"), B: T.Buffer((10,), "int32")):
    C = T.alloc_buffer((10,), "int32", scope="local")
    for k in range(10):
        C[k] = A[k]
        if k >= 2:
            B[k] = C[k] + C[k - 1] + C[k - 2]
""",
        a,
        b,
    )
    want = np.zeros(10, "int32")
    want[2:] = a[2:] + a[1:-1] + a[:-2]
    np.testing.assert_array_equal(b, want)


def test_a_local_buffer_of_a_parallel_loop_is_private_to_each_iteration():
    """Allocated before the loop, it was one array all OpenMP threads shared."""
    source = """
@T.prim_func
def f(A: T.Buffer((512, 16), "int32"), B: T.Buffer((512,), "int32")):
    L = T.alloc_buffer((16,), "int32", scope="local")
    for i in T.parallel(512):
        for j in range(16):
            L[j] = A[i, j]
        acc = T.int32(0)
        for r in range(64):
            acc = acc + L[(A[i, r % 16] + r) % 16]
        B[i] = acc
"""
    mod = tvm.compile(tvm.script.parse(source), target="c")
    text = mod.inspect_source()
    assert text.index("#pragma omp parallel for") < text.index("int32_t L[16]"), text
    a = np.random.default_rng(0).integers(0, 100, (512, 16)).astype("int32")
    want = np.zeros(512, "int64")
    for r in range(64):
        want += a[np.arange(512), (a[:, r % 16] + r) % 16]
    for _ in range(3):
        b = np.zeros(512, "int32")
        mod["f"](a, b)
        np.testing.assert_array_equal(b, want)


def test_a_read_inside_the_hull_of_an_iterations_writes_but_not_written_by_it():
    """C[k] and C[k - 2] written, C[k - 1] read: inside the writes' extremes, written by the
    iteration before; the buffer must keep its elements."""
    a, b = np.arange(8, dtype="float32"), np.full(8, -1, "float32")
    _run(
        """
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    C = T.alloc_buffer((8,), "float32", scope="local")
    for k in range(2, 8):
        C[k] = A[k]
        C[k - 2] = A[k] + T.float32(100)
        if k >= 3:
            B[k] = C[k - 1]
""",
        a,
        b,
    )
    np.testing.assert_array_equal(b[3:], a[2:7])


def test_elements_an_iteration_writes_side_by_side_still_shrink_to_its_tile():
    """Writes of C[2k] and C[2k + 1] cover the read of C[2k:2k + 2]: one iteration's two elements."""
    source = """
@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((8,), "float32")):
    C = T.alloc_buffer((16,), "float32", scope="local")
    for k in range(8):
        C[k * 2] = A[k * 2]
        C[k * 2 + 1] = A[k * 2 + 1]
        B[k] = C[k * 2] + C[k * 2 + 1]
"""
    mod = tvm.compile(tvm.script.parse(source), target="c")
    assert "C[2]" in mod.inspect_source()
    a, b = np.arange(16, dtype="float32"), np.zeros(8, "float32")
    mod["f"](a, b)
    np.testing.assert_array_equal(b, a[0::2] + a[1::2])


def test_a_local_buffer_a_serial_loop_carries_around_a_parallel_one_stays_shared():
    """Steps of the serial loop pass values through L; each parallel iteration touches its own
    element, so there is no race, and per-iteration copies would lose the values."""
    a, b = np.arange(1, 9, dtype="float32"), np.zeros((3, 8), "float32")
    _run(
        """
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((3, 8), "float32")):
    L = T.alloc_buffer((8,), "float32", scope="local")
    for t in range(3):
        for i in T.parallel(8):
            if t == 0:
                L[i] = A[i]
            else:
                L[i] = L[i] * T.float32(2)
            B[t, i] = L[i]
""",
        a,
        b,
    )
    np.testing.assert_array_equal(b, np.stack([a, 2 * a, 4 * a]))


def test_a_view_of_another_dtype_and_size_names_the_bytes():
    with pytest.raises(TVMScriptError, match=r"holds 64 bytes of float32, the float16 view of shape \(16,\) 32"):
        tvm.script.parse(
            """
@T.prim_func
def f(A: T.Buffer((4, 16), "float32")):
    S = T.match_buffer(A[0, 0:16], (16,), "float16")
    S[0] = T.float16(1)
"""
        )


def test_a_strided_write_does_not_cover_the_elements_between():
    """C[k + 4 * j] writes every fourth element of its span; the read of C[k - 1 + 4 * j] is of
    elements the previous iteration wrote."""
    a, b = np.arange(16, dtype="float32"), np.full(16, -1, "float32")
    _run(
        """
@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    C = T.alloc_buffer((16,), "float32", scope="local")
    for k in range(4):
        for j in range(4):
            C[k + 4 * j] = A[k + 4 * j]
        if k > 0:
            for j in range(3):
                B[k * 4 + j + 1] = C[k - 1 + 4 * j + 4]
""",
        a,
        b,
    )
    want = np.full(16, -1, "float32")
    for k in range(1, 4):
        for j in range(3):
            want[k * 4 + j + 1] = a[k - 1 + 4 * j + 4]
    np.testing.assert_array_equal(b, want)


def test_a_stepped_loop_counts_trips_over_int32_bounds_far_apart():
    """``range(lo, hi, 2**30)`` from -2**31 to 2**31 - 1 runs Python's 4 trips (the distance
    overflowed int32: none), ``range(10, -2**31 + 5, -3)`` its 715,827,885 (not one where Python
    has none); a loop from 0 keeps its plain int32 count."""
    from tvm.script import tir as T

    @T.prim_func
    def stepped(a: T.Buffer((8,), "int32"), lo: T.int32, hi: T.int32):
        a[7] = 0
        for i in range(lo, hi, 2**30):
            a[a[7]] = i
            a[7] = a[7] + 1
        a[6] = 0
        for j in range(hi, lo, -3):
            a[6] = a[6] + 1
        for k in range(0, hi, 2**29):
            a[5] = k

    mod = tvm.compile(stepped, target="c")
    for lo, hi in ((-(2**31), 2**31 - 1), (-(2**31) + 5, 10), (5, -5)):
        out = tvm.runtime.tensor(np.full(8, -1, "int32"))
        mod["stepped"](out, lo, hi)
        got = out.numpy()
        up = list(range(lo, hi, 2**30))
        assert got[7] == len(up) and list(got[: len(up)]) == up, (lo, hi, got)
        assert got[6] == len(range(hi, lo, -3)), (lo, hi, got)
        tail = list(range(0, hi, 2**29))
        assert got[5] == (tail[-1] if tail else -1), (lo, hi, got)


def test_a_stepped_loop_from_a_positive_start_to_a_very_negative_stop_runs_none():
    """``range(10, -2**31 + 5, 3)``: the distance wrapped to a large positive count in int32."""
    from tvm.script import tir as T

    @T.prim_func
    def up(a: T.Buffer((1,), "int32"), lo: T.int32, hi: T.int32):
        a[0] = 0
        for i in range(lo, hi, 3):
            a[0] = a[0] + 1

    mod = tvm.compile(up, target="c")
    for lo, hi in ((10, -(2**31) + 5), (2**31 - 10, -(2**31)), (-7, 20)):
        out = tvm.runtime.tensor(np.full(1, -1, "int32"))
        mod["up"](out, lo, hi)
        assert out.numpy()[0] == len(range(lo, hi, 3)), (lo, hi, out.numpy())


@pytest.mark.parametrize(
    "dtype, cases",
    [
        ("uint32", [(0, 0), (7, 7), (10, 4), (5, 9), (0, 2**32 - 1)]),
        ("uint8", [(255, 255), (0, 255), (200, 3)]),
        ("int8", [(-128, 127), (-100, 100), (127, -7), (3, 20)]),
        ("int16", [(-(2**15), 2**15 - 1), (100, -100)]),
        ("int64", [(-(2**63), 2**63 - 1), (2**63 - 10, -(2**63)), (-5, 100)]),
    ],
)
def test_stepped_loops_count_like_python_in_every_dtype(dtype, cases):
    """Loops over bounds of ``dtype`` with steps 3 and -3 (and a large one) count Python's trips:
    unsigned distances wrapped past lo >= hi, small ones wrapped in their own width, int64
    bounds further apart than 2**63 wrapped in int64."""
    from tvm.script import tir as T

    big = 2**62 if dtype == "int64" else 2 ** (np.iinfo(dtype).bits - 2)

    @T.prim_func
    def count(a: T.Buffer((3,), "int64"), lo: T.handle, hi: T.handle):
        T.func_attr({"global_symbol": "count"})
        lo_v = T.match_buffer(lo, (1,), dtype)
        hi_v = T.match_buffer(hi, (1,), dtype)
        a[0] = T.int64(0)
        a[1] = T.int64(0)
        a[2] = T.int64(0)
        for i in range(lo_v[0], hi_v[0], 3):
            a[0] = a[0] + T.int64(1)
        for j in range(lo_v[0], hi_v[0], -3):
            a[1] = a[1] + T.int64(1)
        for k in range(lo_v[0], hi_v[0], big):
            a[2] = a[2] + T.int64(1)

    mod = tvm.compile(count, target="c")
    for lo, hi in cases:
        out = tvm.runtime.tensor(np.zeros(3, "int64"))
        mod["count"](out, tvm.runtime.tensor(np.array([lo], dtype)), tvm.runtime.tensor(np.array([hi], dtype)))
        want = [len(range(lo, hi, 3)), len(range(lo, hi, -3)), len(range(lo, hi, big))]
        assert out.numpy().tolist() == want, (dtype, lo, hi)
