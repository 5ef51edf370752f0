"""The backend plugin system, end to end, each scenario in a fresh process."""

from __future__ import annotations

import pytest

REPORT = """
import json, sys, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import tvm
recs = {r.name: {"status": r.status, "reason": r.reason, "exc_type": r.exc_type,
                 "traceback": r.traceback, "distribution": r.distribution, "version": r.version,
                 "dso": r.dso_path, "fix": r.fix()} for r in tvm.backend.list_backends()}
print(json.dumps({"records": recs,
                  "warnings": [str(w.message) for w in caught if w.category.__name__ == "BackendLoadWarning"],
                  "modules": sorted(m for m in sys.modules if m.startswith("tvm_backend_"))}))
"""

BROKEN = ["import_error", "hook_raises", "system_exit", "missing_module", "not_callable", "abi_mismatch"]


def test_core_alone_imports_no_backend(run_python):
    r = run_python(REPORT)
    assert r.returncode == 0, r.stderr
    out = r.json()
    assert not any(f"'{name}'" in w for w in out["warnings"] for name in BROKEN)
    # Only backends installed in this environment may appear, and none from the plugin folder.
    assert not any(name in out["records"] for name in BROKEN)


def test_autoload_activates_a_good_plugin(run_python, tmp_path):
    marker = tmp_path / "marker.txt"
    r = run_python(REPORT, plugins=("good",), env={"TVM_TEST_MARKER": str(marker)})
    assert r.returncode == 0, r.stderr
    rec = r.json()["records"]["good"]
    assert rec["status"] == "active"
    assert rec["distribution"] == "tvm-backend-good" and rec["version"] == "0.1.0"
    assert marker.read_text() == "good activated\n"


