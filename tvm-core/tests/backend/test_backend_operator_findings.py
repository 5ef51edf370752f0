"""What an operator sees of the backends: the registry answers a thread that a backend's
activate() waits for, bad device names are refused by name, egg-info installations are found,
TVM_BACKENDS holds with autoload off, first-party names compare as PEP 503 normalizes them, a
backend's code generator that cannot be imported is named with the fix, and ``python -m
tvm.backend`` prints its report under TVM_BACKEND_STRICT, with undecodable text, and into a
closed pipe.

Each scenario runs in a fresh interpreter, with the plugins written as installed distributions
(a metadata folder with a ``tvm.backends`` entry point) into a folder on PYTHONPATH."""

from __future__ import annotations

import json
import re
import os
import subprocess
import sys
from pathlib import Path

import pytest

from test_plugin_system import REPORT

import tvm
from tvm.backend import _ownership, _registry

#: The folder that holds the ``tvm`` package this test runs (the sources or the installed wheel).
TVM_ROOT = str(Path(tvm.__file__).resolve().parent.parent)


def write_plugin(site: Path, name: str, source: str, dist: str | None = None, metadata: str = "dist-info") -> Path:
    """Install a backend ``name`` whose module is ``source`` into ``site`` as distribution
    ``dist`` (``tvm-backend-<name>``), described by a ``*.dist-info`` or ``*.egg-info`` folder."""
    dist = dist or f"tvm-backend-{name}"
    module = f"fake_backend_{name}"
    site.mkdir(parents=True, exist_ok=True)
    folder = site / f"{dist.replace('-', '_')}-1.0.{metadata}"
    folder.mkdir()
    info = "METADATA" if metadata == "dist-info" else "PKG-INFO"
    (folder / info).write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n\n")
    (folder / "entry_points.txt").write_text(f"[tvm.backends]\n{name} = {module}:activate\n")
    (site / f"{module}.py").write_text(source)
    return folder


@pytest.fixture
def run(tmp_path):
    """run(code | [-m args], env={...}) -> CompletedProcess: a fresh interpreter running this
    test's ``tvm`` with the plugins of ``tmp_path / "site"``, a private cache and no other TVM_
    setting."""

    def go(code: str | list[str], env: dict[str, str] | None = None, **kwargs) -> subprocess.CompletedProcess:
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("TVM_") and k != "PYTHONPATH"}
        full_env["TVM_CACHE_DIR"] = str(tmp_path / "cache")
        full_env["PYTHONPATH"] = os.pathsep.join([TVM_ROOT, str(tmp_path / "site")])
        full_env.update(env or {})
        args = ["-c", code] if isinstance(code, str) else code
        kwargs.setdefault("capture_output", True)
        return subprocess.run(
            [sys.executable, *args], text=True, env=full_env, cwd=str(tmp_path), timeout=180, **kwargs
        )

    return go


def records_of(proc: subprocess.CompletedProcess) -> dict:
    """The records that :data:`REPORT` printed."""
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])["records"]


# --- the registry answers while a backend activates --------------------------------------------

ASKS_FROM_A_WORKER = """
import threading
import tvm.backend

ANSWERS = []

def ask():
    ANSWERS.append(tvm.backend.is_loaded("worker"))
    ANSWERS.append([r.name for r in tvm.backend.list_backends()])
    ANSWERS.append(tvm.backend._registry.get_record("worker").status)
    ANSWERS.append(tvm.backend.load("zhelper").status)

def activate(ctx):
    worker = threading.Thread(target=ask, daemon=True)  # a worker this activate() waits for
    worker.start()
    worker.join(timeout=30)
    if worker.is_alive():
        raise TimeoutError("the worker's questions to tvm.backend were not answered in 30 s")
"""


def test_a_thread_that_activate_waits_for_can_ask_the_registry(run, tmp_path):
    write_plugin(tmp_path / "site", "worker", ASKS_FROM_A_WORKER)
    write_plugin(tmp_path / "site", "zhelper", "def activate(ctx):\n    pass\n")
    code = "import json, sys, tvm; print(json.dumps(sys.modules['fake_backend_worker'].ANSWERS))"
    r = run(code, env={"TVM_BACKENDS": "worker,zhelper"})
    assert r.returncode == 0, r.stderr
    is_loaded, names, status, helper = json.loads(r.stdout.strip().splitlines()[-1])
    assert is_loaded is False and status == "not loaded"  # still activating: the current state
    assert "worker" in names and "zhelper" in names
    assert helper == "active"  # another backend activates in the worker meanwhile


SLOW = """
import time
RUNS = []

def activate(ctx):
    RUNS.append(1)
    time.sleep(0.5)
"""


