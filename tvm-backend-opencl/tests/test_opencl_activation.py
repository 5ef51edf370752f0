"""Activation stays cheap: `import tvm` loads libOpenCL but never enumerates platforms or devices;
that happens once, thread-safely, on first use of a device or kernel."""

from __future__ import annotations

import json

import pytest
from opencl_testing import opencl_unavailable_reason, run_python

_REPORT = """
import json, sys, warnings
warnings.simplefilter("ignore")
import tvm, tvm_backend_opencl
rec = {r.name: r for r in tvm.backend.list_backends()}["opencl"]
out = {"status": rec.status, "activation_ms": rec.activation_ms,
       "discovered_at_import": tvm_backend_opencl.discovered()}
"""


def _run(code: str, env: dict[str, str] | None = None) -> dict:
    out = run_python(_REPORT + code + "\nprint('JSON', json.dumps(out))\n", env=env)
    assert out.returncode == 0, out.stderr
    (line,) = [ln for ln in out.stdout.splitlines() if ln.startswith("JSON ")]
    return json.loads(line[5:])


def test_import_does_not_discover_devices():
    """Right after `import tvm` the backend is active but has not queried any platform; the first
    device query discovers them. Codegen and module creation need no device either."""
    res = _run(
        """
sys.path.insert(0, %r)
import opencl_kernels as K
mod = tvm.compile(K.elementwise("float32"), target="opencl")
out["module_kind"] = mod.imports[0].kind
out["discovered_after_compile"] = tvm_backend_opencl.discovered()
out["exist"] = tvm.opencl(0).exist
out["discovered_after_exist"] = tvm_backend_opencl.discovered()
"""
        % (__file__.rsplit("/", 1)[0],),
        env={"TVM_COMPILE_FORCE_FALLBACK": ""},
    )
    if res["status"] != "active":
        pytest.skip(f"the OpenCL runtime is not loaded here: {res['status']}")
    assert res["discovered_at_import"] is False, res
    assert res["module_kind"] == "opencl"
    assert res["discovered_after_compile"] is False, res
    assert res["discovered_after_exist"] is True, res
    # Activation only dlopens libOpenCL and registers (~0.5 ms); discovery alone is ~20 ms on PoCL.
    # The bound is generous so that a loaded machine does not make this flaky.
    assert res["activation_ms"] < 10, res


def test_no_platform_import_does_not_discover():
    """Without a platform, activation is the same: nothing is queried until first use."""
    import tempfile

    with tempfile.TemporaryDirectory() as empty:
        res = _run(
            """
out["exist"] = tvm.opencl(0).exist
out["discovered_after_exist"] = tvm_backend_opencl.discovered()
out["reason"] = tvm_backend_opencl.unavailable_reason()
""",
            env={"OCL_ICD_VENDORS": empty},
        )
    if res["status"] != "active":
        pytest.skip(f"the OpenCL runtime is not loaded here: {res['status']}")
    assert res["discovered_at_import"] is False
    assert res["exist"] is False and res["discovered_after_exist"] is True
    assert res["reason"].startswith("no OpenCL platform found"), res


def test_first_use_from_many_threads():
    """Concurrent first users trigger one discovery and all see the same devices."""
    if opencl_unavailable_reason():
        pytest.skip(opencl_unavailable_reason())
    res = _run("""
import threading
barrier = threading.Barrier(8)
seen = []
def probe():
    barrier.wait()
    dev = tvm.opencl(0)
    seen.append((dev.exist, dev.name, tvm.opencl(64).exist))
threads = [threading.Thread(target=probe) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
out["seen"] = sorted(set(map(tuple, seen)))
out["count"] = len(seen)
""")
    assert res["discovered_at_import"] is False
    assert res["count"] == 8
    assert len(res["seen"]) == 1, res["seen"]
    exist, name, exist64 = res["seen"][0]
    assert exist is True and name and exist64 is False


def test_library_without_the_entry_points_is_named():
    """TVM_OPENCL_LIBRARY at a library that is not OpenCL: the core's driver loader names what
    is missing and what is required, and code generation still works."""
    code = """
rec = tvm.backend.load("opencl")
out["status"], out["reason"], out["fix"] = rec.status, rec.reason, rec.fix()
"""
    fix = "point TVM_OPENCL_LIBRARY at the driver library, or unset it to use the installed one"
    missing = _run(code, env={"TVM_OPENCL_LIBRARY": "/nonexistent/libOpenCL.so"})
    assert missing["reason"].startswith("TVM_OPENCL_LIBRARY=/nonexistent/libOpenCL.so cannot be loaded"), missing
    assert missing["fix"] == fix, missing  # it said apt-get install ...
    res = _run(code, env={"TVM_OPENCL_LIBRARY": "libm.so.6"})
    assert res["fix"] == fix, res
    assert res["status"] == "runtime unavailable", res
    # the library named is the user's (it was reported as libOpenCL.so.1)
    assert res["reason"].startswith("TVM_OPENCL_LIBRARY=libm.so.6 lacks clGetPlatformIDs, "), res
    assert res["reason"].endswith(
        ": it is not libOpenCL.so.1 or a library that provides its API; unset TVM_OPENCL_LIBRARY or point it at one"
    ), res
