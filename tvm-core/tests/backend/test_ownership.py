"""Ownership between plugins: a device type, device name, target kind, module kind or backend name
belongs to one backend; a second claimant is refused with a record naming both distributions,
first-party names are reserved for the project's own wheels, the refused plugin's rollback
removes only what it registered, and vendors get device types that never collide."""

from __future__ import annotations

import pytest

OPENCL_STILL_WORKS = """
import json, warnings
warnings.simplefilter("ignore")
import tvm
from tvm.testing import kernels
opencl = tvm.backend._registry.get_record("opencl")
out = {"records": {k: {"status": r.status, "reason": r.reason, "distribution": r.distribution}
                   for k, r in tvm.backend._registry._records.items()},
       "opencl_distribution": opencl.distribution if opencl else None,
       "kinds": tvm.target.list_target_kinds()}
if opencl is not None:
    mod = tvm.compile(kernels.vector_add(), target="opencl")
    out["opencl_kind"] = mod.imports[0].kind
    out["opencl_source"] = "__kernel" in mod.imports[0].inspect_source()
print(json.dumps(out))
"""


def first_party_opencl(run_python) -> None:
    probe = run_python("import tvm; print(tvm.backend._registry.get_record('opencl') is not None)")
    if probe.stdout.strip() != "True":
        pytest.skip("tvm-backend-opencl is not installed here (nox -s tests installs it)")


def test_entry_point_named_like_a_first_party_backend_is_refused(run_python):
    first_party_opencl(run_python)
    r = run_python(OPENCL_STILL_WORKS, plugins=("named_opencl",))
    assert r.returncode == 0, r.stderr
    out = r.json()
    refused = out["records"]["opencl (tvm-backend-named-opencl)"]
    assert refused["status"] == "failed"
    assert "belongs to tvm-backend-opencl" in refused["reason"] and "tvm-backend-named-opencl" in refused["reason"]
    assert out["opencl_distribution"] == "tvm-backend-opencl"
    assert out["opencl_kind"] == "opencl" and out["opencl_source"]


def test_plugin_registering_a_first_party_target_is_refused_and_rolled_back(run_python):
    first_party_opencl(run_python)
    r = run_python(OPENCL_STILL_WORKS, plugins=("claims_opencl",))
    assert r.returncode == 0, r.stderr
    out = r.json()
    rec = out["records"]["claims_opencl"]
    assert rec["status"] == "failed"
    assert "cannot register target kind 'opencl'" in rec["reason"], rec
    # the first-party backends activate first, so opencl owns its names before any plugin runs
    assert "it belongs to backend 'opencl' (tvm-backend-opencl)" in rec["reason"], rec
    assert "claims_opencl" not in out["kinds"], "the refused plugin's own registrations must be rolled back"
    assert out["opencl_kind"] == "opencl" and out["opencl_source"]


def test_two_vendor_backends_get_their_own_device_types(run_python):
    code = """
import json, warnings
warnings.simplefilter("ignore")
import tvm
a, b = tvm.device("vendor_a"), tvm.device("vendor_b")
print(json.dumps({"types": [a.device_type, b.device_type], "str": [str(a), str(b)], "repr": repr(b),
                  "status": [tvm.backend._registry.get_record(n).status for n in ("vendor_a", "vendor_b")],
                  "kinds": [tvm.target.Target(n).kind.device_type for n in ("vendor_a", "vendor_b")],
                  "vendor_range": [tvm.backend.VENDOR_DEVICE_TYPES.start, tvm.backend.VENDOR_DEVICE_TYPES.stop]}))
"""
    r = run_python(code, plugins=("vendor_a", "vendor_b"))
    assert r.returncode == 0, r.stderr
    out = r.json()
    lo, hi = out["vendor_range"]
    a, b = out["types"]
    assert a != b and lo <= a < hi and lo <= b < hi, out
    assert out["status"] == ["active", "active"]
    assert out["kinds"] == [a, b]
    assert out["str"] == ["vendor_a:0", "vendor_b:0"] and out["repr"] == "vendor_b(0)"


def test_claiming_another_vendors_device_type_is_refused(run_python):
    r = run_python(REPORT_THIEF, plugins=("vendor_a", "vendor_thief"))
    assert r.returncode == 0, r.stderr
    rec = r.json()["vendor_thief"]
    assert rec["status"] == "failed"
    assert "tvm-backend-vendor-thief (backend 'vendor_thief') cannot register device type" in rec["reason"], rec
    assert "belongs to backend 'vendor_a' (tvm-backend-vendor-a)" in rec["reason"], rec
    assert r.json()["vendor_a_active"]


