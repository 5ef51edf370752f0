"""The real runtime (libtvm_runtime_cuda) driven through a mock libcuda.so.1 on a CPU machine.

The mock (tests/mock_driver/mock_libcuda.c) keeps "device" memory in host memory, records each
launch and executes kernels whose name contains ``vadd`` on the host. This checks everything on
our side of the driver API (context handling, copies, argument packing, launch configuration,
dynamic shared memory, module loading, "cu" payloads compiled on first use, error messages,
byte identity of real and fallback modules) without a GPU. Each test runs in a fresh process with
LD_LIBRARY_PATH pointing at the mock.
"""

from __future__ import annotations

import pytest

from cuda_helpers import run_with_mock_driver
from tvm_backend_cuda import nvrtc

pytestmark = pytest.mark.skipif(not nvrtc.available(), reason="NVRTC not installed (pip install nvidia-cuda-nvrtc)")

PRELUDE = '''
import ctypes, numpy as np, tvm, tvm_ffi
from tvm_backend_cuda import nvrtc

class Launch(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 256), ("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("shmem", ctypes.c_uint), ("stream", ctypes.c_void_p), ("launches", ctypes.c_int),
                ("max_dyn_shmem_attr", ctypes.c_int)]

MOCK = ctypes.CDLL("libcuda.so.1")
LAST = Launch.in_dll(MOCK, "mock_last_launch")
create = tvm_ffi.get_global_func("ffi.Module.create.cuda")
serialize = tvm_ffi.get_global_func("runtime.DeviceModuleSerialize")
dev = tvm.cuda(0)
SRC = r"""
extern "C" __global__ void vadd(float* a, float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void scalars(double* out, signed char a, long long b, float c, double d,
                                   unsigned short e, bool f) {}
extern "C" __global__ void big_smem(float* x) { extern __shared__ float s[]; s[threadIdx.x] = x[0]; }
"""
RES = nvrtc.compile_cuda(SRC, "sm_90")
FUNCS = [["vadd", ["handle", "handle", "handle", "int32"], ["blockIdx.x", "threadIdx.x"]],
         ["scalars", ["handle", "int8", "int64", "float32", "float64", "float16", "bool"], ["blockIdx.x"]],
         ["big_smem", ["handle"], ["threadIdx.x", "dyn_shmem"]]]
SOURCES = [["cuda", SRC], ["ptx", RES.ptx]]
'''


def mock_run(mock_driver_dir, body: str, devices: int = 1):
    return run_with_mock_driver(mock_driver_dir, PRELUDE + body, {"MOCK_CUDA_DEVICES": str(devices)})


def test_activation_and_device_attributes(mock_driver_dir) -> None:
    out = mock_run(
        mock_driver_dir,
        """
rec = tvm.backend._registry.get_record("cuda")
print(rec.status)
print(dev.exist, tvm.cuda(1).exist, dev.name, dev.compute_version, dev.warp_size, dev.max_threads_per_block)
print(dev.max_shared_memory_per_block, dev.multi_processor_count, dev.max_clock_rate, dev.total_global_memory)
print(tuple(dev.max_thread_dimensions), dev.attr("driver_version"), dev.attr("no_such_attr"))
print(tvm.target.detect_target_from_device(dev))
""",
    )
    lines = out.splitlines()
    assert lines[0] == "active"
    assert lines[1] == "True False Mock GPU (tests) 9.0 32 1024"
    assert lines[2] == "49152 132 1980000 85899345920"
    assert lines[3] == "(1024, 1024, 64) 13000 None"
    assert lines[4] == (
        "cuda -arch=sm_90 -max_dynamic_shared_memory_per_block=232448 -max_num_threads=1024 "
        "-max_shared_memory_per_block=49152 -multi_processor_count=132 -thread_warp_size=32"
    )


def test_tensors_and_copies(mock_driver_dir) -> None:
    out = mock_run(
        mock_driver_dir,
        """
a = np.arange(12, dtype="float32").reshape(3, 4)
x = tvm.runtime.tensor(a, dev)
y = x.copyto(dev)                 # device to device
z = tvm.runtime.empty((3, 4), "float32", dev)
z.copyfrom(y)
print(x.device, np.array_equal(z.numpy(), a), np.array_equal(y.numpy(), a))
s = tvm_ffi.get_global_func("runtime.DeviceCreateStream")(dev)
tvm_ffi.get_global_func("runtime.DeviceFreeStream")(dev, s)
dev.sync()
print("stream", s != 0)
""",
    )
    assert out.splitlines() == ["cuda:0 True True", "stream True"]


