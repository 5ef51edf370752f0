"""Kernels beyond the conformance zoo on a Vulkan device (lavapipe in CI): subgroup operations,
bool buffers, guarded loads, 64-bit scalars, batched launches, and clear errors for bad modules,
bad launches and the device's limits."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
import tvm_ffi
from tvm.script import tir as T
from tvm.testing import kernels, run_python
from tvm.tir.transform import lower
from tvm_backend_vulkan import codegen


def _run(func, name, dev, inputs, outputs):
    mod = tvm.compile(func, target="vulkan")
    args = [tvm.runtime.tensor(x, dev) for x in inputs] + [tvm.runtime.empty(s, d, dev) for s, d in outputs]
    mod[name](*args)
    return args[-1].numpy()


def test_subgroup_reduction(dev):
    """Each subgroup sums its values with T.vulkan.subgroup_add; invocation 0 of each writes."""

    @T.prim_func
    def subgroup_sum(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (256,), "float32")
        B = T.match_buffer(b, (256,), "float32")
        for tx in T.thread_binding(256, thread="threadIdx.x"):
            s = T.vulkan.subgroup_add(A[tx])
            B[tx] = T.if_then_else(T.vulkan.subgroup_invocation_id() == 0, s, T.float32(0))

    a = np.random.default_rng(0).standard_normal(256).astype("float32")
    got = _run(subgroup_sum, "subgroup_sum", dev, [a], [((256,), "float32")])
    width = dev.warp_size
    expect = np.zeros(256, "float32")
    expect[::width] = a.reshape(-1, width).sum(axis=1)
    np.testing.assert_allclose(got, expect, rtol=1e-5, atol=1e-5)


def test_subgroup_shuffle_and_max(dev):
    @T.prim_func
    def rotate(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (64,), "int32")
        B = T.match_buffer(b, (64,), "int32")
        C = T.match_buffer(c, (64,), "int32")
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            B[tx] = T.vulkan.subgroup_shuffle_xor(A[tx], 1)
            C[tx] = T.vulkan.subgroup_max(A[tx])

    a = np.random.default_rng(1).integers(-1000, 1000, 64).astype("int32")
    mod = tvm.compile(rotate, target="vulkan")
    bufs = [tvm.runtime.tensor(a, dev), tvm.runtime.empty((64,), "int32", dev), tvm.runtime.empty((64,), "int32", dev)]
    mod["rotate"](*bufs)
    np.testing.assert_array_equal(bufs[1].numpy(), a.reshape(-1, 2)[:, ::-1].reshape(-1))
    np.testing.assert_array_equal(bufs[2].numpy(), np.repeat(a.reshape(-1, dev.warp_size).max(axis=1), dev.warp_size))


def test_bool_buffers_and_guarded_loads(dev):
    """bool is stored as one byte; if_then_else evaluates only the chosen side, so the load past
    the end of A never runs."""

    @T.prim_func
    def shifted(a: T.handle, m: T.handle, b: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32")
        M = T.match_buffer(m, (n,), "bool")
        B = T.match_buffer(b, (n,), "float32")
        for bx in T.thread_binding((n + 63) // 64, thread="blockIdx.x"):
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                if bx * 64 + tx < n:
                    i = bx * 64 + tx
                    B[i] = T.if_then_else(M[i] and i + 1 < n, A[T.min(i + 1, n - 1)], T.float32(-1))

    rng = np.random.default_rng(2)
    a, m = rng.standard_normal(100).astype("float32"), rng.integers(0, 2, 100).astype(bool)
    got = _run(shifted, "shifted", dev, [a, m], [((100,), "float32")])
    expect = np.where(m & (np.arange(100) + 1 < 100), np.append(a[1:], 0), -1).astype("float32")
    np.testing.assert_allclose(got, expect)


def test_64_bit_scalar_arguments(dev):
    @T.prim_func
    def affine(a: T.handle, b: T.handle, scale: T.float64, shift: T.int64):
        A = T.match_buffer(a, (64,), "float64")
        B = T.match_buffer(b, (64,), "int64")
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            B[tx] = T.Cast("int64", A[tx] * scale) + shift

    a = np.arange(64, dtype="float64") * 1.5
    mod = tvm.compile(affine, target="vulkan")
    A, B = tvm.runtime.tensor(a, dev), tvm.runtime.empty((64,), "int64", dev)
    mod["affine"](A, B, 2.0, 2**40)
    np.testing.assert_array_equal(B.numpy(), (a * 2.0).astype("int64") + 2**40)


def test_many_launches_then_one_sync(dev):
    mod = tvm.compile(kernels.vector_add(), target="vulkan")
    a = np.ones(1000, "float32")
    A, B = tvm.runtime.tensor(a, dev), tvm.runtime.tensor(np.zeros(1000, "float32"), dev)
    for _ in range(300):  # B = A + B, each launch reading the previous one's result
        mod["vector_add"](A, B, B)
    np.testing.assert_array_equal(B.numpy(), np.full(1000, 300, "float32"))


def _module(kernel_names_and_types, payload):
    create = tvm_ffi.get_global_func("ffi.Module.create.vulkan")
    return create("spirv", kernel_names_and_types, payload, [["spirv", ""]])


def _vector_add_spirv():
    tvm.backend.load("vulkan")
    (kernel,) = lower(kernels.vector_add(), tvm.target.Target("vulkan")).kernels
    return kernel.global_symbol, codegen.generate([kernel])[0]


def test_corrupted_spirv_is_a_value_error(dev):
    name, binary = _vector_add_spirv()
    table = [[name, ["handle:float32"] * 3 + ["int32"], ["blockIdx.x", "threadIdx.x"]]]
    A = tvm.runtime.empty((64,), "float32", dev)
    for bad in (binary[:-6], b"\x00" * 64, binary[:20] + b"\xff\xff\xff\xff" + binary[24:]):
        with pytest.raises(ValueError):
            _module(table, bad)[name](A, A, A, 64, 1, 64)


def test_a_module_whose_first_launch_was_refused_is_released(dev):
    """A module the device refuses at its first launch (here a SPIR-V capability lavapipe lacks)
    left an empty program behind, and releasing the module then crashed the process."""
    code = """
    import gc, struct, numpy as np, tvm, tvm_ffi
    from tvm.testing import kernels
    mod = tvm.compile(kernels.vector_add("float32", 64), target="vulkan")
    fmt, funcs, payload, _ = tvm_ffi.get_global_func("runtime.DeviceModuleDeserialize")(mod.imports[0].save_to_bytes())
    words = list(struct.unpack(f"<{len(payload) // 4}I", bytes(payload)))
    words[5:5] = [(2 << 16) | 17, 67]  # OpCapability GroupNonUniformClustered
    create = tvm_ffi.get_global_func("ffi.Module.create.vulkan")
    m = create("spirv", [[f[0], list(f[1]), list(f[2])] for f in funcs], struct.pack(f"<{len(words)}I", *words), [])
    a = tvm.runtime.tensor(np.ones(256, "float32"), tvm.vulkan())
    try:
        m.get_function("vector_add_kernel0")(a, a, a, 256, 4, 64)
    except ValueError as err:
        print("refused:", "GroupNonUniformClustered" in str(err))
    del m
    gc.collect()
    print("released")
    """
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-3:] == ["refused:", "True", "released"], r.stdout


def test_workgroup_past_the_device_limit_is_refused(dev):
    name, binary = _vector_add_spirv()
    table = [[name, ["handle:float32"] * 3 + ["int32"], ["blockIdx.x", "threadIdx.x"]]]
    A = tvm.runtime.empty((64,), "float32", dev)
    limit = dev.max_threads_per_block
    with pytest.raises(ValueError, match=str(limit)):
        _module(table, binary)[name](A, A, A, 64, 1, limit * 2)


def test_a_binding_past_max_storage_buffer_range_is_refused(dev):
    limit = dev.attr("max_storage_buffer_range")
    n = limit // 4 + 64
    mod = tvm.compile(kernels.vector_add(), target="vulkan")
    big = tvm.runtime.empty((n,), "float32", dev)
    with pytest.raises(ValueError, match=str(limit)):
        mod["vector_add"](big, big, big)


def test_the_validation_layer_catches_a_bad_pipeline_layout(dev):
    """The layer the suites run under is really on: a module whose function table omits the
    kernel's push constants is reported (in a fresh process with its own log)."""
    code = """
        import sys
        sys.path.insert(0, {here!r})
        from vulkan_testing import enable_validation_layer, validation_messages
        log = enable_validation_layer()
        import tvm, tvm_ffi
        from test_vulkan_runtime import _module, _vector_add_spirv
        name, binary = _vector_add_spirv()
        A = tvm.runtime.empty((64,), "float32", tvm.vulkan(0))
        try:
            _module([[name, ["handle:float32"] * 3, ["blockIdx.x", "threadIdx.x"]]], binary)[name](A, A, A, 1, 64)
            tvm.vulkan(0).sync()
        except Exception:
            pass
        print("MESSAGES", len(validation_messages(log)))
        print(validation_messages(log)[0] if validation_messages(log) else "")
    """
    import os

    from vulkan_testing import layer_installed

    if not layer_installed():
        pytest.skip("the Khronos validation layer is not installed (apt-get install vulkan-validationlayers)")
    done = run_python(code.format(here=os.path.dirname(os.path.abspath(__file__))))
    assert done.returncode == 0, done.stderr
    assert "VUID-" in done.stdout and "MESSAGES 0" not in done.stdout, done.stdout


