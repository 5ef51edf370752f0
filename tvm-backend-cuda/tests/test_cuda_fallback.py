"""Without a driver, beyond the conformance suite (test_cuda_conformance.py): what activation
records and reports, PTX in the fallback's sources, the serializer's bytes for every payload format.

These tests assume a machine without libcuda.so.1; where the driver is installed they skip.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import tvm
import tvm_ffi

import cuda_kernels as kernels
from cuda_helpers import has_libcuda, run_python
from tvm_backend_cuda import codegen, nvrtc


pytestmark = pytest.mark.skipif(
    has_libcuda(), reason="libcuda.so.1 is present: fallback tests need a machine without it"
)

FUNCS = [
    ["vadd", ["handle", "handle", "handle", "int32"], ["blockIdx.x", "threadIdx.x"]],
    ["scale", ["handle", "float32", "int64"], ["blockIdx.x", "threadIdx.x", "dyn_shmem"]],
]
CUDA_SRC = 'extern "C" __global__ void vadd(float* a, float* b, float* c, int n) {}\n'


def test_activation_records_runtime_unavailable() -> None:
    rec = tvm.backend._registry.get_record("cuda")
    assert rec is not None and rec.status == "runtime unavailable"
    assert rec.reason.startswith("libcuda.so.1 not found: no NVIDIA driver on this machine")
    assert "install the NVIDIA driver" in rec.fix()
    assert rec.dso_path.endswith("libtvm_runtime_cuda.so") and os.path.exists(rec.dso_path)
    assert "cuda" in tvm.target.list_target_kinds()
    assert tvm.target.Target("nvptx").kind.name == "cuda"
    assert tvm.backend.is_loaded("cuda")
    assert not tvm.cuda(0).exist


def test_cli_report_shows_reason() -> None:
    out = subprocess.run([sys.executable, "-m", "tvm.backend"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "cuda: runtime unavailable" in out.stdout
    assert "libcuda.so.1 not found" in out.stdout


def test_no_real_factory_is_registered() -> None:
    # Init failed before registering anything; the core put the generic fallback loader in place.
    assert tvm_ffi.get_global_func("ffi.Module.create.cuda", allow_missing=True) is None
    assert tvm_ffi.get_global_func("ffi.Module.load_from_bytes.cuda", allow_missing=True) is not None


def test_device_use_is_an_actionable_error() -> None:
    with pytest.raises(Exception, match="libcuda.so.1"):
        tvm.runtime.empty((4,), "float32", tvm.cuda(0))
    with pytest.raises(Exception, match="does not exist|libcuda"):
        tvm.target.detect_target_from_device(tvm.cuda(0))


def test_fallback_module_from_codegen() -> None:
    case = kernels.vadd("float32")
    mod = codegen.build([case.func], tvm.target.Target("cuda -arch=sm_90"))
    assert mod.kind == "cuda"
    assert 'extern "C" __global__' in mod.inspect_source("cuda")
    if nvrtc.available():
        assert ".entry vadd_float32(" in mod.inspect_source("ptx")
    fn = mod["vadd_float32"]
    with pytest.raises(RuntimeError) as info:
        fn(None, None, None, 1, 1, 1)
    msg = str(info.value)
    assert "fallback cuda module" in msg and "libcuda.so.1" in msg and "install the NVIDIA driver" in msg


@pytest.mark.parametrize(
    "fmt,payload", [("ptx", b"// ptx\n.entry vadd("), ("cubin", b"\x7fELF\x02\x01\x01"), ("cu", CUDA_SRC.encode())]
)
def test_fallback_bytes_identical_to_serializer(fmt: str, payload: bytes) -> None:
    sources = [["cuda", CUDA_SRC], ["ptx", "// ptx"]]
    fallback = tvm_ffi.get_global_func("runtime.FallbackModuleCreate")("cuda", "why", fmt, FUNCS, payload, sources)
    spec_bytes = bytes(tvm_ffi.get_global_func("runtime.DeviceModuleSerialize")(fmt, FUNCS, payload, sources))
    assert bytes(tvm.runtime.Module(fallback).save_to_bytes()) == spec_bytes
    # and it loads back through the registered cuda loader with the same bytes
    back = tvm_ffi.get_global_func("ffi.Module.load_from_bytes.cuda")(spec_bytes)
    assert back.kind == "cuda" and bytes(tvm.runtime.Module(back).save_to_bytes()) == spec_bytes
    assert back.inspect_source("cuda") == CUDA_SRC


def test_activation_without_autoload_then_explicit_load() -> None:
    out = run_python(
        """
import tvm
assert tvm.backend._registry.get_record("cuda").status == "disabled by env"
rec = tvm.backend.load("cuda")
print(rec.status, "|", rec.reason)
""",
        env={"TVM_DEVICE_BACKEND_AUTOLOAD": "0"},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("runtime unavailable | libcuda.so.1 not found")


def test_import_is_cheap() -> None:
    out = run_python("""
import sys, tvm
heavy = [m for m in ("tvm_backend_cuda.codegen", "tvm_backend_cuda.nvrtc", "tvm_backend_cuda.script")
         if m in sys.modules]
print("heavy", heavy)
""")
    assert out.returncode == 0, out.stderr
    assert "heavy []" in out.stdout
