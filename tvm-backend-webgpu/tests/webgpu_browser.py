"""Runs WGSL kernels in headless Chromium's WebGPU (a uniquely named helper module of the WebGPU
test suite): a page served on 127.0.0.1 fetches the jobs, runs each with the browser's own WGSL
compiler and device, and posts the outputs back.

A job is built from a kernel's WGSL as the code generator emits it: the storage buffers in binding
order and the members of the scalar uniform are read off the shader's declarations, so the page
binds exactly what the runtime binds.
"""

from __future__ import annotations

import base64
import http.server
import json
import os
import re
import shutil
import signal
import socketserver
import struct
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

import numpy as np

PAGE = Path(__file__).parent / "browser" / "runner.html"
#: Debian's package of the browser (ci/apt-webgpu.txt).
PACKAGE = "chromium-headless-shell"
_STORAGE = re.compile(r"@binding\((\d+)\) var<storage, (read|read_write)> (\w+): array<[\w<>]+>;")
_MEMBER = re.compile(r"^  (\w+): (i32|u32|f32),$", re.M)
_UNIFORM_FORMAT = {"i32": "<i", "u32": "<I", "f32": "<f"}


def chromium() -> str | None:
    """The headless Chromium executable, or None."""
    return shutil.which("chromium-headless-shell") or shutil.which("chromium")


def dispatch_size(grid: tuple[int, int, int], most: int = 65535) -> list[int]:
    """The runtime's dispatch of ``grid``: itself when it fits, else folded (webgpu_module.cc)."""
    if all(g <= most for g in grid):
        return list(grid)
    total = grid[0] * grid[1] * grid[2]
    x = min(total, most)
    y = min(-(-total // x), most)
    return [x, y, -(-total // (x * y))]


def make_job(
    name: str,
    wgsl: str,
    arrays: dict[str, np.ndarray],
    scalars: dict[str, Any],
    output: str,
    workgroup: tuple[int, int, int],
    grid: tuple[int, int, int],
) -> dict[str, Any]:
    """A job for the page: ``arrays`` by buffer name (the output's initial contents included),
    ``scalars`` by parameter name, launched with ``workgroup`` threads over ``grid`` blocks."""
    bindings = sorted((int(k), var, access) for k, access, var in _STORAGE.findall(wgsl))
    names = [var for _, var, _ in bindings]
    members = _MEMBER.findall(wgsl)
    uniform = b"".join(struct.pack(_UNIFORM_FORMAT[t], scalars[m]) for m, t in members)
    return {
        "name": name,
        "wgsl": wgsl,
        "workgroup": list(workgroup),
        "dispatch": dispatch_size(grid),
        "buffers": [base64.b64encode(np.ascontiguousarray(arrays[n]).tobytes()).decode() for n in names],
        "uniform": base64.b64encode(uniform).decode() if members else None,
        "output": names.index(output),
        "read_only": [access == "read" for _, _, access in bindings],
        "needs_f16": "enable f16;" in wgsl,
        "needs_subgroups": "enable subgroups;" in wgsl,
    }


def decode_output(result: dict[str, Any], like: np.ndarray) -> np.ndarray:
    """The output bytes of a job's result as an array shaped like ``like``."""
    return np.frombuffer(base64.b64decode(result["output"]), like.dtype).reshape(like.shape)


def run_jobs(jobs: list[dict[str, Any]], timeout: float = 90.0) -> dict[str, Any]:
    """Serve the page and the jobs, run Chromium on it, and return the page's report; the browser
    process (and its children) is killed by its process id whatever happens."""
    done = threading.Event()
    report: dict[str, Any] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            if self.path == "/jobs":
                body, kind = json.dumps(jobs).encode(), "application/json"
            elif self.path == "/":
                body, kind = PAGE.read_bytes(), "text/html; charset=utf-8"
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:  # noqa: N802
            report.update(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(204)
            self.end_headers()
            done.set()

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    profile = tempfile.mkdtemp(prefix="tvm_webgpu_chromium_")
    log = open(os.path.join(profile, "stderr.txt"), "wb")  # noqa: SIM115 - closed below
    flags = ["--enable-unsafe-webgpu", f"--user-data-dir={profile}", "--headless"]
    if os.geteuid() == 0:
        flags.append("--no-sandbox")  # Chromium refuses to run as root with its sandbox
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    proc = subprocess.Popen([chromium(), *flags, url], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        if not done.wait(timeout):
            tail = Path(profile, "stderr.txt").read_bytes()[-2000:].decode(errors="replace")
            raise TimeoutError(f"Chromium posted no result within {timeout:.0f} s; its output ends:\n{tail}")
        return report
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the group started with the browser: it and its helpers
        except ProcessLookupError:
            pass
        proc.wait()
        log.close()
        server.shutdown()
        server.server_close()
        shutil.rmtree(profile, ignore_errors=True)
