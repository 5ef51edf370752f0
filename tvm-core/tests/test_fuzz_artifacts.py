"""A short run of the project's chaos harness (ci/fuzz.py; `nox -s fuzz` runs thousands of
cases): every family of damaged artifacts ends in a correct result or a clean Python error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

FUZZ = Path(__file__).resolve().parents[2] / "ci" / "fuzz.py"


@pytest.mark.skipif(not FUZZ.is_file(), reason="ci/fuzz.py is not here (tests run outside the repository)")
def test_short_chaos_run_has_no_crash_hang_or_wrong_result(tmp_path):
    out = tmp_path / "fuzz.json"
    res = subprocess.run(
        [sys.executable, "-W", "ignore", str(FUZZ), "--cases", "150", "--seed", "7", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.is_file(), res.stdout + res.stderr
    figures = json.loads(out.read_text())
    total = figures["total"]
    assert total["tried"] >= 40, figures
    assert (total["wrong"], total["crash"], total["hang"]) == (0, 0, 0), json.dumps(figures, indent=1)
    assert res.returncode == 0, res.stdout + res.stderr
    ran = {name: f for name, f in figures["families"].items() if "tried" in f}
    assert {"device_module", "library_cpu", "scan_cache", "compile_cache_cpu"} <= set(ran), figures
    assert ran["library_cpu"]["error"] > 0  # damage is reported, not ignored
