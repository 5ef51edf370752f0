"""The core wheel alone, in a new venv: `import tvm` works, imports no backend module, and CPU
tensors round-trip with NumPy (and PyTorch CPU tensors, when torch is importable here)."""

from __future__ import annotations

import subprocess
import sys
import tempfile

from wheel_venv import TORCH_CPU, wheelhouse_venv

CHECK = r"""
import sys
import numpy as np
import tvm
assert not [m for m in sys.modules if m.startswith("tvm_backend")], "a backend module was imported"
assert tvm.backend.list_backends() == [], tvm.backend.list_backends()
a = np.arange(12, dtype="float32").reshape(3, 4)
t = tvm.runtime.tensor(a)
assert (t.numpy() == a).all() and np.shares_memory(np.from_dlpack(t), np.from_dlpack(t))
v = tvm.runtime.from_dlpack(a)
assert np.from_dlpack(v).ctypes.data == a.ctypes.data, "DLPack import must not copy"
print("core alone: import tvm OK, no backend imported, NumPy DLPack round trip OK")
try:
    import torch
except ImportError:
    print("core alone: PyTorch DLPack round trip SKIPPED: torch is not installable here "
          "(no local CPU wheel torch==2.13.0+cpu)")
else:
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    tt = tvm.runtime.from_dlpack(x)
    assert tt.data_ptr() == x.data_ptr(), "torch -> tvm must not copy"
    y = torch.from_dlpack(tt)
    assert y.data_ptr() == x.data_ptr(), "tvm -> torch must not copy"
    z = torch.from_dlpack(tvm.runtime.tensor(a))
    assert torch.equal(z, torch.from_numpy(a))
    print("core alone: PyTorch CPU DLPack round trip OK (zero-copy both ways)")
"""


def main(wheelhouse: str) -> int:
    """Create the venv, install the core from the wheelhouse only, run the check."""
    with tempfile.TemporaryDirectory() as tmp:
        py = wheelhouse_venv(tmp, "venv", ["tvm"], wheelhouse)
        subprocess.run([py, "-m", "pip", "install", "-q", "--only-binary=:all:", TORCH_CPU], check=False)
        subprocess.run([py, "-c", CHECK], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
