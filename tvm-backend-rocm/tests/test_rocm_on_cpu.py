"""Every conformance kernel's generated HIP, run on the CPU through the real runtime and the mock
HIP library (tests/hip_on_cpu.py), matches NumPy. What this proves: the kernels' indexing,
shared memory, barriers and arithmetic, and that the runtime packs each argument where the
kernel's own parameter types put it; what only an AMD GPU can show: wavefront behaviour,
memory-model effects, speed."""

from __future__ import annotations

import hip_on_cpu
import numpy as np
import pytest
import tvm
from tvm.testing import kernels
from tvm.testing.backend import random_array, tolerance
from tvm.testing.process import run_python

CASES = {
    **{
        f"vector_add_{d}": (lambda d=d: kernels.vector_add(d), d)
        for d in ("float32", "float16", "bfloat16", "int32", "int8", "int64", "float64")
    },
    "row_sum": (kernels.row_sum, "float32"),
    "row_softmax": (kernels.row_softmax, "float32"),
    "matmul_tiled": (kernels.matmul_tiled, "float32"),
}


def inputs_and_reference(name: str, dtype: str) -> tuple[list[np.ndarray], tuple, np.ndarray]:
    if name.startswith("vector_add"):
        a, b = random_array((1000,), dtype, 1), random_array((1000,), dtype, 2)
        return [a, b], ((1000,), dtype), a + b
    if name == "row_sum":
        a = random_array((7, 300), "float32")
        return [a], ((7,), "float32"), a.sum(axis=1)
    if name == "row_softmax":
        a = random_array((5, 200), "float32")
        return [a], ((5, 200), "float32"), kernels.reference_softmax(a)
    a, b = random_array((32, 48), "float32", 1), random_array((48, 16), "float32", 2)
    return [a, b], ((32, 16), "float32"), a @ b


