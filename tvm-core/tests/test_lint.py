"""The tree is clean under the project's lint and format rules (ruff.toml, .clang-format)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_tree_is_lint_and_format_clean():
    proc = subprocess.run([sys.executable, str(ROOT / "ci" / "lint.py")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ruff check: clean" in proc.stdout and "clang-format --dry-run: clean" in proc.stdout, proc.stdout
