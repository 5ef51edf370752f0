"""The example backend beyond the conformance suite (test_example_conformance.py): its device
and target detector, raw kernel handles, launch checks, plain tvm_ffi loading and what a
library says when the backend is missing."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import tvm
from tvm.testing import kernels as K
from tvm.testing import run_python

DEV = tvm.device("example")


def fresh(code: str, **env: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a new interpreter without the caller's TVM_* switches, plus ``env``."""
    return run_python(code, env, clean_tvm_env=True)


vadd = K.vector_add(block=64)


def test_backend_is_active_with_its_device():
    rec = {r.name: r for r in tvm.backend.list_backends()}["example"]
    assert rec.status == "active" and rec.distribution == "tvm-backend-example"
    assert rec.dso_path.endswith("tvm_backend_example/lib/libtvm_runtime_example.so")
    assert DEV.exist and DEV.max_threads_per_block == 256 and DEV.warp_size == 1
    target = tvm.target.detect_target_from_device(DEV)
    assert target.kind.name == "example" and target.attrs["max_num_threads"] == 256


def test_the_backends_own_intrinsic_compiles_and_runs():
    """``T.example.thread_count()`` (script.py) is printed by ``ExamplePrinter.call_example_thread_count``."""
    from tvm.script import tir as T

    @T.prim_func
    def threads(A: T.Buffer((96,), "int32")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for ty in T.thread_binding(3, thread="threadIdx.y"):
                for tx in T.thread_binding(16, thread="threadIdx.x"):
                    A[bx * 48 + ty * 16 + tx] = T.example.thread_count()

    a = tvm.runtime.tensor(np.zeros(96, "int32"), DEV)
    tvm.compile(threads, target="example")["threads"](a)
    np.testing.assert_array_equal(a.numpy(), np.full(96, 48))


def test_raw_kernel_takes_device_tensors_and_checks_them():
    kernel = tvm.compile(vadd, target="example").imports[0]["vector_add_kernel0"]
    a = np.arange(100, dtype="float32")
    A, C = tvm.runtime.tensor(a, DEV), tvm.runtime.empty((100,), "float32", DEV)
    kernel(A, A, C, 100, 2, 64)
    np.testing.assert_array_equal(C.numpy(), 2 * a)
    with pytest.raises(TypeError, match="argument 1 must be a buffer of float32, got a tensor of float64"):
        kernel(A, tvm.runtime.tensor(a.astype("float64"), DEV), C, 100, 2, 64)
    with pytest.raises(ValueError, match="argument 2 holds 10 elements, the kernel accesses 100"):
        kernel(A, A, tvm.runtime.empty((10,), "float32", DEV), 100, 2, 64)
    with pytest.raises(ValueError, match=r"argument 0 is a tensor on cpu:0, expected one on example"):
        kernel(tvm.runtime.tensor(a), A, C, 100, 2, 64)


def test_plain_tvm_ffi_load_module_after_backends_loaded(tmp_path):
    lib = tmp_path / "vadd.so"
    tvm.compile(vadd, target="example").export_library(str(lib))
    code = f"""
        import numpy as np, tvm, tvm_ffi
        mod = tvm_ffi.load_module({str(lib)!r})
        assert [m.kind for m in mod.imports] == ["example"]
        dev = tvm.device("example")
        a = np.arange(100, dtype="float32")
        A = tvm.runtime.tensor(a, dev)
        C = tvm.runtime.empty((100,), "float32", dev)
        mod["vector_add"](A, A, C)
        np.testing.assert_allclose(C.numpy(), 2 * a)
        print("ran")
    """
    r = fresh(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ran"


def test_missing_backend_is_named_when_loading(tmp_path):
    lib = tmp_path / "vadd.so"
    tvm.compile(vadd, target="example").export_library(str(lib))
    code = f"""
        import tvm
        from tvm.backend import _registry
        _registry.ensure_discovered()
        _registry._records.pop("example"); _registry._entry_points.pop("example")  # as if not installed
        try:
            tvm.runtime.load_module({str(lib)!r})
        except Exception as err:
            print(type(err).__name__, err)
    """
    r = fresh(code, TVM_DEVICE_BACKEND_AUTOLOAD="0")
    assert r.returncode == 0, r.stderr
    assert "example" in r.stdout and "vendor's backend wheel" in r.stdout, r.stdout


def _raw_module(tags):
    """A device module made directly through the backend's factory (no host wrapper)."""
    import tvm_ffi

    src = '__attribute__((visibility("default"))) int k(const void* a, const long* g, const long* b) { return 0; }'
    from tvm.contrib import cc

    payload = open(cc.compile_shared(src, name="rawk")[0], "rb").read()
    return tvm_ffi.get_global_func("ffi.Module.create.example")("so", [["k", ["handle"], tags]], payload, [])


def test_launch_values_are_checked():
    buf = tvm.runtime.empty((4,), "float32", DEV)
    with pytest.raises(ValueError, match="unknown launch tag 'blockIdx.a'"):
        _raw_module(["blockIdx.a"])
    m = _raw_module(["blockIdx.x", "threadIdx.x", "dyn_shmem"])
    with pytest.raises(ValueError, match="out of range"):
        m["k"](buf, 2**32 + 1, 1, 0)
    with pytest.raises(ValueError, match="out of range"):
        m["k"](buf, 1, 1, -1)
    with pytest.raises(ValueError, match="k: 2147483647 threads per block exceed the example device's 256"):
        m["k"](buf, 1, 2**31 - 1, 0)  # the real count (it read 1025 for any block past the limit)
    with pytest.raises(TypeError, match="expects 1 arguments and 3 launch parameters"):
        m["k"](buf, 1)
    m["k"](buf, 0, 64, 0)  # an empty launch (symbolic size 0) does nothing


def test_empty_symbolic_launch():
    mod = tvm.compile(vadd, target="example")
    a = tvm.runtime.empty((0,), "float32", DEV)
    mod["vector_add"](a, a, a)


BLOCK_REVERSE = """
import multiprocessing as mp
import sys

import numpy as np
import tvm
from tvm.script import tir as T


@T.prim_func
def twice(A: T.Buffer((1 << 20,), "float32"), B: T.Buffer((1 << 20,), "float32")):
    for i in T.parallel(1 << 20):
        B[i] = A[i] * T.float32(2)


@T.prim_func
def rev(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            S = T.alloc_buffer((64,), "float32", scope="shared")
            S[tx] = A[bx * 64 + tx]
            T.tvm_storage_sync("shared")
            B[bx * 64 + tx] = S[63 - tx]


def run():
    dev = tvm.device("example")
    a = np.arange(128, dtype="float32")
    b = tvm.runtime.empty((128,), "float32", dev)
    try:
        tvm.compile(rev, target="example")["rev"](tvm.runtime.tensor(a, dev), b)
    except RuntimeError as err:
        return str(err)
    return "ok" if (b.numpy() == a.reshape(2, 64)[:, ::-1].ravel()).all() else "WRONG"


if __name__ == "__main__":
    if sys.argv[1] == "fork":  # the parent runs a parallel CPU loop first
        x = np.ones(1 << 20, "float32")
        tvm.compile(twice, target="c")["twice"](x, np.empty_like(x))
    print("parent", run())
    if sys.argv[1] == "fork":
        with mp.get_context("fork").Pool(1) as pool:
            print("child", pool.apply_async(run).get(timeout=60))
"""


def _block_reverse(tmp_path, mode: str, **env: str) -> subprocess.CompletedProcess:
    import os
    import sys

    script = tmp_path / "block_reverse.py"
    script.write_text(BLOCK_REVERSE)
    full = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p), **env}
    return subprocess.run([sys.executable, str(script), mode], env=full, capture_output=True, text=True, timeout=120)


