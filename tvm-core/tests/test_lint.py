"""The tree is clean under the project's lint and format rules (ruff.toml, .clang-format)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "ci"))
from lint import project_files  # noqa: E402

TEXT_SUFFIXES = (".py", ".md", ".toml", ".txt", ".sh", ".cc", ".h", ".c", ".cmake", ".yml", ".json", "")


def test_tree_is_lint_and_format_clean():
    proc = subprocess.run([sys.executable, str(ROOT / "ci" / "lint.py")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ruff check: clean" in proc.stdout and "clang-format --dry-run: clean" in proc.stdout, proc.stdout


def test_no_file_refers_to_paths_outside_the_repository():
    outside = re.compile(r"\.\./shared\b|(?<![\w.])/work/|DESIGN\.md")
    found = []
    for path in project_files(TEXT_SUFFIXES):
        rel = path.relative_to(ROOT)
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if outside.search(line) and path != Path(__file__):
                found.append(f"{rel}:{number}: {line.strip()}")
    assert not found, "\n".join(found)
