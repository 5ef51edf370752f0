"""One version and one apache-tvm-ffi pin for every distribution, written once in versions.toml:
every pin written anywhere in the repository, and every installed distribution, agrees with it."""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "ci"))
import lockstep  # noqa: E402
from lint import project_files  # noqa: E402

TEXT_SUFFIXES = (".toml", ".txt", ".py", ".sh", ".md", ".cfg", ".cmake", ".yml", ".yaml")


def pins_in(text: str) -> list[tuple[str, str]]:
    """``(distribution, version)`` for each ``name==version`` of ours or of apache-tvm-ffi."""
    return re.findall(r"\b(tvm(?:-backend-[a-z0-9]+)?|apache-tvm-ffi)==([0-9][\w.]*)", text)


def test_versions_file_defines_both():
    values = lockstep.versions()
    assert re.fullmatch(r"\d+\.\d+\.\d+\w*", values["version"]), values
    assert re.fullmatch(r"\d+\.\d+\.\d+[\w.]*", values["tvm_ffi"]), values


def test_no_pin_in_the_repository_disagrees():
    values = lockstep.versions()
    want = {"apache-tvm-ffi": values["tvm_ffi"]}
    wrong = []
    for path in project_files(TEXT_SUFFIXES):
        for dist, version in pins_in(path.read_text(errors="replace")):
            expected = want.get(dist, values["version"])
            if dist.startswith("tvm-backend-test") or path.parent.name == "backend":
                continue  # synthetic plugins the plugin-system tests build carry their own versions
            if version != expected:
                wrong.append(f"{path.relative_to(ROOT)}: {dist}=={version} (versions.toml says {expected})")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(
    "pyproject",
    sorted(ROOT.glob("*/pyproject.toml")) + sorted(ROOT.glob("examples/*/pyproject.toml")),
    ids=lambda p: str(p.parent.relative_to(ROOT)),
)
def test_every_package_takes_its_version_from_versions_toml(pyproject):
    text = pyproject.read_text()
    assert not re.search(r"^version\s*=", text, re.M), f"{pyproject}: a hand-written version"
    assert re.search(r'^dynamic = \[[^\]]*"version"', text, re.M), f"{pyproject}: version is not dynamic"
    assert 'module = "lockstep"' in text, f"{pyproject}: does not use the lockstep metadata provider"


def test_installed_distributions_agree():
    values = lockstep.versions()
    assert metadata.version("apache-tvm-ffi") == values["tvm_ffi"]
    import tvm

    assert tvm.__version__ == metadata.version("tvm") == values["version"]
    installed = []
    for dist in ["tvm", *(f"tvm-backend-{n}" for n in lockstep.backend_names()), "tvm-backend-example"]:
        try:
            requires = metadata.requires(dist) or []
        except metadata.PackageNotFoundError:
            continue
        installed.append(dist)
        assert metadata.version(dist) == values["version"], dist
        assert f"apache-tvm-ffi=={values['tvm_ffi']}" in requires, (dist, requires)
        if dist != "tvm":
            assert f"tvm=={values['version']}" in requires, (dist, requires)
    assert len(installed) > 1, f"only {installed} installed: the suite runs against the installed wheels"


def test_core_extras_are_the_backends_that_exist():
    extras = lockstep.backend_extras("9.9.9")
    names = lockstep.backend_names()
    assert names and set(extras) == {*names, "all"}
    assert extras["all"] == [f"tvm-backend-{n}==9.9.9" for n in names]
    for name in names:
        assert (ROOT / f"tvm-backend-{name}" / "pyproject.toml").exists()
