"""The one entry point for building, testing, benchmarking.

    nox -s demo      the main job on the CPU: a TVMScript kernel compiled, run, exported, reloaded
    nox -s tests     everything the README promises, against wheels installed from ./wheelhouse
    nox -s wheels    builds every wheel into ./wheelhouse and checks each one
    nox -s bench     benchmarks; results as JSON in bench/results/

Wheels are built without build isolation inside the session's venv, so the exactly pinned
apache-tvm-ffi is the one they are built and tested against, and PyPI's unrelated `tvm`
project can never be picked up (installs from ./wheelhouse use --no-index).
"""

from __future__ import annotations

import json
import os
import re
import sys
import zipfile
from pathlib import Path

import nox

ROOT = Path(__file__).parent
WHEELHOUSE = ROOT / "wheelhouse"
BUILD_REQS = ROOT / "ci" / "requirements-build.txt"
TEST_REQS = ROOT / "ci" / "requirements-test.txt"
VERSION = "0.1.0"

sys.path.insert(0, str(ROOT / "ci"))
from wheel_venv import TORCH_CPU  # noqa: E402

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


def build_wheel(session: nox.Session, pkg: Path) -> None:
    """``pip wheel`` one package into ./wheelhouse against this session's tvm-ffi (no isolation)."""
    session.run("python", "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                "-w", str(WHEELHOUSE), str(pkg))


def build_wheels(session: nox.Session) -> list[Path]:
    """Build every package into ./wheelhouse (core first: backends build against its headers)."""
    session.install("-r", str(BUILD_REQS))
    WHEELHOUSE.mkdir(exist_ok=True)
    for old in WHEELHOUSE.glob("tvm*.whl"):
        old.unlink()
    built = []
    for pkg in packages():
        session.log(f"building {pkg.relative_to(ROOT)}")
        build_wheel(session, pkg)
        if pkg.name == "tvm-core":
            # backends build against the installed core's headers
            session.run("python", "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall",
                        "--no-index", "--find-links", str(WHEELHOUSE), "tvm")
    for pkg in packages():
        norm = dist_name(pkg).replace("-", "_")
        built += sorted(WHEELHOUSE.glob(f"{norm}-{VERSION}-*.whl"))
    # Third-party runtime dependencies too, so `pip install --no-index --find-links wheelhouse`
    # installs everything offline (and never reaches PyPI's unrelated `tvm`).
    deps = sorted({d for w in built for d in _requires(w) if not d.startswith("tvm")})
    if deps:
        session.run("python", "-m", "pip", "download", "-q", "-d", str(WHEELHOUSE), *deps)
    return built


def _requires(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        lines = z.read(meta).decode().splitlines()
    return [line.split(":", 1)[1].strip() for line in lines
            if line.startswith("Requires-Dist:") and "extra ==" not in line]


def install_wheels(session: nox.Session, names: list[str]) -> None:
    """Install our distributions from ./wheelhouse only (dependencies too)."""
    session.run("python", "-m", "pip", "install", "-q", "--force-reinstall", "--no-index",
                "--find-links", str(WHEELHOUSE), *names)


def install_torch_cpu(session: nox.Session) -> None:
    """PyTorch's CPU build for the DLPack tests, only where a local CPU wheel exists (the +cpu
    label never matches a multi-GB CUDA build from PyPI); without it those tests skip."""
    session.run("python", "-m", "pip", "install", "-q", "--only-binary=:all:", TORCH_CPU,
                success_codes=[0, 1])


@nox.session
def wheels(session: nox.Session) -> None:
    """Build every wheel into ./wheelhouse and check each one."""
    built = build_wheels(session)
    session.install("auditwheel")
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
    session.run("python", str(ROOT / "ci" / "run_suites.py"), *suites, "--", *session.posargs)


@nox.session
def demo(session: nox.Session) -> None:
    """The main job on the CPU: compile, run, export and reload a TVMScript kernel."""
    session.install("-r", str(BUILD_REQS))
    build_wheel(session, ROOT / "tvm-core")
    install_wheels(session, ["tvm"])
    session.run("python", str(ROOT / "examples" / "demo.py"))


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
