"""The OpenCL runtime DSO on its own: devices, attributes, buffers, copies, streams and kernels
written by hand in OpenCL C, launched through the module factory ``ffi.Module.create.opencl``."""

from __future__ import annotations

import ctypes

import os

import numpy as np
import pytest
import tvm
import tvm_ffi
from opencl_testing import make_module

VADD = r"""
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, int n) {
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
"""
VADD_FUNCS = [["vadd", ["handle", "handle", "handle", "int32"], ["blockIdx.x", "threadIdx.x"]]]


def test_backend_active(dev, backend):
    assert backend.status == tvm.backend.ACTIVE
    assert backend.dso_path.endswith("libtvm_runtime_opencl.so")
    assert "opencl" in backend.target_kinds
    assert tvm_ffi.get_global_func("ffi.Module.create.opencl", allow_missing=True) is not None
    assert tvm_ffi.get_global_func("ffi.Module.load_from_bytes.opencl", allow_missing=True) is not None


def test_device_discovery(dev):
    assert dev.exist
    assert tvm.device("opencl", 0).exist and tvm.device("cl").exist
    count = 0
    while tvm.opencl(count).exist:
        count += 1
    assert count >= 1
    assert not tvm.opencl(count).exist
    assert not tvm.opencl(-1).exist
    names = [tvm.opencl(i).name for i in range(count)]
    assert names == [tvm.opencl(i).name for i in range(count)]  # stable order


def test_device_attributes(dev):
    assert isinstance(dev.name, str) and dev.name
    assert dev.max_threads_per_block >= 1
    assert dev.warp_size >= 1
    assert dev.max_shared_memory_per_block > 0
    assert dev.multi_processor_count >= 1
    major, minor = dev.compute_version.split(".")[:2]
    assert int(major) >= 1 and minor.isdigit()
    assert dev.total_global_memory > 0
    assert dev.max_clock_rate >= 0
    assert len(tuple(dev.max_thread_dimensions)) == 3
    assert "cl_khr" in dev.attr("device_extensions") or dev.attr("device_extensions") == ""
    assert dev.attr("opencl_c_version").startswith("OpenCL C")
    assert dev.attr("device_kind") in ("cpu", "gpu", "accelerator", "other")
    assert dev.attr("no_such_attribute") is None


def test_missing_device(dev):
    """A device id past the last device does not exist: its attributes are None (as on every
    backend) and using it is an error naming the devices there are."""
    assert not tvm.opencl(99).exist and tvm.opencl(99).name is None
    with pytest.raises(ValueError, match=r"opencl\(99\) does not exist: this machine has \d+ OpenCL device"):
        tvm.runtime.empty((4,), "float32", tvm.opencl(99))


def test_detect_target(dev):
    target = tvm.target.detect_target_from_device(dev)
    assert target.kind.name == "opencl"
    assert target.attrs["max_num_threads"] == dev.max_threads_per_block
    assert isinstance(target.attrs["supports_float64"], bool)
    assert "opencl" in target.keys and "gpu" in target.keys


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int64", "uint16", "float16", "bool"])
def test_alloc_copy_round_trip(dev, dtype):
    host = (np.arange(1000) % 7).astype(dtype)
    x = tvm.runtime.tensor(host, dev)
    assert x.device.device_type == 4
    np.testing.assert_array_equal(x.numpy(), host)
    y = x.copyto(dev)  # device -> device
    np.testing.assert_array_equal(y.numpy(), host)
    z = y.copyto(tvm.cpu())  # device -> host tensor
    np.testing.assert_array_equal(z.numpy(), host)
    w = tvm.runtime.empty(host.shape, dtype, dev)
    w.copyfrom(z)  # host tensor -> device
    np.testing.assert_array_equal(w.numpy(), host)


def test_empty_and_multidim(dev):
    e = tvm.runtime.empty((0,), "float32", dev)
    assert e.numpy().shape == (0,)
    host = np.random.rand(3, 4, 5).astype("float32")
    np.testing.assert_array_equal(tvm.runtime.tensor(host, dev).numpy(), host)


