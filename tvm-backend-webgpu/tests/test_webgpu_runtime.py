"""The WebGPU runtime on wgpu-native: device attributes, copies of any size and offset, folded
grids, batches of many launches, scalar arguments, and errors from wgpu as Python exceptions."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm.codegen import device_module
from tvm.script import tir as T
from tvm.testing import kernels


def test_device_attributes_and_detected_target(dev):
    assert dev.exist and dev.name
    assert dev.attr("backend") in ("vulkan", "metal", "d3d12", "opengl", "other")
    assert dev.max_threads_per_block >= 256
    assert dev.attr("max_storage_buffers_per_shader_stage") >= 8
    target = tvm.target.detect_target_from_device(dev)
    assert target.kind.name == "webgpu" and target.attrs["max_num_threads"] >= 256


@pytest.mark.parametrize("dtype, n", [("uint8", 7), ("float16", 5), ("int32", 1), ("float32", 1023)])
def test_copies_of_any_size_round_trip(dev, dtype, n):
    host = (np.arange(n) * 3 + 1).astype(dtype)
    t = tvm.runtime.tensor(host, dev)
    np.testing.assert_array_equal(t.numpy(), host)
    other = tvm.runtime.empty((n,), dtype, dev)
    t.copyto(other)
    np.testing.assert_array_equal(other.numpy(), host)


def test_unaligned_writes_keep_their_neighbours(dev):
    """Seven one-byte tensors share no words with each other's data, but an unaligned write into
    one buffer must not clobber the bytes around it (they are read back and patched)."""
    t = tvm.runtime.tensor(np.arange(10, dtype="uint8"), dev)
    t.copyfrom(np.full(10, 200, dtype="uint8"))
    np.testing.assert_array_equal(t.numpy(), np.full(10, 200, dtype="uint8"))


@T.prim_func
def add_one_per_block(a: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    for bx in T.thread_binding(n, thread="blockIdx.x"):
        for tx in T.thread_binding(1, thread="threadIdx.x"):
            A[bx + tx] = A[bx + tx] + T.float32(1)


def test_a_grid_over_65535_workgroups_is_folded(dev):
    """70000 one-thread workgroups: more than one dispatch dimension holds; every element is
    touched exactly once."""
    mod = tvm.compile(add_one_per_block, target="webgpu")
    a = tvm.runtime.tensor(np.zeros(70000, "float32"), dev)
    mod["add_one_per_block"](a)
    np.testing.assert_array_equal(a.numpy(), np.ones(70000, "float32"))


def test_many_launches_in_one_batch_keep_their_order_and_scalars(dev):
    """1500 launches (past the uniform arena and the batch size) each add its own scalar."""

    @T.prim_func
    def axpy(a: T.handle, alpha: T.float32, k: T.int32):
        A = T.match_buffer(a, (64,), "float32")
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            A[tx] = A[tx] + alpha * T.Cast("float32", k)

    mod = tvm.compile(axpy, target="webgpu")
    a = tvm.runtime.tensor(np.zeros(64, "float32"), dev)
    for k in range(1500):
        mod["axpy"](a, 0.5, k % 3)
    expect = 0.5 * sum(k % 3 for k in range(1500))
    np.testing.assert_array_equal(a.numpy(), np.full(64, expect, "float32"))


def test_invalid_wgsl_is_an_error_naming_the_line(dev):
    """A shader wgpu rejects (here, hand-written) raises with naga's message and the line."""
    text = "//! kernel broken\nfn main() {\n  let x: f32 = 1i;\n}\n"
    mod = device_module.create_device_module("webgpu", "wgsl", [["broken", [], ["threadIdx.x"]]], text, [])
    with pytest.raises(RuntimeError, match=r"compiling the WGSL of webgpu kernel broken(.|\n)*generated WGSL line 2"):
        mod.get_function("broken")(1)
    # the device is still usable afterwards
    c = tvm.runtime.empty((4,), "float32", dev)
    tvm.compile(kernels.vector_add(), target="webgpu")["vector_add"](
        tvm.runtime.tensor(np.ones(4, "float32"), dev), tvm.runtime.tensor(np.ones(4, "float32"), dev), c
    )
    np.testing.assert_array_equal(c.numpy(), np.full(4, 2, "float32"))


