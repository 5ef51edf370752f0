"""Scalar arguments past the 128 bytes of push constants Vulkan guarantees travel in a uniform
buffer at the binding after the storage buffers, filled per launch from a per-submission arena:
results against NumPy, many launches before one read, the descriptor-pool path in a fresh process,
and the device's maxUniformBufferRange."""

from __future__ import annotations

import os

import numpy as np
import pytest
import tvm
import tvm_ffi
from tvm.script import tir as T
from tvm.testing import kernels, run_python
from tvm.tir.transform import lower
from tvm_backend_vulkan import codegen
from tvm_backend_vulkan.emitter import scalar_block

#: Weights of the 20 int64 scalars in `twenty_int64` (distinct, so a misplaced value shows).
WEIGHTS = np.arange(1, 21, dtype="int64")


@T.prim_func
def twenty_int64(
    a: T.handle,
    b: T.handle,
    s0: T.int64,
    s1: T.int64,
    s2: T.int64,
    s3: T.int64,
    s4: T.int64,
    s5: T.int64,
    s6: T.int64,
    s7: T.int64,
    s8: T.int64,
    s9: T.int64,
    s10: T.int64,
    s11: T.int64,
    s12: T.int64,
    s13: T.int64,
    s14: T.int64,
    s15: T.int64,
    s16: T.int64,
    s17: T.int64,
    s18: T.int64,
    s19: T.int64,
):
    A = T.match_buffer(a, (64,), "int64")
    B = T.match_buffer(b, (64,), "int64")
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        B[tx] = (
            A[tx]
            + s0
            + s1 * T.int64(2)
            + s2 * T.int64(3)
            + s3 * T.int64(4)
            + s4 * T.int64(5)
            + s5 * T.int64(6)
            + s6 * T.int64(7)
            + s7 * T.int64(8)
            + s8 * T.int64(9)
            + s9 * T.int64(10)
            + s10 * T.int64(11)
            + s11 * T.int64(12)
            + s12 * T.int64(13)
            + s13 * T.int64(14)
            + s14 * T.int64(15)
            + s15 * T.int64(16)
            + s16 * T.int64(17)
            + s17 * T.int64(18)
            + s18 * T.int64(19)
            + s19 * T.int64(20)
        )


@T.prim_func
def mixed_scalars(
    a: T.handle,
    b: T.handle,
    c: T.handle,
    x0: T.int32,
    y0: T.float64,
    z0: T.int64,
    x1: T.int32,
    y1: T.float64,
    z1: T.int64,
    x2: T.int32,
    y2: T.float64,
    z2: T.int64,
    x3: T.int32,
    y3: T.float64,
    z3: T.int64,
    x4: T.int32,
    y4: T.float64,
    z4: T.int64,
    x5: T.int32,
    y5: T.float64,
    z5: T.int64,
    x6: T.int32,
):
    A = T.match_buffer(a, (64,), "float64")
    B = T.match_buffer(b, (64,), "float64")
    C = T.match_buffer(c, (64,), "int64")
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        B[tx] = A[tx] * y0 + y1 - y2 * T.float64(2) + y3 * T.float64(3) - y4 * T.float64(4) + y5 * T.float64(5)
        C[tx] = (
            T.Cast("int64", x0)
            + T.Cast("int64", x1) * T.int64(2)
            + T.Cast("int64", x2) * T.int64(3)
            + T.Cast("int64", x3) * T.int64(4)
            + T.Cast("int64", x4) * T.int64(5)
            + T.Cast("int64", x5) * T.int64(6)
            + T.Cast("int64", x6) * T.int64(7)
            + z0 * T.int64(8)
            + z1 * T.int64(9)
            + z2 * T.int64(10)
            + z3 * T.int64(11)
            + z4 * T.int64(12)
            + z5 * T.int64(13)
            + T.Cast("int64", tx)
        )


def _compiled():
    return tvm.compile(twenty_int64, target="vulkan"), tvm.compile(mixed_scalars, target="vulkan")


