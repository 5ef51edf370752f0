"""Checks built wheels: tag py3-none-<platform> with a publishable platform (manylinux on Linux:
PyPI refuses a plain linux_x86_64), the native library each must hold, nothing bundled that
belongs elsewhere (drivers, tvm-ffi, the core's runtime), entry points of backends."""

from __future__ import annotations

import re
import sys
import zipfile
from pathlib import Path

DRIVERS = ("libcuda.so", "libnvrtc", "libOpenCL.so", "libvulkan.so", "libamdhip64.so", "libtvm_ffi")


def check(wheel: Path) -> list[str]:
    """Problems found in one wheel (empty when fine)."""
    problems = []
    m = re.match(r"(?P<name>[^-]+)-(?P<ver>[^-]+)-(?P<py>[^-]+)-(?P<abi>[^-]+)-(?P<plat>.+)\.whl", wheel.name)
    if not m:
        return [f"{wheel.name}: not a wheel file name"]
    if m["py"] != "py3" or m["abi"] != "none" or m["plat"] == "any":
        problems.append(f"{wheel.name}: tag must be py3-none-<platform>")
    if m["plat"].startswith("linux_"):
        problems.append(
            f"{wheel.name}: platform tag {m['plat']} cannot be published; repair the wheel "
            "(python ci/repair_wheel.py WHEEL DEST, run by `nox -s wheels`) to get a manylinux tag"
        )
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        dist = next(n for n in names if n.endswith(".dist-info/METADATA")).split("/")[0]
        eps = z.read(f"{dist}/entry_points.txt").decode() if f"{dist}/entry_points.txt" in names else ""
    pkg = m["name"]
    if pkg == "tvm":
        if not {"tvm/lib/libtvm_runtime.so", "tvm/lib/libtvm_runtime.dylib"} & set(names):
            problems.append(f"{wheel.name}: tvm/lib/libtvm_runtime missing")
        if "tvm/include/tvm/runtime/device_api.h" not in names:
            problems.append(f"{wheel.name}: core headers missing")
        if "tvm/share/cmake/tvm/tvm-config.cmake" not in names:
            problems.append(f"{wheel.name}: CMake package for backends missing")
    else:
        libs = [n for n in names if n.startswith(f"{pkg}/lib/") and n.endswith((".so", ".dylib"))]
        if not libs:
            problems.append(f"{wheel.name}: no runtime DSO under {pkg}/lib/")
        if "[tvm.backends]" not in eps:
            problems.append(f"{wheel.name}: no tvm.backends entry point")
        if any(n.startswith("tvm/") for n in names):
            problems.append(f"{wheel.name}: writes into the tvm/ package")
        if any(Path(n).name.startswith("libtvm_runtime.") for n in names):
            problems.append(f"{wheel.name}: bundles the core's libtvm_runtime (it must come from the tvm wheel)")
    for n in names:
        if any(Path(n).name.startswith(d) for d in DRIVERS):
            problems.append(f"{wheel.name}: bundles {n}")
    return problems


def main(paths: list[str]) -> int:
    """Check every wheel given; exit non-zero on any problem."""
    problems = []
    for p in map(Path, paths):
        found = check(p)
        problems += found
        print(f"{p.name}: {'OK' if not found else 'PROBLEMS'}")
    for line in problems:
        print("  " + line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
