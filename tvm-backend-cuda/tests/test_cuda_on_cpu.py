"""The GPU tests' kernels, run without a GPU and compared with NumPy.

Each test runs in a fresh process against the mock libcuda.so.1 (see test_cuda_mock_driver.py):
our code generator's CUDA C is compiled to a cubin by NVRTC and loaded by the real
libtvm_runtime_cuda as on a GPU, and the mock runs each launch through a CPU build of the same
CUDA C (cuda_on_cpu.py and the kit's tvm/testing/gpu_on_cpu.h). What this proves: the generated kernels'
indexing, shared memory, barriers, warp collectives and float16/bfloat16 conversions, the
runtime's argument packing and launch extents, and the host code of ``tvm.compile``. What it
cannot: anything of the GPU itself (PTX semantics, the memory model, timing); test_cuda_gpu.py
runs the same kernels on a real GPU when one is present.
"""

from __future__ import annotations


import pytest

from cuda_helpers import find_cxx, run_python, run_with_mock_driver
from tvm_backend_cuda import nvrtc

pytestmark = [
    pytest.mark.skipif(not nvrtc.available(), reason="NVRTC not installed (pip install nvidia-cuda-nvrtc)"),
    pytest.mark.skipif(
        find_cxx() is None, reason="no C++ compiler (c++/g++) to build the CPU emulation of the kernels"
    ),
]

PRELUDE = '''
import ctypes, numpy as np, tvm, tvm_ffi
import cuda_kernels as kernels, cuda_on_cpu
from tvm_backend_cuda import codegen

MOCK = ctypes.CDLL("libcuda.so.1")
MOCK.mock_add_emulator.argtypes = [ctypes.c_char_p]
dev = tvm.cuda(0)
target = tvm.target.detect_target_from_device(dev)

def emulate(mod):
    """Register a CPU build of the CUDA C in ``mod`` (a cuda module or one that imports one)."""
    todo, found = [mod], False
    while todo:
        m = todo.pop()
        if m.kind == "cuda":
            lib = cuda_on_cpu.build(m.inspect_source("cuda"), {emu_dir!r})
            assert MOCK.mock_add_emulator(str(lib).encode()), lib
            found = True
        todo.extend(m.imports)
    assert found, "no cuda module to emulate"
    return mod
'''


def emulated_run(mock_driver_dir, body: str) -> str:
    prelude = PRELUDE.format(emu_dir=str(mock_driver_dir))
    return run_with_mock_driver(mock_driver_dir, prelude + body, timeout=600)


def test_kernels_match_numpy(mock_driver_dir) -> None:
    out = emulated_run(
        mock_driver_dir,
        """
for name, case in sorted(kernels.all_cases().items()):
    got, want = case.run(emulate(codegen.build([case.func], target)), dev)
    np.testing.assert_allclose(got.astype("float32"), want.astype("float32"), rtol=case.rtol, atol=case.rtol,
                               err_msg=name)
    print(name, "ok")
""",
    )
    import cuda_kernels

    assert out.split() == [w for name in sorted(cuda_kernels.all_cases()) for w in (name, "ok")]


def test_tvm_compile_host_code_launches_the_kernels(mock_driver_dir) -> None:
    out = emulated_run(
        mock_driver_dir,
        """
import cuda_script_kernels as script_kernels
mod = emulate(tvm.compile(script_kernels.vadd, target=target))
a, b = np.random.rand(1000).astype("float32"), np.random.rand(1000).astype("float32")
x, y, z = tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev), tvm.runtime.empty((1000,), "float32", dev)
mod["vadd"](x, y, z)
np.testing.assert_allclose(z.numpy(), a + b, rtol=1e-6)
mod = emulate(tvm.compile(script_kernels.warp_reduce, target=target))
a = np.random.rand(64, 32).astype("float32")
x, z = tvm.runtime.tensor(a, dev), tvm.runtime.empty((64,), "float32", dev)
mod["warp_reduce"](x, z)
np.testing.assert_allclose(z.numpy(), a.sum(axis=1), rtol=1e-5)
print("ok")
""",
    )
    assert out.strip() == "ok"