def _twenty_values(rng, bound=2**40):
    return [int(v) for v in rng.integers(-bound, bound, 20)]


def _twenty_expect(a, s):
    return a + int((WEIGHTS * np.array(s, "int64")).sum())


def _mixed_values(rng):
    xs = [int(v) for v in rng.integers(-(2**31), 2**31, 7)]
    ys = [float(v) for v in rng.standard_normal(6) * 1e3]
    zs = [int(v) for v in rng.integers(-(2**40), 2**40, 6)]
    args = []
    for k in range(6):
        args += [xs[k], ys[k], zs[k]]
    return args + [xs[6]], xs, ys, zs


def _mixed_expect(a, xs, ys, zs):
    b = a * ys[0] + ys[1] - ys[2] * 2 + ys[3] * 3 - ys[4] * 4 + ys[5] * 5
    c = sum(x * (k + 1) for k, x in enumerate(xs)) + sum(z * (k + 8) for k, z in enumerate(zs))
    return b, np.arange(64, dtype="int64") + c


def check_twenty_int64(dev) -> None:
    """One launch of 20 int64 scalars (160 bytes) against NumPy."""
    mod, _ = _compiled()
    rng = np.random.default_rng(0)
    a = rng.integers(-(2**40), 2**40, 64)
    s = _twenty_values(rng)
    A, B = tvm.runtime.tensor(a, dev), tvm.runtime.empty((64,), "int64", dev)
    mod["twenty_int64"](A, B, *s)
    np.testing.assert_array_equal(B.numpy(), _twenty_expect(a, s))


def check_mixed(dev) -> None:
    """One launch of int32/float64/int64 scalars with padding (148 bytes) against NumPy."""
    _, mod = _compiled()
    rng = np.random.default_rng(1)
    a = rng.standard_normal(64)
    args, xs, ys, zs = _mixed_values(rng)
    A = tvm.runtime.tensor(a, dev)
    B, C = tvm.runtime.empty((64,), "float64", dev), tvm.runtime.empty((64,), "int64", dev)
    mod["mixed_scalars"](A, B, C, *args)
    b, c = _mixed_expect(a, xs, ys, zs)
    np.testing.assert_allclose(B.numpy(), b, rtol=1e-12, atol=1e-9)
    np.testing.assert_array_equal(C.numpy(), c)


def check_many_launches(dev, rounds: int = 2, launches: int = 1500) -> None:
    """Per round, `launches` launches accumulate into one buffer, each with its own scalars, and
    then one read: more than one submission's worth (1024) and one arena buffer's worth, so the
    arena chains buffers, spans submissions and is recycled between rounds. Then 40 launches
    into 40 outputs and 40 launches of the mixed kernel, each output checked after one sync."""
    twenty, mixed = _compiled()
    rng = np.random.default_rng(2)
    for _ in range(rounds):
        acc = tvm.runtime.tensor(np.zeros(64, "int64"), dev)
        expect = np.zeros(64, "int64")
        for _ in range(launches):
            s = _twenty_values(rng, bound=2**30)
            twenty["twenty_int64"](acc, acc, *s)  # acc += sum of weighted scalars
            expect = _twenty_expect(expect, s)
        np.testing.assert_array_equal(acc.numpy(), expect)

    a = rng.integers(-(2**40), 2**40, 64)
    A = tvm.runtime.tensor(a, dev)
    outs, expects = [], []
    for _ in range(40):
        s = _twenty_values(rng)
        outs.append(tvm.runtime.empty((64,), "int64", dev))
        twenty["twenty_int64"](A, outs[-1], *s)
        expects.append(_twenty_expect(a, s))
    fa = rng.standard_normal(64)
    FA = tvm.runtime.tensor(fa, dev)
    mixed_outs, mixed_expects = [], []
    for _ in range(40):
        args, xs, ys, zs = _mixed_values(rng)
        B, C = tvm.runtime.empty((64,), "float64", dev), tvm.runtime.empty((64,), "int64", dev)
        mixed["mixed_scalars"](FA, B, C, *args)
        mixed_outs.append((B, C))
        mixed_expects.append(_mixed_expect(fa, xs, ys, zs))
    dev.sync()
    for out, expect in zip(outs, expects):
        np.testing.assert_array_equal(out.numpy(), expect)
    for (B, C), (b, c) in zip(mixed_outs, mixed_expects):
        np.testing.assert_allclose(B.numpy(), b, rtol=1e-12, atol=1e-9)
        np.testing.assert_array_equal(C.numpy(), c)


