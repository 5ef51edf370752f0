"""`pip install "tvm[<backend>]"` from the wheelhouse alone, in a new venv per extra: the extra
pulls in the backend wheel and its third-party dependencies, the backend is discovered and
activated at `import tvm` (its runtime may be unavailable without hardware: then the reason is
recorded), and its code generator produces a module.

Checked for every first-party backend whose wheel is in the wheelhouse. For cuda this is the
proof that NVRTC comes from NVIDIA's pip package: the check compiles a kernel to a cubin with it.

Usage: python ci/check_extras.py WHEELHOUSE
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from wheel_venv import wheelhouse_venv

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


def check(wheelhouse: str, name: str) -> None:
    """Install tvm[name] from the wheelhouse into a fresh venv and run the checks there."""
    with tempfile.TemporaryDirectory() as tmp:
        py = wheelhouse_venv(tmp, "venv", [f"tvm[{name}]"], wheelhouse)
        subprocess.run([py, "-c", COMMON + PER_BACKEND[name], name], check=True)


def main(wheelhouse: str) -> int:
    """Check each extra whose backend wheel was built into the wheelhouse."""
    for name in PER_BACKEND:
        if not list(Path(wheelhouse).glob(f"tvm_backend_{name}-*.whl")):
            print(f"tvm[{name}]: SKIPPED: no tvm_backend_{name} wheel in {wheelhouse}")
            continue
        check(wheelhouse, name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