@pytest.mark.parametrize(
    "env",
    [{"TVM_COMPILE_FORCE_FALLBACK": "1"}, {"TVM_COMPILE_FORCE_FALLBACK": "1", "TVM_CUDA_NVRTC": "none"}],
    ids=["cubin", "cu-source"],
)
def test_library_exported_without_driver_runs(tmp_path, env, mock_driver_dir) -> None:
    lib = tmp_path / "warp_reduce.so"
    out = run_python(
        f"""
import tvm
from cuda_script_kernels import warp_reduce
mod = tvm.compile(warp_reduce, target="cuda -arch=sm_90")
mod.export_library({str(lib)!r})
""",
        env=env,
    )
    assert out.returncode == 0, out.stderr
    out = emulated_run(
        mock_driver_dir,
        f"""
m = emulate(tvm.runtime.load_module({str(lib)!r}))
a = np.random.rand(64, 32).astype("float32")
x, z = tvm.runtime.tensor(a, dev), tvm.runtime.empty((64,), "float32", dev)
m["warp_reduce"](x, z)
print(np.allclose(z.numpy(), a.sum(axis=1), rtol=1e-5))
""",
    )
    assert out.strip() == "True"


def test_divergent_barrier_is_an_error_not_a_hang(mock_driver_dir) -> None:
    out = emulated_run(
        mock_driver_dir,
        """
(x, X), = [kernels.buf("X", "float32")]
tx = tvm.tir.Var("tx")
# lanes 0-15 shuffle with a full-warp mask while lanes 16-31 wait at __syncthreads
body = kernels.thread(tx, 32, "threadIdx.x", tvm.tir.IfThenElse(
    tx < 16, tvm.tir.BufferStore(X, kernels.cuda.shfl_sync(X[tx], 0), (tx,)), kernels.sync()))
f = kernels.kernel("divergent", [x], {x: X}, body, ["threadIdx.x"])
mod = emulate(codegen.build([f], target))
t = tvm.runtime.tensor(np.zeros(32, "float32"), dev)
try:
    mod["divergent"](t, 32)
    dev.sync()
except Exception as e:
    print(type(e).__name__, e)
""",
    )
    assert "CUDA_ERROR_LAUNCH_FAILED" in out and "deadlock" in out, out


def test_tensor_core_kernels_match_numpy(mock_driver_dir) -> None:
    """ldmatrix, mma.m16n8k16 and the cp.async pipeline as printed in CUDA C, every GEMM tiling
    of test_cuda_tensorcore.py, through tvm.compile's host code."""
    out = emulated_run(
        mock_driver_dir,
        """
from test_cuda_tensorcore import CONFIGS, mma_tile, rand_f16
from tvm_backend_cuda.kernels import matmul_f16_tensorcore
rng = np.random.default_rng(4)
mod = emulate(tvm.compile(mma_tile, target=target))
A, B = rand_f16(rng, (16, 16)), rand_f16(rng, (16, 8))
c = tvm.runtime.empty((16, 8), "float32", dev)
mod["mma_tile"](tvm.runtime.tensor(A, dev), tvm.runtime.tensor(B, dev), c)
np.testing.assert_allclose(c.numpy(), A.astype(np.float32) @ B.astype(np.float32), rtol=1e-5, atol=1e-5)
print("mma_tile ok")
for name, (M, N, K, kw) in sorted(CONFIGS.items()):
    mod = emulate(tvm.compile(matmul_f16_tensorcore(M, N, K, **kw), target=target))
    A, B = rand_f16(rng, (M, K)), rand_f16(rng, (K, N))
    c = tvm.runtime.empty((M, N), "float16", dev)
    mod["matmul_f16_tc"](tvm.runtime.tensor(A, dev), tvm.runtime.tensor(B, dev), c)
    a64, b64 = A.astype(np.float64), B.astype(np.float64)
    want = (a64 @ b64).astype(np.float16)
    # one float16 rounding plus the float32 accumulation's error bound (K steps of 2^-24)
    bound = np.spacing(np.abs(want)).astype(np.float64) + K * 2.0 ** -24 * (np.abs(a64) @ np.abs(b64))
    err = np.abs(c.numpy().astype(np.float64) - want.astype(np.float64))
    assert np.all(err <= bound), (name, float((err - bound).max()))
    print(name, "ok")
""",
    )
    import test_cuda_tensorcore

    assert out.split() == ["mma_tile", "ok"] + [w for n in sorted(test_cuda_tensorcore.CONFIGS) for w in (n, "ok")]


