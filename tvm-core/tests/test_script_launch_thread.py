"""Apache TVM's spellings of GPU threads and loops: ``T.launch_thread`` / ``T.env_thread``,
``range`` with a step, tuple-form assert messages and ``"float"``/``"int"`` dtypes. Each kernel
is compiled and run (on the CPU, or on the example device for thread-bound kernels) and compared
with NumPy."""

import numpy as np
import pytest
import tvm
from tvm.script import TVMScriptError
from tvm.script import tir as T


@T.prim_func
def stepped(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float")
    B = T.match_buffer(b, (n,), "float")
    for i in range(1, n, 3):
        B[i] = A[i] * T.float32(2)
    for j in range(n - 1, -1, -4):
        B[j] = B[j] + T.float32(100)


def test_range_with_a_step():
    mod = tvm.compile(stepped, target="c")
    for n in (0, 1, 10, 17):
        a = np.arange(n, dtype="float32")
        b = tvm.runtime.tensor(np.zeros(n, "float32"))
        mod["stepped"](tvm.runtime.tensor(a), b)
        want = np.zeros(n, "float32")
        want[1::3] = a[1::3] * 2
        if n:
            want[n - 1 :: -4] += 100
        np.testing.assert_array_equal(b.numpy(), want)


@T.prim_func
def stepped_by_an_argument(A: T.Buffer((128,), "float32"), step: T.int32):
    for i in T.serial(5, 128, step=step):
        A[i] = T.float32(1)


def test_a_step_known_at_run_time_must_be_positive():
    mod = tvm.compile(stepped_by_an_argument, target="c")
    for step in (1, 3, 200):
        a = tvm.runtime.tensor(np.zeros(128, "float32"))
        mod["stepped_by_an_argument"](a, step)
        want = np.zeros(128, "float32")
        want[5::step] = 1
        np.testing.assert_array_equal(a.numpy(), want)
    for step in (0, -2):  # it would never end, or run backwards past its stop
        with pytest.raises(ValueError, match=r"the step of loop i \(step\) must be positive"):
            mod["stepped_by_an_argument"](tvm.runtime.tensor(np.zeros(128, "float32")), step)
    with pytest.raises(ValueError, match="a loop step must be a nonzero integer or an integer expression"):
        T.serial(0, 8, step=0.5)


@T.prim_func
def count_steps(C: T.Buffer((1,), "int64"), n: T.int32, s: T.int32):
    C[0] = T.int64(0)
    for i in T.serial(0, n, step=s):
        C[0] = C[0] + T.int64(1)


@T.prim_func
def count_wide_steps(C: T.Buffer((1,), "int64"), s: T.int64):
    C[0] = T.int64(0)
    for i in T.serial(0, 100, step=s):
        C[0] = C[0] + T.int64(1)


def test_run_time_steps_near_the_end_of_their_types():
    """The trip count of a run-time step does not overflow near the top of int32, and a step
    wider than the bounds (int64 here) widens the loop instead of being cut to 32 bits."""
    narrow, wide = tvm.compile(count_steps, target="c"), tvm.compile(count_wide_steps, target="c")
    c = tvm.runtime.tensor(np.zeros(1, "int64"))
    for n, s, want in ((2**31 - 1, 2**30, 2), (2**31 - 1, 2**31 - 1, 1), (10, 3, 4), (0, 5, 0)):
        narrow["count_steps"](c, n, s)
        assert int(c.numpy()[0]) == want, (n, s)
    for s, want in ((2**32 + 1, 1), (2**32, 1), (7, 15)):
        wide["count_wide_steps"](c, s)
        assert int(c.numpy()[0]) == want, s


@T.prim_func
def count_constant_steps(C: T.Buffer((2,), "int64"), n: T.int32):
    C[0] = T.int64(0)
    C[1] = T.int64(0)
    for i in range(0, n, 1 << 30):
        C[0] = C[0] + T.int64(1)
    for j in range(n, 0, -(1 << 30)):
        C[1] = C[1] + T.int64(1)


def test_constant_steps_near_the_end_of_their_types():
    """A constant step's trip count does not overflow within one step of int32's largest value
    (it was computed as (distance + step - 1) // step, which wrapped to a negative count)."""
    mod = tvm.compile(count_constant_steps, target="c")
    c = tvm.runtime.tensor(np.zeros(2, "int64"))
    for n in (2**31 - 1, 2**31 - 2**29, 2**30, 1, 0, -5):
        mod["count_constant_steps"](c, n)
        want = len(range(0, n, 1 << 30)), len(range(n, 0, -(1 << 30)))
        assert tuple(int(x) for x in c.numpy()) == want, n


@T.prim_func
def checked(a: T.handle, n: T.int32):
    A = T.match_buffer(a, (8,), "int")
    assert n < 8, ("n must be below ", "8")
    A[n] = 1


def test_tuple_assert_message_and_int_alias():
    mod = tvm.compile(checked, target="c")
    a = tvm.runtime.tensor(np.zeros(8, "int32"))
    mod["checked"](a, 3)
    assert a.numpy()[3] == 1 and a.numpy().dtype == np.int32
    with pytest.raises(Exception, match="n must be below 8"):
        mod["checked"](a, 9)


@T.prim_func
def launched(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (256,), "float32")
    B = T.match_buffer(b, (256,), "float32")
    bx = T.launch_thread("blockIdx.x", 4)
    tx = T.env_thread("threadIdx.x")
    with T.launch_thread(tx, 64):
        B[bx * 64 + tx] = A[bx * 64 + tx] + T.float32(1)


def test_launch_thread_is_a_thread_binding():
    from tvm.tir import stmt as S
    from tvm.tir.functor import post_order_visit

    loops = []
    post_order_visit(
        launched.body, lambda n: loops.append((n.thread_tag, n.extent.value)) if isinstance(n, S.For) else None
    )
    assert loops == [("threadIdx.x", 64), ("blockIdx.x", 4)], loops  # children first
    mod = tvm.compile(launched, target="example")
    dev = tvm.device("example")
    a = np.random.rand(256).astype("float32")
    b = tvm.runtime.empty((256,), "float32", dev)
    mod["launched"](tvm.runtime.tensor(a, dev), b)
    np.testing.assert_allclose(b.numpy(), a + 1)


@T.prim_func
def launched_vthread(a: T.handle, c: T.handle):
    A = T.match_buffer(a, (16, 16), "float32")
    C = T.match_buffer(c, (16, 16), "float32")
    i0 = T.env_thread("blockIdx.x")
    i1 = T.env_thread("threadIdx.x")
    i2 = T.env_thread("vthread")
    T.launch_thread(i0, 4)
    T.launch_thread(i1, 2)
    T.launch_thread(i2, 2)
    for j in range(16):
        C[i0 * 4 + i1 * 2 + i2, j] = A[i0 * 4 + i1 * 2 + i2, j] * T.float32(2)


def test_a_launched_virtual_thread_is_a_serial_loop_in_each_thread():
    mod = tvm.compile(launched_vthread, target="example")
    dev = tvm.device("example")
    a = np.random.rand(16, 16).astype("float32")
    c = tvm.runtime.empty((16, 16), "float32", dev)
    mod["launched_vthread"](tvm.runtime.tensor(a, dev), c)
    np.testing.assert_allclose(c.numpy()[:16], a * 2)


@T.prim_func
def launched_twice(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (16, 64), "float32")
    B = T.match_buffer(b, (16, 64), "float32")
    C = T.match_buffer(c, (16, 64), "float32")
    tx_c = T.env_thread("threadIdx.x")
    tx_b = T.env_thread("threadIdx.x")
    bx = T.env_thread("blockIdx.x")
    T.launch_thread(bx, 16)
    T.launch_thread(tx_b, 4)
    T.launch_thread(tx_c, 4)
    for j in range(16):
        B[bx, tx_b * 16 + j] = A[bx, tx_b * 16 + j] * T.float32(2)
    for j in range(16):
        C[bx, tx_c * 16 + j] = B[bx, tx_c * 16 + j] + T.float32(1)


def test_a_thread_index_launched_again_inside_itself_is_the_same_threads():
    """Two ``T.env_thread("threadIdx.x")`` variables launched one inside the other (as Apache
    TVM's tests write before its threads are unified) name the same threads; a wider second
    launch is refused by name."""
    mod = tvm.compile(launched_twice, target="example")
    dev = tvm.device("example")
    a = np.random.rand(16, 64).astype("float32")
    b, c = tvm.runtime.empty((16, 64), "float32", dev), tvm.runtime.empty((16, 64), "float32", dev)
    mod["launched_twice"](tvm.runtime.tensor(a, dev), b, c)
    np.testing.assert_allclose(c.numpy(), a * 2 + 1, rtol=1e-6)
    with pytest.raises(TVMScriptError, match="threadIdx.x is bound again inside a loop bound to it with extent 8"):

        @T.prim_func
        def wider(A: T.Buffer((8,), "float32")):
            t0 = T.env_thread("threadIdx.x")
            t1 = T.env_thread("threadIdx.x")
            T.launch_thread(t0, 4)
            T.launch_thread(t1, 8)
            A[t1] = T.float32(1)


def test_a_narrower_launch_of_the_same_index_may_not_guard_a_barrier():
    """The guard a narrower second launch puts around what follows would keep threads from a
    barrier every thread must reach (a hang): refused by name instead."""
    with pytest.raises(TVMScriptError, match="narrower extent 4, which guards what follows, and that holds a barrier"):

        @T.prim_func
        def barrier_guarded(A: T.Buffer((8,), "float32")):
            t0 = T.env_thread("threadIdx.x")
            t1 = T.env_thread("threadIdx.x")
            T.launch_thread(t0, 8)
            S = T.alloc_buffer((8,), "float32", scope="shared")
            S[t0] = A[t0]
            T.launch_thread(t1, 4)
            T.tvm_storage_sync("shared")
            A[t1] = S[7 - t1]


def test_an_index_launched_inside_a_64_bit_binding_of_itself():
    @T.prim_func
    def wide(A: T.Buffer((8,), "int32")):
        for t in T.thread_binding(T.int64(8), thread="threadIdx.x"):
            t1 = T.env_thread("threadIdx.x")
            T.launch_thread(t1, 4)
            A[t1] = t1 + 1

    mod = tvm.compile(wide, target="example")
    a = tvm.runtime.tensor(np.zeros(8, "int32"), tvm.device("example"))
    mod["wide"](a)
    np.testing.assert_array_equal(a.numpy(), [1, 2, 3, 4, 0, 0, 0, 0])


@T.prim_func
def attr_launched(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (128,), "float32")
    B = T.match_buffer(b, (128,), "float32")
    tx0 = T.env_thread("threadIdx.x")
    with T.attr(tx0, "thread_extent", 128):
        B[tx0] = A[tx0] * T.float32(2)
    for i in range(3):  # one single-thread kernel per iteration
        T.attr(0, "device_scope", 0)
        B[i] = B[i] + T.float32(1)


def test_thread_extent_and_device_scope_attrs_are_launches():
    """Lowered TIR's spellings: ``T.attr(tx, "thread_extent", n)`` is ``T.launch_thread(tx, n)``;
    ``T.attr(0, "device_scope", 0)`` runs what follows on the device, in one thread."""
    mod = tvm.compile(attr_launched, target="example")
    dev = tvm.device("example")
    a = np.random.rand(128).astype("float32")
    b = tvm.runtime.empty((128,), "float32", dev)
    mod["attr_launched"](tvm.runtime.tensor(a, dev), b)
    want = a * 2
    want[:3] += 1
    np.testing.assert_allclose(b.numpy(), want, rtol=1e-6)


def test_launch_thread_errors_name_the_problem():
    with pytest.raises(ValueError, match="unknown thread tag 'threadIdx.w'"):
        T.env_thread("threadIdx.w")
    with pytest.raises(ValueError, match="step must be a nonzero integer"):
        T.serial(0, 4, 0)
    assert issubclass(TVMScriptError, Exception)


@T.prim_func
def let_expression(A: T.Buffer((4,), "int32")):
    x = T.int32()
    A[0] = T.let(x, A[1] + 1, x * x)


def test_let_expression_binds_a_declared_variable_and_round_trips():
    for func in (let_expression, tvm.script.parse(let_expression.script(), {})):
        a = np.array([0, 3, 0, 0], "int32")
        tvm.compile(func, target="c")["let_expression"](a)
        assert a.tolist() == [16, 3, 0, 0]
    assert "x = T.int32()" in let_expression.script()
    with pytest.raises(TVMScriptError, match="T.let binds a variable"):

        @T.prim_func
        def bad(A: T.Buffer((4,), "int32")):
            A[0] = T.let(3, 4, 5)


@T.prim_func
def iter_var_launched(A: T.Buffer((256,), "float32")):
    threadIdx_x = T.int32()
    T.attr(T.iter_var(threadIdx_x, T.Range(0, 256), "ThreadIndex", "threadIdx.x"), "thread_extent", 256)
    A[threadIdx_x] = A[threadIdx_x] + T.float32(1)


def test_thread_extent_of_an_iter_var_is_a_launch():
    """Apache TVM's older spelling ``T.attr(T.iter_var(v, dom, "ThreadIndex", tag), "thread_extent",
    n)`` launches ``v`` as the thread ``tag`` over ``n``."""
    mod = tvm.compile(iter_var_launched, target="example")
    dev = tvm.device("example")
    a = np.random.rand(256).astype("float32")
    t = tvm.runtime.tensor(a, dev)
    mod["iter_var_launched"](t)
    np.testing.assert_allclose(t.numpy(), a + 1)
    with pytest.raises(TVMScriptError, match="thread tag must be one of"):

        @T.prim_func
        def bad_tag(A: T.Buffer((4,), "float32")):
            v = T.int32()
            T.attr(T.iter_var(v, T.Range(0, 4), "ThreadIndex", "threadIdx.w"), "thread_extent", 4)
            A[v] = T.float32(0)
