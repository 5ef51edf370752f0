"""Exported libraries where OpenCL has no platform (export and reload in general: the conformance
suite, test_opencl_conformance.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from opencl_testing import run_python

HERE = os.path.dirname(os.path.abspath(__file__))


def _exported_library(tmp_path: Path) -> Path:
    """An OpenCL library exported in another process from the fallback module (no device needed)."""
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
    return lib


def test_exported_library_explains_without_platform(tmp_path, backend):
    """Loading the library where no OpenCL platform exists works; running it names the reason."""
    lib = _exported_library(tmp_path)
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


def test_reloading_a_library_does_not_grow_memory(tmp_path, dev):
    """300 load_module calls of one exported OpenCL library, and 50 tvm.compile cache hits, reuse
    the tree loaded first instead of keeping a private copy and its programs each time (about
    160 KB per reload before)."""
    import numpy as np
    import tvm
    from tvm.testing import kernels

    path = str(tmp_path / "vadd.so")
    func = kernels.vector_add("float32", 64)
    tvm.compile(func, target="opencl").export_library(path)
    a = tvm.runtime.tensor(np.arange(100, dtype="float32"), dev)
    c = tvm.runtime.empty((100,), "float32", dev)

    def rss_mib() -> float:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

    for _ in range(20):  # warm up allocators and caches
        tvm.runtime.load_module(path)["vector_add"](a, a, c)
    before = rss_mib()
    for _ in range(300):
        tvm.runtime.load_module(path)["vector_add"](a, a, c)
    for _ in range(50):
        tvm.compile(func, target="opencl")["vector_add"](a, a, c)
    grown = rss_mib() - before
    np.testing.assert_array_equal(c.numpy(), 2 * np.arange(100, dtype="float32"))
    assert grown < 5, f"RSS grew by {grown:.1f} MiB over 300 reloads and 50 compiles"


def test_a_library_needing_a_backend_tvm_backends_leaves_out_is_refused(tmp_path, backend):
    """``TVM_BACKENDS=example`` refused compiling for OpenCL but let ``load_module`` activate
    opencl for a library without a word: the allowlist holds for both now."""
    lib = _exported_library(tmp_path)
    out = run_python(f"import tvm; tvm.runtime.load_module({str(lib)!r})", env={"TVM_BACKENDS": "example"})
    assert out.returncode == 1
    assert "backend 'opencl' is disabled by env: not in TVM_BACKENDS=example" in out.stderr, out.stderr
    assert "add 'opencl' to TVM_BACKENDS" in out.stderr


def test_pocl_without_a_writable_cache_is_named(tmp_path, backend):
    """PoCL lists no device when it cannot write its kernel cache (HOME unwritable, no
    POCL_CACHE_DIR): the reason said to install PoCL, which was installed."""
    not_a_folder = tmp_path / "home-is-a-file"
    not_a_folder.write_text("")
    probe = f"""
import os
from pathlib import Path
os.environ.pop("POCL_CACHE_DIR", None)
os.environ["HOME"] = os.environ["XDG_CACHE_HOME"] = {str(not_a_folder)!r}
import tvm
dev = tvm.device("opencl")
print("EXIST", dev.exist)
print("REASON", tvm.backend.api.device_unavailable_reason("opencl"))
"""
    out = run_python(probe)
    assert out.returncode == 0, out.stderr
    if "EXIST True" in out.stdout:
        pytest.skip("another OpenCL platform (a GPU's) lists a device here, so none is missing")
    assert "Portable Computing Language' lists no device" in out.stdout, out.stdout
    assert "set POCL_CACHE_DIR to a writable folder" in out.stdout
