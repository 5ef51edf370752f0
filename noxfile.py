"""The one entry point for building, testing, benchmarking.

    nox -s demo      the main job on the CPU: a TVMScript kernel compiled, run, exported, reloaded
    nox -s tests     everything the README promises, against wheels installed from ./wheelhouse
    nox -s wheels    builds every wheel into ./wheelhouse and checks each one
    nox -s bench     benchmarks; results as JSON in bench/results/
    nox -s lint      ruff and clang-format over the tree (`nox -s lint -- --fix` rewrites)
    nox -s fuzz      chaos run over persisted artifacts (`nox -s fuzz -- --cases 5000`)

Wheels are built without build isolation inside the session's venv, so the exactly pinned
apache-tvm-ffi is the one they are built and tested against, and PyPI's unrelated `tvm`
project can never be picked up (installs from ./wheelhouse use --no-index).
"""

from __future__ import annotations

import re
import shutil
import sys
import time
import zipfile
from pathlib import Path

import nox

ROOT = Path(__file__).parent
WHEELHOUSE = ROOT / "wheelhouse"
RAW_WHEELS = ROOT / "build" / "wheels-raw"
BUILD_REQS = ROOT / "ci" / "requirements-build.txt"
TEST_REQS = ROOT / "ci" / "requirements-test.txt"

sys.path.insert(0, str(ROOT / "ci"))
from lockstep import versions  # noqa: E402
from wheel_venv import TORCH_CPU  # noqa: E402

_VERSIONS = versions()
VERSION = _VERSIONS["version"]
TVM_FFI = f"apache-tvm-ffi=={_VERSIONS['tvm_ffi']}"

nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True


def packages() -> list[Path]:
    """Every wheel source folder: the core first, then backends and the example backend."""
    found = [ROOT / "tvm-core"]
    found += sorted(p.parent for p in ROOT.glob("tvm-backend-*/pyproject.toml"))
    found += sorted(p.parent for p in ROOT.glob("examples/*/pyproject.toml"))
    return found


def dist_name(pkg: Path) -> str:
    """The distribution name declared in a package's pyproject.toml."""
    text = (pkg / "pyproject.toml").read_text()
    return re.search(r'^name\s*=\s*"([^"]+)"', text, re.M).group(1)


def install_build_env(session: nox.Session) -> None:
    """What building needs, with exactly the pinned tvm-ffi the wheels are built against."""
    session.install("-r", str(BUILD_REQS), TVM_FFI)


def build_wheel(session: nox.Session, pkg: Path) -> Path:
    """Build one package against this session's tvm-ffi (no isolation) and repair it into
    ./wheelhouse (manylinux tag, nothing that belongs elsewhere bundled); the repaired wheel."""
    rel = pkg.relative_to(ROOT)
    session.log(f"building {rel} (scikit-build-core, CMake) ...")
    started = time.monotonic()
    raw = RAW_WHEELS / pkg.name
    shutil.rmtree(raw, ignore_errors=True)
    # one CMake build folder per nox session: each session's venv has its own tvm-ffi
    build_dir = ROOT / "build" / "cmake" / session.name / pkg.name
    session.run(
        "python",
        "-m",
        "pip",
        "wheel",
        "-q",
        "--no-deps",
        "--no-build-isolation",
        f"--config-settings=build-dir={build_dir}",
        "-w",
        str(raw),
        str(pkg),
    )
    norm = dist_name(pkg).replace("-", "_")
    for old in WHEELHOUSE.glob(f"{norm}-*.whl"):
        old.unlink()
    (wheel,) = raw.glob(f"{norm}-{VERSION}-*.whl")
    session.run("python", str(ROOT / "ci" / "repair_wheel.py"), str(wheel), str(WHEELHOUSE))
    (repaired,) = WHEELHOUSE.glob(f"{norm}-{VERSION}-*.whl")
    session.log(f"built {repaired.name} in {time.monotonic() - started:.0f} s")
    return repaired


def build_wheels(session: nox.Session) -> list[Path]:
    """Build every package into ./wheelhouse (core first: backends build against its headers),
    with the third-party wheels they need, so the wheelhouse installs offline."""
    install_build_env(session)
    WHEELHOUSE.mkdir(exist_ok=True)
    built = []
    for pkg in packages():
        built.append(build_wheel(session, pkg))
        if pkg.name == "tvm-core":  # backends build against the installed core's headers
            install_wheels(session, ["tvm"])
    deps = sorted({d for w in built for d in _requires(w) if not d.startswith("tvm")})
    session.log(f"downloading third-party wheels into {WHEELHOUSE.name}/: {', '.join(deps)}")
    session.run("python", "-m", "pip", "download", "-q", "-d", str(WHEELHOUSE), *deps)
    return built