def test_wmma_fragments_match_numpy(mock_driver_dir) -> None:
    """Apache TVM's wmma fragments as PTX wmma (the CPU build runs the emulator's models of
    wmma.load/store/mma): the tensorized GEMM, and one tile of every shape with float32 and
    float16 accumulators."""
    out = emulated_run(
        mock_driver_dir,
        """
from tvm.testing import kernels as zoo
rng = np.random.default_rng(5)
t = lambda a: tvm.runtime.tensor(a, dev)
mod = emulate(tvm.compile(zoo.tensor_core_gemm(), target=target))
assert "wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32" in mod.imports[0].inspect_source("cuda")
a, bt = rng.standard_normal((32, 32)).astype("float16"), rng.standard_normal((32, 32)).astype("float16")
c = tvm.runtime.empty((32, 32), "float32", dev)
mod["tensor_core_gemm"](t(a), t(bt), c)
np.testing.assert_allclose(c.numpy(), a.astype("float64") @ bt.astype("float64").T, rtol=1e-5, atol=1e-4)
print("gemm ok")
for (m, n, k) in [(16, 16, 16), (8, 32, 16), (32, 8, 16)]:
    for acc in ["float32", "float16"]:
        mod = emulate(tvm.compile(zoo.tensor_core_tile(m, n, k, acc), target=target))
        a, bt = (rng.standard_normal(s).astype("float16") / 4 for s in ((m, k), (n, k)))
        c = tvm.runtime.empty((m, n), acc, dev)
        mod["tile_gemm"](t(a), t(bt), c)
        want = a.astype("float64") @ bt.astype("float64").T + 0.5
        tol = 1e-2 if acc == "float16" else 1e-5
        np.testing.assert_allclose(c.numpy().astype("float64"), want, rtol=tol, atol=tol, err_msg=f"{m} {n} {k} {acc}")
        print("tile ok")
    for dtype in ["int8", "uint8"]:  # integer tensor cores: exact, int32 accumulators
        mod = emulate(tvm.compile(zoo.tensor_core_tile(m, n, k, "int32", dtype=dtype), target=target))
        ptx = {"int8": "s8", "uint8": "u8"}[dtype]
        source = mod.imports[0].inspect_source("cuda")
        assert f"wmma.mma.sync.aligned.row.col.m{m}n{n}k{k}.s32.{ptx}.{ptx}.s32" in source
        lo = -128 if dtype == "int8" else 0
        a, bt = (rng.integers(lo, lo + 256, s).astype(dtype) for s in ((m, k), (n, k)))
        c = tvm.runtime.empty((m, n), "int32", dev)
        mod["tile_gemm"](t(a), t(bt), c)
        want = a.astype("int64") @ bt.astype("int64").T
        np.testing.assert_array_equal(c.numpy(), want, err_msg=f"{m} {n} {k} {dtype}")
        print("int ok")
""",
    )
    assert out.split() == ["gemm", "ok"] + ["tile", "ok", "tile", "ok", "int", "ok", "int", "ok"] * 3, out