def test_layout_rule_switches_to_a_uniform_buffer_past_128_bytes():
    assert scalar_block(["int64"] * 16) == ([8 * k for k in range(16)], 128, False)
    assert scalar_block(["int64"] * 17)[1:] == (136, True)
    offsets, size, uniform = scalar_block(["int32", "float64", "int64"] * 6 + ["int32"])
    assert offsets[:4] == [0, 8, 16, 24] and size == 148 and uniform


def test_the_uniform_buffer_follows_the_storage_buffers():
    tvm.backend.load("vulkan")
    (kernel,) = lower(mixed_scalars, tvm.target.Target("vulkan")).kernels
    asm = codegen.generate([kernel])[1]
    name = kernel.global_symbol
    for text in (f"OpDecorate %{name}_args Binding 3", f"OpDecorate %{name}_args DescriptorSet 0", " 18 Offset 144"):
        assert text in asm, text
    assert "PushConstant" not in asm


def test_twenty_int64_scalars(dev):
    check_twenty_int64(dev)


def test_mixed_int32_float64_int64_scalars(dev):
    check_mixed(dev)


def test_many_launches_keep_each_launchs_scalars(dev):
    check_many_launches(dev)


def test_uniform_scalars_with_descriptor_pools_in_a_fresh_process(dev):
    """The same checks with push descriptors off (TVM_VULKAN_DISABLE_PUSH_DESCRIPTOR=1), under
    the validation layer with its own log when it is installed."""
    code = """
        import sys
        sys.path.insert(0, {here!r})
        from vulkan_testing import enable_validation_layer, validation_messages
        log = enable_validation_layer()
        import tvm
        import test_vulkan_uniform_args as t
        dev = tvm.vulkan(0)
        assert dev.attr("supports_push_descriptor") in (True, False)
        t.check_twenty_int64(dev)
        t.check_mixed(dev)
        t.check_many_launches(dev, rounds=1)
        print("MESSAGES", len(validation_messages(log)))
        print("\\n".join(validation_messages(log)[:5]))
    """
    done = run_python(
        code.format(here=os.path.dirname(os.path.abspath(__file__))),
        env={"TVM_VULKAN_DISABLE_PUSH_DESCRIPTOR": "1"},
    )
    assert done.returncode == 0, done.stderr
    assert "MESSAGES 0" in done.stdout, done.stdout


def test_scalars_past_max_uniform_buffer_range_are_a_value_error(dev):
    """A function table whose scalars exceed the device's maxUniformBufferRange is refused at
    launch, naming the limit (the kernel's SPIR-V never reaches a pipeline)."""
    limit = dev.attr("max_uniform_buffer_range")
    tvm.backend.load("vulkan")
    (kernel,) = lower(kernels.vector_add(), tvm.target.Target("vulkan")).kernels
    name, binary = kernel.global_symbol, codegen.generate([kernel])[0]
    count = limit // 8 + 1
    table = [[name, ["handle:float32"] * 3 + ["int64"] * count, ["blockIdx.x", "threadIdx.x"]]]
    create = tvm_ffi.get_global_func("ffi.Module.create.vulkan")
    mod = create("spirv", table, binary, [["spirv", ""]])
    A = tvm.runtime.empty((64,), "float32", dev)
    with pytest.raises(ValueError, match=f"maxUniformBufferRange of {limit} bytes"):
        mod[name](A, A, A, *([1] * count), 1, 64)
