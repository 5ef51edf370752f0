"""The Python runtime API under misuse: each case was a crash, a hang or a silently wrong value,
and is now a Python exception that names the problem (or the right value).

- ``tvm.runtime.Tensor(x)`` made a tensor without memory; its first use crashed the process.
- A DLPack producer's tensor with no data pointer, or a negative dimension, was accepted; reading
  it or passing it to a kernel crashed the process or ran the kernel with a negative size.
- ``time_evaluator(min_repeat_ms=nan)`` never returned; with ``dev`` a name or left out it timed
  the launches without waiting for them; it refused the read-only arrays calls accept.
- float16 / bfloat16 scalar arguments reached CPU and OpenCL kernels unrounded (0.1, not
  float16's 0.0999755859375; 70000 instead of inf).
- ``empty((2.7,))`` made a tensor of 2 elements; ``tensor(t, dtype=...)`` ignored the dtype of a
  DLPack tensor; ``tvm.device("")`` raised IndexError; NumPy bool scalars were refused as
  arguments with a message naming a tvm-ffi internal type.
- ``from_dlpack`` of memory its producer marks read-only (a versioned capsule's flag, an immutable
  ``bytes`` behind a NumPy array) gave a writable tensor: copies wrote into the ``bytes``.
- Copy errors named equal shapes where the dtypes differed, and gave no fix for strided views."""

import numpy as np
import pytest
import tvm
from tvm.script import tir as T
from tvm.testing.dlpack import HandMadeTensor


def producer(data, shape):
    """A CPU float32 tensor at ``data`` (None: NULL) of ``shape``, as a careless producer hands one over."""
    return HandMadeTensor(data, shape)


