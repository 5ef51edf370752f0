"""The fallback path: OpenCL code generation without an OpenCL runtime (forced, or absent)."""

from __future__ import annotations

import tvm_ffi
from opencl_testing import opencl_unavailable_reason, run_python


_save = tvm_ffi.get_global_func("runtime.ModuleSaveToBytes")


def test_no_platform_device_absent_but_codegen_works(tmp_path):
    """No ICD registered (OCL_ICD_VENDORS points at an empty folder): libOpenCL loads, so the
    backend is active (activation does not look for platforms); no opencl device exists, its
    attributes are None, compiling still works (the real module is created: codegen needs no
    device), and launching, allocating or synchronizing raises an error naming the reason and
    what to install."""
    code = f"""
import sys, warnings
sys.path.insert(0, {str(tmp_path.parent)!r})
warnings.simplefilter("ignore")
import numpy as np
import tvm, tvm_backend_opencl
from tvm.script import tir as T
rec = tvm.backend.load("opencl")
print("STATUS", rec.status.replace(" ", "_"))
sys.path.insert(0, {__file__.rsplit("/", 1)[0]!r})
import opencl_kernels as K
mod = tvm.compile(K.elementwise("float32"), target="opencl")
print("DISCOVERED_AFTER_COMPILE", tvm_backend_opencl.discovered())
print("KIND", mod.imports[0].kind)
print("HASSRC", "__kernel void ew_kernel0" in mod.imports[0].inspect_source())
try:
    mod.imports[0].get_function("ew_kernel0")(None, None, None, 1, 1, 64)
except RuntimeError as err:
    print("ERR", str(err).replace(chr(10), " "))
dev = tvm.opencl(0)
print("EXIST", dev.exist, tvm.opencl(1).exist, tvm.opencl(-1).exist)
print("ATTRS", [dev.name, dev.max_threads_per_block, dev.compute_version, dev.attr("device_extensions")])
print("REASON", tvm_backend_opencl.unavailable_reason())
for what, op in [("ALLOC", lambda: tvm.runtime.empty((4,), "float32", dev)),
                 ("TENSOR", lambda: tvm.runtime.tensor(np.zeros(4, "float32"), dev)),
                 ("SYNC", lambda: dev.sync())]:
    try:
        op()
        print(what, "no error")
    except RuntimeError as err:
        print(what, str(err).replace(chr(10), " "))
"""
    empty = tmp_path / "no-vendors"
    empty.mkdir()
    out = run_python(code, env={"OCL_ICD_VENDORS": str(empty), "TVM_COMPILE_FORCE_FALLBACK": ""})
    assert out.returncode == 0, out.stderr
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if " " in line)
    assert lines["STATUS"] == "active", out.stdout
    assert lines["DISCOVERED_AFTER_COMPILE"] == "False", out.stdout
    assert lines["KIND"] == "opencl" and lines["HASSRC"] == "True"
    assert lines["EXIST"] == "False False False"
    assert lines["ATTRS"] == "[None, None, None, None]"
    reason = lines["REASON"]
    assert reason.startswith("no OpenCL platform found") and str(empty) in reason, reason
    err = lines["ERR"]
    assert "cannot launch OpenCL kernel 'ew_kernel0'" in err, err
    assert reason in err and "apt-get install pocl-opencl-icd ocl-icd-libopencl1" in err, err
    for what in ("ALLOC", "TENSOR"):
        assert lines[what].startswith("cannot allocate memory on opencl(0): " + reason), lines[what]
        assert "pocl-opencl-icd" in lines[what]
    assert lines["SYNC"].startswith("cannot synchronize opencl(0): " + reason), lines["SYNC"]


def test_explicit_load_with_autoload_off(backend):
    """TVM_DEVICE_BACKEND_AUTOLOAD=0 leaves the backend off until tvm.backend.load('opencl'), which
    activates it completely (device, runtime, target, detector)."""
    code = """
import warnings; warnings.simplefilter("ignore")
import tvm
print("BEFORE", tvm.backend.is_loaded("opencl"), tvm.opencl(0).exist)
rec = tvm.backend.load("opencl")
print("AFTER", tvm.backend.is_loaded("opencl"), rec.status.replace(" ", "_"))
print("TARGET", tvm.target.Target("cl").kind.name)
import tvm_backend_opencl
print("DISCOVERED", tvm_backend_opencl.discovered())
if rec.status == "active" and tvm.opencl(0).exist:
    print("DETECT", tvm.target.detect_target_from_device(tvm.opencl(0)).kind.name)
"""
    out = run_python(code, env={"TVM_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert out.returncode == 0, out.stderr
    assert "BEFORE False False" in out.stdout
    assert "AFTER True" in out.stdout and "TARGET opencl" in out.stdout
    # neither the explicit load nor the exist query before it ran platform discovery
    assert "DISCOVERED False" in out.stdout
    if "AFTER True active" in out.stdout and not opencl_unavailable_reason():
        assert "DETECT opencl" in out.stdout