def test_a_block_whose_team_openmp_starts_short_is_refused(tmp_path):
    """A block meeting at barriers runs as an OpenMP team; where OpenMP starts fewer threads
    (OMP_THREAD_LIMIT) the kernel computed wrong values without a word."""
    r = _block_reverse(tmp_path, "limit", OMP_THREAD_LIMIT="8")
    assert r.returncode == 0, r.stderr
    assert "its blocks of 64 threads meet at barriers and run as an OpenMP team, but OpenMP started 8" in r.stdout


def test_a_child_forked_after_parallel_cpu_code_is_refused_not_hung(tmp_path):
    """A forked child inherits libgomp's pool without its threads: a barrier kernel hung there
    forever once the parent had run any parallel CPU loop."""
    r = _block_reverse(tmp_path, "fork")
    assert r.returncode == 0, r.stderr
    assert "parent ok" in r.stdout, r.stdout
    assert "OpenMP started 1" in r.stdout and "use the 'spawn' start method" in r.stdout, r.stdout


def test_kernels_are_loaded_from_tmpdir_and_no_scratch_is_left(tmp_path):
    """The kernel object was written to /tmp whatever TMPDIR said (a noexec /tmp broke the
    example device alone), and with the compile cache off each compile left its scratch folder."""
    code = (
        "import os, tempfile\n"
        "import numpy as np, tvm\n"
        "from tvm.testing import kernels as K\n"
        "dev = tvm.device('example', 0)\n"
        "a = tvm.runtime.tensor(np.arange(8, dtype='float32'), dev)\n"
        "b = tvm.runtime.empty((8,), 'float32', dev)\n"
        "tvm.compile(K.vector_add(), target='example')(a, a, b)\n"
        "print(b.numpy().tolist(), sorted(os.listdir(tempfile.gettempdir())))\n"
        "os.environ['TMPDIR'] = os.path.join(tempfile.gettempdir(), 'missing')\n"
        "try:\n"
        "    tvm.compile(K.vector_add(block=32), target='example')(a, a, b)\n"
        "except RuntimeError as err:\n"
        "    print(str(err).splitlines()[0])\n"
    )
    out = run_python(code, env={"TMPDIR": str(tmp_path), "TVM_CACHE_DIR": "off"})
    assert out.returncode == 0, out.stderr
    values, error = out.stdout.strip().splitlines()[-2:]
    assert values == f"{[2.0 * i for i in range(8)]} []"
    assert f"cannot create a temporary file {tmp_path}/missing/tvm_example_kernel" in error
