"""Lint and format checks over the repository: ruff (rules in ruff.toml) for Python, clang-format
(style in .clang-format) for C and C++. Exit status 1 when anything is not clean.

Usage: python ci/lint.py [--fix]     (--fix rewrites the files instead of reporting them)
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CXX_SUFFIXES = (".c", ".cc", ".h")
SKIP_DIRS = {"build", "wheelhouse", ".nox", ".venv", ".git"}


def tool(name: str) -> str:
    """The command of ``name`` installed next to this interpreter or on PATH."""
    here = Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    if not found:
        raise SystemExit(f"{name} is not installed: pip install -r ci/requirements-test.txt")
    return found


def cxx_files() -> list[str]:
    """The C/C++ sources the project keeps (git's list when there is one)."""
    try:
        listed = subprocess.run(["git", "ls-files", *(f"*{s}" for s in CXX_SUFFIXES)], cwd=ROOT,
                                capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        listed = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.suffix in CXX_SUFFIXES
                  and not SKIP_DIRS.intersection(p.relative_to(ROOT).parts)]
    return sorted(f for f in listed if (ROOT / f).exists())


def commands(fix: bool) -> list[list[str]]:
    """The checks to run (or, with ``fix``, the rewrites)."""
    ruff, clang_format = tool("ruff"), tool("clang-format")
    if fix:
        return [[ruff, "check", "--fix", "."], [ruff, "format", "."], [clang_format, "-i", *cxx_files()]]
    return [[ruff, "check", "."], [ruff, "format", "--check", "."],
            [clang_format, "--dry-run", "-Werror", *cxx_files()]]


def main(argv: list[str]) -> int:
    """Run every check; report each one's result; non-zero when any failed."""
    failed = []
    for cmd in commands("--fix" in argv):
        label = f"{Path(cmd[0]).name} {cmd[1]}"
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        out = (proc.stdout + proc.stderr).strip()
        print(f"{label}: {'clean' if proc.returncode == 0 else 'NOT CLEAN'}")
        if proc.returncode != 0:
            print(out[-20000:])
            failed.append(label)
    if failed:
        print(f"lint: {', '.join(failed)} failed; `nox -s lint -- --fix` rewrites what can be rewritten")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
