"""The example backend end to end: activation, its device, codegen for thread-bound kernels
run on the CPU, the fallback, export and load in fresh processes."""

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
row_sum = K.row_sum(8, 64)
matmul = K.matmul_tiled(64, 64, 64, tile=8)


def test_backend_is_active_with_its_device():
    rec = {r.name: r for r in tvm.backend.list_backends()}["example"]
    assert rec.status == "active" and rec.distribution == "tvm-backend-example"
    assert rec.dso_path.endswith("tvm_backend_example/lib/libtvm_runtime_example.so")
    assert DEV.exist and DEV.max_threads_per_block == 256 and DEV.warp_size == 1
    target = tvm.target.detect_target_from_device(DEV)
    assert target.kind.name == "example" and target.attrs["max_num_threads"] == 256


@pytest.mark.parametrize("n", [1, 64, 1000, 4097])
def test_symbolic_vector_add(n):
    mod = tvm.compile(vadd, target="example")
    assert [m.kind for m in mod.imports] == ["example"]
    a, b = np.random.rand(n).astype("float32"), np.random.rand(n).astype("float32")
    A, B = tvm.runtime.tensor(a, DEV), tvm.runtime.tensor(b, DEV)
    C = tvm.runtime.empty((n,), "float32", DEV)
    mod["vector_add"](A, B, C)
    np.testing.assert_allclose(C.numpy(), a + b)


def test_shared_memory_reduction_with_barriers():
    mod = tvm.compile(row_sum, target="example")
    x = np.random.rand(8, 64).astype("float32")
    Y = tvm.runtime.empty((8,), "float32", DEV)
    mod["row_sum"](tvm.runtime.tensor(x, DEV), Y)
    np.testing.assert_allclose(Y.numpy(), x.sum(axis=1), rtol=1e-5)


def test_row_softmax():
    mod = tvm.compile(K.row_softmax(6, 100), target="example")
    x = np.random.randn(6, 100).astype("float32")
    Y = tvm.runtime.empty((6, 100), "float32", DEV)
    mod["row_softmax"](tvm.runtime.tensor(x, DEV), Y)
    np.testing.assert_allclose(Y.numpy(), K.reference_softmax(x), rtol=1e-5, atol=1e-7)


def test_tiled_matmul_shared_and_local():
    mod = tvm.compile(matmul, target="example")
    a, b = np.random.rand(64, 64).astype("float32"), np.random.rand(64, 64).astype("float32")
    C = tvm.runtime.empty((64, 64), "float32", DEV)
    mod["matmul_tiled"](tvm.runtime.tensor(a, DEV), tvm.runtime.tensor(b, DEV), C)
    np.testing.assert_allclose(C.numpy(), a @ b, rtol=1e-4)


def test_cpu_tensor_on_device_kernel_is_rejected():
    mod = tvm.compile(vadd, target="example")
    a = tvm.runtime.tensor(np.zeros(4, "float32"))
    with pytest.raises(Exception, match="device"):
        mod["vector_add"](a, a, a)


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
    with pytest.raises(ValueError, match="argument 0 is a tensor on another device than example"):
        kernel(tvm.runtime.tensor(a), A, C, 100, 2, 64)


def test_fallback_is_byte_identical_and_explains(monkeypatch):
    real = tvm.compile(row_sum, target="example").imports[0]
    monkeypatch.setenv("TVM_COMPILE_FORCE_FALLBACK", "1")
    fb_mod = tvm.compile(row_sum, target="example")
    fb = fb_mod.imports[0]
    assert fb.kind == real.kind == "example"
    assert fb.save_to_bytes() == real.save_to_bytes()
    assert "omp barrier" in fb.inspect_source() and fb.inspect_source() == real.inspect_source()
    x = tvm.runtime.tensor(np.zeros((8, 64), "float32"), DEV)
    y = tvm.runtime.empty((8,), "float32", DEV)
    with pytest.raises(RuntimeError, match="TVM_COMPILE_FORCE_FALLBACK"):
        fb_mod["row_sum"](x, y)


@pytest.mark.parametrize("force_fallback", ["0", "1"])
def test_export_then_load_in_fresh_process(tmp_path, force_fallback):
    lib = tmp_path / "row_sum.so"
    exporter = f"""
        import tvm
        from tvm.testing import kernels as K
        tvm.compile(K.row_sum(8, 64), target="example").export_library({str(lib)!r})
    """
    r = fresh(exporter, TVM_COMPILE_FORCE_FALLBACK=force_fallback)
    assert r.returncode == 0, r.stderr
    loader = f"""
        import numpy as np, tvm
        mod = tvm.runtime.load_module({str(lib)!r})
        assert [m.kind for m in mod.imports] == ["example"], mod.imports
        dev = tvm.device("example")
        x = np.random.rand(8, 64).astype("float32")
        y = tvm.runtime.empty((8,), "float32", dev)
        mod["row_sum"](tvm.runtime.tensor(x, dev), y)
        np.testing.assert_allclose(y.numpy(), x.sum(1), rtol=1e-5)
        print("ran")
    """
    r = fresh(loader, TVM_DEVICE_BACKEND_AUTOLOAD="0")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ran"


def test_runtime_unavailable_still_generates_code(tmp_path):
    code = """
        import warnings; warnings.simplefilter("ignore")
        import numpy as np, tvm
        from tvm.testing import kernels as K
        row_sum = K.row_sum(8, 64)
        rec = {r.name: r for r in tvm.backend.list_backends()}["example"]
        assert rec.status == "runtime unavailable", rec.status
        mod = tvm.compile(row_sum, target="example")
        dev = mod.imports[0]
        assert dev.kind == "example" and "omp barrier" in dev.inspect_source()
        try:
            dev.ffi_module.get_function("row_sum_kernel0")(0)
        except RuntimeError as err:
            print(err)
    """
    r = fresh(code, TVM_EXAMPLE_SIMULATE_NO_DRIVER="1")
    assert r.returncode == 0, r.stderr
    assert "example driver not found" in r.stdout and "Fix:" in r.stdout


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

    src = '__attribute__((visibility("default"))) void k(const void* a, const long* g, const long* b) {}'
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
    with pytest.raises(ValueError, match="threads per block"):
        m["k"](buf, 1, 2**31 - 1, 0)
    with pytest.raises(TypeError, match="expects 1 arguments and 3 launch parameters"):
        m["k"](buf, 1)
    m["k"](buf, 0, 64, 0)  # an empty launch (symbolic size 0) does nothing


def test_empty_symbolic_launch():
    mod = tvm.compile(vadd, target="example")
    a = tvm.runtime.empty((0,), "float32", DEV)
    mod["vector_add"](a, a, a)