def test_hand_written_kernel(dev):
    mod = make_module(VADD, VADD_FUNCS)
    assert mod.kind == "opencl"
    assert "__kernel void vadd" in mod.inspect_source("")
    n = 1000
    a = tvm.runtime.tensor(np.random.rand(n).astype("float32"), dev)
    b = tvm.runtime.tensor(np.random.rand(n).astype("float32"), dev)
    c = tvm.runtime.empty((n,), "float32", dev)
    f = mod.get_function("vadd")
    f(a, b, c, n, (n + 63) // 64, 64)  # tensors
    np.testing.assert_allclose(c.numpy(), a.numpy() + b.numpy())
    c2 = tvm.runtime.empty((n,), "float32", dev)
    handles = [ctypes.c_void_p(t.data_ptr()) for t in (a, b, c2)]
    f(*handles, n, (n + 127) // 128, 128)  # cl_mem handles as opaque pointers (what host code passes)
    np.testing.assert_allclose(c2.numpy(), a.numpy() + b.numpy())


def test_kernel_2d_launch_and_scalars(dev):
    src = r"""
    __kernel void affine(__global double* out, double scale, long offset, uchar flag, short s,
                         float h) {
      int x = get_group_id(0) * get_local_size(0) + get_local_id(0);
      int y = get_group_id(1) * get_local_size(1) + get_local_id(1);
      int w = get_num_groups(0) * get_local_size(0);
      out[y * w + x] = (y * w + x) * scale + offset + (flag ? 1000.0 : 0.0) + s + h;
    }
    """
    mod = make_module(
        src,
        [
            [
                "affine",
                ["handle", "float64", "int64", "bool", "int16", "float32"],
                ["blockIdx.x", "blockIdx.y", "threadIdx.x", "threadIdx.y"],
            ]
        ],
    )
    out = tvm.runtime.empty((8, 16), "float64", dev)
    mod.get_function("affine")(out, 0.5, 2**40, True, -3, 0.25, 4, 2, 4, 4)
    expect = np.arange(128, dtype="float64").reshape(8, 16) * 0.5 + 2**40 + 1000 - 3 + 0.25
    np.testing.assert_array_equal(out.numpy(), expect)


def test_dynamic_local_memory(dev):
    src = r"""
    __kernel void reverse_block(__global const int* a, __global int* b, __local uchar* dyn) {
      __local int* tile = (__local int*)dyn;
      int t = get_local_id(0), n = get_local_size(0), base = get_group_id(0) * n;
      tile[t] = a[base + t];
      barrier(CLK_LOCAL_MEM_FENCE);
      b[base + t] = tile[n - 1 - t];
    }
    """
    mod = make_module(src, [["reverse_block", ["handle", "handle"], ["blockIdx.x", "threadIdx.x", "dyn_shmem"]]])
    a = tvm.runtime.tensor(np.arange(256, dtype="int32"), dev)
    b = tvm.runtime.empty((256,), "int32", dev)
    mod.get_function("reverse_block")(a, b, 4, 64, 64 * 4)
    np.testing.assert_array_equal(b.numpy(), np.arange(256).reshape(4, 64)[:, ::-1].reshape(-1))


def test_streams(dev):
    create = tvm_ffi.get_global_func("runtime.DeviceCreateStream")
    free = tvm_ffi.get_global_func("runtime.DeviceFreeStream")
    stream = create(dev)
    assert stream != 0
    mod = make_module(VADD, VADD_FUNCS)
    a = tvm.runtime.tensor(np.ones(64, "float32"), dev)
    c = tvm.runtime.empty((64,), "float32", dev)
    with tvm_ffi.use_raw_stream(dev, stream):
        mod.get_function("vadd")(a, a, c, 64, 1, 64)
        dev.sync()
        np.testing.assert_array_equal(c.numpy(), np.full(64, 2, "float32"))
    free(dev, stream)
    with pytest.raises(ValueError, match=r"is not a live stream of opencl\(0\)"):
        free(dev, stream)  # freed already
    with pytest.raises(ValueError, match=r"is not a live stream of opencl\(0\)"), tvm_ffi.use_raw_stream(dev, stream):
        mod.get_function("vadd")(a, a, c, 64, 1, 64)  # a launch on a freed stream


def test_save_and_load_bytes(dev):
    mod = make_module(VADD, VADD_FUNCS)
    data = bytes(tvm_ffi.get_global_func("runtime.ModuleSaveToBytes")(mod))
    assert data.startswith(b"TVMDEVM2")
    again = tvm_ffi.get_global_func("ffi.Module.load_from_bytes.opencl")(data)
    assert again.kind == "opencl"
    assert bytes(tvm_ffi.get_global_func("runtime.ModuleSaveToBytes")(again)) == data
    a = tvm.runtime.tensor(np.arange(10, dtype="float32"), dev)
    c = tvm.runtime.empty((10,), "float32", dev)
    again.get_function("vadd")(a, a, c, 10, 1, 16)
    np.testing.assert_array_equal(c.numpy(), 2 * np.arange(10, dtype="float32"))
    with pytest.raises(ValueError, match="corrupted"):
        tvm_ffi.get_global_func("ffi.Module.load_from_bytes.opencl")(data[:-3])


def test_program_binary_module(dev):
    binary = bytes(tvm_ffi.get_global_func("opencl.ProgramBinary")(VADD, 0))
    assert len(binary) > 0
    mod = make_module(VADD, VADD_FUNCS, fmt="clbin", payload=binary)
    a = tvm.runtime.tensor(np.arange(32, dtype="float32"), dev)
    c = tvm.runtime.empty((32,), "float32", dev)
    mod.get_function("vadd")(a, a, c, 32, 1, 32)
    np.testing.assert_array_equal(c.numpy(), 2 * np.arange(32, dtype="float32"))
    # A binary that is not one of ProgramBinary's, or a damaged one, never reaches the driver (PoCL
    # crashed on a truncated binary): the carried source is built instead.
    raw = binary[24:]  # the driver's own bytes without the seal
    damaged = (b"not a program binary", binary[: len(binary) // 2], binary[:-1] + bytes([binary[-1] ^ 1]), raw[:64])
    for payload in damaged + (raw,):
        c = tvm.runtime.empty((32,), "float32", dev)
        make_module(VADD, VADD_FUNCS, fmt="clbin", payload=payload).get_function("vadd")(a, a, c, 32, 1, 32)
        np.testing.assert_array_equal(c.numpy(), 2 * np.arange(32, dtype="float32"))


def test_bad_kernel_arguments_raise(dev):
    f = make_module(VADD, VADD_FUNCS).get_function("vadd")
    a = tvm.runtime.tensor(np.zeros(16, "float32"), dev)
    host = np.zeros(16, "float32")
    with pytest.raises(ValueError, match="not a live OpenCL buffer"):
        f(ctypes.c_void_p(host.ctypes.data), a, a, 16, 1, 16)
    with pytest.raises(TypeError, match="expects 4 arguments and 2 launch parameters"):
        f(a, a, a, 16, 1)
    with pytest.raises(TypeError, match="argument 2 must be a tensor or a device pointer, got"):
        f(a, a, "not a buffer", 16, 1, 16)
    with pytest.raises(ValueError, match="tensor on cpu"):
        f(a, a, tvm.runtime.tensor(host), 16, 1, 16)
    with pytest.raises(ValueError, match="out of range"):
        f(a, a, a, 16, 1, -4)
    f(a, a, a, 16, 0, 16)  # an empty grid launches nothing
    with pytest.raises(ValueError, match="exceeds the limit"):  # checked before the driver sees it
        f(a, a, a, 16, 1, dev.max_threads_per_block * 2)


def test_raw_kernel_checks_tensors_against_its_arg_types(dev):
    """The generated function map says each buffer's dtype and minimum size; a tensor passed to
    the raw kernel handle that does not fit is an error, not silent garbage."""
    from tvm.testing import kernels as zoo

    mod = tvm.compile(zoo.vector_add("float32", 64), target="opencl")
    k = mod.imports[0].get_function("vector_add_kernel0")
    x = tvm.runtime.tensor(np.arange(100, dtype="float32"), dev)
    out = tvm.runtime.empty((100,), "float32", dev)
    k(x, x, out, 100, 2, 64)
    np.testing.assert_array_equal(out.numpy(), 2 * np.arange(100, dtype="float32"))
    with pytest.raises(TypeError, match="argument 1 must be a buffer of float32, got a tensor of int32"):
        k(x, tvm.runtime.tensor(np.zeros(100, "int32"), dev), out, 100, 2, 64)
    with pytest.raises(ValueError, match="argument 2 holds 50 elements, the kernel accesses 100"):
        k(x, x, tvm.runtime.empty((50,), "float32", dev), 100, 2, 64)
    k(x, x, out, 50, 1, 64)  # a smaller n needs only 50 elements


def test_unknown_format_rejected(dev):
    with pytest.raises(ValueError, match="unsupported payload format 'ptx' \\(expected cl or clbin\\)"):
        make_module(VADD, VADD_FUNCS, fmt="ptx")


def test_program_binary_cache_across_processes(dev, tmp_path):
    """A program built from source is stored as a binary; the next process loads the binary; a
    corrupted, truncated or bit-flipped entry is rebuilt from source; TVM_OPENCL_CACHE=0 turns the
    cache off."""
    from opencl_testing import run_python

    code = f"""
import warnings; warnings.simplefilter("ignore")
import numpy as np, tvm, tvm_ffi
src = {VADD!r}
mod = tvm_ffi.get_global_func("ffi.Module.create.opencl")("cl", {VADD_FUNCS!r}, src.encode(), [["opencl", src]])
a = tvm.runtime.tensor(np.arange(8, dtype="float32"), tvm.opencl(0))
c = tvm.runtime.empty((8,), "float32", tvm.opencl(0))
mod.get_function("vadd")(a, a, c, 8, 1, 8)
assert (c.numpy() == 2 * np.arange(8)).all()
info = tvm_ffi.get_global_func("opencl.ProgramCacheInfo")()
print("INFO", info["dir"], info["hits"], info["stores"], info["rejected"])
"""

    def run(**env: str) -> list[str]:
        out = run_python(code, env={"TVM_OPENCL_CACHE_DIR": str(tmp_path / "cache"), **env})
        assert out.returncode == 0, out.stderr
        return next(line for line in out.stdout.splitlines() if line.startswith("INFO")).split()[1:]

    first = run()
    assert first == [str(tmp_path / "cache"), "0", "1", "0"]
    entries = list((tmp_path / "cache").glob("*.openclbin"))
    assert len(entries) == 1 and entries[0].stat().st_size > 0
    assert run() == [str(tmp_path / "cache"), "1", "0", "0"]
    good = entries[0].read_bytes()
    flipped = bytearray(good)
    flipped[len(good) // 2] ^= 0x40
    # a foreign file, a truncated entry, a bit-flipped entry: each is caught by the entry's
    # integrity check before it reaches the driver (PoCL aborts on a corrupted binary), removed,
    # and the program rebuilt from source and stored again
    for bad in (b"corrupted entry", good[: len(good) // 2], bytes(flipped)):
        entries[0].write_bytes(bad)
        assert run() == [str(tmp_path / "cache"), "0", "1", "1"]
        # stored again, and served from the cache next time (the driver's binary need not be
        # byte-identical to the first build's)
        assert entries[0].read_bytes()[:8] == good[:8] and entries[0].read_bytes() != bad
        assert run() == [str(tmp_path / "cache"), "1", "0", "0"]
    # a FIFO where the entry should be made the launch wait forever: it is removed unread now
    entries[0].unlink()
    os.mkfifo(entries[0])
    assert run() == [str(tmp_path / "cache"), "0", "1", "1"]
    assert entries[0].is_file() and not entries[0].is_fifo()
    assert run(TVM_OPENCL_CACHE="0") == ["0", "0", "0"]  # no folder, nothing stored
    assert run(TVM_OPENCL_CACHE=" Off ") == ["0", "0", "0"]  # read as Python reads switches
    typo = run_python(code, env={"TVM_OPENCL_CACHE_DIR": str(tmp_path / "cache"), "TVM_OPENCL_CACHE": "of"})
    assert typo.returncode != 0 and "TVM_OPENCL_CACHE='of': expected 1, true, yes or on" in typo.stderr
    # TVM_CACHE_DIR's off words, in any case, turn the cache off on this side too: no "./OFF" folder
    for off in ("OFF", " False ", "none"):
        out = run_python(code, env={"TVM_CACHE_DIR": off}, cwd=str(tmp_path))
        assert out.returncode == 0, out.stderr
        assert not (tmp_path / off.strip()).exists()


def test_an_elem_offset_of_another_argument_must_be_zero_on_opencl(dev):
    """cl_mem buffers are passed from their start: an elem_offset bound by a scalar argument was
    ignored (the kernel wrote past the argument) and then asked for a byte_offset OpenCL refuses."""
    from tvm.script import tir as T

    @T.prim_func
    def fill_at(a: T.handle, off: T.int32):
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32", elem_offset=off)
        for tx in T.thread_binding(n, thread="threadIdx.x"):
            A[tx] = T.float32(1)

    f = tvm.compile(fill_at, target="opencl")["fill_at"]
    a = tvm.runtime.tensor(np.zeros(4, "float32"), dev)
    with pytest.raises(ValueError, match="elem_offset=off = 4, but opencl kernels take tensors that start at"):
        f(a, 4)
    f(a, 0)
    np.testing.assert_array_equal(a.numpy(), np.ones(4, "float32"))
