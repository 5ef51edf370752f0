"""On a real NVIDIA GPU: the kernels against NumPy/PyTorch, DLPack without copies, streams, and a
library exported without a GPU running on one. Every test is marked ``gpu`` and skips elsewhere
("no CUDA device: libcuda.so.1 not found")."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
import tvm_ffi

import cuda_kernels as kernels
from cuda_helpers import run_python
from tvm_backend_cuda import codegen

pytestmark = pytest.mark.gpu

CASES = kernels.all_cases()


@pytest.fixture(scope="module")
def dev():
    return tvm.cuda(0)


@pytest.fixture(scope="module")
def target(dev):
    return tvm.target.detect_target_from_device(dev)


def test_device_attributes(dev, target) -> None:
    assert dev.exist and dev.warp_size == 32 and dev.max_threads_per_block >= 1024
    assert target.arch.startswith("sm_") and target.kind.name == "cuda"
    torch = pytest.importorskip("torch")
    major, minor = torch.cuda.get_device_capability(0)
    assert dev.compute_version == f"{major}.{minor}"
    assert dev.multi_processor_count == torch.cuda.get_device_properties(0).multi_processor_count


@pytest.mark.parametrize("name", sorted(CASES))
def test_kernels_match_numpy(name: str, dev, target) -> None:
    case = CASES[name]
    mod = codegen.build([case.func], target)
    got, want = case.run(mod, dev)
    np.testing.assert_allclose(got.astype("float32"), want.astype("float32"), rtol=case.rtol, atol=case.rtol)


def test_ptx_for_the_device_is_jit_compiled(dev) -> None:
    from tvm_backend_cuda import nvrtc

    driver = int(dev.attr("driver_version"))
    if nvrtc.version() > (driver // 1000, driver % 1000 // 10):
        pytest.skip(f"NVRTC {nvrtc.version()} emits PTX newer than driver {driver} can JIT")
    case = CASES["vadd_f32"]
    major, minor = dev.compute_version.split(".")
    mod = codegen.build([case.func], tvm.target.Target(f"cuda -arch=compute_{major}{minor}"))
    got, want = case.run(mod, dev)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_wrong_arch_cubin_is_a_clear_error(dev) -> None:
    other = "sm_75" if not dev.compute_version.startswith("7.") else "sm_90"
    mod = codegen.build([CASES["vadd_f32"].func], tvm.target.Target(f"cuda -arch={other}"))
    x = tvm.runtime.empty((4,), "float32", dev)
    with pytest.raises(RuntimeError, match="loading the cuda module"):
        mod["vadd_float32"](x, x, x, 4, 1, 256)


def test_tvm_compile_script_kernels(dev, target) -> None:
    import cuda_script_kernels as script_kernels

    mod = tvm.compile(script_kernels.vadd, target=target)
    a, b = np.random.rand(1000).astype("float32"), np.random.rand(1000).astype("float32")
    x, y, z = tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev), tvm.runtime.empty((1000,), "float32", dev)
    mod["vadd"](x, y, z)
    np.testing.assert_allclose(z.numpy(), a + b, rtol=1e-6)
    mod = tvm.compile(script_kernels.warp_reduce, target=target)
    a = np.random.rand(64, 32).astype("float32")
    x, z = tvm.runtime.tensor(a, dev), tvm.runtime.empty((64,), "float32", dev)
    mod["warp_reduce"](x, z)
    np.testing.assert_allclose(z.numpy(), a.sum(axis=1), rtol=1e-5)


def test_dlpack_with_torch_without_copy(dev, target) -> None:
    torch = pytest.importorskip("torch")
    a = torch.rand(4096, device="cuda")
    b = torch.rand(4096, device="cuda")
    c = torch.empty(4096, device="cuda")
    ta = tvm.runtime.from_dlpack(a)
    assert ta.data_ptr() == a.data_ptr() and ta.device.device_type == 2
    back = torch.from_dlpack(ta)
    assert back.data_ptr() == a.data_ptr()
    mod = codegen.build([CASES["vadd_f32"].func], target)
    # torch tensors go straight in; the kernel runs on torch's current stream
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        mod["vadd_float32"](a, b, c, 4096, 16, 256)
    s.synchronize()
    torch.testing.assert_close(c, a + b)
    out = tvm.runtime.empty((4096,), "float32", dev)
    mod["vadd_float32"](ta, tvm.runtime.from_dlpack(b), out, 4096, 16, 256)
    torch.testing.assert_close(torch.from_dlpack(out), a + b)


def test_real_and_fallback_bytes_identical(target) -> None:
    mod = codegen.build([CASES["row_sum"].func], target)
    assert type(mod).__name__ and mod.kind == "cuda"
    blob = bytes(tvm.runtime.Module(mod).save_to_bytes())
    fmt, funcs, payload, sources = tvm_ffi.get_global_func("runtime.DeviceModuleDeserialize")(blob)
    fb = tvm_ffi.get_global_func("runtime.FallbackModuleCreate")("cuda", "why", fmt, funcs, payload, sources)
    assert bytes(tvm.runtime.Module(fb).save_to_bytes()) == blob


@pytest.mark.parametrize(
    "env",
    [{"TVM_COMPILE_FORCE_FALLBACK": "1"}, {"TVM_COMPILE_FORCE_FALLBACK": "1", "TVM_CUDA_NVRTC": "none"}],
    ids=["cubin", "cu-source"],
)
def test_library_exported_without_gpu_runs_on_gpu(tmp_path, env, target) -> None:
    lib = tmp_path / "vadd.so"
    out = run_python(
        f"""
import tvm
from cuda_script_kernels import vadd
mod = tvm.compile(vadd, target={str(target)!r})
mod.export_library({str(lib)!r})
""",
        env=env,
    )
    assert out.returncode == 0, out.stderr
    out = run_python(f"""
import numpy as np, tvm
m = tvm.runtime.load_module({str(lib)!r})
dev = tvm.cuda(0)
a = np.random.rand(777).astype("float32")
x, z = tvm.runtime.tensor(a, dev), tvm.runtime.empty((777,), "float32", dev)
m["vadd"](x, x, z)
print(np.allclose(z.numpy(), 2 * a))
""")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"