def test_integer_arithmetic_wraps(mock_driver_dir) -> None:
    """Integer results outside their dtype's range wrap as in NumPy (8-bit ones, which CUDA C
    computes in int, and signed ones, whose overflow C++ leaves undefined)."""
    out = emulated_run(
        mock_driver_dir,
        """
from tvm.testing import kernels as zoo
rng = np.random.default_rng(11)
for dtype in ["int8", "uint8", "int16", "int32", "int64"]:
    info = np.iinfo(dtype)
    a, b = (rng.integers(info.min, info.max, 256, dtype=dtype, endpoint=True) for _ in range(2))
    a[:2], b[:2] = [info.max, info.min], [1, info.max]
    s = rng.integers(0, info.bits, 256).astype(dtype)
    mod = emulate(tvm.compile(zoo.integer_wrapping(dtype), target=target))
    o = tvm.runtime.empty((len(zoo.INTEGER_WRAPPING_ROWS), 256), dtype, dev)
    mod["wrapping"](*(tvm.runtime.tensor(x, dev) for x in (a, b, s)), o)
    np.testing.assert_array_equal(o.numpy(), zoo.integer_wrapping_reference(a, b, s), err_msg=dtype)
    print(dtype, "ok")
""",
    )
    assert out.split() == [w for d in ["int8", "uint8", "int16", "int32", "int64"] for w in (d, "ok")], out


def test_random_integer_expressions(mock_driver_dir) -> None:
    """The conformance suite's random integer expressions (int8 to int64 and uint8), as CUDA C."""
    out = emulated_run(
        mock_driver_dir,
        """
import random
from tvm.testing import random_programs as rp
dtypes = ["int8", "int16", "int32", "int64", "uint8"]
rng, data = random.Random(28), np.random.default_rng(28)
for case in range(16):
    tree = rp.random_expression(rng, rng.choice(dtypes), dtypes, rng.randrange(1, 5))
    inputs = rp.random_inputs(data, dtypes, 64)
    mod = emulate(tvm.compile(rp.kernel(tree, dtypes, 64, threads=True), target=target))
    o = tvm.runtime.empty((64,), tree[1], dev)
    mod["expression"](*(tvm.runtime.tensor(inputs[d], dev) for d in dtypes), o)
    np.testing.assert_array_equal(o.numpy(), rp.expected(tree, inputs), err_msg=rp.describe(tree))
print("ok")
""",
    )
    assert out.split() == ["ok"], out


def test_fragments_without_instructions_for_the_arch_run_per_thread(mock_driver_dir) -> None:
    """The warp_fragments capability follows the target's arch: sm_70 has float16 wmma but no
    8-bit integer wmma (sm_72), so an int8 tile is computed per thread there, and on sm_61 every
    tile is; each result matches NumPy."""
    out = emulated_run(
        mock_driver_dir,
        """
from tvm.testing import kernels as zoo
rng = np.random.default_rng(9)
t = lambda a: tvm.runtime.tensor(a, dev)
cases = [("sm_70", "float16", "float32", True), ("sm_70", "int8", "int32", False),
         ("sm_72", "uint8", "int32", True), ("sm_61", "float16", "float32", False)]
for arch, dtype, acc, native in cases:
    arch_target = tvm.target.Target(f"cuda -arch={arch}")
    pairs = arch_target.capability("warp_fragments")
    assert ((dtype, acc) in pairs) == native, (arch, pairs)
    mod = emulate(tvm.compile(zoo.tensor_core_tile(16, 16, 16, acc, dtype=dtype), target=arch_target))
    assert ("wmma.mma.sync" in mod.imports[0].inspect_source("cuda")) == native, arch
    if dtype == "float16":
        a, bt = (rng.standard_normal((16, 16)).astype("float16") / 4 for _ in range(2))
        want = a.astype("float64") @ bt.astype("float64").T + 0.5
    else:
        lo = -128 if dtype == "int8" else 0
        a, bt = (rng.integers(lo, lo + 256, (16, 16)).astype(dtype) for _ in range(2))
        want = a.astype("int64") @ bt.astype("int64").T
    c = tvm.runtime.empty((16, 16), acc, dev)
    mod["tile_gemm"](t(a), t(bt), c)
    np.testing.assert_allclose(c.numpy().astype("float64"), want, rtol=1e-5, atol=1e-4, err_msg=arch)
    print(arch, "ok")
""",
    )
    assert out.split() == ["sm_70", "ok", "sm_70", "ok", "sm_72", "ok", "sm_61", "ok"], out