def _requires(wheel: Path) -> list[str]:
    """Every requirement of ``wheel``, its extras' included (markers dropped)."""
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        lines = z.read(meta).decode().splitlines()
    return [line.split(":", 1)[1].split(";")[0].strip() for line in lines if line.startswith("Requires-Dist:")]


def install_wheels(session: nox.Session, names: list[str]) -> None:
    """(Re)install our distributions from ./wheelhouse only, never from an index (PyPI's `tvm` is
    another project); their third-party dependencies come from what is installed or the wheelhouse."""
    pip = ("python", "-m", "pip", "install", "-q", "--no-index", "--find-links", str(WHEELHOUSE))
    session.run(*pip, "--force-reinstall", "--no-deps", *names)
    session.run(*pip, *names)


def install_torch_cpu(session: nox.Session) -> None:
    """PyTorch's CPU build for the DLPack tests, only where a local CPU wheel exists (the +cpu
    label never matches a multi-GB CUDA build from PyPI); without it those tests skip."""
    session.run("python", "-m", "pip", "install", "-q", "--only-binary=:all:", TORCH_CPU, success_codes=[0, 1])


@nox.session
def wheels(session: nox.Session) -> None:
    """Build every wheel into ./wheelhouse and check each one."""
    built = build_wheels(session)
    session.run("python", str(ROOT / "ci" / "check_wheels.py"), *map(str, built))


@nox.session
def tests(session: nox.Session) -> None:
    """Build the wheels, install them, run every test suite; the core alone and each `tvm[<backend>]`
    extra in fresh venvs."""
    built = build_wheels(session)
    session.run("python", str(ROOT / "ci" / "check_wheels.py"), *map(str, built))
    session.install("-r", str(TEST_REQS))
    install_torch_cpu(session)
    names = [dist_name(p) for p in packages()]
    install_wheels(session, names)
    session.run("python", str(ROOT / "ci" / "check_core_alone.py"), str(WHEELHOUSE))
    session.run("python", str(ROOT / "ci" / "check_extras.py"), str(WHEELHOUSE))
    suites = [str(p / "tests") for p in packages() if (p / "tests").is_dir()]
    # ci/hide_torch keeps tvm-ffi from importing PyTorch in every test process (see its docstring)
    hide_torch = {"PYTHONPATH": str(ROOT / "ci" / "hide_torch")}
    session.run("python", str(ROOT / "ci" / "run_suites.py"), *suites, "--", *session.posargs, env=hide_torch)


@nox.session
def demo(session: nox.Session) -> None:
    """The main job on the CPU: compile, run, export and reload a TVMScript kernel."""
    install_build_env(session)
    WHEELHOUSE.mkdir(exist_ok=True)
    build_wheel(session, ROOT / "tvm-core")
    install_wheels(session, ["tvm"])
    session.run("python", str(ROOT / "examples" / "demo.py"))


@nox.session
def lint(session: nox.Session) -> None:
    """ruff (lint and format) over the Python, clang-format over the C/C++; `-- --fix` rewrites."""
    session.install("-r", str(TEST_REQS))
    session.run("python", str(ROOT / "ci" / "lint.py"), *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks, each side by side with its peer in the same run; JSON in bench/results/."""
    build_wheels(session)
    session.install("-r", str(TEST_REQS), "-r", str(ROOT / "ci" / "requirements-bench.txt"))
    install_wheels(session, [dist_name(p) for p in packages()])
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    for script in sorted(ROOT.glob("bench/bench_*.py")) + sorted(ROOT.glob("tvm-backend-*/bench/bench_*.py")):
        session.run("python", str(script), str(out / f"{script.stem.removeprefix('bench_')}.json"))


@nox.session
def fuzz(session: nox.Session) -> None:
    """Mutated device modules, libraries and caches used as a user would (ci/fuzz.py); figures as
    JSON in bench/results/fuzz.json. Arguments after `--` go to ci/fuzz.py."""
    build_wheels(session)
    session.install("-r", str(TEST_REQS))
    install_wheels(session, [dist_name(p) for p in packages()])
    out = ROOT / "bench" / "results" / "fuzz.json"
    session.run("python", str(ROOT / "ci" / "fuzz.py"), "--out", str(out), *session.posargs)