def test_malformed_payloads_are_value_errors(dev):
    with pytest.raises(ValueError, match="must start with"):
        device_module.create_device_module("webgpu", "wgsl", [["k", [], []]], "fn main() {}", [])
    with pytest.raises(ValueError, match="no shader for kernel 'k'"):
        device_module.create_device_module("webgpu", "wgsl", [["k", [], []]], "//! kernel other\n", [])
    with pytest.raises(ValueError, match="format 'wgsl'"):
        device_module.create_device_module("webgpu", "spirv", [["k", [], []]], b"\x03\x02#\x07", [])
    # more scalars than one launch's 64 KiB uniform block holds: the launch wrote past it
    shader = "//! kernel k\n@compute @workgroup_size(1, 1, 1)\nfn main() {}\n"
    with pytest.raises(ValueError, match="takes 16400 scalar arguments; one launch passes at most 16384"):
        device_module.create_device_module("webgpu", "wgsl", [["k", ["int32"] * 16400, ["blockIdx.x"]]], shader, [])
    # bytes that are no UTF-8 text (a damaged module): wgpu's WGSL compiler aborted the process
    for junk in (b"\xe0\x4c\x8e\x9f", b"\xe4", b"\xc0\x80", b"\xed\xa0\x80"):
        text = b"//! kernel k\n@compute @workgroup_size(1, 1, 1)\nfn main() { let B = 1; B[" + junk + b"] }\n"
        with pytest.raises(ValueError, match="payload is no UTF-8 text: byte .* at offset"):
            device_module.create_device_module("webgpu", "wgsl", [["k", [], []]], text, [])
    for header, why in (("static_shared -5", "is no byte count"), ("dyn_shmem_scale 0", "is not a widening")):
        with pytest.raises(ValueError, match=why):
            text = f"//! kernel k\n//! {header}\n@compute @workgroup_size(1, 1, 1)\nfn main() {{}}\n"
            device_module.create_device_module("webgpu", "wgsl", [["k", [], ["dyn_shmem"]]], text, [])


def test_one_buffer_read_and_written_through_two_arguments_is_refused(dev):
    """WebGPU forbids binding one buffer as read-only and writable storage in one dispatch."""
    mod = tvm.compile(kernels.vector_add(), target="webgpu")
    a = tvm.runtime.tensor(np.ones(8, "float32"), dev)
    b = tvm.runtime.tensor(np.ones(8, "float32"), dev)
    with pytest.raises(ValueError, match="same buffer.*pass a copy"):
        mod["vector_add"](a, b, a)
    mod["vector_add"](a, a, b)  # both read-only: allowed
    np.testing.assert_array_equal(b.numpy(), np.full(8, 2, "float32"))


def test_while_break_and_continue_in_wgsl(dev):
    """TIR's while/break/continue print as WGSL's own statements and run."""

    @T.prim_func
    def first_big(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (4, 32), "float32")
        B = T.match_buffer(b, (4,), "int32")
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for tx in T.thread_binding(1, thread="threadIdx.x"):
                B[bx] = -1
                for k in range(32):
                    if A[bx, k] < T.float32(0.5):
                        continue
                    B[bx] = k
                    break
                while B[bx] > 3:
                    B[bx] = B[bx] - 4

    mod = tvm.compile(first_big, target="webgpu")
    src = mod.imports[0].inspect_source()
    assert "continue;" in src and "break;" in src and "while (" in src, src
    a = np.random.rand(4, 32).astype("float32") * 0.4
    a[0, 7] = a[2, 30] = 0.9
    b = tvm.runtime.empty((4,), "int32", dev)
    mod["first_big"](tvm.runtime.tensor(a, dev), b)
    np.testing.assert_array_equal(b.numpy(), [7 % 4, -1, 30 % 4, -1])