def test_launch_with_tensors_and_pointers(mock_driver_dir) -> None:
    out = mock_run(
        mock_driver_dir,
        """
m = create(RES.fmt, FUNCS, RES.image, SOURCES)
n = 1000
a, b = np.random.rand(n).astype("float32"), np.random.rand(n).astype("float32")
x, y, z = tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev), tvm.runtime.empty((n,), "float32", dev)
m["vadd"](x, y, z, n, 4, 256)
print(np.allclose(z.numpy(), a + b), LAST.name.decode(), list(LAST.grid), list(LAST.block), LAST.shmem)
# opaque device pointers, as the host code passes them
z2 = tvm.runtime.empty((n,), "float32", dev)
ptr = lambda t: ctypes.c_void_p(t.data_ptr())
m["vadd"](ptr(x), ptr(y), ptr(z2), n, 4, 256)
print(np.allclose(z2.numpy(), a + b))
with tvm_ffi.use_raw_stream(dev, 0x1234):
    m["vadd"](x, y, z, n, 4, 256)
print("stream", hex(LAST.stream or 0))
try:
    m["vadd"](x, y, z, n, 4)
except TypeError as e:
    print("TypeError", e)
try:
    m["vadd"](x, y, z, n, 1, 2048)
except ValueError as e:
    print("ValueError", e)
try:
    m["vadd"](tvm.runtime.tensor(a), y, z, n, 4, 256)
except ValueError as e:
    print("ValueError", e)
try:
    m["nope"]
except AttributeError as e:
    print("AttributeError", e)
""",
    )
    lines = out.splitlines()
    assert lines[0] == "True vadd [4, 1, 1] [256, 1, 1] 0"
    assert lines[1] == "True"
    assert lines[2] == "stream 0x1234"
    assert lines[3].startswith("TypeError kernel vadd expects 4 arguments and 2 launch parameters, got 5")
    assert lines[4] == (
        "ValueError cuda kernel vadd: block extent threadIdx.x = 2048 exceeds the limit 1024 of cuda(0)"
    )
    assert lines[5].startswith("ValueError cuda kernel vadd: argument 0 is a tensor on cpu")
    assert lines[6] == "AttributeError Module has no function 'nope'"


def test_scalar_arguments_are_packed_by_dtype(mock_driver_dir) -> None:
    out = mock_run(
        mock_driver_dir,
        """
m = create(RES.fmt, FUNCS, RES.image, SOURCES)
buf = np.zeros(6)
o = tvm.runtime.tensor(buf, dev)
m["scalars"](o, -5, 2**40 + 3, 1.5, 2.25, 0.333251953125, True, 1)
print(o.numpy().tolist())
""",
    )
    # the mock kernel writes back each argument as it read it
    assert out.strip() == str([-5.0, float(2**40 + 3), 1.5, 2.25, 0.333251953125, 1.0])


def test_float16_arguments_round_like_numpy(mock_driver_dir) -> None:
    values = [
        0.1,
        -2.0 / 3.0,
        65504.0,
        65519.0,
        65520.0,
        1e6,
        1e-5,
        3e-8,
        2.9802322387695312e-08,
        -0.0,
        1.0009765625 + 2**-12,
        float("inf"),
        float("nan"),
    ]
    out = mock_run(
        mock_driver_dir,
        f"""
m = create(RES.fmt, FUNCS, RES.image, SOURCES)
o = tvm.runtime.tensor(np.zeros(6), dev)
for v in [float(t) for t in {[repr(v) for v in values]!r}]:
    m["scalars"](o, 0, 0, 0.0, 0.0, v, False, 1)
    print(repr(float(o.numpy()[4])))
""",
    )
    import numpy as np

    got = [float(s) for s in out.split()]
    want = [float(np.float16(v)) for v in values]
    assert [repr(g) for g in got] == [repr(w) for w in want]


