"""Vectors as Apache TVM writes them (``T.Ramp``/``T.ramp``, ``T.Broadcast``/``T.broadcast``,
``T.Shuffle``, vector slices ``A[i:i + 4]``, ``vload``/``vstore``, ``float32x4`` values): each
kernel compiles, runs and matches NumPy; what has no lane-by-lane meaning is refused by name."""

import numpy as np
import pytest
import tvm
from tvm.script import TVMScriptError
from tvm.script import tir as T
from tvm.tir.transform import scalarize_vectors
from tvm.tir.transform.verify import TIRVerifyError


def _run(func, *arrays):
    mod = tvm.compile(func, target="c")
    tensors = [tvm.runtime.tensor(a) for a in arrays]
    mod[func.global_symbol](*tensors)
    return [t.numpy() for t in tensors]


@T.prim_func
def ramp_add(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
    for i in T.serial(32):
        C[T.Ramp(i * 2, 1, 2)] = A[T.Ramp(i * 2, 1, 2)] + T.Broadcast(T.float32(1), 2)


def test_ramp_loads_and_stores_with_a_broadcast():
    a = np.random.rand(64).astype("float32")
    _, c = _run(ramp_add, a, np.zeros(64, "float32"))
    np.testing.assert_allclose(c, a + 1)


@T.prim_func
def reverse_quads(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    for i in range(4):
        x = A[i * 4 : i * 4 + 4]
        C[i * 4 : i * 4 + 4] = T.Shuffle([x], [3, 2, 1, 0]) * 2.0


def test_slices_are_vectors_and_shuffle_picks_lanes():
    a = np.arange(16, dtype="float32")
    _, c = _run(reverse_quads, a, np.zeros(16, "float32"))
    np.testing.assert_array_equal(c, (a.reshape(4, 4)[:, ::-1] * 2).reshape(-1))


@T.prim_func
def strided_vstore(b: T.handle):
    B = T.match_buffer(b, (8,), "float32")
    B.vstore([T.Ramp(0, 2, 4)], T.Broadcast(1.0, 4), predicate=T.Broadcast(T.bool(True), 4))


@T.prim_func
def masked_tail(a: T.handle, c: T.handle):
    A = T.match_buffer(a, (6,), "float32")
    C = T.match_buffer(c, (6,), "float32")
    lane = T.ramp(4, 1, 4)
    C.vstore([lane], A.vload([lane], predicate=lane < 6) + 1.0, predicate=lane < 6)
    C.vstore([0], A.vload([0], "float32x4") * 3.0)


def test_vload_and_vstore_with_predicates():
    (b,) = _run(strided_vstore, np.zeros(8, "float32"))
    np.testing.assert_array_equal(b, [1, 0, 1, 0, 1, 0, 1, 0])
    a = np.arange(6, dtype="float32") + 1
    _, c = _run(masked_tail, a, np.zeros(6, "float32"))
    np.testing.assert_array_equal(c, [3, 6, 9, 12, 6, 7])  # lanes 6 and 7 are neither read nor written


@T.prim_func
def shift_left_by_one(A: T.Buffer((8,), "int32")):
    A[0:4] = A[1:5]
    A[5:8] = T.int32x3(-1)


def test_a_vector_store_reads_every_lane_first():
    (a,) = _run(shift_left_by_one, np.arange(8, dtype="int32"))
    np.testing.assert_array_equal(a, [1, 2, 3, 4, 4, -1, -1, -1])


@T.prim_func
def lanewise_math(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "float32")):
    for i in range(2):
        v: T.float32x4 = T.Cast("float32x4", A[T.ramp(i * 4, 1, 4)])
        B[i * 4 : i * 4 + 4] = T.exp(v * T.float32(0.5)) + T.Select(v > 2.0, v, T.float32x4(0))


def test_casts_math_and_selects_lane_by_lane():
    a = np.arange(8, dtype="int32")
    _, b = _run(lanewise_math, a, np.zeros(8, "float32"))
    x = a.astype("float32")
    np.testing.assert_allclose(b, np.exp(x * 0.5) + np.where(x > 2, x, 0), rtol=1e-6)


@T.prim_func
def vector_kernel(a: T.handle, c: T.handle):
    A = T.match_buffer(a, (256,), "float32")
    C = T.match_buffer(c, (256,), "float32")
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            base = (bx * 32 + tx) * 4
            C[T.ramp(base, 1, 4)] = A[T.ramp(base, 1, 4)] * A[T.ramp(base, 1, 4)]


def test_device_kernels_take_vectors():
    a = np.random.rand(256).astype("float32")
    mod = tvm.compile(vector_kernel, target="example")
    dev = tvm.device("example")
    c = tvm.runtime.empty((256,), "float32", dev)
    mod["vector_kernel"](tvm.runtime.tensor(a, dev), c)
    np.testing.assert_allclose(c.numpy(), a * a, rtol=1e-6)


def test_scalarized_function_has_no_vector_left():
    f = scalarize_vectors(reverse_quads)
    assert "T.ramp" in reverse_quads.script() and "T.shuffle([x], [3, 2, 1, 0])" in reverse_quads.script()
    assert "x4" not in f.script() and "ramp" not in f.script(), f.script()


def test_buffers_of_vector_elements_hold_their_lanes_in_one_more_dimension():
    # T.Buffer((4,), "float32x4") takes a (4, 4) float32 array; A[i] is all four lanes of row i
    @T.prim_func
    def f(A: T.Buffer((4,), "float32x4"), B: T.Buffer((16,), "float32"), x: T.int32, y: T.int32,
          P: T.Buffer((1,), "int32x2")):  # fmt: skip
        for i in range(4):
            A[i] = A[i] * T.Broadcast(T.float32(2), 4) + B[i * 4 : i * 4 + 4]
        P[0] = T.Shuffle([x, y], [1, 0])

    a = np.arange(16, dtype="float32").reshape(4, 4)
    A, P = tvm.runtime.tensor(a), tvm.runtime.empty((1, 2), "int32")
    tvm.compile(f, target="c")["f"](A, tvm.runtime.tensor(np.ones(16, dtype="float32")), 3, 5, P)
    np.testing.assert_allclose(A.numpy(), a * 2 + 1)
    np.testing.assert_array_equal(P.numpy(), [[5, 3]])


def test_a_vector_index_into_vector_elements_is_refused():
    @T.prim_func
    def f(A: T.Buffer((4,), "float32x4"), B: T.Buffer((2,), "float32x8")):
        B[0] = A[0:2]

    with pytest.raises(TIRVerifyError, match=r"vector elements \(float32x4\) and a vector index"):
        tvm.compile(f, target="c")


def test_a_slice_without_a_constant_length_is_refused():
    with pytest.raises(TVMScriptError, match="constant length of 2 to 64 lanes"):

        @T.prim_func
        def f(A: T.Buffer((16,), "float32"), n: T.int32):
            A[0:n] = T.float32(0)


def test_bad_lanes_and_shuffle_indices_name_the_problem():
    with pytest.raises(TVMScriptError, match="lanes must be a constant integer"):

        @T.prim_func
        def f(A: T.Buffer((16,), "float32"), n: T.int32):
            A[T.ramp(0, 1, n)] = T.broadcast(T.float32(0), n)

    with pytest.raises(TVMScriptError, match="shuffle index 4 is not a constant lane in"):

        @T.prim_func
        def g(A: T.Buffer((16,), "float32")):
            A[0:2] = T.shuffle([A[0:4]], [0, 4])


def test_a_store_to_a_region_of_several_dimensions_is_refused():
    with pytest.raises(TVMScriptError, match="only one dimension of a buffer access can be a slice"):

        @T.prim_func
        def f(A: T.Buffer((16, 16), "float32")):
            A[0:4, 0:4] = T.float32(0)


def test_a_vector_condition_is_refused():
    @T.prim_func
    def f(A: T.Buffer((16,), "float32")):
        if A[0:4] > T.float32x4(0):
            A[0] = 1.0

    with pytest.raises(TIRVerifyError, match="an if condition must be one boolean, got a vector of 4 lanes"):
        tvm.compile(f, target="c")


@T.prim_func
def one_lane_and_scalar_lets(A: T.Buffer((8,), "int32")):
    A[7] = T.Shuffle([A[0:4]], [2])
    x = T.int32()
    A[4:7] = T.let(x, 1, A[T.ramp(x, 1, 3)]) * 10


def test_a_one_lane_shuffle_and_a_scalar_let_in_a_vector():
    (a,) = _run(one_lane_and_scalar_lets, np.arange(8, dtype="int32"))
    np.testing.assert_array_equal(a, [0, 1, 2, 3, 10, 20, 30, 2])


@T.prim_func
def predicate_and_index_read_the_stored_buffer(A: T.Buffer((8,), "int32")):
    A.vstore([T.ramp(1, 1, 4)], T.int32x4(0), predicate=A[T.ramp(0, 1, 4)] > 0)
    A[T.ramp(A[7], 1, 2)] = T.int32x2(5)


def test_a_vector_store_reads_its_predicate_and_indices_before_it_writes():
    a = np.ones(8, "int32")
    a[7] = 6  # the second store writes A[6:8]: its index reads A[7] before the store changes it
    (a,) = _run(predicate_and_index_read_the_stored_buffer, a)
    np.testing.assert_array_equal(a, [1, 0, 0, 0, 0, 1, 5, 5])


@T.prim_func
def regroup_bits(
    A: T.Buffer((16,), "uint8"),
    B: T.Buffer((4,), "int32"),
    C: T.Buffer((16,), "uint8"),
    D: T.Buffer((8,), "float16"),
    E: T.Buffer((4,), "uint32"),
):
    for i in range(4):
        B[i] = T.reinterpret(A.vload([i * 4], "uint8x4"), dtype="int32")
        C[T.ramp(i * 4, 1, 4)] = T.reinterpret(B[i], dtype="uint8x4")
        E[i] = T.reinterpret(D[T.ramp(i * 2, 1, 2)], dtype="uint32")


def test_reinterpret_regroups_lanes_of_the_same_total_width():
    """``uint8x4`` <-> ``int32`` and ``float16x2`` -> ``uint32``, lane 0 in the low bits, as
    NumPy's ``view`` on a little-endian machine."""
    rng = np.random.default_rng(0)
    a = rng.integers(0, 256, 16).astype("uint8")
    d = rng.standard_normal(8).astype("float16")
    _, b, c, _, e = _run(regroup_bits, a, np.zeros(4, "int32"), np.zeros(16, "uint8"), d, np.zeros(4, "uint32"))
    np.testing.assert_array_equal(b, a.view("int32"))
    np.testing.assert_array_equal(c, a)
    np.testing.assert_array_equal(e, d.view("uint32"))


@T.prim_func
def scalable_tail_add(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (14,), "float32")
    B = T.match_buffer(b, (14,), "float32")
    for i_0 in range(T.ceildiv(14, 4 * T.vscale())):
        lanes = T.meta_var(T.Ramp(i_0 * 4 * T.vscale(), 1, 4 * T.vscale()))
        mask = T.meta_var(T.get_active_lane_mask("uint1xvscalex4", i_0 * 4 * T.vscale(), 14))
        B.vstore([lanes], A.vload([lanes], predicate=mask) + T.Broadcast(T.float32(1), 4), predicate=mask)


@T.prim_func
def scalable_fill(A: T.Buffer((16,), "float32")):
    for j in T.vectorized(0, 4 * T.vscale()):
        A[j] = 13


def test_scalable_vectors_run_with_vscale_one():
    """Kernels written for SVE (T.vscale, T.get_active_lane_mask) run with 128-bit vectors: the
    tail lanes past the mask are neither read nor written."""
    a = np.arange(14, dtype="float32")
    _, b = _run(scalable_tail_add, a, np.full(14, -5, "float32"))
    np.testing.assert_array_equal(b, a + 1)
    (c,) = _run(scalable_fill, np.zeros(16, "float32"))
    np.testing.assert_array_equal(c, [13] * 4 + [0] * 12)


@T.prim_func
def meta_var_forms(A: T.Buffer((4,), "int32")):
    x = T.meta_var(A[0])
    x = x + 1  # a name assigned again is an ordinary variable
    v = T.meta_var(A[1])
    A[1] = 50
    A[2] = v  # v stands for A[1] itself: read here, after the store
    A[3] = x


def test_meta_var_stands_for_its_expression_where_used():
    (a,) = _run(meta_var_forms, np.array([1, 2, 3, 4], "int32"))
    np.testing.assert_array_equal(a, [1, 50, 50, 2])


@T.prim_func
def vector_comparisons(
    A: T.Buffer((8,), "float32"),
    B: T.Buffer((8,), "float32"),
    M: T.Buffer((8,), "bool"),
    N: T.Buffer((8,), "bool"),
    C: T.Buffer((8,), "int32"),
):
    M[0:4] = A[0:4] < B[0:4]
    M[4:8] = T.Or(A[4:8] < B[4:8], A[4:8] <= T.Broadcast(T.float32(0), 4))
    N[0:8] = T.And(M[0:8], M[0:8])
    m = A[0:4] >= B[0:4]  # a let of four bools
    C[0:4] = T.Cast("int32x4", m)
    C[4:8] = T.Select(A[4:8] < B[4:8], T.Broadcast(1, 4), T.Broadcast(2, 4))


def test_comparisons_of_vectors_are_stored_lane_by_lane():
    # a comparison (or And / Or) of vectors is typed bool with its operands' lanes: storing it
    # once broadcast lane 0 to every lane
    rng = np.random.default_rng(7)
    a, b = rng.uniform(-1, 1, 8).astype("float32"), rng.uniform(-1, 1, 8).astype("float32")
    _, _, m, n, c = _run(vector_comparisons, a, b, np.zeros(8, bool), np.zeros(8, bool), np.zeros(8, "int32"))
    want = np.concatenate([a[:4] < b[:4], (a[4:] < b[4:]) | (a[4:] <= 0)])
    np.testing.assert_array_equal(m, want)
    np.testing.assert_array_equal(n, want)
    np.testing.assert_array_equal(c, np.concatenate([a[:4] >= b[:4], np.where(a[4:] < b[4:], 1, 2)]))


@pytest.mark.parametrize(
    "source, message",
    [
        ('B[0:4] = T.Cast("float32x4", A[0:2])', "T.Cast to float32x4 \\(4 lanes\\) of a value of 2 lanes"),
        ('B[0] = T.Cast("float32", A[0:2])', "T.Cast to float32 \\(1 lanes\\) of a value of 2 lanes"),
        ("B[0:4] = T.Select(A[0:2] < T.float32(1.5), A[0:4], A[4:8])", "condition of 2 lanes cannot choose"),
        ("B[0:4] = T.if_then_else(A[0:2] < T.float32(1.5), A[0:4], A[4:8])", "condition of 2 lanes cannot choose"),
    ],
)
def test_lane_counts_that_disagree_are_refused_at_the_line(tmp_path, source, message):
    """A 2-lane condition over 4-lane values silently tested A[2] and A[3]; a cast between lane
    counts read past its operand or gave code the C compiler refused."""
    path = tmp_path / "kernel.py"
    path.write_text(
        "from tvm.script import tir as T\n\n"
        "@T.prim_func\n"
        'def f(A: T.Buffer((8,), "float32"), B: T.Buffer((4,), "float32")):\n'
        f"    {source}\n"
    )
    import runpy

    with pytest.raises(tvm.script.TVMScriptError, match=message) as info:
        runpy.run_path(str(path))
    assert "kernel.py" in str(info.value) and source in str(info.value)


def test_a_scalar_cast_to_a_vector_is_a_broadcast():
    @T.prim_func
    def f(A: T.Buffer((1,), "int32"), B: T.Buffer((4,), "float32")):
        B[0:4] = T.Cast("float32x4", A[0])

    b = np.zeros(4, "float32")
    tvm.compile(f, "c")["f"](np.array([7], "int32"), b)
    np.testing.assert_array_equal(b, np.full(4, 7, "float32"))


@T.prim_func
def named_and_inline_vector_comparisons(A: T.Buffer((16,), "float32"), D: T.Buffer((2, 16), "uint8")):
    m = A[0:16] > T.Broadcast(T.float32(0), 16)  # a name for a comparison of vectors: boolx16
    D[0, 0:16] = T.Cast("uint8x16", T.Or(m, A[0:16] < T.Broadcast(T.float32(-2), 16)))
    D[1, 0:16] = T.Cast("uint8x16", m == (A[0:16] < T.Broadcast(T.float32(1), 16)))


def test_a_named_vector_comparison_combines_with_an_inline_one():
    a = np.linspace(-4, 4, 16).astype("float32")
    d = tvm.runtime.tensor(np.zeros((2, 16), "uint8"))
    tvm.compile(named_and_inline_vector_comparisons, "c")(tvm.runtime.tensor(a), d)
    np.testing.assert_array_equal(d.numpy()[0], ((a > 0) | (a < -2)).astype("uint8"))
    np.testing.assert_array_equal(d.numpy()[1], ((a > 0) == (a < 1)).astype("uint8"))


def test_comparisons_of_different_lanes_are_refused_and_a_scalar_bool_fills_the_lanes():
    text = """
@T.prim_func
def f(A: T.Buffer((16,), "float32"), D: T.Buffer((16,), "uint8")):
    D[0:16] = T.Cast("uint8x16", (A[0:16] > T.Broadcast(T.float32(0), 16)) == (A[0:8] > T.Broadcast(T.float32(0), 8)))
"""
    with pytest.raises(TVMScriptError, match="operands have different vector lanes: 16 and 8"):
        tvm.script.from_source(text)

    @T.prim_func
    def with_scalar(A: T.Buffer((16,), "float32"), D: T.Buffer((16,), "uint8")):
        m = A[0:16] > T.Broadcast(T.float32(0), 16)
        D[0:16] = T.Cast("uint8x16", T.Or(m, A[0] > T.float32(1)))

    a = np.linspace(-4, 4, 16).astype("float32")
    d = tvm.runtime.tensor(np.zeros(16, "uint8"))
    tvm.compile(with_scalar, "c")(tvm.runtime.tensor(a), d)
    np.testing.assert_array_equal(d.numpy(), ((a > 0) | (a[0] > 1)).astype("uint8"))


def test_a_vector_comparison_and_a_python_bool():
    @T.prim_func
    def f(A: T.Buffer((5,), "float32"), D: T.Buffer((5,), "uint8")):
        D[0:5] = T.Cast("uint8x5", (A[0:5] < T.float32(0)) and (1 > 0))

    a = np.array([-1, 2, -3, 4, 0], "float32")
    d = tvm.runtime.tensor(np.zeros(5, "uint8"))
    tvm.compile(f, "c")(tvm.runtime.tensor(a), d)
    np.testing.assert_array_equal(d.numpy(), (a < 0).astype("uint8"))
