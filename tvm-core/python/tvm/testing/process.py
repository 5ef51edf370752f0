"""Fresh interpreters for tests: import-time behaviour (autoload, env switches, exported
libraries loaded elsewhere) can only be checked in a process of its own."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap


def run_python(
    code: str,
    env: dict[str, str] | None = None,
    timeout: int = 300,
    clean_tvm_env: bool = False,
    cwd: str | None = None,
) -> subprocess.CompletedProcess:
    """Run ``code`` (dedented) in a new interpreter with this one's ``sys.path`` and warnings
    ignored, in folder ``cwd`` (default: this one's); ``env`` adds variables, ``clean_tvm_env``
    first drops the caller's ``TVM_*`` ones (except ``TVM_CACHE_DIR``). Captures output as text
    and never raises on failure."""
    full = dict(os.environ)
    if clean_tvm_env:
        full = {k: v for k, v in full.items() if not k.startswith("TVM_") or k == "TVM_CACHE_DIR"}
    full["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-W", "ignore", "-c", textwrap.dedent(code)],
        env=full,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
    )
