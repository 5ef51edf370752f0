"""The project's lockstep versions, read from ``versions.toml`` at the repository root.

Every distribution of the project shares one version and one exactly pinned apache-tvm-ffi.
Both are written once, in ``versions.toml``; this module turns them into package metadata:

* as a scikit-build-core dynamic-metadata provider (``[[tool.dynamic-metadata]]`` with
  ``provider = {path = "../ci", module = "lockstep"}`` in a package's pyproject.toml) it sets
  ``version``, fills ``dependencies`` templates (``"tvm=={version}"``,
  ``"apache-tvm-ffi=={tvm_ffi}"``), gives the core its backend extras (one per backend folder
  that holds a pyproject.toml, plus ``all``), and adds the pinned apache-tvm-ffi to the build
  requirements of an isolated build;
* nox and the CI scripts import :func:`versions` and :func:`backend_names`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
VERSIONS_FILE = ROOT / "versions.toml"


def versions() -> dict[str, str]:
    """``{"version": <the project's version>, "tvm_ffi": <the apache-tvm-ffi pin>}``."""
    text = VERSIONS_FILE.read_text(encoding="utf-8")
    found = dict(re.findall(r'^([\w-]+)\s*=\s*"([^"]+)"', text, re.M))
    missing = [k for k in ("tvm", "apache-tvm-ffi") if k not in found]
    if missing:
        raise RuntimeError(f'{VERSIONS_FILE} must set {", ".join(missing)} (as key = "value")')
    return {"version": found["tvm"], "tvm_ffi": found["apache-tvm-ffi"]}


def backend_names() -> list[str]:
    """The first-party backends that exist: every ``tvm-backend-<name>/`` holding a pyproject.toml."""
    return sorted(p.parent.name.removeprefix("tvm-backend-") for p in ROOT.glob("tvm-backend-*/pyproject.toml"))


def backend_extras(version: str) -> dict[str, list[str]]:
    """The core's extras: ``<name>`` pins ``tvm-backend-<name>==version``; ``all`` pins every one."""
    pins = {name: f"tvm-backend-{name}=={version}" for name in backend_names()}
    extras = {name: [pin] for name, pin in pins.items()}
    extras["all"] = list(pins.values())
    return extras


def dynamic_metadata(settings: Mapping[str, Any], project: Mapping[str, Any]) -> dict[str, Any]:
    """scikit-build-core provider hook: the metadata fields that ``settings`` asks for.

    ``settings`` may hold ``dependencies`` (a list of templates over ``{version}`` and
    ``{tvm_ffi}``) and ``backend-extras = true`` (the core's extras); ``version`` is always set.
    """
    unknown = set(settings) - {"dependencies", "backend-extras"}
    if unknown:
        raise RuntimeError(f"lockstep: unknown settings {sorted(unknown)}")
    values = versions()
    fields: dict[str, Any] = {"version": values["version"]}
    if "dependencies" in settings:
        fields["dependencies"] = [d.format(**values) for d in settings["dependencies"]]
    if settings.get("backend-extras"):
        fields["optional-dependencies"] = backend_extras(values["version"])
    return fields


def get_requires_for_dynamic_metadata(settings: Mapping[str, Any]) -> list[str]:
    """scikit-build-core provider hook: an isolated build installs exactly the pinned tvm-ffi."""
    return [f"apache-tvm-ffi=={versions()['tvm_ffi']}"]


if __name__ == "__main__":
    import sys

    # `python ci/lockstep.py version` or `python ci/lockstep.py tvm_ffi`: one value, for shell scripts
    print(versions()[sys.argv[1] if len(sys.argv) > 1 else "version"])
