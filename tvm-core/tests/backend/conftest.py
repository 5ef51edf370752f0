"""Fixtures for the plugin-system tests: every scenario runs in a fresh Python process against
installed wheels (the core and the example backend installed in this environment, broken
plugins installed with pip into a folder put on PYTHONPATH)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import plugin_factory  # noqa: E402


@dataclass
class Run:
    """Result of a fresh-process run."""

    returncode: int
    stdout: str
    stderr: str

    def json(self):
        """The last stdout line parsed as JSON."""
        return json.loads(self.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def core_abi() -> int:
    """The ABI version of the installed core (read in a subprocess to keep this one clean)."""
    out = subprocess.run(
        [sys.executable, "-c", "from tvm._lib import ABI_VERSION; print(ABI_VERSION)"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "TVM_DEVICE_BACKEND_AUTOLOAD": "0"},
    )
    return int(out.stdout.strip())


@pytest.fixture(scope="session")
def plugin_wheels(tmp_path_factory, core_abi) -> dict[str, Path]:
    """Every variant built once per session."""
    out = tmp_path_factory.mktemp("plugin-wheels")
    return {v: plugin_factory.build_wheel(v, out, core_abi) for v in plugin_factory.VARIANTS}


@pytest.fixture
def run_python(tmp_path, plugin_wheels):
    """run_python(code, plugins=[...], env={...}) -> Run, in a fresh interpreter with those plugins
    installed (pip --target) and a private TVM cache directory."""

    def run(code: str, plugins: tuple[str, ...] = (), env: dict[str, str] | None = None, timeout: float = 120) -> Run:
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("TVM_") and k not in ("PYTHONPATH",)}
        full_env["TVM_CACHE_DIR"] = str(tmp_path / "cache")
        if plugins:
            site = plugin_factory.install([plugin_wheels[p] for p in plugins], tmp_path / "plugins")
            full_env["PYTHONPATH"] = str(site)
        full_env.update(env or {})
        proc = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env=full_env,
            timeout=timeout,
            cwd=str(tmp_path),
        )
        return Run(proc.returncode, proc.stdout, proc.stderr)

    return run


@pytest.fixture(scope="session")
def example_installed() -> bool:
    """Whether the example backend wheel is installed here (nox -s tests installs it)."""
    import importlib.util

    if importlib.util.find_spec("tvm_backend_example") is None:
        pytest.skip(
            "tvm-backend-example is not installed in this environment: run `nox -s tests`, "
            "which builds and installs it from ./wheelhouse"
        )
    return True
