"""Libraries ``tvm.runtime.load_module`` did not write: one built for another machine is refused
by what it is, one linked for lazy binding that calls a function nothing defines is refused when
loaded (its first call of it ended the process), and one that registers global functions when
loaded is not loaded a second time (registering a name twice ended the process)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import tvm_ffi

import tvm
from tvm.contrib import cc
from tvm.runtime import library
from tvm.script import tir as T
from tvm.testing import run_python


@T.prim_func
def double(A: T.Buffer((4,), "float32")):
    for i in range(4):
        A[i] = A[i] * T.float32(2)


def _gcc(tmp_path: Path, name: str, source: str) -> Path:
    """``source`` built as a lazily bound shared library against tvm-ffi (the default link)."""
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        pytest.skip("no C compiler (gcc or cc) to build a library")
    src, out = tmp_path / f"{name}.c", tmp_path / f"{name}.so"
    src.write_text(source)
    ffi_lib = Path(tvm_ffi.__file__).parent / "lib"
    includes = [f"-I{d}" for d in cc.ffi_include_dirs()]
    subprocess.run(
        [gcc, "-shared", "-fPIC", *includes, str(src), "-o", str(out), f"-L{ffi_lib}", "-ltvm_ffi"],
        check=True,
        timeout=120,
        capture_output=True,
    )
    return out


def test_a_library_for_another_machine_is_named_as_such(tmp_path):
    path = tmp_path / "double.so"
    tvm.compile(double, "c").export_library(str(path))
    data = bytearray(path.read_bytes()[: -len(library.CHECKSUM_MAGIC) - 8])
    foreign = 62 if os.uname().machine == "aarch64" else 183  # EM_X86_64, EM_AARCH64
    data[18:20] = foreign.to_bytes(2, "little")
    path.write_bytes(bytes(data))
    library.append_checksum(str(path))
    with pytest.raises(library.ModuleLoadError, match=r"it is a library for (aarch64|x86_64), and this machine is"):
        tvm.runtime.load_module(str(path))


LAZY = r"""
#include <tvm/ffi/c_api.h>
extern int tvm_test_nowhere_defined(int);
int __tvm_ffi_run(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* ret) {
  ret->type_index = kTVMFFIInt;
  ret->v_int64 = tvm_test_nowhere_defined(1);
  return 0;
}
"""


def test_a_lazily_bound_library_calling_an_undefined_function_is_refused_when_loaded(tmp_path):
    lib = _gcc(tmp_path, "lazy", LAZY)
    with pytest.raises(library.UnresolvedSymbolError, match=r"calls the function 'tvm_test_nowhere_defined'"):
        tvm.runtime.load_module(str(lib))


REGISTERS = r"""
#include <tvm/ffi/c_api.h>
#include <string.h>
static int version(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* ret) {
  ret->type_index = kTVMFFIInt;
  ret->v_int64 = VERSION;
  return 0;
}
__attribute__((constructor)) static void register_version(void) {
  TVMFFIObjectHandle f;
  TVMFFIByteArray name = {"tvm_test_ext.version", strlen("tvm_test_ext.version")};
  TVMFFIFunctionCreate(NULL, version, NULL, &f);
  TVMFFIFunctionSetGlobal(&name, f, 0);
}
"""


def test_a_library_that_registers_globals_is_loaded_once(tmp_path):
    """tvm's own runtime loaded as a module, and a tvm-ffi extension rebuilt at its path, were
    loaded from private copies that registered their globals again: the process aborted."""
    first = _gcc(tmp_path, "ext", "#define VERSION 1\n" + REGISTERS)
    code = f"""
        import os, tvm, tvm_ffi
        from tvm.runtime import library
        tvm.runtime.load_module(tvm._lib.LIB_PATH)
        tvm.runtime.load_module({str(first)!r})
        tvm.runtime.load_module({str(first)!r})
        print("version", tvm_ffi.get_global_func("tvm_test_ext.version")())
        os.replace({str(first)!r} + ".v2", {str(first)!r})  # rebuilt (a new file at the path)
        try:
            tvm.runtime.load_module({str(first)!r})
        except library.ModuleLoadError as err:
            print("refused:", err)
    """
    second = _gcc(tmp_path, "ext2", "#define VERSION 2\n" + REGISTERS)
    shutil.copy(second, str(first) + ".v2")
    result = run_python(code)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "version 1" in result.stdout
    assert "changed since this process loaded it, and it registers global functions" in result.stdout


def test_a_backend_runtime_for_another_machine_is_named_as_such(tmp_path):
    """A backend's runtime DSO of another architecture was reported as "No such file or
    directory" with the fix "reinstall it"."""
    from tvm.backend.api import _foreign_library

    data = bytearray(Path(tvm._lib.LIB_PATH).read_bytes()[:4096])
    foreign = 62 if os.uname().machine == "aarch64" else 183
    data[18:20] = foreign.to_bytes(2, "little")
    (tmp_path / "libruntime.so").write_bytes(bytes(data))
    assert _foreign_library(tmp_path / "libruntime.so").startswith("a library for ")
    assert _foreign_library(Path(tvm._lib.LIB_PATH)) is None