def test_static_shared_memory_past_48_kib_runs_from_dynamic(mock_driver_dir) -> None:
    """A 64 KiB shared tile (static in the kernel) is placed in dynamic shared memory, which the
    runtime raises the kernel's limit for at launch."""
    out = emulated_run(
        mock_driver_dir,
        """
from tvm.testing import kernels as zoo
mod = emulate(tvm.compile(zoo.transpose_through_shared(128), target=target))
assert "extern __shared__" in mod.imports[0].inspect_source("cuda")
a = np.random.default_rng(6).standard_normal((128, 128)).astype("float32")
b = tvm.runtime.empty((128, 128), "float32", dev)
mod["transpose"](tvm.runtime.tensor(a, dev), b)
np.testing.assert_array_equal(b.numpy(), a.T)
print("ok")
""",
    )
    assert out.strip() == "ok", out


def test_float8_matches_ml_dtypes(mock_driver_dir) -> None:
    """float8_e4m3fn / float8_e5m2 conversions and arithmetic as the CUDA C helpers spell them."""
    out = emulated_run(
        mock_driver_dir,
        """
import ml_dtypes
from tvm.testing import kernels as zoo
a = (np.random.default_rng(7).standard_normal(4096) * np.logspace(-12, 6, 4096)).astype("float32")
a[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, -1e30, 3 * 2.0**-11]
for dtype in ["float8_e4m3fn", "float8_e5m2"]:
    mod = emulate(tvm.compile(zoo.float8_arithmetic(dtype), target=target))
    b, c, d = (tvm.runtime.empty((4096,), t, dev) for t in (dtype, "float32", dtype))
    mod["float8"](tvm.runtime.tensor(a, dev), b, c, d)
    want = a.astype(getattr(ml_dtypes, dtype))
    np.testing.assert_array_equal(b.numpy().view("uint8"), want.view("uint8"))
    np.testing.assert_array_equal(c.numpy(), want.astype("float32"))
    print(dtype, "ok")
""",
    )
    assert out.split() == ["float8_e4m3fn", "ok", "float8_e5m2", "ok"], out