def test_dynamic_shared_memory_over_48k_sets_the_attribute(mock_driver_dir) -> None:
    out = mock_run(
        mock_driver_dir,
        """
m = create(RES.fmt, FUNCS, RES.image, SOURCES)
x = tvm.runtime.empty((4,), "float32", dev)
m["big_smem"](x, 32, 1024)
print(LAST.shmem, LAST.max_dyn_shmem_attr)
m["big_smem"](x, 32, 100000)
print(LAST.shmem, LAST.max_dyn_shmem_attr)
try:
    m["big_smem"](x, 32, 10**6)
except ValueError as e:
    print("ValueError", e)
""",
    )
    lines = out.splitlines()
    assert lines[0] == "1024 0" and lines[1] == "100000 100000"
    assert lines[2] == (
        "ValueError cuda kernel big_smem: 1000000 bytes of dynamic shared memory exceed the "
        "limit 232448 bytes per block (opt-in) of cuda(0)"
    )


def test_real_and_fallback_bytes_are_identical(mock_driver_dir) -> None:
    out = mock_run(
        mock_driver_dir,
        """
real = create(RES.fmt, FUNCS, RES.image, SOURCES)
fb = tvm_ffi.get_global_func("runtime.FallbackModuleCreate")("cuda", "why", RES.fmt, FUNCS, RES.image, SOURCES)
rb = bytes(tvm.runtime.Module(real).save_to_bytes())
print(rb == bytes(tvm.runtime.Module(fb).save_to_bytes()), rb == bytes(serialize(RES.fmt, FUNCS, RES.image, SOURCES)))
print(real.kind, real.inspect_source("cuda") == SRC, real.inspect_source("ptx") == RES.ptx)
back = tvm_ffi.get_global_func("ffi.Module.load_from_bytes.cuda")(rb)
n = 64
a = np.ones(n, "float32")
x, z = tvm.runtime.tensor(a, dev), tvm.runtime.empty((n,), "float32", dev)
back["vadd"](x, x, z, n, 1, 64)
print(np.allclose(z.numpy(), 2 * a), bytes(tvm.runtime.Module(back).save_to_bytes()) == rb)
""",
    )
    assert out.splitlines() == ["True True", "cuda True True", "True True"]


def test_source_payload_is_compiled_on_first_use(mock_driver_dir, tmp_path) -> None:
    out = mock_run(
        mock_driver_dir,
        f"""
import os
os.environ["TVM_CACHE_DIR"] = {str(tmp_path)!r}
m = create("cu", FUNCS, SRC.encode(), [["cuda", SRC]])
n = 100
a = np.arange(n, dtype="float32")
x, z = tvm.runtime.tensor(a, dev), tvm.runtime.empty((n,), "float32", dev)
m["vadd"](x, x, z, n, 1, 128)
cached = sorted(os.listdir(os.path.join({str(tmp_path)!r}, "cuda-nvrtc")))
print(np.allclose(z.numpy(), 2 * a), cached[0].endswith(".nvrtc"))
""",
    )
    assert out.splitlines() == ["True True"]


def test_load_errors_are_clear(mock_driver_dir) -> None:
    out = mock_run(
        mock_driver_dir,
        """
x86 = RES.image[:0x12] + (62).to_bytes(2, "little") + RES.image[0x14:]  # a whole ELF, not for CUDA
bad = create("cubin", FUNCS, x86, SOURCES)
x = tvm.runtime.empty((4,), "float32", dev)
try:
    bad["vadd"](x, x, x, 4, 1, 4)
except RuntimeError as e:
    print("E1", e)
# Damaged images never reach the driver (it finds their extent in their own headers).
for name, image in (("half", RES.image[: len(RES.image) // 2]), ("text", b"not a cubin")):
    try:
        create("cubin", FUNCS, image, SOURCES)["vadd"](x, x, x, 4, 1, 4)
    except ValueError as e:
        print("E5", name, e)
missing = create(RES.fmt, [["not_in_image", ["handle"], ["threadIdx.x"]]], RES.image, SOURCES)
try:
    missing["not_in_image"](x, 1)
except RuntimeError as e:
    print("E2", e)
try:
    create("sass", FUNCS, b"", SOURCES)
except ValueError as e:
    print("E3", e)
try:
    create(RES.fmt, [["k", ["handle", "complex64"], []]], RES.image, SOURCES)
except TypeError as e:
    print("E4", e)
""",
    )
    lines = [l for l in out.splitlines() if l.startswith("E")]
    assert "on cuda(0, sm_90) failed: CUDA_ERROR_INVALID_IMAGE" in lines[0]
    assert "JIT log:\nmock: not a CUDA ELF object" in out
    assert "compile with target tvm.target.detect_target_from_device" in out
    assert "E5 half the cubin of this cuda module" in out and "ends past its" in out
    assert "E5 text the cubin of this cuda module (11 bytes) is damaged or not a code image: it is neither" in out
    assert "kernel 'not_in_image' is not in the cuda module loaded on cuda(0): CUDA_ERROR_NOT_FOUND" in out
    assert "E3 cuda module: unsupported payload format 'sass'" in out
    assert "argument 1 has unsupported type 'complex64'" in out