@pytest.mark.parametrize("name", sorted(CASES))
def test_conformance_kernel_runs_on_the_cpu_and_matches_numpy(name, mock_hip, tmp_path):
    make, dtype = CASES[name]
    func = make()
    source = tvm.compile(func, target="rocm").imports[0].inspect_source("hip")
    emulator = hip_on_cpu.build(source, tmp_path)
    ins, (shape, out_dtype), expect = inputs_and_reference(name, dtype)
    for i, x in enumerate(ins):
        np.save(tmp_path / f"in{i}.npy", x.view("uint16") if dtype == "bfloat16" else x)
    host = "vector_add" if name.startswith("vector_add") else name
    make_expr = f"kernels.vector_add({dtype!r})" if host == "vector_add" else f"kernels.{host}()"
    proc = run_python(
        f"""
        import ctypes, numpy as np, tvm
        from tvm.testing import kernels
        mock = ctypes.CDLL({str(mock_hip)!r})
        assert mock.mock_add_emulator({str(emulator)!r}.encode())
        dev = tvm.device("rocm", 0)
        ins = [np.load({str(tmp_path)!r} + f"/in{{i}}.npy") for i in range({len(ins)})]
        if {dtype!r} == "bfloat16":
            import ml_dtypes
            ins = [x.view(ml_dtypes.bfloat16) for x in ins]
        mod = tvm.compile({make_expr}, target="rocm")
        args = [tvm.runtime.tensor(x, dev) for x in ins] + [tvm.runtime.empty({shape!r}, {out_dtype!r}, dev)]
        mod[{host!r}](*args)
        out = args[-1].numpy()
        np.save({str(tmp_path)!r} + "/out.npy", out.view("uint16") if {dtype!r} == "bfloat16" else out)
        """,
        env={"TVM_ROCM_LIBRARY": str(mock_hip)},
        clean_tvm_env=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = np.load(tmp_path / "out.npy")
    if dtype == "bfloat16":
        import ml_dtypes

        got = got.view(ml_dtypes.bfloat16)
    np.testing.assert_allclose(got.astype("float64"), np.asarray(expect).astype("float64"), **tolerance(dtype))


WAVE_KERNEL = """
from tvm.script import tir as T

@T.prim_func
def wave(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (64,), "float32")
    B = T.match_buffer(b, (4, 64), "float32")
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        B[0, tx] = T.rocm.warp_sum(A[tx])
        B[1, tx] = T.rocm.shfl_down(A[tx], 1)
        B[2, tx] = T.rocm.warp_max(A[tx], 8)
        B[3, tx] = T.Cast("float32", T.rocm.lane_id())
"""


def test_wavefront_intrinsics_run_on_the_cpu_as_on_a_wave32_gpu(mock_hip, tmp_path):
    """T.rocm on the emulator's 32-lane warps (a wave32 GPU such as gfx1100): segment sums and
    maxima, shuffles that keep their own value past the segment, lane ids."""
    source = tvm.compile(tvm.script.parse(WAVE_KERNEL), target="rocm -arch=gfx1100").imports[0].inspect_source("hip")
    emulator = hip_on_cpu.build(source, tmp_path)
    proc = run_python(
        f"""
        import ctypes, numpy as np, tvm
        mock = ctypes.CDLL({str(mock_hip)!r})
        assert mock.mock_add_emulator({str(emulator)!r}.encode())
        dev = tvm.device("rocm", 0)
        mod = tvm.compile(tvm.script.parse({WAVE_KERNEL!r}), target="rocm -arch=gfx1100")
        x = np.arange(64, dtype="float32") * 0.5
        a, b = tvm.runtime.tensor(x, dev), tvm.runtime.empty((4, 64), "float32", dev)
        mod["wave"](a, b)
        np.save({str(tmp_path / "out.npy")!r}, b.numpy())
        """,
        env={"TVM_ROCM_LIBRARY": str(mock_hip), "MOCK_HIP_ARCH": "gfx1100"},
        clean_tvm_env=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = np.load(tmp_path / "out.npy")
    x = np.arange(64, dtype="float32") * 0.5
    lanes = np.arange(64) % 32
    np.testing.assert_allclose(got[0], np.repeat([x[:32].sum(), x[32:].sum()], 32))
    np.testing.assert_array_equal(got[1], np.where(lanes < 31, np.roll(x, -1), x))
    np.testing.assert_array_equal(got[2], np.repeat(x.reshape(8, 8).max(axis=1), 8))
    np.testing.assert_array_equal(got[3], lanes.astype("float32"))


def run_on_wave32(mock_hip, tmp_path, funcs: list, body: str) -> str:
    """Build the gfx1100 HIP of ``funcs`` (zoo kernels) for the emulator, then run ``body`` (after
    ``dev``, ``zoo`` and NumPy are bound) in a fresh process on the mock HIP library; its output."""
    sources = [tvm.compile(f, target="rocm -arch=gfx1100").imports[0].inspect_source("hip") for f in funcs]
    emulators = [str(hip_on_cpu.build(src, tmp_path)) for src in sources]
    proc = run_python(
        f"""
        import ctypes, numpy as np, tvm
        from tvm.testing import kernels as zoo
        mock = ctypes.CDLL({str(mock_hip)!r})
        for lib in {emulators!r}:
            assert mock.mock_add_emulator(lib.encode())
        dev = tvm.device("rocm", 0)
        """
        + body,
        env={"TVM_ROCM_LIBRARY": str(mock_hip), "MOCK_HIP_ARCH": "gfx1100"},
        clean_tvm_env=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_apache_warp_shuffles_run_on_the_cpu_as_on_a_wave32_gpu(mock_hip, tmp_path):
    """Apache TVM's T.tvm_warp_shuffle, _up, _down and _xor through the wavefront helpers, in
    segments narrower than the wavefront, against NumPy (CUDA's rules: an xor partner in a
    later segment keeps its own value)."""
    dtypes = ["float32", "float16", "int8", "int64"]  # 8- and 16-bit values travel in 32 bits
    out = run_on_wave32(
        mock_hip,
        tmp_path,
        [kernels.warp_shuffles(d, name=f"shuffles_{d}") for d in dtypes],
        f"""
        for dtype in {dtypes!r}:
            mod = tvm.compile(zoo.warp_shuffles(dtype, name=f"shuffles_{{dtype}}"), target="rocm -arch=gfx1100")
            a = (np.random.default_rng(5).standard_normal(64) * 50).astype(dtype)
            b = tvm.runtime.empty((7, 64), dtype, dev)
            mod[f"shuffles_{{dtype}}"](tvm.runtime.tensor(a, dev), b)
            np.testing.assert_array_equal(b.numpy(), zoo.warp_shuffles_reference(a), err_msg=dtype)
        print("shuffles ok")
        """,
    )
    assert "shuffles ok" in out


def test_dynamic_shared_memory_runs_on_the_cpu(mock_hip, tmp_path):
    """The zoo's reversal through dynamic shared memory (the emulator could not build it)."""
    out = run_on_wave32(
        mock_hip,
        tmp_path,
        [kernels.reverse_in_dynamic_shared()],
        """
        mod = tvm.compile(zoo.reverse_in_dynamic_shared(), target="rocm -arch=gfx1100")
        a = np.arange(256, dtype="float32")
        b = tvm.runtime.empty((256,), "float32", dev)
        mod["reverse"](tvm.runtime.tensor(a, dev), b, 16)
        np.testing.assert_array_equal(b.numpy(), a.reshape(4, 64)[:, ::-1].reshape(-1))
        print("reversed")
        """,
    )
    assert "reversed" in out


DIVERGENT_SHUFFLE = """
from tvm.script import tir as T

@T.prim_func
def divergent(a: T.handle):
    A = T.match_buffer(a, (32,), "float32")
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        if tx < 16:
            A[tx] = T.rocm.shfl(A[tx], 20, 32)
"""


def test_a_failed_emulated_launch_says_why(mock_hip, tmp_path):
    """The mock HIP library reports the emulator's reason (here a shuffle that half the lanes
    never reach), not a bare launch failure."""
    out = run_on_wave32(
        mock_hip,
        tmp_path,
        [tvm.script.parse(DIVERGENT_SHUFFLE)],
        f"""
        mod = tvm.compile(tvm.script.parse({DIVERGENT_SHUFFLE!r}), target="rocm -arch=gfx1100")
        try:
            mod["divergent"](tvm.runtime.tensor(np.zeros(32, "float32"), dev))
            dev.sync()
        except Exception as err:
            print("raised:", err)
        """,
    )
    assert "raised:" in out and "deadlock" in out, out