def test_shared_tvmscript_kernels_through_tvm_compile(mock_driver_dir) -> None:
    """The core's TVMScript kernel zoo (the OpenCL and example backends run the same ones),
    compiled for cuda with symbolic sizes bound from the arguments at call time."""
    out = emulated_run(
        mock_driver_dir,
        """
from tvm.testing import kernels as zoo
rng = np.random.default_rng(3)
t = lambda a: tvm.runtime.tensor(a, dev)
for dtype in ["float32", "float16", "bfloat16", "int32"]:
    mod = emulate(tvm.compile(zoo.vector_add(dtype, 128), target=target))
    npd = tvm.runtime.numpy_dtype(dtype)
    a, b = (rng.uniform(-50, 50, 999).astype(npd) for _ in range(2))
    c = tvm.runtime.empty((999,), dtype, dev)
    mod["vector_add"](t(a), t(b), c)
    want = (a.astype("float64") + b.astype("float64")).astype(npd)
    np.testing.assert_array_equal(c.numpy(), want, err_msg=dtype)
    print("vector_add", dtype, "ok")
a = rng.standard_normal((37, 1001)).astype("float32")
mod = emulate(tvm.compile(zoo.row_sum(block=128), target=target))
b = tvm.runtime.empty((37,), "float32", dev)
mod["row_sum"](t(a), b)
np.testing.assert_allclose(b.numpy(), a.sum(axis=1), rtol=1e-4, atol=1e-4)
print("row_sum ok")
mod = emulate(tvm.compile(zoo.row_softmax(block=64), target=target))
b = tvm.runtime.empty(a.shape, "float32", dev)
mod["row_softmax"](t(a), b)
np.testing.assert_allclose(b.numpy(), zoo.reference_softmax(a), rtol=1e-5, atol=1e-7)
print("row_softmax ok")
mod = emulate(tvm.compile(zoo.matmul_tiled(tile=16), target=target))
x, y = rng.standard_normal((64, 48)).astype("float32"), rng.standard_normal((48, 80)).astype("float32")
z = tvm.runtime.empty((64, 80), "float32", dev)
mod["matmul_tiled"](t(x), t(y), z)
np.testing.assert_allclose(z.numpy(), x @ y, rtol=1e-4, atol=1e-4)
print("matmul_tiled ok")
import warnings
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # one-thread kernels, shared buffers in device memory
    mod = emulate(tvm.compile(zoo.partly_scheduled_softmax(), target=target))
a = rng.standard_normal((4, 50)).astype("float32")
b = tvm.runtime.empty(a.shape, "float32", dev)
mod["partly_scheduled_softmax"](t(a), b)
np.testing.assert_allclose(b.numpy(), zoo.reference_softmax(a), rtol=1e-5, atol=1e-7)
print("partly_scheduled_softmax ok")
""",
    )
    assert out.count(" ok") == 8, out


def test_ptx_legacy_mma_and_ldmatrix_match_numpy(mock_driver_dir) -> None:
    """Apache TVM's T.ptx_legacy.mma of every shape and type the backend emits, and ldmatrix of
    1, 2 and 4 matrices with and without .trans, run on the emulator's models of the PTX
    instructions and compared with NumPy (integer mma wraps, or saturates with .satfinite)."""
    out = emulated_run(
        mock_driver_dir,
        """
import cuda_script_kernels as sk
rng = np.random.default_rng(11)
t = lambda a: tvm.runtime.tensor(a, dev)
cases = [
    ("m16n8k16", "float16", "float16", "float32"), ("m16n8k16", "float16", "float16", "float16"),
    ("m16n8k8", "float16", "float16", "float32"), ("m16n8k16", "bfloat16", "bfloat16", "float32"),
    ("m16n8k8", "bfloat16", "bfloat16", "float32"), ("m16n8k8", "tf32", "tf32", "float32"),
    ("m16n8k4", "tf32", "tf32", "float32"), ("m8n8k4", "float64", "float64", "float64"),
    ("m8n8k16", "int8", "uint8", "int32"), ("m16n8k16", "int8", "int8", "int32"),
    ("m16n8k32", "uint8", "int8", "int32"),
]
for shape, ta, tb, tc in cases:
    m, n, k = (int(x) for x in shape[1:].replace("n", " ").replace("k", " ").split())
    mod = emulate(tvm.compile(sk.ptx_mma_tile(shape, ta, tb, tc), target=target))
    store = lambda d: "float32" if d == "tf32" else d
    if ta in ("int8", "uint8"):
        lo = lambda d: -128 if d == "int8" else 0
        a = rng.integers(lo(ta), lo(ta) + 256, (m, k)).astype(ta)
        b = rng.integers(lo(tb), lo(tb) + 256, (n, k)).astype(tb)
        c = rng.integers(-1000, 1000, (m, n)).astype("int32")
        want = c.astype(np.int64) + a.astype(np.int64) @ b.astype(np.int64).T
    else:
        a, b = rng.standard_normal((m, k)).astype(store(ta)), rng.standard_normal((n, k)).astype(store(tb))
        if ta == "bfloat16":
            import ml_dtypes
            a, b = (x.astype("float32").astype(ml_dtypes.bfloat16) for x in (a, b))
        if ta == "tf32":  # the tensor cores read 10 mantissa bits
            a, b = ((x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32) for x in (a, b))
        c = rng.standard_normal((m, n)).astype(tc)
        want = c.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64).T
    ct = t(c)
    mod["ptx_mma"](t(a), t(b), ct)
    tol = 2e-2 if tc == "float16" else 1e-5
    np.testing.assert_allclose(ct.numpy().astype(np.float64), want, rtol=tol, atol=tol, err_msg=shape + ta)
    print("mma ok")
for num in (1, 2, 4):
    for trans in (False, True):
        mod = emulate(tvm.compile(sk.ptx_ldmatrix(num, trans), target=target))
        a = rng.standard_normal((16, 16)).astype("float16")
        out = t(np.zeros((32, 2 * num), "float16"))
        mod["ldmatrix"](t(a), out)
        lane = np.arange(32)
        want = np.zeros((32, 2 * num), "float16")
        for j in range(num):
            mat = a[8 * (j % 2) : 8 * (j % 2) + 8, 8 * (j // 2) : 8 * (j // 2) + 8]
            mat = mat.T if trans else mat
            for i in range(2):
                want[:, 2 * j + i] = mat[lane // 4, 2 * (lane % 4) + i]
        np.testing.assert_array_equal(out.numpy(), want, err_msg=f"x{num} trans={trans}")
        print("ldmatrix ok")
""",
    )
    assert out.split() == ["mma", "ok"] * 11 + ["ldmatrix", "ok"] * 6, out


