"""``tvm.nd``: the name Apache TVM gave its tensors before ``tvm.runtime.tensor`` (older scripts
call ``tvm.nd.array(np_array, dev)``); the same functions under the older names."""

from __future__ import annotations

from typing import Any

from .runtime import Tensor as NDArray
from .runtime import empty, from_dlpack
from .runtime import tensor as array

__all__ = ["NDArray", "array", "empty", "from_dlpack"]


def __getattr__(name: str) -> Any:
    raise AttributeError(
        f"module 'tvm.nd' has no attribute '{name}': tvm.nd keeps only array, empty, from_dlpack and "
        f"NDArray; use tvm.runtime (tvm.runtime.tensor, tvm.runtime.empty, tvm.runtime.Tensor)"
    )