def test_workgroup_size_constant_or_overridden(dev):
    """Constant thread extents are the shader's @workgroup_size (a raw launch with another size is
    refused); a symbolic extent is set through the override constants when the pipeline is made."""
    mod = tvm.compile(kernels.vector_add(), target="webgpu")
    raw = mod.imports[0].get_function("vector_add_kernel0")
    a = tvm.runtime.tensor(np.ones(64, "float32"), dev)
    c = tvm.runtime.empty((64,), "float32", dev)
    with pytest.raises(
        ValueError, match=r"compiled for workgroup size \(64, 1, 1\), but is launched with \(32, 1, 1\)"
    ):
        raw(a, a, c, 64, 1, 32)

    @T.prim_func
    def scale(a: T.handle, b: T.handle, t: T.int32):
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (n,), "float32")
        for bx in T.thread_binding((n + t - 1) // t, thread="blockIdx.x"):
            for tx in T.thread_binding(t, thread="threadIdx.x"):
                if bx * t + tx < n:
                    B[bx * t + tx] = A[bx * t + tx] * T.float32(3)

    mod = tvm.compile(scale, target="webgpu")
    assert "override tvm_wg_x" in mod.imports[0].inspect_source()
    x = np.random.rand(300).astype("float32")
    for threads in (32, 128):
        y = tvm.runtime.empty((300,), "float32", dev)
        mod["scale"](tvm.runtime.tensor(x, dev), y, threads)
        np.testing.assert_allclose(y.numpy(), x * 3, rtol=1e-6)


def _thread_array(n: int):
    @T.prim_func
    def thread_array(a: T.handle):
        A = T.match_buffer(a, (64,), "float32")
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            R = T.alloc_buffer((n,), "float32", scope="local")
            for i in range(n):
                R[i] = T.Cast("float32", i + tx)
            A[tx] = R[(tx * 7) % n]

    return thread_array


def test_large_thread_arrays_are_refused_on_llvmpipe_and_small_ones_run(dev, monkeypatch):
    """WGSL zero-initializes local arrays and llvmpipe's pipeline build grows with the square of
    their size (4,096 float32: minutes): past TVM_WEBGPU_LOCAL_SCALARS (1,024) the build is
    refused there, naming the kernel, the count and the fixes; other adapters build it."""
    small = tvm.compile(_thread_array(64), target="webgpu")
    a = tvm.runtime.empty((64,), "float32", dev)
    small["thread_array"](a)
    np.testing.assert_array_equal(a.numpy(), [(t * 7) % 64 + t for t in range(64)])
    if not dev.attr("name").startswith("llvmpipe"):
        pytest.skip(f"adapter {dev.attr('name')!r} is not llvmpipe: nothing is refused there")
    big = tvm.compile(_thread_array(4096), target="webgpu")
    with pytest.raises(RuntimeError, match=r"thread_array_kernel0: each thread holds 4096 scalars.*target 'vulkan'"):
        big["thread_array"](a)
    monkeypatch.setenv("TVM_WEBGPU_LOCAL_SCALARS", "32")
    with pytest.raises(RuntimeError, match="the limit of 32"):
        tvm.compile(_thread_array(48), target="webgpu")["thread_array"](a)
    for bad in ("abc", "-5", "1e3", "99999999999999999999"):  # each used to lift the limit, or read 1
        monkeypatch.setenv("TVM_WEBGPU_LOCAL_SCALARS", bad)
        with pytest.raises(ValueError, match=rf"TVM_WEBGPU_LOCAL_SCALARS='{bad}': expected a number of scalars"):
            tvm.compile(_thread_array(40), target="webgpu")["thread_array"](a)


def test_a_workgroup_array_sized_at_launch_past_the_device_limit(dev):
    """A launch-sized workgroup array (the override constant tvm_dyn_shmem) that fits runs; one
    that does not, with the declared workgroup memory, is refused at launch naming the limit."""
    mod = tvm.compile(kernels.window_sums(), target="webgpu")
    assert "override tvm_dyn_shmem: u32" in mod.imports[0].inspect_source("wgsl")
    a = tvm.runtime.tensor(np.ones(8192, "float32"), dev)
    b = tvm.runtime.empty((64,), "float32", dev)
    mod["window_sums"](a, b, 10)
    np.testing.assert_array_equal(b.numpy(), np.full(64, 11, "float32"))
    limit = dev.max_shared_memory_per_block
    with pytest.raises(ValueError, match=rf"exceed the device's maxComputeWorkgroupStorageSize \({limit}\)"):
        mod["window_sums"](a, b, limit // 4)


def test_a_symbolic_workgroup_size_with_a_launch_sized_workgroup_array(dev):
    """Both sizes are override constants; the workgroup size's are declared first (after the
    array, wgpu's shader compiler aborted the process when the pipeline was made)."""

    @T.prim_func
    def reverse(a: T.handle, b: T.handle):
        w = T.int32()
        A = T.match_buffer(a, (w,), "int32")
        B = T.match_buffer(b, (w,), "int32")
        for tx in T.thread_binding(w, thread="threadIdx.x"):
            tile = T.alloc_buffer((w,), "int32", scope="shared")
            tile[tx] = A[tx]
            T.tvm_storage_sync("shared")
            B[tx] = tile[w - 1 - tx]

    mod = tvm.compile(reverse, target="webgpu")
    source = mod.imports[0].inspect_source("wgsl")
    assert source.index("override tvm_wg_x") < source.index("override tvm_dyn_shmem")
    for n in (32, 64):
        a = np.arange(n, dtype="int32")
        b = tvm.runtime.empty((n,), "int32", dev)
        mod["reverse"](tvm.runtime.tensor(a, dev), b)
        np.testing.assert_array_equal(b.numpy(), a[::-1])


def test_packed_bytes_written_by_neighbouring_workgroups(dev):
    """Workgroups of three threads share the u32 words of byte buffers, so their stores must not
    lose each other's bytes; an int8 workgroup array, an int8 scalar and an in-place update of a
    uint8 buffer all wrap as NumPy does."""
    n, block = 3 * 37, 3

    @T.prim_func
    def mix(a: T.handle, b: T.handle, k: T.int8):
        A = T.match_buffer(a, (n,), "int8")
        B = T.match_buffer(b, (n,), "uint8")
        for bx in T.thread_binding(n // block, thread="blockIdx.x"):
            S = T.alloc_buffer((block,), "int8", scope="shared")
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                S[tx] = A[bx * block + tx] * k
                T.tvm_storage_sync("shared")
                B[bx * block + tx] = B[bx * block + tx] + T.Cast("uint8", S[block - 1 - tx])

    rng = np.random.default_rng(3)
    a = rng.integers(-128, 128, n).astype("int8")
    b = rng.integers(0, 256, n).astype("uint8")
    out = tvm.runtime.tensor(b, dev)
    tvm.compile(mix, target="webgpu")["mix"](tvm.runtime.tensor(a, dev), out, -77)
    with np.errstate(over="ignore"):
        scaled = (a * np.int8(-77)).reshape(-1, block)[:, ::-1].reshape(-1)
    np.testing.assert_array_equal(out.numpy(), b + scaled.astype("uint8"))


def test_subgroup_operations_against_numpy(dev):
    """T.webgpu.* on the adapter: sums, maxima, butterflies and lane ids of each subgroup (runs of
    subgroup_size consecutive invocations of a workgroup, as on lavapipe and every Vulkan driver)."""
    if not dev.attr("supports_subgroups"):
        pytest.skip(f"adapter '{dev.name}' lacks the WebGPU feature subgroups")

    @T.prim_func
    def lanes(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (128,), "int32")
        B = T.match_buffer(b, (6, 128), "int32")
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                i = bx * 64 + tx
                B[0, i] = T.webgpu.subgroup_add(A[i])
                B[1, i] = T.webgpu.subgroup_max(A[i])
                B[2, i] = T.webgpu.subgroup_min(A[i])
                B[3, i] = T.webgpu.subgroup_shuffle_xor(A[i], 1)
                B[4, i] = T.webgpu.subgroup_shuffle(A[i], 0)
                B[5, i] = T.webgpu.subgroup_size() * 1000 + T.webgpu.subgroup_invocation_id()

    a = np.random.default_rng(4).integers(-1000, 1000, 128).astype("int32")
    out = tvm.runtime.empty((6, 128), "int32", dev)
    tvm.compile(lanes, target="webgpu")["lanes"](tvm.runtime.tensor(a, dev), out)
    got = out.numpy()
    size = int(got[5, 0]) // 1000
    assert dev.attr("subgroup_min_size") <= size <= min(64, dev.attr("subgroup_max_size")), size
    groups = a.reshape(-1, size)
    np.testing.assert_array_equal(got[5], (np.arange(128) % size) + size * 1000)
    np.testing.assert_array_equal(got[0], np.repeat(groups.sum(axis=1), size))
    np.testing.assert_array_equal(got[1], np.repeat(groups.max(axis=1), size))
    np.testing.assert_array_equal(got[2], np.repeat(groups.min(axis=1), size))
    np.testing.assert_array_equal(got[3], a[np.arange(128) ^ 1])
    np.testing.assert_array_equal(got[4], np.repeat(groups[:, 0], size))


def test_bfloat16_arrays_in_workgroup_memory_and_reductions(dev):
    """A user's shared bfloat16 tile (rounded products, reversed, its bits read back) and a
    bfloat16 max over threads (the compiler's scratch) run as ml_dtypes computes them."""
    ml_dtypes = pytest.importorskip(
        "ml_dtypes", reason="ml_dtypes (pip install ml_dtypes) gives the bfloat16 reference"
    )
    from test_webgpu_codegen import bf16_tile

    bf16 = ml_dtypes.bfloat16
    a = (np.random.default_rng(3).standard_normal(64) * 10).astype(bf16)
    b, c = tvm.runtime.empty((64,), "bfloat16", dev), tvm.runtime.empty((64,), "uint16", dev)
    tvm.compile(bf16_tile, target="webgpu")["bf16_tile"](tvm.runtime.tensor(a, dev), b, c)
    want = (a.astype("float32") * 3).astype(bf16)
    np.testing.assert_array_equal(b.numpy().view("uint16"), want[::-1].view("uint16"))
    np.testing.assert_array_equal(c.numpy(), want.view("uint16"))

    @T.prim_func
    def row_max(A: T.Buffer((4, 64), "bfloat16"), B: T.Buffer((4,), "bfloat16")):
        for i in T.thread_binding(4, thread="blockIdx.x"):
            for k in T.thread_binding(64, thread="threadIdx.x"):
                with T.block("max"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.bfloat16(-1e30)
                    B[vi] = T.max(B[vi], A[vi, vk])

    x = (np.random.default_rng(4).standard_normal((4, 64)) * 50).astype(bf16)
    out = tvm.runtime.empty((4,), "bfloat16", dev)
    tvm.compile(row_max, target="webgpu")["row_max"](tvm.runtime.tensor(x, dev), out)
    np.testing.assert_array_equal(out.numpy().view("uint16"), x.max(axis=1).view("uint16"))


@T.prim_func
def gather_row_sums(a: T.handle, idx: T.handle, out: T.handle):
    """A dlight-style kernel in int64: rows picked by an index read from memory, each row
    summed by 64 threads through workgroup memory."""
    n, m = T.int64(), T.int64()
    A = T.match_buffer(a, (n, m), "float32")
    Idx = T.match_buffer(idx, (n,), "int32")
    Out = T.match_buffer(out, (n,), "float32")
    for bx in T.thread_binding(n, thread="blockIdx.x"):
        for tx in T.thread_binding(T.int64(64), thread="threadIdx.x"):
            partial = T.alloc_buffer((T.int64(64),), "float32", scope="shared")
            acc = T.alloc_buffer((T.int64(1),), "float32", scope="local")
            acc[T.int64(0)] = T.float32(0)
            for k in range((m + T.int64(63)) // T.int64(64)):
                if k * T.int64(64) + tx < m:
                    acc[T.int64(0)] = acc[T.int64(0)] + A[T.Cast("int64", Idx[bx]), k * T.int64(64) + tx]
            partial[tx] = acc[T.int64(0)]
            T.tvm_storage_sync("shared")
            if tx == T.int64(0):
                total = T.alloc_buffer((T.int64(1),), "float32", scope="local")
                total[T.int64(0)] = T.float32(0)
                for t in range(T.int64(64)):
                    total[T.int64(0)] = total[T.int64(0)] + partial[t]
                Out[bx] = total[T.int64(0)]


@pytest.mark.parametrize("n, m", [(1, 1), (7, 100), (13, 200)])
def test_a_kernel_written_in_int64_runs_against_numpy(dev, n, m):
    rng = np.random.default_rng(n)
    x = rng.integers(-4, 5, (n, m)).astype("float32")
    idx = rng.permutation(n).astype("int32")
    mod = tvm.compile(gather_row_sums, target="webgpu")
    out = tvm.runtime.empty((n,), "float32", dev)
    mod["gather_row_sums"](tvm.runtime.tensor(x, dev), tvm.runtime.tensor(idx, dev), out)
    np.testing.assert_array_equal(out.numpy(), x[idx].sum(axis=1))


def test_a_size_past_int32_is_refused_by_a_narrowed_kernel(dev):
    """The narrowed kernel takes its int64 size as int32: a raw launch with one that does not fit
    is refused before it runs (the module's own function passes the tensors' sizes)."""

    @T.prim_func
    def double(a: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n,), "float32")
        for bx in T.thread_binding(n, thread="blockIdx.x"):
            A[bx] = A[bx] * T.float32(2)

    raw = tvm.compile(double, target="webgpu").imports[0].get_function("double_kernel0")
    a = tvm.runtime.tensor(np.ones(3, "float32"), dev)
    with pytest.raises(ValueError, match=r"argument 1 is int32, got 4294967299, which is outside its range"):
        raw(a, 2**32 + 3, 3)
    raw(a, 3, 3)
    np.testing.assert_array_equal(a.numpy(), np.full(3, 2, "float32"))


def test_fmod_and_tanh_at_their_edges_as_c_gives_them(dev):
    """WGSL's % is x - y * trunc(x / y) (NaN over an infinite divisor, 0 for an infinite dividend
    on llvmpipe) and tanh near 0 lost its low bits; the legalization picks C's results."""

    @T.prim_func
    def edges(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32"),
              D: T.Buffer((4,), "float32")):  # fmt: skip
        for i in T.thread_binding(4, thread="threadIdx.x"):
            C[i] = T.fmod(A[i], B[i])
            D[i] = T.tanh(A[i] * T.float32(1e-8))

    a = np.array([1.5, np.inf, 1.0, -2.0], "float32")
    b = np.array([np.inf, 2.0, 0.0, -np.inf], "float32")
    mod = tvm.compile(edges, target="webgpu")
    c, d = tvm.runtime.empty((4,), "float32", dev), tvm.runtime.empty((4,), "float32", dev)
    mod["edges"](tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev), c, d)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(c.numpy(), np.fmod(a, b))
    np.testing.assert_allclose(d.numpy(), np.tanh(a * np.float32(1e-8)), rtol=1e-6)


def test_an_int64_scalar_past_int32_is_refused_by_the_function_naming_it(dev):
    """An int64 scalar parameter the kernels take as int32 is checked by the function itself, whose
    message names the parameter and the target (not an argument of the internal kernel)."""

    @T.prim_func
    def fill(A: T.Buffer((8,), "float32"), n: T.int64):
        for i in T.thread_binding(8, "threadIdx.x"):
            A[i] = T.Cast("float32", n)

    f = tvm.compile(fill, target="webgpu")["fill"]
    a = tvm.runtime.tensor(np.zeros(8, "float32"), dev)
    for value in (2**31, -(2**31) - 1, 2**40):
        with pytest.raises(ValueError, match=r"function 'fill': n must lie within int32 on target 'webgpu'"):
            f(a, value)
    for value in (-(2**31), 2**31 - 1, 5):
        f(a, value)
        np.testing.assert_array_equal(a.numpy(), np.full(8, value, "float32"))
