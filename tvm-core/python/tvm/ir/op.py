"""``tvm.ir.Op``: an operator named the way Apache TVM registers it (``"tirx.call_extern"``), for
TVMScript that builds calls with ``T.Call(tvm.ir.Op.get(name), args, ret_ty=dtype)``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Op:
    """An operator by name; this project's calls name their operator with the string itself."""

    name: str

    @staticmethod
    def get(name: str) -> "Op":
        """The operator ``name`` (``"tir.call_extern"``, ``"tirx.tvm_call_packed"`` ...)."""
        if not isinstance(name, str) or not name:
            raise TypeError(f"tvm.ir.Op.get needs an operator name such as 'tir.call_extern', got {name!r}")
        return Op(name)

    @property
    def short_name(self) -> str:
        """The name without its ``tir.`` / ``tirx.`` prefix."""
        for prefix in ("tirx.", "tir."):
            if self.name.startswith(prefix):
                return self.name[len(prefix) :]
        return self.name
