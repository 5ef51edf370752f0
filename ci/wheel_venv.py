"""Fresh virtual environments filled from the wheelhouse alone (no index): what a user gets from
`pip install --no-index --find-links wheelhouse ...`. Shared by the CI checks and the import bench."""

from __future__ import annotations

import subprocess
import venv
from pathlib import Path

#: PyTorch's CPU build, installable only from a local wheel (the +cpu label never matches the
#: multi-GB CUDA builds on PyPI); where it is missing the PyTorch checks skip.
TORCH_CPU = "torch==2.13.0+cpu"


def wheelhouse_venv(base: str | Path, name: str, requirements: list[str], wheelhouse: str | Path) -> str:
    """Create ``base/name`` with ``requirements`` installed from ``wheelhouse``; its python."""
    env_dir = Path(base) / name
    venv.create(env_dir, with_pip=True)
    py = str(env_dir / "bin" / "python")
    subprocess.run([py, "-m", "pip", "install", "-q", "--no-index", "--find-links", str(wheelhouse),
                    *requirements], check=True)
    return py