def test_compile_and_run_through_host_code(mock_driver_dir, tmp_path) -> None:
    lib = tmp_path / "vadd.so"
    out = mock_run(
        mock_driver_dir,
        f"""
from cuda_script_kernels import vadd
mod = tvm.compile(vadd, target=tvm.target.detect_target_from_device(dev))
n = 300
a, b = np.random.rand(n).astype("float32"), np.random.rand(n).astype("float32")
x, y, z = tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev), tvm.runtime.empty((n,), "float32", dev)
mod["vadd"](x, y, z)
print(np.allclose(z.numpy(), a + b), LAST.name.decode(), list(LAST.grid), list(LAST.block))
mod.export_library({str(lib)!r})
""",
    )
    assert out.splitlines() == ["True vadd_kernel0 [3, 1, 1] [128, 1, 1]"]
    out = mock_run(
        mock_driver_dir,
        f"""
m = tvm.runtime.load_module({str(lib)!r})
n = 50
a = np.random.rand(n).astype("float32")
x, z = tvm.runtime.tensor(a, dev), tvm.runtime.empty((n,), "float32", dev)
m["vadd"](x, x, z)
print(np.allclose(z.numpy(), 2 * a))
""",
    )
    assert out.strip() == "True"


def test_every_tensor_argument_must_be_on_the_launch_device(mock_driver_dir) -> None:
    # Only the first tensor used to be checked: a later CPU tensor or a cuda:1 tensor went to
    # cuLaunchKernel as if it were a cuda:0 pointer (the mock ran the kernel on it without error).
    out = mock_run(
        mock_driver_dir,
        """
m = create(RES.fmt, FUNCS, RES.image, SOURCES)
n = 16
a = np.ones(n, "float32")
x, y, z = (tvm.runtime.tensor(a, dev) for _ in range(3))
x1 = tvm.runtime.tensor(a, tvm.cuda(1))
host = tvm.runtime.tensor(np.zeros(n, "float32"))
before = LAST.launches
for args in [(x, y, host), (x, x1, z), (x1, x, z)]:
    try:
        m["vadd"](*args, n, 1, 16)
        print("launched")
    except ValueError as e:
        print("ValueError", e)
print(LAST.launches - before, host.numpy().sum())
m["vadd"](x1, x1, tvm.runtime.empty((n,), "float32", tvm.cuda(1)), n, 1, 16)   # all on cuda:1: fine
print(LAST.launches - before)
""",
        devices=2,
    )
    lines = out.splitlines()
    assert (
        lines[0] == "ValueError cuda kernel vadd: argument 2 is a tensor on cpu:0, expected cuda:0 "
        "(the device the kernel is launched on)"
    )
    assert (
        lines[1] == "ValueError cuda kernel vadd: argument 1 is a tensor on cuda:1, expected cuda:0 "
        "(the device the kernel is launched on)"
    )
    assert (
        lines[2] == "ValueError cuda kernel vadd: argument 1 is a tensor on cuda:0, expected cuda:1 "
        "(the device the kernel is launched on)"
    )
    assert lines[3] == "0 0.0"  # nothing launched, the CPU tensor untouched
    assert lines[4] == "1"


