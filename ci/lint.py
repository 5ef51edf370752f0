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


def tool(name: str) -> str:
    """The command of ``name`` installed next to this interpreter or on PATH."""
    here = Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    if not found:
        raise SystemExit(f"{name} is not installed: pip install -r ci/requirements-test.txt")
    return found


def project_files(suffixes: tuple[str, ...]) -> list[Path]:
    """The project's own files with one of ``suffixes`` (git's list in a checkout; else every file
    outside build outputs and hidden folders)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split("\n")
        paths = [ROOT / f for f in listed if f]
    except (OSError, subprocess.CalledProcessError):
        paths = [
            p
            for p in ROOT.rglob("*")
            if not any(
                part.startswith(".") or part in ("build", "wheelhouse") for part in p.relative_to(ROOT).parts[:-1]
            )
        ]
    return sorted(p for p in paths if p.suffix in suffixes and p.is_file())


def commands(fix: bool) -> list[list[str]]:
    """The checks to run (or, with ``fix``, the rewrites)."""
    ruff, clang_format = tool("ruff"), tool("clang-format")
    if fix:
        return [
            [ruff, "check", "--fix", "."],
            [ruff, "format", "."],
            [clang_format, "-i", *map(str, project_files(CXX_SUFFIXES))],
        ]
    return [
        [ruff, "check", "."],
        [ruff, "format", "--check", "."],
        [clang_format, "--dry-run", "-Werror", *map(str, project_files(CXX_SUFFIXES))],
    ]


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
