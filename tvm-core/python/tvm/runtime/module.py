"""Runtime modules: what ``tvm.compile`` returns and ``tvm.runtime.load_module`` brings back."""

from __future__ import annotations

from typing import Any

import tvm_ffi


class Module:
    """A runtime module: call its functions with tensors; see also ``export_library``."""

    def __init__(self, mod: tvm_ffi.Module, build_info: Any = None):
        self._mod = mod
        self._build_info = build_info

    @property
    def ffi_module(self) -> tvm_ffi.Module:
        """The underlying tvm-ffi module."""
        return self._mod

    @property
    def kind(self) -> str:
        """Module kind: ``library`` for host code, ``cuda``/``opencl``/... for device code."""
        return self._mod.kind

    @property
    def imports(self) -> list["Module"]:
        """Imported (device) modules."""
        return [Module(m) for m in self._mod.imports]

    def inspect_source(self, fmt: str = "") -> str:
        """Generated source of this module (for host libraries: the generated C)."""
        if self._build_info is not None and getattr(self._build_info, "host_source", None) and fmt in ("", "c"):
            return self._build_info.host_source
        return self._mod.inspect_source(fmt)

    def get_function(self, name: str, query_imports: bool = False) -> tvm_ffi.Function:
        """The function ``name`` (raises AttributeError naming it when missing)."""
        return self._mod.get_function(name, query_imports)

    def __getitem__(self, name: str) -> tvm_ffi.Function:
        return self.get_function(name)

    def __getattr__(self, name: str) -> tvm_ffi.Function:
        if name.startswith("_"):
            raise AttributeError(name)
        func = self.get_function(name)
        self.__dict__[name] = func
        return func

    def __call__(self, *args: Any) -> Any:
        return self._mod(*args)

    def save_to_bytes(self) -> bytes:
        """Serialized bytes of a binary-serializable (device) module."""
        return bytes(tvm_ffi.get_global_func("runtime.ModuleSaveToBytes")(self._mod))

    def export_library(self, path: str, **kwargs: Any) -> None:
        """Write a shared library holding the host code and embedded device modules."""
        from tvm.driver import export

        export.export_library(self, path, **kwargs)

    def __repr__(self) -> str:
        return f"Module(kind={self.kind!r}, imports={[m.kind for m in self._mod.imports]})"


def load_module(path: str) -> Module:
    """Load a library written by ``export_library`` (activating the backends it needs)."""
    from tvm.driver import export

    return export.load_module(path)