def test_launch_extents_are_checked_against_the_device_limits(mock_driver_dir) -> None:
    # Extents used to be cast to unsigned unchecked: grid.y = 70000 or block.z = 65 reached the
    # driver, and over-limit dyn_shmem / block totals gave opaque driver errors.
    out = mock_run(
        mock_driver_dir,
        """
tags = ["blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z", "dyn_shmem"]
m = create(RES.fmt, [["vadd", ["handle", "handle", "handle", "int32"], tags]], RES.image, SOURCES)
x = tvm.runtime.empty((4,), "float32", dev)
def launch(g, b, shmem=0):
    try:
        m["vadd"](x, x, x, 0, *g, *b, shmem)
        print("ok", list(LAST.grid), list(LAST.block), LAST.shmem)
    except ValueError as e:
        print("ValueError", e)
launch((2**31 - 1, 65535, 65535), (1024, 1, 1), 232448)   # every limit exactly
launch((1, 70000, 1), (1, 1, 1))
launch((1, 1, 65536), (1, 1, 1))
launch((2**32 + 1, 1, 1), (1, 1, 1))                      # Decode's generic range check
launch((1, 1, 1), (1, 1025, 1))
launch((1, 1, 1), (1, 1, 65))
launch((1, 1, 1), (32, 32, 2))
launch((1, 1, 1), (1, 1, 1), 232449)
for _ in range(3):
    launch((1, 1, 1), (1, 1, 1))
print(LAST.launches)
q = (ctypes.c_int * 128).in_dll(MOCK, "mock_attr_queries")
print(q[1], q[5], q[6], q[97])
""",
    )
    lines = out.splitlines()
    assert lines[0] == "ok [2147483647, 65535, 65535] [1024, 1, 1] 232448"
    assert lines[1] == "ValueError cuda kernel vadd: grid extent blockIdx.y = 70000 exceeds the limit 65535 of cuda(0)"
    assert lines[2] == "ValueError cuda kernel vadd: grid extent blockIdx.z = 65536 exceeds the limit 65535 of cuda(0)"
    assert lines[3].startswith("ValueError") and "4294967297" in lines[3]
    assert lines[4] == "ValueError cuda kernel vadd: block extent threadIdx.y = 1025 exceeds the limit 1024 of cuda(0)"
    assert lines[5] == "ValueError cuda kernel vadd: block extent threadIdx.z = 65 exceeds the limit 64 of cuda(0)"
    assert lines[6] == (
        "ValueError cuda kernel vadd: block (32, 32, 2) has 2048 threads, more than the limit "
        "1024 threads per block of cuda(0)"
    )
    assert lines[7] == (
        "ValueError cuda kernel vadd: 232449 bytes of dynamic shared memory exceed the limit "
        "232448 bytes per block (opt-in) of cuda(0)"
    )
    assert lines[8:11] == ["ok [1, 1, 1] [1, 1, 1] 0"] * 3
    assert lines[11].split()[0] == "4"  # only the valid launches reached the driver
    assert lines[12] == "1 1 1 1"  # limits queried once per device, not per launch


def test_streams_are_tracked(mock_driver_dir, device_api_shim) -> None:
    # FreeStream/StreamSync used to hand any integer to cuStreamDestroy/cuStreamSynchronize.
    out = mock_run(
        mock_driver_dir,
        f"""
create_stream = tvm_ffi.get_global_func("runtime.DeviceCreateStream")
free_stream = tvm_ffi.get_global_func("runtime.DeviceFreeStream")
shim = ctypes.CDLL({str(device_api_shim)!r})
destroys = ctypes.c_int.in_dll(MOCK, "mock_stream_destroys")
syncs = ctypes.c_int.in_dll(MOCK, "mock_stream_syncs")
synced = ctypes.c_void_p.in_dll(MOCK, "mock_last_stream_synced")
def sync(dev_id, handle):
    err = ctypes.create_string_buffer(512)
    rc = shim.shim_stream_sync(dev_id, ctypes.c_void_p(handle), err, 512)
    print("sync", hex(handle), "ok" if rc == 0 else err.value.decode())
def free(d, handle):
    try:
        free_stream(d, handle)
        print("free", hex(handle), "ok")
    except ValueError as e:
        print("free", hex(handle), "ValueError", e)
s = create_stream(dev)
# blocking (flags 0): the default stream's copies and kernels wait for it and it for them
print("flags", ctypes.c_uint.in_dll(MOCK, "mock_last_stream_flags").value)
sync(0, s)
sync(0, 0)
sync(0, 0x5678)                   # unknown
sync(1, s)                        # ours, but on cuda:0
free(tvm.cuda(1), s)              # wrong device
free(dev, 0x5678)                 # unknown
free(dev, 0)                      # default stream: nothing to do
print("destroys", destroys.value, "syncs", syncs.value)
free(dev, s)
free(dev, s)                      # twice
print("destroys", destroys.value)
# a stream set by someone else (PyTorch) through tvm-ffi's stream table stays usable
m = create(RES.fmt, FUNCS, RES.image, SOURCES)
n = 8
x = tvm.runtime.tensor(np.ones(n, "float32"), dev)
z = tvm.runtime.empty((n,), "float32", dev)
with tvm_ffi.use_raw_stream(dev, 0x1234):
    m["vadd"](x, x, z, n, 1, 8)
    h = z.numpy()
    dev.sync()
    sync(0, 0x1234)
    print(hex(LAST.stream), hex(synced.value), h.tolist() == [2.0] * n)
    free(dev, 0x1234)             # not ours to destroy
print("destroys", destroys.value)
""",
        devices=2,
    )
    assert out.splitlines()[0] == "flags 0"
    lines = out.splitlines()[1:]
    assert lines[0] == f"sync {lines[0].split()[1]} ok"
    assert lines[1] == "sync 0x0 ok"
    assert lines[2].startswith("sync 0x5678 ValueError: StreamSync: 0x5678 is neither the default stream")
    assert lines[3].startswith(f"sync {lines[0].split()[1]} ValueError: StreamSync:") and "cuda(1)" in lines[3]
    assert (
        lines[4].startswith("free") and "ValueError FreeStream:" in lines[4] and "CreateStream on cuda(1)" in lines[4]
    )
    assert lines[5].startswith(
        "free 0x5678 ValueError FreeStream: 0x5678 is not a stream created by CreateStream on cuda(0)"
    )
    assert lines[6] == "free 0x0 ok"
    assert lines[7] == "destroys 0 syncs 2"
    assert lines[8].endswith(" ok") and "freed already" in lines[9]
    assert lines[10] == "destroys 1"
    assert lines[11] == "sync 0x1234 ok"
    assert lines[12] == "0x1234 0x1234 True"
    assert lines[13].startswith("free 0x1234 ValueError")
    assert lines[14] == "destroys 1"


