"""Hexagon code generation: the C shape of a kernel (a loop or a thread team), HVX, the
toolchain's errors and cache, and math and integer semantics checked against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm.contrib.cc import CompileError
from tvm.script import tir as T
from tvm.testing import kernels
from tvm_backend_hexagon import toolchain


def source_of(func, target: str = "hexagon") -> str:
    return tvm.compile(func, target=target).imports[0].inspect_source()


def test_threads_without_barriers_are_a_loop_and_with_barriers_a_team():
    plain = source_of(kernels.vector_add())
    # the thread binding is a loop that stops where the guard would fail, instead of testing it
    assert "int64_t hi_ = (int64_t)(n) - (int64_t)((bx * 64));" in plain
    assert "for (int32_t tx = 0; tx < end_; ++tx) {" in plain and "+ tx) < n)" not in plain
    assert '{"vector_add_kernel0", vector_add_kernel0, 2}' in plain
    team = source_of(kernels.row_sum())
    assert "const int32_t tx_ = (int32_t)(tid_ % block[0]);" in team
    assert "static __attribute__((aligned(128))) float red" in team  # shared memory every thread sees
    assert '{"row_sum_kernel0", row_sum_kernel0, 1}' in team


@T.prim_func
def work_outside_the_threads(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (256,), "float32")
    B = T.match_buffer(b, (4,), "float32")
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        B[bx] = B[bx] + T.float32(1)  # every thread of the block does this
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            A[bx * 64 + tx] = A[bx * 64 + tx] + T.float32(2)


def test_work_outside_the_thread_bindings_runs_once_per_thread(dev):
    source = source_of(work_outside_the_threads)
    assert "for (int32_t tx_ = 0; tx_ < nx_; ++tx_) {" in source  # one loop around the whole body
    a, b = tvm.runtime.tensor(np.zeros(256, "float32"), dev), tvm.runtime.tensor(np.zeros(4, "float32"), dev)
    tvm.compile(work_outside_the_threads, target="hexagon")["work_outside_the_threads"](a, b)
    np.testing.assert_array_equal(a.numpy(), np.full(256, 2, "float32"))
    np.testing.assert_array_equal(b.numpy(), np.full(4, 64, "float32"))


@T.prim_func
def add_vectorized(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (4096,), "int32")
    B = T.match_buffer(b, (4096,), "int32")
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for i in T.vectorized(1024):
            B[bx * 1024 + i] = A[bx * 1024 + i] * 3 + 7


def test_vectorized_loops_ask_for_hvx_and_hvx_0_builds_scalar_code(dev):
    with_hvx = tvm.compile(add_vectorized, target="hexagon")
    without = tvm.compile(add_vectorized, target="hexagon -hvx=0")
    assert "#pragma clang loop vectorize(enable)" in with_hvx.imports[0].inspect_source()
    # same source, different machine code: clang used HVX in one of them
    assert with_hvx.imports[0].save_to_bytes() != without.imports[0].save_to_bytes()
    x = np.arange(4096, dtype="int32") - 2000
    for mod in (with_hvx, without):
        a, b = tvm.runtime.tensor(x, dev), tvm.runtime.empty((4096,), "int32", dev)
        mod["add_vectorized"](a, b)
        np.testing.assert_array_equal(b.numpy(), x * 3 + 7)


def test_hvx_builds_keep_loops_left_early_scalar():
    """HVX code for a loop left by `break` loses lanes under qemu-hexagon 7.2; the vectorizer's
    early-exit mode is off in HVX builds (test_while_break_and_continue runs such a loop)."""
    assert "-enable-early-exit-vectorization=false" in toolchain.compile_flags(hvx=128)
    assert "-enable-early-exit-vectorization=false" not in toolchain.compile_flags(hvx=0)


def test_an_unsupported_hvx_length_is_refused():
    with pytest.raises(ValueError, match="hvx=64"):
        tvm.compile(kernels.vector_add(), target="hexagon -hvx=64")
    with pytest.raises(ValueError, match=r"hexagon target: hvx='abc' is not supported \(128 for HVX"):
        tvm.compile(kernels.vector_add(), target="hexagon -hvx=abc")


def test_without_ziglang_code_generation_works_and_launching_says_what_to_install(monkeypatch, dev):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ziglang" else real(name, *a))
    with pytest.raises(CompileError, match=r"pip install 'ziglang==0\.17\.1'"):
        toolchain.zig_command()
    with pytest.warns(RuntimeWarning, match="ziglang"):
        mod = tvm.compile(kernels.vector_add(name="no_zig"), target="hexagon")
    assert "no_zig_kernel0" in mod.imports[0].inspect_source()
    a = tvm.runtime.empty((8,), "float32", dev)
    with pytest.raises(RuntimeError, match=r"no executable.*pip install 'ziglang==0\.17\.1'"):
        mod["no_zig"](a, a, a)


def test_compiler_errors_show_the_log():
    with pytest.raises(CompileError, match="(?s)compiling for hexagon failed.*undeclared"):
        toolchain.build_executable("int f(void) { return undeclared_name; }\n", toolchain.compile_flags())


def test_a_second_build_comes_from_the_cache_and_a_corrupt_entry_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path))
    first = tvm.compile(kernels.vector_add(name="cached"), target="hexagon").imports[0].save_to_bytes()
    (entry,) = (tmp_path / "hexagon").glob("*/*.elf")
    monkeypatch.setattr(toolchain, "_compile", lambda *a: pytest.fail("compiled again despite the cache"))
    assert tvm.compile(kernels.vector_add(name="cached"), target="hexagon").imports[0].save_to_bytes() == first
    entry.write_bytes(entry.read_bytes()[:100])  # truncated: fails its integrity check
    monkeypatch.undo()
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path))
    assert tvm.compile(kernels.vector_add(name="cached"), target="hexagon").imports[0].save_to_bytes() == first


@T.prim_func
def math_f32(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (8, 64), "float32")
    B = T.match_buffer(b, (8, 64), "float32")
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            B[0, tx] = T.exp(A[0, tx])
            B[1, tx] = T.log(T.fabs(A[0, tx]) + T.float32(1))
            B[2, tx] = T.sqrt(T.fabs(A[0, tx]))
            B[3, tx] = T.sin(A[0, tx])
            B[4, tx] = T.tanh(A[0, tx])
            B[5, tx] = T.pow(T.fabs(A[0, tx]), T.float32(1.5))
            B[6, tx] = T.erf(A[0, tx])
            B[7, tx] = T.floor(A[0, tx] * T.float32(3))


def test_math_functions_match_numpy(dev):
    from math import erf

    x = np.random.default_rng(0).standard_normal((8, 64)).astype("float32")
    a, b = tvm.runtime.tensor(x, dev), tvm.runtime.empty((8, 64), "float32", dev)
    tvm.compile(math_f32, target="hexagon")["math_f32"](a, b)
    v = x[0].astype("float64")
    expect = [
        np.exp(v),
        np.log(np.abs(v) + 1),
        np.sqrt(np.abs(v)),
        np.sin(v),
        np.tanh(v),
        np.abs(v) ** 1.5,
        [erf(t) for t in v],
        np.floor(v * 3),
    ]
    np.testing.assert_allclose(b.numpy(), np.array(expect), rtol=2e-6, atol=2e-6)


@T.prim_func
def int_semantics(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (64,), "int64")
    B = T.match_buffer(b, (64,), "int64")
    C = T.match_buffer(c, (3, 64), "int64")
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            C[0, tx] = T.floordiv(A[tx], B[tx])
            C[1, tx] = T.floormod(A[tx], B[tx])
            C[2, tx] = A[tx] * B[tx]


def test_64_bit_integer_division_follows_python(dev):
    """64-bit division and multiplication need compiler-rt on a 32-bit DSP."""
    rng = np.random.default_rng(1)
    x = rng.integers(-(10**12), 10**12, 64)
    y = rng.integers(1, 10**6, 64) * rng.choice([-1, 1], 64)
    a, b, c = tvm.runtime.tensor(x, dev), tvm.runtime.tensor(y, dev), tvm.runtime.empty((3, 64), "int64", dev)
    tvm.compile(int_semantics, target="hexagon")["int_semantics"](a, b, c)
    np.testing.assert_array_equal(c.numpy(), np.stack([x // y, x % y, x * y]))


def test_a_kernel_with_more_arguments_than_the_simulator_takes_is_refused():
    """The simulator's server takes 256 arguments a launch: a kernel with 257 compiled and then
    ended the server with an error that named out-of-bounds accesses instead."""
    params = ", ".join(f"A{i}: T.Buffer((4,), 'float32')" for i in range(257))
    body = "\n".join(f"            A{i}[t] = A{i}[t] + T.float32(1)" for i in range(257))
    source = f"""
@T.prim_func
def many({params}):
    for b in T.thread_binding(1, thread="blockIdx.x"):
        for t in T.thread_binding(4, thread="threadIdx.x"):
{body}
"""
    with pytest.raises(Exception, match="takes 257 arguments; target 'hexagon' allows at most 256"):
        tvm.compile(tvm.script.parse(source), target="hexagon")