def test_threads_loading_one_backend_wait_for_its_single_activation(run, tmp_path):
    write_plugin(tmp_path / "site", "slow", SLOW)
    code = """
import json, sys, threading, tvm
statuses = []
threads = [threading.Thread(target=lambda: statuses.append(tvm.backend.load("slow").status)) for _ in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps({"statuses": statuses, "runs": len(sys.modules["fake_backend_slow"].RUNS)}))
"""
    r = run(code, env={"TVM_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out == {"statuses": ["active"] * 4, "runs": 1}


# --- device names that generated code cannot hold ----------------------------------------------


@pytest.mark.parametrize(
    "name, aliases",
    [('Acme "Turbo" GPU', ()), ("acme\\gpu", ()), ("acme\ngpu", ()), ("acme\x00", ()), ("acme", ("acme\tx",))],
)
def test_a_device_name_generated_code_cannot_hold_is_refused_by_name(run, tmp_path, name, aliases):
    source = f"def activate(ctx):\n    ctx.register_device({name!r}, aliases={aliases!r})\n"
    write_plugin(tmp_path / "site", "acme", source, dist="acme-gpu")
    code = REPORT + "from tvm.runtime.device import DEVICE_TYPES\nprint(json.dumps(sorted(DEVICE_TYPES)))\n"
    r = run(code, env={"TVM_BACKENDS": "acme"})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    rec = json.loads(lines[-2])["records"]["acme"]
    assert rec["status"] == "failed" and rec["exc_type"] == "ValueError", rec
    assert "acme-gpu (backend 'acme')" in rec["reason"] and "cannot hold" in rec["reason"], rec
    assert name not in json.loads(lines[-1]) and "acme" not in json.loads(lines[-1])


def test_a_device_name_with_other_letters_is_accepted(run, tmp_path):
    source = "def activate(ctx):\n    ctx.register_device('Acme Turbo dévice_ü-2.0')\n"
    write_plugin(tmp_path / "site", "acme", source, dist="acme-gpu")
    assert records_of(run(REPORT, env={"TVM_BACKENDS": "acme"}))["acme"]["status"] == "active"


# --- egg-info installations --------------------------------------------------------------------


def test_a_backend_installed_with_egg_info_metadata_is_found(run, tmp_path):
    site = tmp_path / "site"
    write_plugin(site, "eggy", "def activate(ctx):\n    ctx.register_device('eggy')\n", metadata="egg-info")
    develop = site / "fake_backend_devel.egg-info"  # `setup.py develop` writes no version into the name
    develop.mkdir()
    (develop / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: acme-devel\nVersion: 2.0.dev0\n")
    (develop / "entry_points.txt").write_text("[tvm.backends]\ndevel = fake_backend_devel:activate\n")
    (site / "fake_backend_devel.py").write_text("def activate(ctx):\n    pass\n")
    for _ in range(2):  # a fresh scan, then the cached one
        recs = records_of(run(REPORT, env={"TVM_BACKENDS": "eggy,devel"}))
        assert recs["eggy"]["status"] == "active", recs["eggy"]
        assert (recs["eggy"]["distribution"], recs["eggy"]["version"]) == ("tvm-backend-eggy", "1.0")
        assert (recs["devel"]["status"], recs["devel"]["distribution"]) == ("active", "acme-devel")


def test_a_scan_cache_of_the_earlier_format_is_scanned_again(run, tmp_path):
    """A cache written before egg-info folders were read lacks them while the folder's time is
    unchanged: it must not be trusted."""
    site = tmp_path / "site"
    write_plugin(site, "eggy", "def activate(ctx):\n    pass\n", metadata="egg-info")
    assert "eggy" in records_of(run(REPORT))
    (path,) = (tmp_path / "cache" / "backends").glob("entry-points-*.json")
    doc = json.loads(path.read_text())
    doc["dirs"][str(site)][1] = []
    del doc["format"]
    doc["crc"] = _crc(doc["dirs"])
    path.write_text(json.dumps(doc))
    assert "eggy" in records_of(run(REPORT))


def _crc(dirs: dict) -> int:
    import zlib

    return zlib.crc32(json.dumps(dirs, sort_keys=True).encode())


# --- TVM_BACKENDS with autoload off ------------------------------------------------------------

GATED = """
import os
def activate(ctx):
    open(os.environ["TVM_TEST_MARKER"], "a").write("activated")
    ctx.declare_module_kind("gated")
"""

LOAD_GATED = """
import json, tvm
from tvm.runtime import library
rec = tvm.backend._registry.get_record("gated")
reason, fix = rec.reason, rec.fix()
try:
    library.ensure_loader("gated")
    load = "loaded"
except Exception as err:
    load = f"{type(err).__name__}: {err}"
print(json.dumps({"reason": reason, "fix": fix, "load": load}))
"""


def test_tvm_backends_holds_for_libraries_with_autoload_off(run, tmp_path):
    write_plugin(tmp_path / "site", "gated", GATED)
    marker = tmp_path / "marker"
    env = {"TVM_DEVICE_BACKEND_AUTOLOAD": "0", "TVM_BACKENDS": "opencl", "TVM_TEST_MARKER": str(marker)}
    r = run(LOAD_GATED, env=env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert "TVM_BACKENDS=opencl" in out["reason"] and "TVM_DEVICE_BACKEND_AUTOLOAD=0" in out["reason"], out
    assert out["load"].startswith("ModuleLoadError"), out
    assert "add 'gated' to TVM_BACKENDS" in out["fix"] and "unset TVM_DEVICE_BACKEND_AUTOLOAD" in out["fix"], out
    assert not marker.exists(), "a backend TVM_BACKENDS leaves out was activated for a library"


def test_autoload_off_alone_only_defers_a_library_backend(run, tmp_path):
    write_plugin(tmp_path / "site", "gated", GATED)
    marker = tmp_path / "marker"
    for allowed in ({}, {"TVM_BACKENDS": "gated"}):
        marker.unlink(missing_ok=True)
        r = run(LOAD_GATED, env={"TVM_DEVICE_BACKEND_AUTOLOAD": "0", "TVM_TEST_MARKER": str(marker), **allowed})
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout.strip().splitlines()[-1])
        assert out["reason"] == "TVM_DEVICE_BACKEND_AUTOLOAD=0" and out["load"] == "loaded", out
        assert out["fix"] == "unset TVM_DEVICE_BACKEND_AUTOLOAD, or call tvm.backend.load('gated')"
        assert marker.read_text() == "activated"


# --- first-party names compared as PEP 503 normalizes them -------------------------------------


@pytest.mark.parametrize(
    "spelling", ["tvm-backend-opencl", "tvm_backend_opencl", "TVM-Backend-OpenCL", "tvm.backend_opencl"]
)
def test_the_first_party_distribution_in_any_spelling_is_first_party(spelling):
    assert _ownership.is_first_party("opencl", spelling)


@pytest.mark.parametrize("spelling", ["acme-opencl", "tvm-backend-opencl2", "tvmbackend-opencl", "tvm-backend-cuda"])
def test_other_distributions_are_not_first_party(spelling):
    assert not _ownership.is_first_party("opencl", spelling)


@pytest.mark.parametrize("spelling", ["tvm_backend_hexagon", "TVM-Backend.Hexagon"])
def test_a_first_party_backend_whose_metadata_spells_its_name_otherwise_activates(run, tmp_path, spelling):
    source = "def activate(ctx):\n    ctx.register_target_kind('hexagon_probe', ctx.register_device('hexagon', 16))\n"
    write_plugin(tmp_path / "site", "hexagon", source, dist=spelling)
    code = "import tvm; rec = tvm.backend._registry.get_record('hexagon'); print(rec.status, rec.distribution)"
    r = run(code, env={"TVM_BACKENDS": "hexagon"})
    status, distribution = r.stdout.split()
    # where the project's own tvm-backend-hexagon is installed too, it is the same distribution
    assert r.returncode == 0 and status == "active", (r.stdout, r.stderr)
    assert re.sub(r"[-_.]+", "-", distribution).lower() == "tvm-backend-hexagon", r.stdout
    assert "OwnershipError" not in r.stderr and "impostor" not in r.stderr, r.stderr


# --- a backend's lazily named code generator or pass that cannot be imported -------------------

LAZY = """
def activate(ctx):
    code = ctx.register_device("lazy")
    ctx.register_target_kind("lazy", code, codegen="json:no_such_codegen",
                             passes=("no_such_module_for_tvm_tests:fix_kernel",))
    ctx.register_target_kind("lazy_own", code, codegen="json:loads")
"""


def test_a_code_generator_or_pass_that_cannot_be_imported_names_its_backend(run, tmp_path):
    write_plugin(tmp_path / "site", "lazy", LAZY)
    code = """
import json, tvm
from tvm.target import Target
out = []
for call in (lambda t: t.kind.codegen([], t), lambda t: t.kind.passes[0](None, t)):
    try:
        call(Target("lazy"))
    except Exception as err:
        out.append(f"{type(err).__name__}: {err}")
try:
    Target("lazy_own").kind.codegen([], Target("lazy_own"))
except Exception as err:
    out.append(type(err).__name__)
print(json.dumps(out))
"""
    r = run(code, env={"TVM_BACKENDS": "lazy"})
    assert r.returncode == 0, r.stderr
    codegen, pass_, own = json.loads(r.stdout.strip().splitlines()[-1])
    for text, spec, role in (
        (codegen, "json:no_such_codegen", "code generator"),
        (pass_, "no_such_module_for_tvm_tests:fix_kernel", "pass"),
    ):
        assert text.startswith("BackendError: backend 'lazy' (tvm-backend-lazy 1.0)"), text
        assert f"'{spec}' as its {role}" in text and "reinstall" in text, text
    assert "AttributeError" in codegen and "ModuleNotFoundError" in pass_
    assert own == "TypeError"  # what the code generator itself raises is its own


# --- python -m tvm.backend ---------------------------------------------------------------------


@pytest.mark.parametrize("strict", ["1", "all"])
def test_the_report_command_prints_under_strict_mode(run, tmp_path, strict):
    write_plugin(tmp_path / "site", "raiser", "raise ImportError('boom at import')\n")
    env = {"TVM_BACKEND_STRICT": strict, "TVM_BACKENDS": "raiser"}
    r = run(["-m", "tvm.backend"], env=env)
    assert r.returncode == 1, r.stderr  # strict: a failed backend is an error, after the report
    assert "raiser: failed" in r.stdout and "boom at import" in r.stdout, r.stdout
    assert "Traceback" not in r.stderr, r.stderr
    helped = run(["-X", "utf8", "-m", "tvm.backend", "--help"], env=env)
    assert helped.returncode == 0 and "usage: python -m tvm.backend" in helped.stdout, helped.stderr
    plain = run(["-m", "tvm.backend"], env={"TVM_BACKENDS": "raiser"})
    assert plain.returncode == 0 and "raiser: failed" in plain.stdout, plain.stderr
    imported = run("import tvm", env=env)
    assert imported.returncode != 0 and "boom at import" in imported.stderr  # elsewhere strict still raises


@pytest.mark.parametrize(
    "argv, module",
    [
        (["python", "-m", "tvm.backend"], "tvm.backend"),
        (["python", "-Im", "tvm.backend", "--help"], "tvm.backend"),
        (["python", "-mtvm.backend"], "tvm.backend"),
        (["python", "-W", "error", "-X", "dev", "-m", "tvm.backend"], "tvm.backend"),
        (["python", "-Werror", "-u", "-m", "tvm.backend"], "tvm.backend"),
        (["python", "--check-hash-based-pycs", "always", "-m", "tvm.backend"], "tvm.backend"),
        (["python", "-c", "import tvm", "-m", "tvm.backend"], None),
        (["python", "script.py", "-m", "tvm.backend"], None),
        (["python", "-W", "-m", "script.py"], None),
        (["python"], None),
    ],
)
def test_the_module_a_command_line_runs_is_read_as_python_reads_it(argv, module):
    assert _registry._module_run_by(argv) == module


def test_the_report_escapes_text_that_is_no_unicode(run, tmp_path):
    source = (
        "import os\n"
        "def activate(ctx):\n"
        '    raise OSError("cannot load " + os.fsdecode(b"/opt/vendor-\\xff/libdrv.so"))\n'
    )
    write_plugin(tmp_path / "site", "surr", source)
    r = run(["-m", "tvm.backend"], env={"PYTHONIOENCODING": "utf-8", "TVM_BACKENDS": "surr"})
    assert r.returncode == 0, r.stderr
    assert "cannot load /opt/vendor-\\udcff/libdrv.so" in r.stdout, r.stdout


def test_the_report_into_a_closed_pipe_ends_quietly(run):
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written (`| head -0`)
    try:
        proc = run(["-m", "tvm.backend"], capture_output=False, stdout=write, stderr=subprocess.PIPE)
    finally:
        os.close(write)
    assert proc.returncode == 0, proc.stderr
    assert "BrokenPipeError" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


# --- the fix for a name reserved for one of the project's backends -----------------------------

RESERVED = """
import json, tvm
from tvm.backend import _registry
try:
    tvm.backend.load("acme")
except tvm.backend.BackendError:
    pass
rec = _registry.get_record("acme")
fixes = {"installed": rec.fix() if _registry.entry_point("opencl") is not None else None}
_registry._records.pop("opencl", None)
_registry._entry_points.pop("opencl", None)  # as if tvm-backend-opencl were not installed
fixes["absent"] = rec.fix()
print(json.dumps({"reason": rec.reason, **fixes}))
"""


def test_the_fix_for_a_reserved_name_names_the_projects_backend(run, tmp_path):
    write_plugin(tmp_path / "site", "acme", "def activate(ctx):\n    ctx.register_device('acme', 4)\n", dist="acme-gpu")
    r = run(RESERVED, env={"TVM_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert "reserved for the first-party backend 'opencl'" in out["reason"], out
    assert out["absent"].startswith(
        "what it registers is reserved for the project's tvm-backend-opencl: pip install tvm-backend-opencl "
        "and uninstall acme-gpu (pip uninstall 'acme-gpu')"
    ), out
    assert "two installed distributions" not in out["absent"]
    if out["installed"] is not None:
        assert (
            "reserved for the project's tvm-backend-opencl, which is installed: uninstall acme-gpu" in out["installed"]
        )