@T.prim_func
def add_one(a: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    for i in range(n):
        A[i] = A[i] + T.float32(1)


@pytest.fixture(scope="module")
def add_one_module():
    return tvm.compile(add_one, target="llvm")


def test_calling_the_tensor_class_says_how_to_make_a_tensor():
    for make in (lambda: tvm.runtime.Tensor(np.arange(3)), lambda: tvm.runtime.Tensor(), lambda: tvm.nd.NDArray()):
        with pytest.raises(TypeError, match=r"use tvm.runtime.tensor\(data, device\), tvm.runtime.empty"):
            make()


def test_a_dlpack_tensor_without_data_or_with_a_negative_dimension_is_refused(add_one_module):
    memory = np.arange(4, dtype="float32")
    with pytest.raises(ValueError, match=r"has elements but no data \(a NULL pointer\): shape \(4,\)"):
        tvm.runtime.from_dlpack(producer(None, (4,)))
    with pytest.raises(ValueError, match=r"has a negative dimension: shape \(-4,\)"):
        tvm.runtime.from_dlpack(producer(memory.ctypes.data, (-4,)))
    # handed straight to a kernel, the host code refuses them
    with pytest.raises(ValueError, match=r"argument 'A' has elements but no data \(a NULL pointer\)"):
        add_one_module["add_one"](producer(None, (4,)))
    with pytest.raises(ValueError, match=r"argument 'A' has a negative dimension: shape \(-4,\)"):
        add_one_module["add_one"](producer(memory.ctypes.data, (-4,)))
    empty = tvm.runtime.from_dlpack(producer(None, (0,)))  # no elements, no data: a valid tensor
    add_one_module["add_one"](empty)
    assert empty.numpy().shape == (0,)


@pytest.mark.parametrize("min_repeat_ms", [float("nan"), float("inf"), -1, "5", True])
def test_time_evaluator_refuses_a_minimum_time_that_is_no_finite_number(add_one_module, min_repeat_ms):
    with pytest.raises(ValueError, match="min_repeat_ms must be a number of at least 0"):
        add_one_module.time_evaluator("add_one", tvm.cpu(), min_repeat_ms=min_repeat_ms)


def test_time_evaluator_takes_device_names_and_the_arguments_calls_take(add_one_module):
    frozen = np.zeros(4, "float32")
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only NumPy array and the function wrote into it"):
        add_one_module.time_evaluator("add_one", "cpu", number=1, repeat=1)(frozen)
    timing = add_one_module.time_evaluator("add_one", None, number=2, repeat=2)(np.zeros(4, "float32"))
    assert len(timing.results) == 2 and all(r > 0 for r in timing.results)
    with pytest.raises(TypeError, match="dev must be a Device"):
        add_one_module.time_evaluator("add_one", 3.5)


@T.prim_func
def store_scalars(A: T.Buffer((2,), "float32"), h: T.float16, b: T.bfloat16):
    A[0] = T.Cast("float32", h)
    A[1] = T.Cast("float32", b)


def test_float16_and_bfloat16_scalar_arguments_are_rounded_to_their_dtype():
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes (pip install ml_dtypes) defines bfloat16")
    mod = tvm.compile(store_scalars, target="llvm")
    cases = [(0.1, 1.01), (70000.0, 3.4e38), (65519.0, -1e-40), (1e-8, 2.0**-133), (3, 5)]
    for h, b in cases:
        out = np.zeros(2, "float32")
        with np.errstate(over="ignore"):
            expect = [np.float32(np.float16(h)), np.float32(ml_dtypes.bfloat16(b))]
        mod(out, h, b)
        np.testing.assert_array_equal(out, expect, err_msg=f"h={h}, b={b}")


def test_shapes_dtypes_and_device_names_are_checked():
    for shape in [(2.7,), ("3",), (True, 4)]:
        with pytest.raises(TypeError, match="a tensor's shape holds integers"):
            tvm.runtime.empty(shape)
    with pytest.raises(ValueError, match="past int64"):
        tvm.runtime.empty((2**63,))
    assert tuple(tvm.runtime.empty((np.int32(2), 3)).shape) == (2, 3)
    source = tvm.runtime.tensor(np.ones(3, "float32"))
    with pytest.raises(ValueError, match="data of dtype float32 is copied as it is, not converted to int32"):
        tvm.runtime.tensor(source, dtype="int32")
    assert str(tvm.runtime.tensor(source, dtype="float32").dtype) == "float32"
    for name in ["", "  ", ":0"]:
        with pytest.raises(ValueError, match="names no device"):
            tvm.device(name)
    for name in ["cpu:", "cpu:abc", "cpu:1.5"]:
        with pytest.raises(ValueError, match="the index after ':' must be a whole number of 0 or more"):
            tvm.device(name)


@T.prim_func
def store_flag(A: T.Buffer((1,), "int32"), flag: T.bool):
    A[0] = T.Cast("int32", flag)


def test_numpy_bool_scalars_are_bool_arguments():
    mod = tvm.compile(store_flag, target="llvm")
    out = np.zeros(1, "int32")
    mod(out, np.bool_(True))
    assert out[0] == 1
    mod(out, (np.array([1, 2]) > 5)[0])
    assert out[0] == 0


@T.prim_func
def scale_on_device(A: T.Buffer((64,), "float32"), alpha: T.float32):
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        A[tx] = A[tx] * alpha


def test_a_kernel_handle_names_a_float_argument_that_is_no_number():
    """A device kernel's own handle (the module's import) given a tensor, a string or None for a
    float scalar said only tvm-ffi's "Cannot convert from type ... to float"."""
    mod = tvm.compile(scale_on_device, target="example")
    dev = tvm.device("example", 0)
    kernel = mod.imports[0]["scale_on_device_kernel0"]
    a = tvm.runtime.tensor(np.ones(64, "float32"), dev)
    kernel(a, 2.0, 64)
    np.testing.assert_array_equal(a.numpy(), np.full(64, 2, "float32"))
    for bad in (a, "2.0", None):
        with pytest.raises(
            TypeError, match=r"kernel scale_on_device_kernel0: argument 1 is float32, got .*pass a number"
        ):
            kernel(a, bad, 64)


@pytest.mark.parametrize("dtype", ["float32x4", "int8x4", "boolx4", "float16x2"])
def test_tensors_of_vector_dtypes_read_and_write_their_lanes_as_the_last_dimension(dtype):
    """``empty((n,), "float32x4")`` was accepted, but numpy() and copyfrom() failed in NumPy's
    own words (it has no vector dtypes)."""
    lanes = int(dtype.rsplit("x", 1)[1])
    t = tvm.runtime.empty((3,), dtype)
    values = (np.arange(3 * lanes) % 3).reshape(3, lanes)
    t.copyfrom(values)
    got = t.numpy()
    assert got.shape == (3, lanes) and got.dtype == np.dtype(dtype.rsplit("x", 1)[0])
    np.testing.assert_array_equal(got, values.astype(got.dtype))
    assert tvm.runtime.empty((0,), dtype).numpy().shape == (0, lanes)
    with pytest.raises(ValueError, match=r"copyfrom: shape \(3,\) does not match \(3, \d\) \(the lanes"):
        t.copyfrom(np.zeros(3))


def test_copyto_says_what_it_takes():
    """``t.copyto(np_array)`` answered with the signature of an internal function."""
    t = tvm.runtime.tensor(np.arange(3, dtype="float32"))
    np.testing.assert_array_equal(t.copyto(tvm.cpu()).numpy(), np.arange(3))
    with pytest.raises(TypeError, match=r"copyto takes a Tensor or a Device, got ndarray \(into NumPy: .numpy\(\)\)"):
        t.copyto(np.zeros(3, "float32"))


def test_read_only_or_used_dlpack_memory_is_refused_by_name():
    immutable = bytes(16)
    frozen = np.frombuffer(immutable, dtype="float32")
    for given in (frozen, frozen.__dlpack__(max_version=(1, 0))):
        with pytest.raises(ValueError, match=r"read-only, and a TVM tensor is writable memory: pass a writable copy"):
            tvm.runtime.from_dlpack(given)
    assert immutable == bytes(16)
    writable = np.zeros(4, "float32")
    capsule = writable.__dlpack__()
    assert tvm.runtime.from_dlpack(capsule).shape == (4,)
    with pytest.raises(ValueError, match="the DLPack capsule was used already"):
        tvm.runtime.from_dlpack(capsule)
    view = tvm.runtime.from_dlpack(writable.__dlpack__(max_version=(1, 0)))  # versioned, writable
    view.copyfrom(np.arange(4, dtype="float32"))
    np.testing.assert_array_equal(writable, np.arange(4))


def test_copy_errors_name_what_differs_and_the_fix():
    source = tvm.runtime.tensor(np.zeros(6, "float32"))
    with pytest.raises(TypeError, match="copy needs equal dtypes: source float32 vs destination float64"):
        source.copyto(tvm.runtime.empty((6,), "float64"))
    strided = tvm.runtime.from_dlpack(np.zeros((4, 4), "float32")[:, :2])
    with pytest.raises(ValueError, match=r"the source is a strided view; .*numpy.ascontiguousarray"):
        strided.copyto(tvm.runtime.empty((4, 2), "float32"))
    np.testing.assert_array_equal(strided.numpy(), np.zeros((4, 2)))  # read as NumPy lays it out


def test_vector_dtype_tensors_from_data_and_shapes_from_0d_arrays():
    lanes = np.arange(12, dtype="float32").reshape(3, 4)
    vec = tvm.runtime.tensor(lanes, dtype="float32x4")  # NumPy has no float32x4: lanes last
    assert tuple(vec.shape) == (3,) and str(vec.dtype) == "float32x4"
    np.testing.assert_array_equal(vec.numpy(), lanes)
    with pytest.raises(ValueError, match="last dimension holds its 4 lanes, got shape \\(6,\\)"):
        tvm.runtime.tensor(np.arange(6, dtype="float32"), dtype="float32x4")
    assert tuple(tvm.runtime.empty(np.array(5)).shape) == (5,)


def test_a_dlpack_tensor_of_negative_rank_is_refused_before_tvm_ffi_reads_it():
    """A rank of -1 made tvm-ffi's from_dlpack write before its shape copy and corrupt the heap."""
    memory = np.zeros(4, "float32")
    producer = HandMadeTensor(memory.ctypes.data, (4,), ndim=-1, keep=memory)
    for given in (producer, producer.__dlpack__()):  # the producer, and a capsule it made
        with pytest.raises(ValueError, match="the producer's tensor has -1 dimensions"):
            tvm.runtime.from_dlpack(given)


@pytest.mark.parametrize("code", [99, -3, 13, 0, 63])
def test_a_device_type_code_nothing_provides_does_not_exist_and_says_so(code):
    dev = tvm.device(code)
    assert dev.exist is False
    with pytest.raises(
        (ValueError, tvm.backend.BackendError),
        match=f"device type {code} is no device type|no installed backend provides device type {code}",
    ):
        dev.name


@pytest.mark.parametrize(
    "args, error, match",
    [
        ((None,), TypeError, "a device is named by a string such as 'cuda'.*got NoneType"),
        ((1.7,), TypeError, "got float"),
        ((True,), TypeError, "got bool"),
        (("opencl", True), TypeError, "the index is a whole number such as 0 or 1, got bool"),
        (("cpu", "1"), TypeError, "got str"),
        (("cpu", 2**40), ValueError, "the index must be 0 or more \\(and below 2\\*\\*31\\)"),
        ((2**40,), ValueError, "is no DLPack device type code"),
        (("cpu:\u00b2",), ValueError, "the index after ':' must be 0 or more"),
    ],
)
def test_device_arguments_of_the_wrong_kind_are_named(args, error, match):
    with pytest.raises(error, match=match):
        tvm.device(*args)


def test_a_device_passed_to_device_is_that_device():
    dev = tvm.cpu(0)
    assert tvm.device(dev) is dev and tvm.device(2, np.int64(1)) == tvm.cuda(1)
    assert tvm.device(tvm.cuda(0), 3) == tvm.cuda(3)
    with pytest.raises(ValueError, match="a library path cannot hold a NUL character"):
        tvm.runtime.load_module("lib\0x.so")


def test_a_tensor_pickles_as_its_values_and_a_module_refuses_by_name():
    import copy
    import pickle

    @T.prim_func
    def double(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = A[i] * T.float32(2)

    t = tvm.runtime.tensor(np.arange(4, dtype="float32"))
    for again in (pickle.loads(pickle.dumps(t)), copy.deepcopy(t), copy.copy(t)):
        assert again.device == t.device and again.dtype == t.dtype
        np.testing.assert_array_equal(again.numpy(), t.numpy())
    mod = tvm.compile(double, "c")
    mod["double"](t)
    np.testing.assert_array_equal(t.numpy(), np.arange(4) * 2)
    assert copy.deepcopy(t).numpy()[3] == 6  # a copy, not a view
    for how in (pickle.dumps, copy.deepcopy):
        with pytest.raises(TypeError, match="a compiled module cannot be pickled or copied: export_library"):
            how(mod)
    with pytest.raises(AttributeError, match="named by strings without NUL characters"):
        mod["double\0other"]
    timer = mod.time_evaluator("double", number=np.int64(2), repeat=np.int32(1), min_repeat_ms=np.float32(0))
    assert len(timer(t).results) == 1


def test_keyword_arguments_name_the_function():
    @T.prim_func
    def add_one(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = A[i] + T.float32(1)

    f = tvm.compile(add_one, "c")["add_one"]
    with pytest.raises(TypeError, match="add_one\\(\\) got an unexpected keyword argument 'A'"):
        f(A=np.zeros(4, "float32"))


def test_a_read_only_array_and_a_numpy_bool_in_one_call():
    @T.prim_func
    def pick(A: T.Buffer((4,), "float32"), flag: T.bool, B: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = T.if_then_else(flag, A[i], T.float32(0))

    f = tvm.compile(pick, "c")["pick"]
    a = np.arange(4, dtype="float32")
    a.flags.writeable = False
    for flag in (np.True_, True):
        b = np.zeros(4, "float32")
        f(a, flag, b)
        np.testing.assert_array_equal(b, np.arange(4))


def test_scalars_of_other_libraries_are_numbers_and_unknown_ones_named():
    """ml_dtypes scalars and objects with __index__ were refused as 'ffi.OpaquePyObject'; they
    are numbers now, and what is not one is named by its Python type."""
    import decimal

    ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes is not installed")
    from tvm.script import tir as T

    @T.prim_func
    def store(O: T.Buffer((2,), "float32"), f: T.float32, i: T.int32):
        O[0] = f
        O[1] = T.Cast("float32", i)

    class Index:
        def __index__(self):
            return 5

    fn = tvm.compile(store, target="c")["store"]
    out = np.zeros(2, "float32")
    fn(out, ml_dtypes.bfloat16(1.5), ml_dtypes.int4(3))
    np.testing.assert_array_equal(out, [1.5, 3])
    fn(out, 2.0, Index())
    np.testing.assert_array_equal(out, [2, 5])
    with pytest.raises(TypeError, match=r"argument 'f' \(#1\) expects a float \(float32\), got decimal.Decimal"):
        fn(out, decimal.Decimal(1), 1)
    with pytest.raises(BufferError, match=r"float and complex dtypes. \(convert it to a dtype a tensor holds"):
        fn(np.array(["a", "b"]), 1.0, 1)
