"""Two vendor backends made from this template the way docs/backend-guide.md says (copy, rename,
write the version and pins statically, build without isolation against the installed core),
installed side by side with every backend already here: each is active, gets a device type of
its own, and runs kernels that match NumPy."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from tvm.testing import run_python

TEMPLATE = Path(__file__).resolve().parents[1]
VENDORS = ("acme", "zeta")


GUIDE = TEMPLATE.parents[1] / "docs" / "backend-guide.md"


def guide_pyproject(name: str) -> str:
    """The pyproject.toml of section 2 of the guide for backend ``name``, pinned to the core and
    the tvm-ffi installed here."""
    section = GUIDE.read_text().split("## 2. pyproject.toml", 1)[1]
    text = section.split("```toml\n", 1)[1].split("```", 1)[0].replace("acme", name)
    text = re.sub(r'"tvm==[^"]*"', f'"tvm=={metadata.version("tvm")}"', text)
    return re.sub(r'"apache-tvm-ffi==[^"]*"', f'"apache-tvm-ffi=={metadata.version("apache-tvm-ffi")}"', text)


def copy_template(name: str, dest: Path) -> Path:
    """The template's sources renamed to ``tvm-backend-<name>`` (as section 1 of the guide
    copies them), with the guide's pyproject.toml."""
    out = dest / f"tvm-backend-{name}"
    for src in [
        TEMPLATE / "CMakeLists.txt",
        *TEMPLATE.glob("src/*"),
        *TEMPLATE.glob("python/tvm_backend_example/*.py"),
        TEMPLATE / "tests" / "test_example_conformance.py",
    ]:
        if src.name == "_version.py":  # a build output of the template, never copied
            continue
        rel = str(src.relative_to(TEMPLATE)).replace("example", name)
        text = src.read_text().replace("example", name).replace("Example", name.title())
        text = text.replace("EXAMPLE", name.upper())
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text)
    (out / "pyproject.toml").write_text(guide_pyproject(name))
    return out


@pytest.fixture(scope="module")
def vendor_site(tmp_path_factory) -> Path:
    if shutil.which("cmake") is None and not Path(sys.executable).with_name("cmake").exists():
        pytest.skip("cmake is not installed (pip install cmake)")
    work = tmp_path_factory.mktemp("vendors")
    wheels = work / "wheels"
    for name in VENDORS:
        src = copy_template(name, work)
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "-q",
                "--no-deps",
                "--no-build-isolation",
                "-w",
                str(wheels),
                str(src),
            ],
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    site = work / "site"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--target",
            str(site),
            *map(str, wheels.glob("*.whl")),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return site


def test_two_vendor_backends_side_by_side(vendor_site, tmp_path):
    proc = run_python(
        f"""
        import sys
        sys.path.insert(0, {str(vendor_site)!r})
        import numpy as np
        import tvm
        from tvm.testing import kernels
        types = {{}}
        for name in {VENDORS!r}:
            rec = tvm.backend._registry.get_record(name)
            assert rec is not None and rec.status == "active", tvm.backend.report()
            dev = tvm.device(name)
            types[name] = dev.device_type
            mod = tvm.compile(kernels.vector_add(), target=name)
            assert mod.imports[0].kind == name
            a = np.arange(1000, dtype="float32")
            c = tvm.runtime.empty((1000,), "float32", dev)
            mod["vector_add"](tvm.runtime.tensor(a, dev), tvm.runtime.tensor(a, dev), c)
            np.testing.assert_allclose(c.numpy(), 2 * a)
            assert str(dev) == name + ":0"
        failed = [r.name for r in tvm.backend.list_backends() if r.status == "failed"]
        print("types", sorted(types.values()), "failed", failed)
        """,
        env={"TVM_CACHE_DIR": str(tmp_path / "cache")},
        clean_tvm_env=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("types"))
    types = [int(t) for t in line.split("[")[1].split("]")[0].split(",")]
    assert len(set(types)) == 2 and all(32 <= t < 64 for t in types), line
    assert line.endswith("failed []"), line
