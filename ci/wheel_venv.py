"""Fresh virtual environments filled from the wheelhouse alone: what a user gets from
`pip install --no-index --find-links wheelhouse ...`, or from the same wheels served as a private
package index (`pip install --index-url http://127.0.0.1:<port>/simple/ ...`). Shared by the CI
checks and the import bench."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import urllib.request
import venv
from collections.abc import Iterator
from pathlib import Path

#: PyTorch's CPU build, installable only from a local wheel (the +cpu label never matches the
#: multi-GB CUDA builds on PyPI); where it is missing the PyTorch checks skip.
TORCH_CPU = "torch==2.13.0+cpu"


def wheelhouse_venv(
    base: str | Path, name: str, requirements: list[str], wheelhouse: str | Path = "", index_url: str = ""
) -> str:
    """Create ``base/name`` with ``requirements`` installed from ``wheelhouse`` (or from the package
    index at ``index_url``, and nowhere else); its python."""
    env_dir = Path(base) / name
    venv.create(env_dir, with_pip=True)
    py = str(env_dir / "bin" / "python")
    source = ["--index-url", index_url] if index_url else ["--no-index", "--find-links", str(wheelhouse)]
    subprocess.run([py, "-m", "pip", "install", "-q", *source, *requirements], check=True)
    return py


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def local_index(wheelhouse: str | Path, timeout: float = 30.0) -> Iterator[str]:
    """Serve ``wheelhouse`` as a PEP 503 index on 127.0.0.1 (pypiserver, no fallback to PyPI);
    yields its ``/simple/`` URL and stops the server on exit."""
    port = _free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pypiserver",
            "run",
            "-i",
            "127.0.0.1",
            "-p",
            str(port),
            "--disable-fallback",
            str(wheelhouse),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}/simple/"
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                urllib.request.urlopen(url, timeout=2).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    err = server.stderr.read().decode(errors="replace") if server.poll() is not None else ""
                    raise RuntimeError(f"the local package index did not start on {url}: {err[-2000:]}") from None
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
