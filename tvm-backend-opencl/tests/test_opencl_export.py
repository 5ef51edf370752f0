"""Cross-compilation: export a library with the fallback module forced (as on a machine without
OpenCL), then load it in a fresh process that has PoCL and run it."""

from __future__ import annotations

import os

import numpy as np
import pytest
from opencl_testing import run_python
from tvm.testing.kernels import reference_softmax

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.parametrize("force_fallback", ["1", "0"])
def test_export_then_load_and_run_in_fresh_process(tmp_path, dev, force_fallback):
    lib = tmp_path / "softmax_opencl.so"
    export = f"""
import sys, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, {HERE!r})
import tvm, opencl_kernels as K
mod = tvm.compile(K.softmax, target="opencl")
assert mod.imports[0].kind == "opencl"
mod.export_library({str(lib)!r})
print("EXPORTED")
"""
    out = run_python(export, env={"TVM_COMPILE_FORCE_FALLBACK": force_fallback})
    assert out.returncode == 0 and "EXPORTED" in out.stdout, out.stderr
    x = np.random.default_rng(0).standard_normal((5, 300)).astype("float32")
    np.save(tmp_path / "x.npy", x)
    run = f"""
import warnings
warnings.simplefilter("ignore")
import numpy as np, tvm
mod = tvm.runtime.load_module({str(lib)!r})
print("KINDS", [m.kind for m in mod.imports])
assert "__kernel void softmax_kernel0" in mod.imports[0].inspect_source()
x = np.load({str(tmp_path / "x.npy")!r})
dev = tvm.opencl(0)
y = tvm.runtime.empty(x.shape, "float32", dev)
mod["softmax"](tvm.runtime.tensor(x, dev), y)
np.save({str(tmp_path / "y.npy")!r}, y.numpy())
print("RAN")
"""
    out = run_python(run, env={"TVM_COMPILE_FORCE_FALLBACK": ""})
    assert out.returncode == 0 and "RAN" in out.stdout, out.stdout + out.stderr
    assert "KINDS ['opencl']" in out.stdout
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), reference_softmax(x), rtol=1e-5, atol=1e-7)


def test_exported_library_explains_without_platform(tmp_path, backend):
    """Loading the library where no OpenCL platform exists works; running it names the reason."""
    lib = tmp_path / "ew_opencl.so"
    export = f"""
import sys, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, {HERE!r})
import tvm, opencl_kernels as K
tvm.compile(K.elementwise("float32"), target="opencl").export_library({str(lib)!r})
"""
    out = run_python(export, env={"TVM_COMPILE_FORCE_FALLBACK": "1"})
    assert out.returncode == 0, out.stderr
    empty = tmp_path / "no-vendors"
    empty.mkdir()
    run = f"""
import warnings
warnings.simplefilter("ignore")
import tvm
mod = tvm.runtime.load_module({str(lib)!r})
print("KINDS", [m.kind for m in mod.imports])
try:
    mod.imports[0].get_function("ew_kernel0")(None, None, None, 1, 1, 64)
except RuntimeError as err:
    print("ERR", str(err).replace(chr(10), " "))
"""
    out = run_python(run, env={"OCL_ICD_VENDORS": str(empty), "TVM_COMPILE_FORCE_FALLBACK": ""})
    assert out.returncode == 0, out.stderr
    assert "KINDS ['opencl']" in out.stdout
    assert "ERR" in out.stdout and "pocl-opencl-icd" in out.stdout
    # libOpenCL is there, only the platform is missing: the real loader ran, and the error says so
    assert (
        "ERR cannot launch OpenCL kernel 'ew_kernel0': no OpenCL platform found" in out.stdout
        or "libOpenCL.so.1 not found" in out.stdout
    ), out.stdout
