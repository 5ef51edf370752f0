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


def test_a_switch_that_is_no_switch_is_named_and_counts_as_unset():
    """TVM_DEVICE_BACKEND_AUTOLOAD=flase kept autoload on without a word; it is warned about now,
    naming the variable and the words a switch takes, as the C++ switches refuse it."""
    from tvm.testing import run_python

    code = (
        "import warnings\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    warnings.simplefilter('always')\n"
        "    import tvm\n"
        "from tvm._env import env_flag\n"
        "print([str(w.message) for w in seen if 'is not a switch' in str(w.message)])\n"
        "print(env_flag('TVM_COMPILE_FORCE_FALLBACK'), env_flag('TVM_X_ON', True), env_flag('TVM_X_OFF', True))\n"
    )
    env = {"TVM_DEVICE_BACKEND_AUTOLOAD": "flase", "TVM_X_ON": " YES ", "TVM_X_OFF": "Off"}
    out = run_python(code, env=env)
    assert out.returncode == 0, out.stderr
    warned, flags = out.stdout.strip().splitlines()[-2:]
    assert "TVM_DEVICE_BACKEND_AUTOLOAD='flase' is not a switch: use 1, true, yes or on" in warned
    assert flags == "False True False"


def test_a_switch_read_in_several_places_is_warned_about_once(monkeypatch):
    import warnings

    from tvm._env import env_flag

    monkeypatch.setenv("TVM_TEST_SWITCH_READ_TWICE", "maybe")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert env_flag("TVM_TEST_SWITCH_READ_TWICE") is False
        assert env_flag("TVM_TEST_SWITCH_READ_TWICE", True) is True
    assert [str(w.message) for w in seen].count(
        "TVM_TEST_SWITCH_READ_TWICE='maybe' is not a switch: use 1, true, yes or on, or 0, false, no or off; "
        "it counts as unset (off)"
    ) == 1
    assert len(seen) == 1


def test_strict_all_is_a_value_of_its_own_not_a_misspelled_switch(monkeypatch):
    import warnings

    from tvm.backend import _registry

    monkeypatch.setenv("TVM_BACKEND_STRICT", "all")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _registry.strict_mode() and _registry.strict_runtime()