def test_device_aliases_belong_to_their_backend(run_python):
    """A backend declares its device aliases (opencl: ``cl``); a plugin claiming one is refused and
    rolled back, its other names included, and ``tvm.device("cl")`` stays OpenCL."""
    first_party_opencl(run_python)
    code = """
import json, warnings
warnings.simplefilter("ignore")
import tvm
from tvm.runtime.device import DEVICE_TYPES
rec = tvm.backend._registry.get_record("alias_thief")
print(json.dumps({"status": rec.status, "reason": rec.reason, "cl": str(tvm.device("cl")),
                  "leftovers": [n for n in ("alias_thief", "my_dev") if n in DEVICE_TYPES]}))
"""
    r = run_python(code, plugins=("alias_thief",))
    assert r.returncode == 0, r.stderr
    out = r.json()
    assert out["status"] == "failed" and "device name 'cl'" in out["reason"], out
    assert "tvm-backend-opencl" in out["reason"], out
    assert out["cl"] == "opencl:0" and out["leftovers"] == [], out


def test_aliases_of_an_installed_first_party_backend_are_reserved_before_it_activates(run_python):
    """With opencl installed but not activated (TVM_BACKENDS), a vendor took ``cl``: then
    ``tvm.device("cl")`` meant the vendor's device and opencl could not load at all."""
    first_party_opencl(run_python)
    code = """
import json, warnings
warnings.simplefilter("ignore")
import tvm
rec = tvm.backend._registry.get_record("cl_thief")
opencl = tvm.backend.load("opencl")
print(json.dumps({"status": rec.status, "reason": rec.reason, "fix": rec.fix(), "opencl": opencl.status,
                  "cl": str(tvm.device("cl"))}))
"""
    r = run_python(code, plugins=("cl_thief",), env={"TVM_BACKENDS": "cl_thief"})
    assert r.returncode == 0, r.stderr
    out = r.json()
    assert out["status"] == "failed" and "reserved for the first-party backend 'opencl'" in out["reason"], out
    assert "uninstall" in out["fix"], out
    assert out["opencl"] in ("active", "runtime unavailable") and out["cl"] == "opencl:0", out


REPORT_THIEF = """
import json, warnings
warnings.simplefilter("ignore")
import tvm
recs = {r.name: {"status": r.status, "reason": r.reason} for r in tvm.backend.list_backends()}
vendor_a = tvm.backend._registry.get_record("vendor_a")
recs["vendor_a_active"] = vendor_a.status == "active" and tvm.device("vendor_a").device_type >= 32
print(json.dumps(recs))
"""


def test_str_of_any_device_never_raises():
    import tvm

    assert str(tvm.runtime.Device(63, 1)) == "device_type_63:1"
    assert repr(tvm.cpu(0)) == "cpu(0)" and str(tvm.cpu(0)) == "cpu:0"


def test_a_failed_backends_device_type_stays_its_own_once_its_runtime_is_loaded(run_python, example_installed):
    """The example backend fails after its runtime DSO registered a DeviceAPI for its vendor type
    (another plugin took its TVMScript namespace); that registration cannot be undone, so the
    type stays the example's and the next vendor gets another one, without a runtime."""
    code = """
import json, warnings
warnings.simplefilter("ignore")
import tvm
rec = tvm.backend._registry.get_record
dev = tvm.device("zzz_codegen_only")
try:
    dev.name
    why = ""
except Exception as err:
    why = str(err)
owners = tvm.backend._ownership._owners
types = sorted(k for (what, k), (b, _) in owners.items() if what == "device type" and b == "example")
print(json.dumps({"example": rec("example").status, "zzz": rec("zzz_codegen_only").status,
                  "exist": dev.exist, "why": why, "types": types}))
"""
    r = run_python(code, plugins=("aaa_takes_example_namespace", "zzz_codegen_only"))
    assert r.returncode == 0, r.stderr
    out = r.json()
    assert out["example"] == "failed" and out["zzz"] == "active"
    assert out["exist"] is False and "loaded no runtime for this device" in out["why"]
    assert out["types"], "the example's device type is still claimed by it"
