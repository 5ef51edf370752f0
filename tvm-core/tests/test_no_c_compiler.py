"""A machine without a C compiler: the CPU target says what to install, and with the pip package
ziglang (the core's `cc` extra) it compiles and runs CPU kernels with nothing but pip."""

from __future__ import annotations

import importlib.util

import pytest

from tvm.testing import run_python

COMPILE_AND_RUN = """
import warnings
import numpy as np
import tvm
from tvm.contrib import cc
from tvm.script import tir as T

@T.prim_func
def add(A: T.Buffer((1000,), "float32"), B: T.Buffer((1000,), "float32"), C: T.Buffer((1000,), "float32")):
    for i in range(1000):
        C[i] = A[i] + B[i]

@T.prim_func
def scale(A: T.Buffer((1000,), "float32"), B: T.Buffer((1000,), "float32")):
    for i in T.parallel(1000):
        B[i] = A[i] * T.float32(3)

print("compiler:", " ".join(cc.compiler()))
a, b = np.arange(1000, dtype="float32"), np.full(1000, 2.0, "float32")
c = np.zeros(1000, "float32")
tvm.compile(add, target="c")["add"](a, b, c)
np.testing.assert_allclose(c, a + b)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    mod = tvm.compile(scale, target="c")
print("warned:", [str(w.message) for w in caught])
mod["scale"](a, c)
np.testing.assert_allclose(c, a * 3)
from tvm.testing import tunables  # a register tile: GCC vector extensions, which clang (zig cc) has too
mm = tvm.compile(tunables.matmul_cpu(32, 32, 16, 4, 8), target="c")
assert "floatx4_t acc[" in mm.inspect_source()
x, y, z = np.ones((32, 16), "float32"), np.full((16, 32), 2.0, "float32"), np.zeros((32, 32), "float32")
mm["matmul"](x, y, z)
np.testing.assert_allclose(z, x @ y)
print("ran OK")
"""


def run_script(tmp_path, prelude: str = "", timeout: int = 300):
    """COMPILE_AND_RUN from a file (TVMScript reads its source) in a fresh interpreter without a compiler."""
    script = tmp_path / "kernels.py"
    script.write_text(prelude + COMPILE_AND_RUN)
    return run_python(
        f"import runpy; runpy.run_path({str(script)!r}, run_name='__main__')",
        env=env_without_compiler(tmp_path),
        timeout=timeout,
    )


def env_without_compiler(tmp_path) -> dict[str, str]:
    """PATH holding no cc, gcc or clang, CC unset, a private compile cache."""
    empty = tmp_path / "bin"
    empty.mkdir()
    return {"PATH": str(empty), "CC": "", "TVM_CACHE_DIR": str(tmp_path / "cache")}


def test_cpu_target_without_a_compiler_says_what_to_install(tmp_path):
    proc = run_script(tmp_path, prelude="import sys; sys.modules['ziglang'] = None  # as if not installed\n")
    assert proc.returncode != 0
    assert "CompileError: no C compiler found" in proc.stderr, proc.stderr
    for hint in ("apt-get install gcc", "pip install ziglang", "set CC"):
        assert hint in proc.stderr, proc.stderr


@pytest.mark.skipif(
    importlib.util.find_spec("ziglang") is None, reason="the pip package ziglang is not installed (pip install ziglang)"
)
def test_cpu_kernels_compile_with_ziglang_alone(tmp_path):
    proc = run_script(tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "-m ziglang cc" in proc.stdout
    assert "no OpenMP runtime" in proc.stdout  # parallel loops still run, on one thread
    assert "ran OK" in proc.stdout


def test_cc_environment_variable_wins(tmp_path, monkeypatch):
    from tvm.contrib import cc

    monkeypatch.setenv("CC", "my-cc --flag")
    assert cc.compiler() == ["my-cc", "--flag"]


def test_a_compiler_without_an_openmp_runtime_runs_parallel_loops_on_one_thread(tmp_path):
    """CC=clang without libomp failed to link every kernel with a parallel loop ('cannot find
    -lomp'); whether -fopenmp links is asked of the compiler now."""
    import shutil

    clang = shutil.which("clang-19") or shutil.which("clang")
    if clang is None:
        pytest.skip("needs clang (apt-get install clang-19)")
    from tvm.contrib import cc

    links = cc._links_openmp((clang,))
    script = tmp_path / "kernels.py"
    script.write_text(COMPILE_AND_RUN)
    env = {"CC": clang, "TVM_CACHE_DIR": str(tmp_path / "cache")}
    proc = run_python(f"import runpy; runpy.run_path({str(script)!r}, run_name='__main__')", env=env)
    assert proc.returncode == 0 and "ran OK" in proc.stdout, proc.stdout + proc.stderr
    assert ("no OpenMP runtime" in proc.stdout) == (not links)
