"""`pip install "tvm[<backend>]"` from a private package index, as a user of one would: the
wheelhouse is served on 127.0.0.1 as a PEP 503 index (pypiserver, no fallback to PyPI) and each
extra is installed into a new venv with `--index-url`. The extra pulls in the backend wheel and
its third-party dependencies, the backend is discovered and activated at `import tvm` (its
runtime may be unavailable without hardware: then the reason is recorded), and its code
generator produces a module.

The core's extras must be exactly one per backend that exists, plus `all` (every backend), `bf16`
(ml_dtypes) and `cc` (a C compiler from pip); each is installed and checked, and `all` checks
every backend in one venv. For cuda this is the proof
that NVRTC comes from NVIDIA's pip package: the check compiles a kernel to a cubin with it.

Usage: python ci/check_extras.py WHEELHOUSE
"""

from __future__ import annotations

import concurrent.futures
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from lockstep import backend_names
from wheel_venv import local_index, wheelhouse_venv

COMMON = r"""
import sys
import tvm
name = sys.argv[1]
rec = tvm.backend._registry.get_record(name)
assert rec is not None, f"backend {name} was not discovered: {tvm.backend.report()}"
assert rec.status in (tvm.backend.ACTIVE, tvm.backend.RUNTIME_UNAVAILABLE), tvm.backend.report()
print(f"tvm[{name}]: backend {rec.distribution} {rec.version} is {rec.status}"
      + (f" ({rec.reason})" if rec.reason else ""))
"""

#: The core's extras that are not one backend each, and what proves each works.
OTHER_EXTRAS = {
    "bf16": r"""
import ml_dtypes, numpy as np, tvm
a = np.arange(8).astype(ml_dtypes.bfloat16)
assert (tvm.runtime.tensor(a).numpy() == a).all()
print("tvm[bf16]: bfloat16 tensors round-trip through ml_dtypes", ml_dtypes.__version__)
""",
    "cc": r"""
import os, tempfile
os.environ["PATH"] = tempfile.mkdtemp()  # no cc, gcc or clang
os.environ.pop("CC", None)
from tvm.contrib import cc
assert "ziglang" in " ".join(cc.compiler()), cc.compiler()
print("tvm[cc]: without a system compiler the CPU target uses", " ".join(cc.compiler()[1:]))
""",
}
NOT_BACKENDS = {"all", *OTHER_EXTRAS}

#: Any backend: its code generator turns the vector add into a device module with source.
GENERATES_CODE = r"""
from tvm.testing import kernels
mod = tvm.compile(kernels.vector_add(), target=name)
assert mod.imports and mod.imports[0].inspect_source(), f"no {name} code generated"
print(f"tvm[{name}]: {mod.imports[0].kind} code generated for vector add")
"""

#: Backend-specific checks, replacing GENERATES_CODE where a backend needs more proof.
PER_BACKEND = {
    "cuda": r"""
from importlib import metadata
from tvm_backend_cuda import nvrtc
nvrtc_dist = metadata.version("nvidia-cuda-nvrtc")
res = nvrtc.compile_cuda('extern "C" __global__ void k(float* x) { x[threadIdx.x] += 1.0f; }', arch="sm_80")
assert res.fmt == "cubin" and res.image[:4] == b"\x7fELF", "NVRTC produced no cubin"
print(f"tvm[cuda]: nvidia-cuda-nvrtc {nvrtc_dist} installed; NVRTC {nvrtc.version()} compiled a "
      f"{len(res.image)}-byte sm_80 cubin")
""",
    "opencl": r"""
from tvm.testing import kernels
mod = tvm.compile(kernels.vector_add(), target="opencl")
assert "__kernel" in mod.imports[0].inspect_source(), "no OpenCL C generated"
print("tvm[opencl]: OpenCL C generated for vector add")
""",
}


def core_extras(wheelhouse: Path) -> dict[str, list[str]]:
    """The core wheel's extras and the distributions each pulls in, read from its metadata."""
    (core,) = wheelhouse.glob("tvm-*.whl")
    with zipfile.ZipFile(core) as z:
        meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    extras: dict[str, list[str]] = {name: [] for name in re.findall(r"^Provides-Extra: (\S+)", meta, re.M)}
    for req, extra in re.findall(r'^Requires-Dist: ([^;]+); extra == "([^"]+)"', meta, re.M):
        extras[extra].append(re.split(r"[=<>!~ ]", req.strip())[0])
    return extras


def check_extra_names(extras: dict[str, list[str]]) -> None:
    """One extra per first-party backend folder, `all` naming every one, nothing else."""
    backends = backend_names()
    declared = sorted(set(extras) - NOT_BACKENDS)
    if declared != backends:
        raise SystemExit(f"the core's backend extras {declared} differ from the backends that exist {backends}")
    if sorted(extras["all"]) != [f"tvm-backend-{b}" for b in backends]:
        raise SystemExit(f"tvm[all] pulls in {extras['all']}, not every backend {backends}")


def check(index_url: str, extra: str, backends: list[str]) -> None:
    """Install tvm[extra] from the index into a fresh venv and check each of ``backends`` there
    (for an extra that is not a backend, its own check)."""
    with tempfile.TemporaryDirectory() as tmp:
        started = time.monotonic()
        py = wheelhouse_venv(tmp, "venv", [f"tvm[{extra}]"], index_url=index_url)
        print(f"tvm[{extra}]: installed from {index_url} in {time.monotonic() - started:.0f} s", flush=True)
        if extra in OTHER_EXTRAS:
            subprocess.run([py, "-c", OTHER_EXTRAS[extra]], check=True)
        for name in backends:
            subprocess.run([py, "-c", COMMON + PER_BACKEND.get(name, GENERATES_CODE), name], check=True)


def main(wheelhouse: str) -> int:
    """Serve the wheelhouse as an index and check every extra of the core against it."""
    house = Path(wheelhouse)
    extras = core_extras(house)
    check_extra_names(extras)
    jobs = [(extra, [extra]) for extra in sorted(set(extras) - NOT_BACKENDS)]
    jobs += [(extra, []) for extra in sorted(OTHER_EXTRAS)]
    jobs.append(("all", [d.removeprefix("tvm-backend-") for d in extras["all"]]))
    with local_index(house) as url:
        # two venvs at a time: each install is mostly waiting on one core (unpacking, byte-compiling)
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            for done in [pool.submit(check, url, extra, backends) for extra, backends in jobs]:
                done.result()  # the first failure raises here
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