def test_autoload_off_then_explicit_load(run_python, tmp_path):
    marker = tmp_path / "marker.txt"
    code = """
import sys, tvm
from tvm.target import Target
rec = {r.name: r for r in tvm.backend.list_backends()}["good"]
assert rec.status == "disabled by env", rec.status
assert "tvm_backend_good" not in sys.modules
assert not tvm.backend.is_loaded("good")
try:
    Target("good")
except tvm.backend.BackendError as err:
    assert "TVM_DEVICE_BACKEND_AUTOLOAD" in str(err) and "tvm.backend.load('good')" in str(err), err
else:
    raise AssertionError("target of a disabled backend must not resolve")
tvm.backend.load("good")
assert tvm.backend.is_loaded("good") and "tvm_backend_good" in sys.modules
assert Target("good").kind.name == "good"
print("ok")
"""
    r = run_python(code, plugins=("good",), env={"TVM_DEVICE_BACKEND_AUTOLOAD": "0", "TVM_TEST_MARKER": str(marker)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"
    assert marker.read_text() == "good activated\n"


def test_allowlist_is_checked_before_import(run_python, tmp_path):
    marker = tmp_path / "marker.txt"
    r = run_python(
        REPORT,
        plugins=("good", "import_error", "hook_raises", "abi_mismatch"),
        env={"TVM_BACKENDS": "good", "TVM_TEST_MARKER": str(marker)},
    )
    assert r.returncode == 0, r.stderr
    out = r.json()
    assert out["records"]["good"]["status"] == "active"
    for name in ("import_error", "hook_raises", "abi_mismatch"):
        assert out["records"][name]["status"] == "disabled by env"
        assert f"tvm_backend_{name}" not in out["modules"]
        # the fix names the variable that left it out (it said TVM_DEVICE_BACKEND_AUTOLOAD)
        assert (
            out["records"][name]["fix"]
            == f"add '{name}' to TVM_BACKENDS (or unset it), or call tvm.backend.load('{name}')"
        )

    assert not [w for w in out["warnings"] if "'good'" in w or "import_error" in w or "hook_raises" in w]


def test_an_unknown_strict_value_is_warned_about(run_python):
    r = run_python("import tvm", env={"TVM_BACKEND_STRICT": "bogus"})
    assert r.returncode == 0, r.stderr
    assert "TVM_BACKEND_STRICT='bogus' is not one of 1, true, yes, on" in r.stderr, r.stderr
    quiet = run_python("import tvm", env={"TVM_BACKEND_STRICT": "yes"})
    assert quiet.returncode == 0 and "TVM_BACKEND_STRICT" not in quiet.stderr, quiet.stderr


@pytest.mark.parametrize(
    "variant,exc_type,needle",
    [
        ("import_error", "ImportError", "a dependency of this plugin is missing"),
        ("hook_raises", "RuntimeError", "hook exploded"),
        ("system_exit", "SystemExit", "3"),
        ("missing_module", "ModuleNotFoundError", "tvm_backend_does_not_exist"),
        ("not_callable", "TypeError", "not callable"),
        ("abi_mismatch", "BackendABIError", "ABI"),
        ("unprintable_error", "Unprintable", "whose message cannot be shown"),
        ("missing_dso", "BackendError", "is missing from the installed package"),
        ("damaged_dso", "BackendError", "cannot be loaded"),
        ("bad_device_type", "ValueError", "is not a DLPack device type"),
        ("loads_itself", "BackendError", "is still activating: its activate() asked to load it again"),
    ],
)
def test_broken_plugin_never_breaks_import(run_python, variant, exc_type, needle):
    r = run_python(REPORT, plugins=(variant, "good"))
    assert r.returncode == 0, r.stderr
    out = r.json()
    rec = out["records"][variant]
    assert rec["status"] == "failed"
    assert rec["exc_type"] == exc_type
    assert needle in rec["reason"]
    assert "Traceback" in rec["traceback"]
    assert rec["distribution"] == f"tvm-backend-{variant.replace('_', '-')}" and rec["version"] == "0.1.0"
    # one warning naming the backend and the reason; the good plugin is unaffected
    mine = [w for w in out["warnings"] if f"'{variant}'" in w]
    assert len(mine) == 1 and needle in mine[0]
    assert out["records"]["good"]["status"] == "active"


def test_abi_mismatch_names_both_versions(run_python, core_abi):
    r = run_python(REPORT, plugins=("abi_mismatch",))
    rec = r.json()["records"]["abi_mismatch"]
    reason = rec["reason"]
    assert f"ABI {core_abi + 998}" in reason and f"ABI {core_abi}" in reason
    # the fix is a matching build, not the driver hint the backend passed to load_runtime; a
    # vendor's wheel (not one of the project's) is not pinned to the core's version
    assert "pip install --force-reinstall 'tvm-backend-abi-mismatch')" in rec["fix"], rec["fix"]
    assert "its release for tvm " in rec["fix"] and "==" not in rec["fix"], rec["fix"]


def test_failed_backend_is_explained_when_used(run_python):
    code = """
import warnings; warnings.simplefilter("ignore")
import tvm
from tvm.target import Target
for use in (lambda: Target("hook_raises"), lambda: tvm.device("hook_raises", 0)):
    try:
        use()
    except tvm.backend.BackendError as err:
        print(str(err).replace("\\n", " "))
"""
    r = run_python(code, plugins=("hook_raises",))
    assert r.returncode == 0, r.stderr
    target, device = r.stdout.splitlines()
    assert target.startswith("target 'hook_raises' needs backend 'hook_raises'"), target
    assert device.startswith("device 'hook_raises' needs backend 'hook_raises'"), device
    for line in (target, device):
        assert "failed to load" in line and "hook exploded" in line and "Fix:" in line


def test_failed_hook_registrations_are_rolled_back(run_python):
    code = """
import warnings; warnings.simplefilter("ignore")
import tvm, tvm_ffi
rec = tvm.backend._registry.get_record("hook_raises")
print(rec.status, rec.target_kinds, rec.module_kinds, rec.device_types)
print("hook_raises" in tvm.target.list_target_kinds())
try:
    tvm.device("hook_raises")
except tvm.backend.BackendError:
    print("device name gone")
print(tvm_ffi.get_global_func("ffi.Module.load_from_bytes.hook_raises", allow_missing=True) is None)
"""
    r = run_python(code, plugins=("hook_raises",))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["failed [] [] []", "False", "device name gone", "True"]


def test_failed_device_is_explained_when_used(run_python):
    """A device whose backend is left out (TVM_BACKENDS) is explained when used; so is one whose
    backend is not installed at all (every published backend may be installed here, so that
    message is built directly)."""
    code = """
import warnings; warnings.simplefilter("ignore")
import tvm
from tvm.backend._registry import explain_missing
try:
    tvm.runtime.empty((4,), "float32", tvm.rocm(0))
except tvm.backend.BackendError as err:
    print("rocm:", err)
print("missing:", explain_missing("device rocm(0)", "rocm", None))
"""
    r = run_python(code, env={"TVM_BACKENDS": "no_such_backend"})
    assert r.returncode == 0, r.stderr
    assert "rocm: device rocm(0) needs" in r.stdout and "Fix:" in r.stdout.split("missing:")[0], r.stdout
    assert "missing: device rocm(0) needs the 'rocm' backend, which is not installed" in r.stdout
    assert "Fix: pip install tvm-backend-rocm" in r.stdout and "tvm[" not in r.stdout


def test_a_tvm_backends_name_no_backend_has_is_warned_about(run_python):
    """A typo or the wrong case in TVM_BACKENDS turned every backend off without a word."""
    r = run_python("import tvm", env={"TVM_BACKENDS": "OpenCL"})
    assert r.returncode == 0, r.stderr
    assert "TVM_BACKENDS names 'OpenCL', which is no installed backend" in r.stderr, r.stderr


def test_backend_api_arguments_of_the_wrong_kind_are_named():
    import tvm
    from tvm.target import detect_target_from_device
    from tvm.testing.apache_api import device_enabled

    with pytest.raises(TypeError, match="tvm.backend.load takes a backend's name"):
        tvm.backend.load(None)
    with pytest.raises(TypeError, match="detect_target_from_device takes a device"):
        detect_target_from_device(None)
    with pytest.raises(ValueError, match="device_enabled takes a target"):
        device_enabled("")


def test_the_report_command_has_help():
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "tvm.backend", "--help"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "usage: python -m tvm.backend" in r.stdout, r.stderr


def test_missing_driver_means_runtime_unavailable(run_python):
    code = (
        REPORT
        + """
from tvm.target import Target
t = Target("no_driver")
print(t.kind.name)
"""
    )
    r = run_python(code, plugins=("no_driver",))
    assert r.returncode == 0, r.stderr
    out = r.json() if r.stdout.strip().splitlines()[-1].startswith("{") else None
    lines = r.stdout.strip().splitlines()
    import json

    out = json.loads(lines[-2])
    rec = out["records"]["no_driver"]
    assert rec["status"] == "runtime unavailable"
    assert "libfakedriver.so" in rec["reason"]
    assert rec["dso"].endswith("libruntime.so")
    assert not [w for w in out["warnings"] if "'no_driver'" in w]  # expected when cross-compiling: quiet
    assert lines[-1] == "no_driver"  # code generation stays available


def test_device_unavailable_reason_names_what_is_missing(run_python):
    code = """
from tvm.backend.api import device_unavailable_reason
print(device_unavailable_reason("no_driver"))
print(device_unavailable_reason("nonexistent"))
"""
    r = run_python(code, plugins=("no_driver",))
    assert r.returncode == 0, r.stderr
    no_driver, unknown = r.stdout.strip().splitlines()[-2:]
    assert no_driver.startswith("the no_driver runtime is not loaded: ") and "libfakedriver.so" in no_driver
    assert unknown.startswith("the nonexistent backend does not load: "), unknown


def test_strict_mode_raises(run_python):
    r = run_python("import tvm", plugins=("hook_raises",), env={"TVM_BACKEND_STRICT": "1"})
    assert r.returncode != 0
    assert "BackendError" in r.stderr and "hook_raises" in r.stderr and "hook exploded" in r.stderr


def test_strict_mode_tolerates_missing_driver_unless_all(run_python):
    ok = run_python("import tvm; print('imported')", plugins=("no_driver",), env={"TVM_BACKEND_STRICT": "1"})
    assert ok.returncode == 0 and "imported" in ok.stdout, ok.stderr
    strict = run_python(
        "import tvm", plugins=("no_driver",), env={"TVM_BACKEND_STRICT": "all", "TVM_BACKENDS": "no_driver"}
    )
    assert strict.returncode != 0 and "runtime unavailable" in strict.stderr and "libfakedriver" in strict.stderr


def test_keyboard_interrupt_propagates(run_python):
    r = run_python("import tvm", plugins=("keyboard_interrupt",))
    assert r.returncode != 0
    assert "KeyboardInterrupt" in r.stderr


def test_cli_report_shows_each_failure(run_python):
    code = "import runpy, sys; sys.argv=['tvm.backend']; runpy.run_module('tvm.backend', run_name='__main__')"
    r = run_python(code, plugins=tuple(BROKEN) + ("no_driver", "good"))
    assert r.returncode == 0, r.stderr
    text = r.stdout
    for name in BROKEN:
        assert f"{name}: failed" in text, text
    assert "no_driver: runtime unavailable" in text
    assert "good: active" in text
    assert "hook exploded" in text and "libfakedriver.so" in text
    assert "distribution: tvm-backend-hook-raises 0.1.0" in text


def test_load_unknown_backend_is_actionable(run_python):
    code = """
import tvm
try:
    tvm.backend.load("nosuch")
except tvm.backend.BackendError as err:
    print(err)
"""
    r = run_python(code)
    assert "no backend named 'nosuch' is installed" in r.stdout
    assert "install the vendor's backend wheel that provides 'nosuch'" in r.stdout  # no made-up package name
    assert "tvm-backend-nosuch" not in r.stdout


def test_discovery_cache_sees_new_installs(run_python, plugin_wheels, tmp_path):
    first = run_python(REPORT, plugins=("good",))
    assert "good" in first.json()["records"]
    second = run_python(REPORT, plugins=("good", "hook_raises"))
    assert "hook_raises" in second.json()["records"]


def test_a_damaged_runtime_library_is_a_broken_installation(run_python):
    """A runtime DSO missing from its package, or not a shared library, is not a machine without
    the driver: the backend fails (strict mode raises) and the fix is reinstalling, not the hint."""
    r = run_python(REPORT, plugins=("missing_dso", "damaged_dso"))
    out = r.json()
    for name in ("missing_dso", "damaged_dso"):
        rec = out["records"][name]
        assert rec["status"] == "failed" and "reinstall it" in rec["fix"], rec
        assert "fake driver" not in rec["fix"], rec
    strict = run_python("import tvm", plugins=("damaged_dso",), env={"TVM_BACKEND_STRICT": "1"})
    assert strict.returncode != 0 and "damaged_dso" in strict.stderr


def test_a_failed_device_registration_leaves_nothing_behind(run_python):
    """register_device with a type outside DLPack's range failed after the tables had changed:
    ``ext_dev`` then meant the refused backend's device for the rest of the process."""
    code = """
import json, warnings
warnings.simplefilter("ignore")
import tvm
from tvm.runtime.device import DEVICE_TYPES
try:
    tvm.device("bad_device_type")
    named = "no error"
except Exception as err:
    named = str(err)
print(json.dumps({"ext_dev": DEVICE_TYPES.get("ext_dev"), "leftover": "bad_device_type" in DEVICE_TYPES,
                  "named": named}))
"""
    r = run_python(code, plugins=("bad_device_type",))
    assert r.returncode == 0, r.stderr
    out = r.json()
    assert out["ext_dev"] == 12 and not out["leftover"], out
    assert "bad_device_type" in out["named"] and "no error" != out["named"], out


def test_warnings_as_errors_do_not_break_import(run_python):
    """With warnings turned into errors (python -W error, a test runner's filter) a broken
    plugin's warning was raised out of ``import tvm`` and the backends after it never loaded."""
    code = """
import tvm
print({r.name: r.status for r in tvm.backend.list_backends()})
"""
    r = run_python(code, plugins=("hook_raises", "good"), env={"PYTHONWARNINGS": "error"})
    assert r.returncode == 0, r.stderr
    assert "'hook_raises': 'failed'" in r.stdout and "'good': 'active'" in r.stdout, r.stdout
    assert "hook exploded" in r.stderr  # logged instead


def test_a_tvm_backends_list_without_names_is_as_if_unset(run_python):
    r = run_python(REPORT, plugins=("good",), env={"TVM_BACKENDS": " , ,"})
    assert r.returncode == 0, r.stderr
    assert r.json()["records"]["good"]["status"] == "active"


def test_entry_point_syntax(run_python):
    """``module:attr [extra]`` is valid entry-point syntax; an entry point without a name is no
    backend anyone could address: refused, never imported, with a record saying why."""
    r = run_python(REPORT, plugins=("with_extras", "empty_name"))
    assert r.returncode == 0, r.stderr
    recs = r.json()["records"]
    assert recs["with_extras"]["status"] == "active", recs["with_extras"]
    refused = recs[""]
    assert refused["status"] == "failed" and "no backend name" in refused["reason"], refused
    assert "tvm_backend_empty_name" not in r.json()["modules"]


def test_import_works_from_a_removed_current_directory(run_python):
    """A shell left in a removed build folder: '' on sys.path has no directory to scan."""
    code = (
        "import os, sys, tempfile\n"
        "sys.modules['torch'] = None  # PyTorch's MKL itself cannot load without a current directory\n"
        "d = tempfile.mkdtemp(); os.chdir(d); os.rmdir(d)\n"
        "import tvm\n"
        "print('ok', tvm.backend._registry.get_record('good').status)\n"
    )
    r = run_python(code, plugins=("good",))
    assert r.returncode == 0 and r.stdout.split() == ["ok", "active"], r.stderr


def test_plugins_that_remove_tvm_or_close_stderr_do_not_break_import(run_python):
    code = (
        "import sys, tvm\n"
        "rec = tvm.backend._registry.get_record\n"
        "print('ok', sys.modules['tvm'] is tvm, rec('reloader').status, rec('closes_stderr').status, file=sys.stdout)\n"
    )
    r = run_python(code, plugins=("reloader", "closes_stderr", "good"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["ok", "True", "active", "failed"], r.stdout