def test_a_view_of_shared_memory_aliases_it(dev):
    """``T.decl_buffer(..., data=sh.data)`` inside a kernel is a view of the shared allocation
    (not a second allocation, and not an error about allocations outside the kernel)."""

    @T.prim_func
    def reverse(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (64,), "float32")
        B = T.match_buffer(b, (64,), "float32")
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            sh = T.alloc_buffer((64,), "float32", scope="shared")
            tiles = T.decl_buffer((8, 8), "float32", data=sh.data, scope="shared")
            sh[tx] = A[tx]
            T.tvm_storage_sync("shared")
            B[tx] = tiles[(63 - tx) // 8, (63 - tx) % 8]

    a = np.arange(64, dtype="float32")
    np.testing.assert_array_equal(_run(reverse, "reverse", dev, [a], [((64,), "float32")]), a[::-1])


@T.prim_func
def data_dependent_loops(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
    for tx in T.thread_binding(8, thread="threadIdx.x"):
        acc = T.alloc_buffer((1,), "int32", scope="local")
        acc[0] = 0
        for k in range(A[tx]):
            acc[0] = acc[0] + 2
        B[tx] = acc[0]


def test_loops_whose_bounds_are_read_from_memory_are_announced_on_llvmpipe(dev, capfd):
    """Their iterations per thread cannot be bounded before the launch: on llvmpipe, which ends a
    thread after 65,535 loop iterations, one warning per kernel says so; the run itself is right."""
    mod = tvm.compile(data_dependent_loops, target="vulkan")
    assert "tvm.loop_bound:data_dependent_loops_kernel0:?" in mod.imports[0].inspect_source()
    a = tvm.runtime.tensor(np.arange(8, dtype="int32"), dev)
    b = tvm.runtime.empty((8,), "int32", dev)
    for _ in range(2):
        mod["data_dependent_loops"](a, b)
    np.testing.assert_array_equal(b.numpy(), 2 * np.arange(8))
    warnings = capfd.readouterr().err.count("runs loops whose trip counts cannot be bounded")
    assert warnings == (1 if dev.attr("name").startswith("llvmpipe") else 0)


@T.prim_func
def nested_count(B: T.Buffer((1,), "int32"), m: T.int32, n: T.int32):
    for tx in T.thread_binding(1, thread="threadIdx.x"):
        acc = T.alloc_buffer((1,), "int32", scope="local")
        acc[0] = 0
        for i in range(m):
            for j in range(n):
                acc[0] = acc[0] + 1
        B[0] = acc[0]


@pytest.mark.parametrize("m, n", [(1000, 64), (100, 640)])
def test_nested_loops_near_the_llvmpipe_limit_are_right_or_refused(dev, m, n):
    """1000 x 64 iterations are under 65,535, but llvmpipe also counts each loop's leaving pass
    (1000 x 65 + 1001): refused there; 100 x 640 fits and runs."""
    mod = tvm.compile(nested_count, target="vulkan")
    b = tvm.runtime.empty((1,), "int32", dev)
    if dev.attr("name").startswith("llvmpipe") and m * (n + 1) + m + 1 >= 65535:
        with pytest.raises(RuntimeError, match=f"up to {m * (n + 1) + m + 1} loop iterations"):
            mod["nested_count"](b, m, n)
    else:
        mod["nested_count"](b, m, n)
        assert b.numpy()[0] == m * n


def test_a_shared_buffer_sized_at_launch_past_the_device_limit(dev):
    """Sizes that fit run (the conformance suite checks their results); one that does not, with
    the declared shared memory, is refused at launch naming the device's limit."""
    mod = tvm.compile(kernels.window_sums(), target="vulkan")
    a = tvm.runtime.tensor(np.ones(8192, "float32"), dev)
    b = tvm.runtime.empty((64,), "float32", dev)
    mod["window_sums"](a, b, 10)
    np.testing.assert_array_equal(b.numpy(), np.full(64, 11, "float32"))
    limit = dev.max_shared_memory_per_block
    with pytest.raises(ValueError, match=rf"exceed the device's limit of {limit} \(maxComputeSharedMemorySize\)"):
        mod["window_sums"](a, b, limit // 4)


@T.prim_func
def two_sized_kernels(a: T.handle, b: T.handle, c: T.handle, n: T.int32):
    """Two kernels of one function, each staging A[0 : 64 + n] in its own launch-sized buffer,
    and a third without one: B[t] = A[t + n], C[t] = A[t + n] * 2 + 1."""
    A = T.match_buffer(a, (256,), "float32")
    B = T.match_buffer(b, (64,), "float32")
    C = T.match_buffer(c, (64,), "float32")
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        S = T.alloc_buffer((64 + n,), "float32", scope="shared.dyn")
        for i in range(T.ceildiv(64 + n, 64)):
            if i * 64 + tx < 64 + n:
                S[i * 64 + tx] = A[i * 64 + tx]
        T.tvm_storage_sync("shared")
        B[tx] = S[tx + n]
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        R = T.alloc_buffer((64 + n,), "float32", scope="shared.dyn")
        for i in range(T.ceildiv(64 + n, 64)):
            if i * 64 + tx < 64 + n:
                R[i * 64 + tx] = A[i * 64 + tx] * T.float32(2)
        T.tvm_storage_sync("shared")
        C[tx] = R[tx + n]
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        C[tx] = C[tx] + T.float32(1)


def test_each_kernel_of_a_function_may_size_one_shared_buffer(dev):
    """Specialization constant 3 serves every kernel of the module: a kernel without a
    launch-sized array still specializes it to a valid length."""
    mod = tvm.compile(two_sized_kernels, target="vulkan")
    a = np.random.default_rng(8).random(256).astype("float32")
    for n in (0, 70, 150):
        b, c = tvm.runtime.empty((64,), "float32", dev), tvm.runtime.empty((64,), "float32", dev)
        mod["two_sized_kernels"](tvm.runtime.tensor(a, dev), b, c, n)
        np.testing.assert_array_equal(b.numpy(), a[n : n + 64])
        np.testing.assert_allclose(c.numpy(), a[n : n + 64] * 2 + 1, rtol=1e-6)


def test_widened_integers_compared_with_constants_are_right(dev):
    """``int64(x) < c`` is emitted as ``x < c`` where c fits x's type: lavapipe (Mesa 22.3) took
    the 64-bit constant for a large negative number, so ``int64(x) < 1024`` was false for x = 0."""

    @T.prim_func
    def compare(a: T.handle, c: T.handle):
        A = T.match_buffer(a, (64,), "int32")
        C = T.match_buffer(c, (8, 64), "int32")
        for i in T.thread_binding(64, thread="threadIdx.x"):
            x = T.Cast("int64", A[i])
            C[0, i] = T.Select(x < T.int64(1024), 1, 0)
            C[1, i] = T.Select(x >= T.int64(2), 1, 0)
            C[2, i] = T.Select(T.int64(3) > x, 1, 0)
            C[3, i] = T.Select(x <= T.int64(-5), 1, 0)
            C[4, i] = T.Select(T.Cast("int64", T.Cast("uint32", A[i])) < T.int64(7), 1, 0)
            C[5, i] = T.Select(x < T.int64(5000000000), 1, 0)
            C[6, i] = T.Select(x < T.int64(2**31), 1, 0)  # decided by x's range (was false for all x)
            C[7, i] = T.Select(T.int64(-(2**31) - 1) >= x, 1, 0)

    a = np.arange(-32, 32, dtype="int32")
    got = _run(compare, "compare", dev, [a], [((8, 64), "int32")])
    u = a.astype("uint32").astype("int64")
    expect = np.stack(
        [a < 1024, a >= 2, 3 > a, a <= -5, u < 7, a < 5000000000, a < 2**31, -(2**31) - 1 >= a.astype("int64")]
    ).astype("int32")
    np.testing.assert_array_equal(got, expect)


def test_float_to_integer_conversions_are_clamped_and_round_trips_round(dev):
    """A float outside the integer type's range made the conversion undefined, and lavapipe turned
    that into SIGFPE in a division by zero the kernel guards (the process died); an int-to-float-
    to-int round trip was folded away (int32(float32(16777217)) stayed 16777217). Conversions now
    clamp to the values the integer type holds (NaN to the lowest)."""

    @T.prim_func
    def convert(x: T.handle, d: T.handle, a: T.handle, c: T.handle):
        X = T.match_buffer(x, (4,), "float32")
        D = T.match_buffer(d, (4,), "int32")
        A = T.match_buffer(a, (4,), "int32")
        C = T.match_buffer(c, (4, 4), "int32")
        for i in T.thread_binding(4, thread="threadIdx.x"):
            C[0, i] = T.truncdiv(T.Cast("int32", T.Cast("uint16", X[i])), D[i])
            C[1, i] = T.Cast("int32", T.Cast("float32", A[i]))
            C[2, i] = T.Cast("int32", T.Cast("float16", A[i]))
            C[3, i] = T.Cast("int32", T.Cast("uint8", X[i] * T.float32(100)))

    x = np.array([-8.0, 3.0, 300.0, np.nan], "float32")
    d = np.array([0, 0, 2, 1], "int32")
    a = np.array([16777217, -16777217, 2049, 3], "int32")
    got = _run(convert, "convert", dev, [x, d, a], [((4, 4), "int32")])
    assert got[0, :2].tolist() == [0, 0]  # divisions by zero are 0
    np.testing.assert_array_equal(got[1], a.astype("float32").astype("int32"))
    np.testing.assert_array_equal(got[2, 2:], a[2:].astype("float16").astype("int32"))
    # float16 infinities clamp to int32's ends, as float32's do (not to float16's largest values)
    assert got[2, :2].tolist() == [2147483520, -2147483648]
    assert got[3].tolist() == [0, 255, 255, 0]  # clamped: below 0, above 255, NaN


def test_a_spirv_tools_library_asked_for_by_name_that_cannot_load_is_named(dev, tmp_path):
    """TVM_SPIRV_TOOLS_LIBRARY set to a path that is no SPIRV-Tools library turned the run-time
    SPIR-V check off without a word; it is an error naming the variable now."""
    code = """
import numpy as np, tvm
from tvm.testing import kernels
a = tvm.runtime.tensor(np.ones(8, "float32"), tvm.vulkan(0))
try:
    tvm.compile(kernels.vector_add(), target="vulkan")["vector_add"](a, a, a)
    print("ran")
except RuntimeError as err:
    print("explained:", err)
"""
    out = run_python(code, env={"TVM_SPIRV_TOOLS_LIBRARY": str(tmp_path / "no_such_lib.so")})
    assert out.returncode == 0, out.stderr
    assert "explained: TVM_SPIRV_TOOLS_LIBRARY=" in out.stdout and "cannot validate SPIR-V" in out.stdout, out.stdout
