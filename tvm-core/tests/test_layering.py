"""Layering: loading and running an exported library needs the runtime only. `load_module`
imports nothing of the compiler (TIR, passes, code generation, the TVMScript parser), with
backend autoload on and off."""

from __future__ import annotations

import pytest

import tvm
from tvm.script import tir as T
from tvm.testing import run_python

COMPILER_PACKAGES = ("tvm.tir", "tvm.codegen", "tvm.driver", "tvm.script.parser", "tvm.transform", "tvm.contrib")


@T.prim_func
def add_one(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        B[i] = A[i] + T.float32(1)


@pytest.mark.parametrize("autoload", ["1", "0"])
def test_load_module_imports_no_compiler_module(tmp_path, private_cache, autoload):
    path = str(tmp_path / "add_one.so")
    tvm.compile(add_one, target="c").export_library(path)
    proc = run_python(
        f"""
        import sys
        import numpy as np
        import tvm
        mod = tvm.runtime.load_module({path!r})
        a = np.arange(16, dtype="float32")
        b = np.zeros(16, "float32")
        mod["add_one"](a, b)
        assert (b == a + 1).all(), b
        print("compiler modules:", sorted(m for m in sys.modules if m.startswith({COMPILER_PACKAGES!r})))
        """,
        env={"TVM_DEVICE_BACKEND_AUTOLOAD": autoload},
    )
    assert proc.returncode == 0, proc.stderr
    assert "compiler modules: []" in proc.stdout, proc.stdout