def test_zero_extent_launch_is_empty(mock_driver_dir) -> None:
    out = mock_run(
        mock_driver_dir,
        """
m = create(RES.fmt, FUNCS, RES.image, SOURCES)
x = tvm.runtime.empty((4,), "float32", dev)
before = LAST.launches
m["vadd"](x, x, x, 0, 0, 256)
print(LAST.launches - before)
""",
    )
    assert out.splitlines() == ["0"]


def test_raw_kernel_checks_tensor_dtype_size_and_layout(mock_driver_dir) -> None:
    """Tensors passed to a raw kernel handle are checked against the function map's buffer types
    (dtype, minimum size from the scalar arguments, compact layout)."""
    out = mock_run(
        mock_driver_dir,
        """
from tvm.testing import kernels as zoo
k = tvm.compile(zoo.vector_add("float32", 64), target="cuda -arch=sm_90").imports[0]["vector_add_kernel0"]
x = tvm.runtime.tensor(np.arange(200, dtype="float32"), dev)
out = tvm.runtime.empty((100,), "float32", dev)
k(x, x, out, 100, 2, 64)

class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]
class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]
class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]
class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]
shape, strides = (ctypes.c_int64 * 1)(100), (ctypes.c_int64 * 1)(2)
mt = DLManagedTensor(DLTensor(x.data_ptr(), DLDevice(2, 0), 1, DLDataType(2, 32, 1), shape, strides, 0), None, None)
new_capsule = ctypes.pythonapi.PyCapsule_New
new_capsule.restype, new_capsule.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
class EveryOther:  # x[::2] as a CUDA tensor view
    def __dlpack__(self, **kwargs):
        return new_capsule(ctypes.addressof(mt), b"dltensor", None)
    def __dlpack_device__(self):
        return (2, 0)
view = tvm.runtime.from_dlpack(EveryOther())
for bad in [(x, tvm.runtime.empty((100,), "float16", dev), out), (x, x, tvm.runtime.empty((99,), "float32", dev)),
            (view, x, out)]:
    try:
        k(*bad, 100, 2, 64)
    except (TypeError, ValueError) as e:
        print(type(e).__name__, e)
""",
    )
    lines = out.splitlines()
    assert (
        lines[0]
        == "TypeError kernel vector_add_kernel0: argument 1 must be a buffer of float32, got a tensor of float16"
    )
    assert (
        lines[1] == "ValueError kernel vector_add_kernel0: argument 2 holds 99 elements, "
        "the kernel accesses 100 for these arguments"
    )
    assert lines[2].startswith("ValueError kernel vector_add_kernel0: argument 0 is a non-contiguous tensor view")
