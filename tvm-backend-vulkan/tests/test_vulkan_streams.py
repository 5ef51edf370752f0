"""Streams on a Vulkan device: streams from runtime.DeviceCreateStream made current with
tvm_ffi.use_raw_stream, launches recorded on each, synchronized per stream, released; a freed
or unknown stream handle is a ValueError wherever it is used. (lavapipe offers a single queue:
streams then share it, with their own batches.)"""

from __future__ import annotations

import threading

import numpy as np
import pytest
import tvm
import tvm_ffi
from tvm.testing import kernels

create_stream = tvm_ffi.get_global_func("runtime.DeviceCreateStream")
free_stream = tvm_ffi.get_global_func("runtime.DeviceFreeStream")


@pytest.fixture(scope="module")
def vadd():
    return tvm.compile(kernels.vector_add(), target="vulkan")["vector_add"]


def test_two_streams_run_their_own_launches(dev, vadd):
    s1, s2 = create_stream(dev), create_stream(dev)
    assert s1 != 0 and s2 != 0 and s1 != s2
    n = 1000
    a = np.arange(n, dtype="float32")
    A = tvm.runtime.tensor(a, dev)
    B1 = tvm.runtime.tensor(np.zeros(n, "float32"), dev)
    B2 = tvm.runtime.tensor(np.zeros(n, "float32"), dev)
    # Interleave chains on the two streams (B = A + B: each launch reads the previous result, so
    # the order within a stream matters).
    for _ in range(40):
        with tvm_ffi.use_raw_stream(dev, s1):
            vadd(A, B1, B1)
        with tvm_ffi.use_raw_stream(dev, s2):
            vadd(A, B2, B2)
            vadd(A, B2, B2)
    with tvm_ffi.use_raw_stream(dev, s1):
        dev.sync()
    with tvm_ffi.use_raw_stream(dev, s2):
        dev.sync()
    np.testing.assert_array_equal(B1.numpy(), a * 40)
    np.testing.assert_array_equal(B2.numpy(), a * 80)
    free_stream(dev, s1)
    free_stream(dev, s2)


def test_default_and_created_stream_together(dev, vadd):
    s = create_stream(dev)
    a = np.random.rand(777).astype("float32")
    A = tvm.runtime.tensor(a, dev)
    C0 = tvm.runtime.empty((777,), "float32", dev)
    C1 = tvm.runtime.empty((777,), "float32", dev)
    vadd(A, A, C0)  # the default stream
    dev.sync()  # streams are unordered: C0 must be ready before stream s reads it
    with tvm_ffi.use_raw_stream(dev, s):
        vadd(A, C0, C1)
        dev.sync()
    # a copy waits for every stream: no sync needed before it
    with tvm_ffi.use_raw_stream(dev, s):
        vadd(C1, C1, C0)
    np.testing.assert_allclose(C0.numpy(), 6 * a, rtol=1e-6)
    np.testing.assert_allclose(C1.numpy(), 3 * a, rtol=1e-6)
    free_stream(dev, s)


def test_auto_submit_and_free_with_pending_work_on_a_stream(dev, vadd):
    s = create_stream(dev)
    n = 256
    A = tvm.runtime.tensor(np.ones(n, "float32"), dev)
    B = tvm.runtime.tensor(np.zeros(n, "float32"), dev)
    with tvm_ffi.use_raw_stream(dev, s):
        for _ in range(1100):  # past the 1024 launches of one batch
            vadd(A, B, B)
        # tensors freed while the stream may still use them are destroyed once it is done
        for _ in range(5):
            T = tvm.runtime.tensor(np.ones(n, "float32"), dev)
            vadd(T, B, B)
            del T
        dev.sync()
    np.testing.assert_array_equal(B.numpy(), np.full(n, 1105, "float32"))
    free_stream(dev, s)  # frees a stream with nothing pending


def test_free_stream_waits_for_its_work(dev, vadd):
    s = create_stream(dev)
    A = tvm.runtime.tensor(np.ones(100, "float32"), dev)
    B = tvm.runtime.tensor(np.zeros(100, "float32"), dev)
    with tvm_ffi.use_raw_stream(dev, s):
        for _ in range(50):
            vadd(A, B, B)
    free_stream(dev, s)
    np.testing.assert_array_equal(B.numpy(), np.full(100, 50, "float32"))


def test_streams_in_threads(dev, vadd):
    n, launches = 512, 60
    a = np.arange(n, dtype="float32")
    A = tvm.runtime.tensor(a, dev)
    outs = [tvm.runtime.tensor(np.zeros(n, "float32"), dev) for _ in range(4)]
    errors = []

    def work(out):
        try:
            s = create_stream(dev)
            with tvm_ffi.use_raw_stream(dev, s):
                for _ in range(launches):
                    vadd(A, out, out)
                dev.sync()
            free_stream(dev, s)
        except Exception as e:  # noqa: BLE001  reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(o,)) for o in outs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for out in outs:
        np.testing.assert_array_equal(out.numpy(), a * launches)


def test_a_freed_or_unknown_stream_is_a_value_error(dev, vadd):
    s = create_stream(dev)
    free_stream(dev, s)
    A = tvm.runtime.tensor(np.ones(8, "float32"), dev)
    with pytest.raises(ValueError, match="not a live stream"):
        free_stream(dev, s)
    with tvm_ffi.use_raw_stream(dev, s):
        with pytest.raises(ValueError, match="not a live stream"):
            vadd(A, A, A)
        with pytest.raises(ValueError, match="not a live stream"):
            dev.sync()
    with pytest.raises(ValueError, match="not a live stream"):
        free_stream(dev, 0x7FFF_FFF0)
    # the device still works on the default stream
    vadd(A, A, A)
    np.testing.assert_array_equal(A.numpy(), np.full(8, 2, "float32"))