def test_ptx_namespace_instructions_match_numpy(mock_driver_dir) -> None:
    """T.ptx.add.rn.f32 / mul.rn.f32 / max.f32 (NaN operands included), griddepcontrol and the
    cp.async group instructions of Apache TVM's newer T.ptx namespace, and T.s_tir.cp_async_raw,
    on the emulator."""
    out = emulated_run(
        mock_driver_dir,
        """
import cuda_script_kernels as sk
target90 = tvm.target.Target("cuda -arch=sm_90")
t = lambda a: tvm.runtime.tensor(a, dev)
rng = np.random.default_rng(2)
a, b = rng.standard_normal(64).astype("float32"), rng.standard_normal(64).astype("float32")
a[3], b[5], a[7], b[7] = np.nan, np.nan, np.nan, np.nan
mod = emulate(tvm.compile(sk.ptx_scalar_f32, target=target90))
assert "griddepcontrol.wait;" in mod.imports[0].inspect_source("cuda")
c = t(np.zeros((3, 64), "float32"))
mod["ptx_scalar_f32"](t(a), t(b), c)
np.testing.assert_array_equal(c.numpy(), np.stack([a + b, a * b, np.fmax(a, b)]))
print("scalar ok")
x = rng.standard_normal((32, 4)).astype("float32")
mod = emulate(tvm.compile(sk.ptx_async_groups, target=target))
y = t(np.zeros((32, 4), "float32"))
mod["ptx_async_groups"](t(x), y)
np.testing.assert_array_equal(y.numpy(), x[::-1, ::-1])
print("async ok")
mod = emulate(tvm.compile(sk.ptx_legacy_async_copy, target=target))
x = rng.standard_normal(128).astype("float32")
y = t(np.zeros(128, "float32"))
mod["ptx_legacy_async_copy"](t(x), y)
np.testing.assert_array_equal(y.numpy(), np.roll(x, -4) * 2)
print("legacy ok")
mod = emulate(tvm.compile(sk.s_tir_async_copy, target=target))
x = rng.standard_normal(256).astype("float32")
y = t(np.zeros(256, "float32"))
mod["s_tir_async_copy"](t(x), y)
np.testing.assert_array_equal(y.numpy(), x * 2)
print("s_tir ok")
""",
    )
    assert out.split() == ["scalar", "ok", "async", "ok", "legacy", "ok", "s_tir", "ok"], out


