"""``export_library``: one shared library holding host code and device modules, in the format
that :mod:`tvm.runtime.library` loads (see there)."""

from __future__ import annotations

import os
from typing import Any

import tvm_ffi

from tvm._cache import atomic_write, check_user_file, publish

from tvm.runtime.library import LIBRARY_BIN, append_checksum, pack_library_bin
from tvm.runtime.module import Module


def _c_array(name: str, data: bytes) -> str:
    lines = [f'__attribute__((visibility("default"), aligned(8))) const unsigned char {name}[{len(data)}] = {{']
    step = 24
    for i in range(0, len(data), step):
        lines.append(",".join(str(b) for b in data[i : i + step]) + ",")
    lines.append("};")
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- export


def _collect(mod: tvm_ffi.Module, modules: list, children: list) -> int:
    idx = len(modules)
    modules.append((mod.kind, bytes(tvm_ffi.get_global_func("runtime.ModuleSaveToBytes")(mod))))
    children.append([])
    for sub in mod.imports:
        children[idx].append(_collect(sub, modules, children))
    return idx


def _device_tree(device_modules: list[tvm_ffi.Module]) -> tuple[list, list]:
    """The import tree of a host library (module 0) with ``device_modules`` as its children."""
    modules: list = [("_lib", b"")]
    children: list = [[]]
    for dm in device_modules:
        children[0].append(_collect(dm, modules, children))
    return modules, children


def export_library(module: Module, path: str, **kwargs: Any) -> None:
    """Write ``module`` (from :func:`tvm.compile`) as one shared library at ``path``.

    The host C is compiled to an object file (cached) and linked with a generated C file that
    defines the embedded device modules, and a checksum trailer is appended, which
    ``load_module`` checks. A module that was itself loaded from a library is copied. The library
    is written under a private name and then renamed into place, so a reader of ``path`` (another
    process loading it, another export to it) sees the old file or the complete new one.
    """
    options = _link_options(kwargs)
    info = getattr(module, "_build_info", None)
    path = os.fspath(path)
    check_user_file(path)
    if info is None or not getattr(info, "host_source", None):
        data = getattr(info, "lib_bytes", None)
        if data is None:
            raise ValueError(
                "export_library: this module was not produced by tvm.compile or "
                "tvm.runtime.load_module, so there is no library to export"
            )
        atomic_write(path, data)  # what was loaded, not what is there now
        return
    publish(path, lambda tmp: _link(module, info, tmp, options))


#: Apache TVM's export_library arguments accepted without effect: the folder for scratch files
#: (this export makes its own and removes it)
_IGNORED_EXPORT_ARGS = ("workspace_dir",)


def _link_options(kwargs: dict[str, Any]) -> list[str]:
    """The extra compiler and linker options of ``export_library``'s ``options`` (a list, or one
    string split as a shell would); a TypeError for arguments it does not take."""
    if "fcompile" in kwargs:
        raise TypeError(
            "export_library(fcompile=...) is not supported: the library is linked by the host C compiler "
            "(CC, else cc, gcc or clang); pass compiler options with options=[...]"
        )
    unknown = sorted(set(kwargs) - {"options", *_IGNORED_EXPORT_ARGS})
    if unknown:
        raise TypeError(f"export_library() got unexpected argument(s) {', '.join(unknown)} (it takes options=[...])")
    options = kwargs.get("options", ())
    if isinstance(options, str):
        import shlex

        options = shlex.split(options)
    options = list(options)
    bad = [o for o in options if not isinstance(o, str)]
    if bad:
        raise TypeError(f"export_library(options=...) takes strings (compiler options), got {bad[0]!r}")
    return options


def _link(module: Module, info: Any, path: str, extra: list) -> None:
    """Link the library of ``module`` at ``path`` and append its checksum."""
    from tvm.contrib import cc

    host_obj = cc.compile_object(info.host_source, openmp=info.openmp, mcpu=info.mcpu, extra_flags=extra)
    sources = {}
    # a module not loaded yet (see Module.is_loaded) has its device modules only in ``info``
    device_modules = list(module.ffi_module.imports) if module.is_loaded else info.device_modules
    if device_modules:
        sources["devc.c"] = _c_array(LIBRARY_BIN, pack_library_bin(*_device_tree(device_modules)))
    try:
        cc.create_shared(
            path,
            sources,
            objects=[host_obj],
            openmp=info.openmp,
            mcpu=info.mcpu,
            extra_flags=extra,
            late_bound=info.extern_functions,
        )
    finally:
        cc.discard_scratch(host_obj)
    append_checksum(path)
