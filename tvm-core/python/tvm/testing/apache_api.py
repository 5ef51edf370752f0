"""The helpers Apache TVM's test files call on ``tvm.testing``, so such a file runs here as it is:
``assert_allclose``, ``device_enabled``, ``enabled_targets``, ``run_with_gpu_lock``,
``parameter``, ``fixture`` and ``main``. pytest is imported only by the helpers that need it."""

from __future__ import annotations

import sys
import threading
from typing import Any, Callable, Optional, Sequence

import numpy as np

from . import env

_TARGETS = ("llvm", "cuda", "rocm", "opencl", "vulkan", "metal", "webgpu", "hexagon")
_gpu_lock = threading.Lock()


def _as_numpy(value: Any) -> Any:
    return value.numpy() if hasattr(value, "numpy") and not isinstance(value, np.ndarray) else value


def assert_allclose(actual: Any, desired: Any, rtol: float = 1e-7, atol: float = 1e-7, verbose: bool = True) -> None:
    """``numpy.testing.assert_allclose`` that also takes tensors (read back with ``.numpy()``)."""
    actual, desired = _as_numpy(actual), _as_numpy(desired)
    np.testing.assert_allclose(actual, desired, rtol=rtol, atol=atol, verbose=verbose)


def device_enabled(target: Any) -> bool:
    """Whether a device for ``target`` (``"cuda"``, ``"llvm"``, a Target) is present here."""
    words = [] if hasattr(target, "kind") else str(target).split()
    if not hasattr(target, "kind") and not words:
        raise ValueError(f"device_enabled takes a target such as 'cuda' or 'llvm', got {target!r}")
    kind = target.kind.name if hasattr(target, "kind") else words[0]
    return True if kind in ("llvm", "c") else env.device_exists(kind)


def enabled_targets() -> list[tuple[str, Any]]:
    """(target, device) of each target kind whose device is present here (always ``llvm``)."""
    import tvm

    return [(kind, tvm.device(kind)) for kind in _TARGETS if device_enabled(kind)]


def run_with_gpu_lock(func: Callable[[], Any]) -> Any:
    """``func()``, one at a time among the threads of this process."""
    with _gpu_lock:
        return func()


def parameter(*values: Any, ids: Optional[Sequence[str]] = None) -> Any:
    """A pytest fixture taking each of ``values`` in turn: assign it to a module-level name, and
    every test with an argument of that name runs once per value."""
    import pytest

    def value(request: Any) -> Any:
        return request.param

    return pytest.fixture(params=list(values), ids=ids)(value)


def fixture(func: Optional[Callable[..., Any]] = None, *, cache_return_value: bool = False) -> Any:
    """A pytest fixture of ``func`` (computed anew for each test, whatever ``cache_return_value``
    says: a fresh value is always correct)."""
    import pytest

    return pytest.fixture(func) if func is not None else pytest.fixture


def main() -> None:
    """Runs the calling test file under pytest (``if __name__ == "__main__": tvm.testing.main()``)."""
    import pytest

    sys.exit(pytest.main([sys.modules["__main__"].__file__, *sys.argv[1:]]))


__all__ = [
    "assert_allclose",
    "device_enabled",
    "enabled_targets",
    "fixture",
    "main",
    "parameter",
    "run_with_gpu_lock",
]