def test_apache_warp_shuffles_match_numpy(mock_driver_dir) -> None:
    """Apache TVM's T.tvm_warp_shuffle, _up, _down and _xor in segments narrower than the warp
    (8- to 64-bit values, one in an arm of T.Select, an offset past the warp), and
    T.tvm_warp_activemask in both arms of a branch that 20 lanes of each warp take."""
    out = emulated_run(
        mock_driver_dir,
        """
import cuda_script_kernels as sk
from tvm.testing import kernels as zoo
for dtype in ["float32", "float16", "int8", "uint16", "int64", "float64"]:
    a = (np.random.default_rng(4).standard_normal(64) * 50).astype(dtype)
    mod = emulate(tvm.compile(zoo.warp_shuffles(dtype, name=f"shuffles_{dtype}"), target=target))
    b = tvm.runtime.empty((7, 64), dtype, dev)
    mod[f"shuffles_{dtype}"](tvm.runtime.tensor(a, dev), b)
    np.testing.assert_array_equal(b.numpy(), zoo.warp_shuffles_reference(a), err_msg=dtype)
print("shuffles ok")
mod = emulate(tvm.compile(sk.active_lanes, target=target))
m = tvm.runtime.empty((2, 64), "uint32", dev)
mod["active_lanes"](m)
first = np.arange(64) % 32 < 20
np.testing.assert_array_equal(m.numpy(), [np.where(first, (1 << 20) - 1, 0), np.where(first, 0, 0xFFF00000)])
print("activemask ok")
""",
    )
    assert out.split() == ["shuffles", "ok", "activemask", "ok"], out


def test_warp_collectives_run_on_every_lane_and_agree(mock_driver_dir) -> None:
    """Warp max/min of a warp holding NaN and both zeros give every lane the same value; a
    shuffle on the right of T.And and a let-bound one in a T.Select arm run on every lane (they
    deadlocked the emulator: C's && and ?: skip them on some lanes); T.isinf/T.isfinite build."""
    out = emulated_run(
        mock_driver_dir,
        """
import cuda_script_kernels as sk
a = np.arange(32, dtype="float32") - 8
a[5], a[6], a[7], a[9] = np.nan, -0.0, 0.0, np.inf
mod = emulate(tvm.compile(sk.warp_collectives_everywhere, target=target))
b = tvm.runtime.empty((5, 32), "float32", dev)
mod["warp_collectives_everywhere"](tvm.runtime.tensor(a, dev), b)
got, lane = b.numpy(), np.arange(32)
assert np.isnan(got[0]).all() and np.isnan(got[1]).all(), got[:2]
partner = a[lane ^ 1]
np.testing.assert_array_equal(got[2], ((lane % 2 == 0) & (partner > 0)).astype("float32"))
np.testing.assert_array_equal(got[3], np.where(lane % 2 == 0, partner + 1, a))
np.testing.assert_array_equal(got[4], np.isinf(a) + 2.0 * np.isfinite(a))
print("collectives ok")
""",
    )
    assert out.split() == ["collectives", "ok"], out


def test_split_host_device_module_launches_its_kernel(mock_driver_dir) -> None:
    """A module written after Apache TVM's host/device split (T.call_packed of a calling
    convention 2 kernel) runs its kernel with the extent the host passes."""
    out = emulated_run(
        mock_driver_dir,
        """
import cuda_script_kernels as sk
mod = emulate(tvm.compile(sk.split_host_device, target=target))
a = np.arange(64, dtype="float32")
t = tvm.runtime.tensor(a, dev)
mod["main"](t, 48)
np.testing.assert_array_equal(t.numpy(), np.concatenate([a[:48] * 3, a[48:]]))
print("split ok")
""",
    )
    assert out.split() == ["split", "ok"], out
