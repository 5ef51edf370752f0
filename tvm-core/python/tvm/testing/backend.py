"""The conformance suite: what every backend, first- or third-party, must pass.

A backend's test folder holds one small file::

    from tvm.testing.backend import BackendConformance

    class TestConformance(BackendConformance):
        backend = "opencl"                                   # the entry-point name
        dtypes = ("float32", "float16", "int32", "int8")     # what its targets support
        no_driver_env = {"TVM_OPENCL_LIBRARY": "/nonexistent/libOpenCL.so.1"}

and pytest runs every check below against the installed wheels:

* the kernel zoo (:mod:`tvm.testing.kernels`): an elementwise kernel in every dtype of
  ``dtypes``, a shared-memory reduction, a row softmax, a tiled matmul, one compiled kernel over
  several symbolic sizes, a cross-thread reduction written as Apache TVM writes it (a block
  whose reduction axis is bound to ``threadIdx.x``); compiled everywhere, run on the device and
  compared with NumPy where the device exists (the skip names why it does not); the zoo's tunable kernels
  (:mod:`tvm.testing.tunables`): the largest configuration within the target's limits compiles
  and the target's default configuration runs;
* the fallback module: the same kind and the same bytes as the module the backend builds, a
  working ``inspect_source``, and functions that raise naming the backend and the reason;
* export and reload in a fresh process, with backend autoload on and off, of the built module
  and of a fallback module (a library cross-compiled where the runtime is missing);
* bad arguments: a clear Python exception, never a crash;
* activation without a driver: ``runtime unavailable`` with the reason, and code generation
  still works.
"""

from __future__ import annotations

import ctypes

import random
import re
from typing import Any, ClassVar

import numpy as np
import pytest
import tvm_ffi

import tvm
from tvm.testing import kernels
from tvm.testing.process import run_python
from tvm.tir.dtype import SCALAR_DTYPES

#: Elementwise inputs per dtype kind: small values, so sums fit every integer type.
_RNG_SEED = 0


def random_array(shape: tuple[int, ...], dtype: str, seed: int = _RNG_SEED) -> np.ndarray:
    """Test data of ``dtype`` whose elementwise sums are exact in that dtype."""
    rng = np.random.default_rng(seed)
    if dtype == "bfloat16":
        import ml_dtypes

        return rng.standard_normal(shape).astype(ml_dtypes.bfloat16)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 50, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def tolerance(dtype: str) -> dict[str, float]:
    """``assert_allclose`` tolerances for results computed in ``dtype``."""
    if dtype in ("float16", "bfloat16"):
        return {"rtol": 2e-2, "atol": 2e-2}
    if dtype == "float32":
        return {"rtol": 1e-5, "atol": 1e-5}
    return {"rtol": 0, "atol": 0}


def unavailable_reason(backend: str, device: str | None = None, fix: str = "") -> str:
    """ "" when kernels can run on ``<device>(0)`` (default: the backend's name), else why not:
    the backend does not load, its runtime is unavailable, or no device exists (the runtime's
    ``unavailable_reason`` attribute); ``fix`` (what to install) is appended in parentheses."""
    from tvm.backend.api import runtime_unavailable_reason

    hint = f" ({fix})" if fix else ""
    why = runtime_unavailable_reason(backend)
    if why:
        return f"{why}{hint}"
    dev = tvm.device(device or backend, 0)
    if not dev.exist:
        why = dev.attr("unavailable_reason") or f"{dev} does not exist"
        return f"no {backend} device: {why}{hint}"
    return ""


#: Every dtype the elementwise conformance kernel can be checked in (bool has its own check).
ALL_DTYPES: tuple[str, ...] = tuple(d for d in SCALAR_DTYPES if d != "bool")
#: Random expressions each backend runs in ``test_random_integer_expressions``.
RANDOM_EXPRESSIONS = 24
#: How many random kernels ``test_random_kernels_match_the_cpu`` compiles and runs.
RANDOM_KERNELS = 8


class BackendConformance:
    """Subclass as ``Test<Something>`` and set :attr:`backend` (and what differs from the
    defaults); pytest collects the checks from the subclass."""

    #: The backend's entry-point name.
    backend: ClassVar[str] = ""
    #: The target the kernels are compiled for (default: the backend's name).
    target: ClassVar[str] = ""
    #: The device the kernels run on (default: the backend's name).
    device: ClassVar[str] = ""
    #: The dtypes the elementwise kernel is checked in (:data:`ALL_DTYPES` for a backend that
    #: supports every one).
    dtypes: ClassVar[tuple[str, ...]] = ("float32", "int32")
    #: Whether buffer parameters may hold bool (one byte per element); False skips the check,
    #: for a language whose device memory holds no bytes.
    bool_buffers: ClassVar[bool] = True
    #: Whether the device's buffers are driver objects the runtime tracks (cl_mem, Vulkan and
    #: WebGPU buffers), so that a raw pointer that is none of them can be refused; False for
    #: buffers that are device addresses, which no runtime can tell from any other pointer.
    buffers_are_handles: ClassVar[bool] = False
    #: Whether the runtime knows the size of the allocation behind a raw buffer pointer (None:
    #: where buffers are driver objects, :attr:`buffers_are_handles`), so that a kernel reading
    #: more than a too-small allocation holds is refused before it runs.
    raw_pointers_are_sized: ClassVar[bool | None] = None
    #: Whether kernels may use dynamic shared memory (scope ``shared.dyn``, sized at launch);
    #: False checks that compiling such a kernel is refused with a message saying so.
    dynamic_shared_memory: ClassVar[bool] = True
    #: Whether a buffer may view memory allocated with another dtype (``T.decl_buffer(...,
    #: data=S.data)``, read bit for bit); False checks that such a kernel is refused by name.
    typed_views: ClassVar[bool] = True
    #: The float32 math functions the backend compiles (the keys of
    #: :data:`tvm.testing.kernels.MATH_FUNCTIONS` and ``pow``); checked against NumPy.
    math_functions: ClassVar[tuple[str, ...]] = (*kernels.MATH_FUNCTIONS, "pow")
    #: Whether a float converted to a narrower integer keeps the low bits of its int32 (int64)
    #: conversion, as NumPy on x86 (-2.0 to uint32 is 2**32 - 2); False for languages whose
    #: conversions saturate (SPIR-V, WGSL), where the check is skipped.
    float_to_int_keeps_low_bits: ClassVar[bool] = True
    #: Whether the backend compiles Apache TVM's warp shuffles (``T.tvm_warp_shuffle`` ...) for
    #: 32-lane warps; False checks that they are refused by name.
    warp_shuffles: ClassVar[bool] = False
    #: Environment variables that make the backend's driver unavailable in a fresh process, or None
    #: when the backend has no such switch (then the check runs only where no driver is installed).
    no_driver_env: ClassVar[dict[str, str] | None] = None

    # ------------------------------------------------------------------ helpers

    @classmethod
    def target_name(cls) -> str:
        """The target string the kernels are compiled for."""
        return cls.target or cls.backend

    @classmethod
    def record(cls) -> tvm.backend.BackendRecord:
        """The backend's record (activating it when autoload is off)."""
        return tvm.backend.load(cls.backend)

    @classmethod
    def dev(cls) -> tvm.runtime.Device:
        """The device to run on; skips the calling test, naming why, when it does not exist."""
        why = unavailable_reason(cls.backend, cls.device or None)
        if why:
            pytest.skip(why)
        return tvm.device(cls.device or cls.backend)

    def run(self, func: Any, name: str, inputs: list[np.ndarray], outputs: list[tuple]) -> np.ndarray:
        """Compile ``func``, run it on the device with ``inputs`` and empty ``outputs`` (shape,
        dtype), and return the last output."""
        mod = tvm.compile(func, target=self.target_name())
        dev = self.dev()
        args = [tvm.runtime.tensor(x, dev) for x in inputs] + [tvm.runtime.empty(s, d, dev) for s, d in outputs]
        mod[name](*args)
        return args[-1].numpy()

    def run_checked(
        self, func: Any, name: str, inputs: list[np.ndarray], outputs: list[tuple], expect: Any, dtype: str = "float32"
    ) -> None:
        """:meth:`run`, then compare the last output with ``expect``."""
        got = self.run(func, name, inputs, outputs)
        np.testing.assert_allclose(got.astype("float64"), np.asarray(expect).astype("float64"), **tolerance(dtype))

    # ------------------------------------------------------------------ activation

    def test_backend_generates_code(self):
        rec = self.record()
        assert rec.status in (tvm.backend.ACTIVE, tvm.backend.RUNTIME_UNAVAILABLE), tvm.backend.report()
        mod = tvm.compile(kernels.vector_add(), target=self.target_name())
        (dev_mod,) = mod.imports
        assert dev_mod.kind in rec.module_kinds, (dev_mod.kind, rec.module_kinds)
        assert "vector_add_kernel0" in dev_mod.inspect_source()
        # the library tvm.compile returns shows its device code by format (the module's kind is
        # an alias of its first text); a format it does not have is a ValueError naming those it has
        assert mod.inspect_source(dev_mod.kind) == dev_mod.inspect_source() != mod.inspect_source()
        with pytest.raises(ValueError, match="no module here has source format 'no-such-format'"):
            mod.inspect_source("no-such-format")

    # ------------------------------------------------------------------ the kernel zoo

    def test_elementwise_in_every_dtype(self):
        for dtype in self.dtypes:
            a, b = random_array((1000,), dtype, 1), random_array((1000,), dtype, 2)
            self.run_checked(kernels.vector_add(dtype), "vector_add", [a, b], [((1000,), dtype)], a + b, dtype)

    def test_buffer_shared_between_kernels(self):
        """A buffer allocated outside the kernels is device memory the host code allocates for
        the call: one kernel writes it, the next reads it."""
        a = random_array((1000,), "float32")
        self.run_checked(kernels.two_stage(), "two_stage", [a], [((1000,), "float32")], (np.roll(a, -1) + 1) * 2)

    def test_bool_buffers(self):
        """A bool tensor is one byte per element on every backend: read, written, and a bool
        local array in between."""
        if not self.bool_buffers:
            pytest.skip(f"{self.backend} declares that its buffers cannot hold bool")
        a = random_array((1000,), "float32")
        m = random_array((1000,), "int32", 2) % 2 == 1
        mod = tvm.compile(kernels.bool_select(), target=self.target_name())
        dev = self.dev()
        args = [tvm.runtime.tensor(a, dev), tvm.runtime.tensor(m, dev)]
        args += [tvm.runtime.empty((1000,), "bool", dev), tvm.runtime.empty((1000,), "float32", dev)]
        mod["bool_select"](*args)
        np.testing.assert_array_equal(args[2].numpy(), a > 0)
        np.testing.assert_array_equal(args[3].numpy(), np.where(m & ~(a > 0), -a, a))

    def test_bool_bytes_other_than_one_are_true(self):
        """A bool tensor whose bytes are not all 0 or 1 (a uint8 mask viewed as bool) reads as
        NumPy reads it: nonzero is true (C-family targets gave the byte, 2 or 255)."""
        if not self.bool_buffers:
            pytest.skip(f"{self.backend} declares that its buffers cannot hold bool")
        from tvm.script import tir as T

        @T.prim_func
        def as_ints(P: T.Buffer((6,), "bool"), B: T.Buffer((6, 2), "int32")):
            for i in T.thread_binding(6, thread="threadIdx.x"):
                B[i, 0] = T.Cast("int32", P[i])
                B[i, 1] = T.Select(P[i] == T.bool(True), 10, 20)

        mask = np.array([0, 1, 2, 255, 0, 3], "uint8").view(np.bool_)
        dev = self.dev()
        out = tvm.runtime.empty((6, 2), "int32", dev)
        tvm.compile(as_ints, target=self.target_name())(tvm.runtime.tensor(mask, dev), out)
        truth = mask.astype("int32")
        np.testing.assert_array_equal(out.numpy(), np.stack([truth, np.where(truth == 1, 10, 20)], axis=1))

    def test_bools_from_floats_and_bools_in_order(self):
        """A float is true unless it is zero (NaN too: WebGPU gave false), and bools compare as
        0 < 1 (Vulkan refused ``<`` on bools, WebGPU's shader compiler failed)."""
        if not self.bool_buffers:
            pytest.skip(f"{self.backend} declares that its buffers cannot hold bool")
        from tvm.script import tir as T

        @T.prim_func
        def truths(A: T.Buffer((8,), "float32"), P: T.Buffer((8,), "bool"), Q: T.Buffer((8,), "bool"),
                   B: T.Buffer((8,), "bool"), O: T.Buffer((8, 4), "bool")):  # fmt: skip
            for i in T.thread_binding(8, thread="threadIdx.x"):
                B[i] = T.Cast("bool", A[i])
                O[i, 0] = P[i] < Q[i]
                O[i, 1] = P[i] <= Q[i]
                O[i, 2] = P[i] > Q[i]
                O[i, 3] = P[i] >= Q[i]

        a = np.array([np.nan, 0.0, -0.0, 1.0, -np.nan, np.inf, 1e-45, -2.0], "float32")
        p, q = np.array([0, 0, 1, 1] * 2, bool), np.array([0, 1, 0, 1] * 2, bool)
        dev = self.dev()
        mod = tvm.compile(truths, target=self.target_name())
        args = [tvm.runtime.tensor(x, dev) for x in (a, p, q)]
        args += [tvm.runtime.empty((8,), "bool", dev), tvm.runtime.empty((8, 4), "bool", dev)]
        mod["truths"](*args)
        np.testing.assert_array_equal(args[3].numpy(), a.astype(bool))
        np.testing.assert_array_equal(args[4].numpy(), np.stack([p < q, p <= q, p > q, p >= q], axis=1))

    def test_float16_rounds_like_numpy(self):
        """Every float16 operation's result is rounded to float16, as NumPy (and float16
        hardware) round it: bit for bit, not merely close."""
        if "float16" not in self.dtypes:
            pytest.skip(f"{self.backend} does not list float16 among its dtypes")
        a = (random_array((4096,), "float32", 3) * 4).astype("float16")
        b = random_array((4096,), "float16", 4)
        got = self.run(kernels.float16_chain(), "float16_chain", [a, b], [((4096,), "float16")])
        want = a * a + a / np.float16(3) - b * np.float16(0.7)
        hint = (
            "float16 results differ from NumPy's in their bits: a target whose language stores float16 but "
            "computes it in float32 (C on a CPU) lists the pass 'tvm.tir.transform:legalize_float16' in "
            "register_target_kind(passes=...)"
        )
        np.testing.assert_array_equal(got.view("uint16"), want.view("uint16"), err_msg=hint)

    def test_16_bit_float_bits(self):
        """T.reinterpret between a 16-bit float and uint16 gives the stored bits both ways,
        whether the language computes in that float or emulates it."""
        bits = ((np.arange(256, dtype="uint32") * 257 + 3) % 65536).astype("uint16")  # NaN payloads too
        listed = [d for d in ("float16", "bfloat16") if d in self.dtypes]
        if not listed:
            pytest.skip(f"{self.backend} lists neither float16 nor bfloat16 among its dtypes")
        for dtype in listed:
            if dtype == "bfloat16":
                reason = "ml_dtypes (pip install ml_dtypes) gives NumPy's bfloat16"
                a = bits.view(pytest.importorskip("ml_dtypes", reason=reason).bfloat16)
            else:
                a = bits.view(np.float16)
            mod = tvm.compile(kernels.half_bits_round_trip(dtype), target=self.target_name())
            dev = self.dev()
            args = [tvm.runtime.tensor(a, dev), tvm.runtime.empty((256,), "uint16", dev)]
            args.append(tvm.runtime.empty((256,), dtype, dev))
            mod["half_bits"](*args)
            np.testing.assert_array_equal(args[1].numpy(), bits)
            np.testing.assert_array_equal(args[2].numpy().view("uint16"), bits)

    def test_count_leading_zeros(self):
        """T.clz of 32-bit integers (and of 64-bit ones where the backend lists uint64), 0 and
        all-ones included, against Python's bit lengths."""
        dev = self.dev()
        rng = np.random.default_rng(21)
        for dtype in [d for d in ("int32", "uint64") if d == "int32" or d in self.dtypes]:
            bits = 32 if dtype == "int32" else 64
            raw = rng.integers(0, 2**63, 256, dtype=np.uint64) >> rng.integers(0, 64, 256).astype(np.uint64)
            a = raw.astype(np.uint64 if bits == 64 else np.uint32).view(dtype if bits == 64 else np.int32)
            a[:3] = np.array([0, 1, -1 if bits == 32 else 2**64 - 1]).astype(a.dtype)
            want = np.array([bits - (int(x) & (2**bits - 1)).bit_length() for x in a], "int32")
            mod = tvm.compile(kernels.count_leading_zeros(dtype), target=self.target_name())
            out = tvm.runtime.empty((256,), "int32", dev)
            mod["clz"](tvm.runtime.tensor(a, dev), out)
            np.testing.assert_array_equal(out.numpy(), want, err_msg=dtype)

    def test_view_of_shared_memory_as_another_dtype(self):
        """float16 shared memory read as float32 through a view gives the float32 of those bits
        (where float16 is listed and views are possible; elsewhere the kernel is refused by name)."""
        if not self.typed_views:
            with pytest.raises(Exception, match="views the memory|pointer casts|holds float16 as float32") as err:
                tvm.compile(kernels.halves_as_floats(), target=self.target_name())
            assert 'kernels.py", line' in str(err.value), f"the refusal names no TVMScript line: {err.value}"
            return
        if "float16" not in self.dtypes:
            pytest.skip(f"{self.backend} does not list float16 among its dtypes")
        dev = self.dev()
        a = random_array((128,), "float32")
        halves = a.astype("float16").reshape(4, 32)
        want = np.concatenate([np.tile(block.view("float32"), 2) for block in halves])
        mod = tvm.compile(kernels.halves_as_floats(), target=self.target_name())
        out = tvm.runtime.empty((128,), "float32", dev)
        mod["halves_as_floats"](tvm.runtime.tensor(a, dev), out)
        np.testing.assert_array_equal(out.numpy().view("uint32"), want.view("uint32"))

    def test_composite_math(self):
        """T.hypot (huge and tiny magnitudes, where x² would overflow or underflow), T.copysign
        (signed zeros), T.ldexp (exponents both ways) and T.asinh / T.acosh / T.atanh (through
        log1p, spelled out where the language lacks it) in float32 against NumPy."""
        dev = self.dev()
        rng = np.random.default_rng(25)
        a = (rng.standard_normal(256) * np.logspace(-30, 30, 256)).astype("float32")
        b = rng.uniform(-0.999, 0.999, 256).astype("float32")
        b[:2] = [0.0, -0.0]
        c = (1 + np.abs(rng.standard_normal(256)) * np.logspace(-6, 20, 256)).astype("float32")
        e = rng.integers(-40, 40, 256).astype("int32")
        mod = tvm.compile(kernels.portable_math(), target=self.target_name())
        out = tvm.runtime.empty((6, 256), "float32", dev)
        mod["portable_math"](*(tvm.runtime.tensor(x, dev) for x in (a, b, c, e)), out)
        got = out.numpy()
        wide = [x.astype("float64") for x in (a, b, c)]
        want = [np.hypot(wide[0], wide[1]), np.copysign(a, b), np.ldexp(wide[1], e), np.arcsinh(wide[0]),
                np.arccosh(wide[2]), np.arctanh(wide[1])]  # fmt: skip
        for k, name in enumerate(["hypot", "copysign", "ldexp", "asinh", "acosh", "atanh"]):
            np.testing.assert_allclose(got[k], np.asarray(want[k]).astype("float32"), rtol=4e-6, err_msg=name)

    def test_tensor_core_fragments(self):
        """Apache TVM's tensorized wmma GEMM (fragments, T.tvm_load_matrix_sync row- and
        column-major, T.tvm_mma_sync over two k tiles, T.tvm_store_matrix_sync) against NumPy, in
        float16 where the backend lists it, else float32."""
        dtype = "float16" if "float16" in self.dtypes else "float32"
        a, bt = random_array((32, 32), dtype, seed=26), random_array((32, 32), dtype, seed=27)
        mod = tvm.compile(kernels.tensor_core_gemm(dtype), target=self.target_name())  # compiles everywhere
        dev = self.dev()
        out = tvm.runtime.empty((32, 32), "float32", dev)
        mod["tensor_core_gemm"](tvm.runtime.tensor(a, dev), tvm.runtime.tensor(bt, dev), out)
        want = a.astype("float64") @ bt.astype("float64").T
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-4)

    def test_float8(self):
        """float8_e4m3fn and float8_e5m2 buffers (bytes, computed in float32): conversions from
        float32 (zeros, infinities, NaN, overflow, subnormals), back, and arithmetic rounded per
        operation, bit for bit against ml_dtypes; where the target has no float8
        (``supports_float8``), the kernel is refused by name."""
        ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes (pip install ml_dtypes) gives the reference")
        from tvm.target import Target

        target = self.target_name()
        if not Target(target).capability("supports_float8"):
            with pytest.raises(Exception, match="has no float8_e4m3fn"):
                tvm.compile(kernels.float8_arithmetic("float8_e4m3fn"), target=target)
            return
        rng = np.random.default_rng(28)
        a = (rng.standard_normal(4096) * np.logspace(-12, 6, 4096)).astype("float32")
        a[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, -1e30, 3 * 2.0**-11]
        mods = {d: tvm.compile(kernels.float8_arithmetic(d), target=target) for d in ("float8_e4m3fn", "float8_e5m2")}
        dev = self.dev()
        for dtype, mod in mods.items():
            f8 = getattr(ml_dtypes, dtype)
            b, c, d = (tvm.runtime.empty((4096,), t, dev) for t in (dtype, "float32", dtype))
            mod["float8"](tvm.runtime.tensor(a, dev), b, c, d)
            want = a.astype(f8)
            np.testing.assert_array_equal(b.numpy().view("uint8"), want.view("uint8"), err_msg=dtype)
            np.testing.assert_array_equal(c.numpy(), want.astype("float32"), err_msg=dtype)
            got, expect = d.numpy(), want * want + f8(0.5)
            nan = np.isnan(expect.astype("float32"))  # a NaN's sign from arithmetic is the machine's
            np.testing.assert_array_equal(np.isnan(got.astype("float32")), nan, err_msg=dtype)
            np.testing.assert_array_equal(got.view("uint8")[~nan], expect.view("uint8")[~nan], err_msg=dtype)

    def test_population_count(self):
        """T.popcount in every integer dtype the backend lists (int32 always), negative values,
        0 and all-ones included, against Python's bit counts."""
        dev = self.dev()
        rng = np.random.default_rng(24)
        for dtype in [d for d in ALL_DTYPES if d == "int32" or (d in self.dtypes and d.startswith(("int", "uint")))]:
            info = np.iinfo(dtype)
            a = rng.integers(info.min, info.max, 256, dtype=dtype, endpoint=True)
            a[:3] = np.array([0, info.max, info.min], dtype)
            want = np.array([bin(int(x) & (2**info.bits - 1)).count("1") for x in a], dtype)
            mod = tvm.compile(kernels.population_count(dtype), target=self.target_name())
            out = tvm.runtime.empty((256,), dtype, dev)
            mod["popcount"](tvm.runtime.tensor(a, dev), out)
            np.testing.assert_array_equal(out.numpy(), want, err_msg=dtype)

    def test_zero_and_nan_constants_keep_infinities_nans_and_signs(self):
        """Float arithmetic with a zero or NaN constant gives NumPy's infinities, NaNs and zero
        signs (bit for bit): drivers folded ``x * 0.0`` to 0, ``x / 0.0`` to garbage, ``0.0 - x``
        to ``-x`` (also through a variable) and a floor division by a NaN literal to garbage."""
        a = np.array([0.0, 1.5, -2.0, np.inf, np.nan, -0.0, -np.inf, 1e-3], "float32")
        got = self.run(kernels.float_specials(), "float_specials", [a], [((9, 8), "float32")])
        want = kernels.float_specials_reference(a)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_array_equal(got[~np.isnan(want)].view("uint32"), want[~np.isnan(want)].view("uint32"))

    def test_unsigned_8_and_16_bit_indices_past_the_signed_range(self):
        """A uint16 index of 40000 and a uint8 one of 200 reach those elements (SPIR-V read
        narrow indices as signed: the writes went before the buffer)."""
        dev = self.dev()
        mod = tvm.compile(kernels.narrow_unsigned_indices(), target=self.target_name())
        out = tvm.runtime.tensor(np.zeros(40064, "float32"), dev)
        mod["narrow_unsigned_indices"](tvm.runtime.tensor(np.array([40000, 200], "int32"), dev), out)
        want = np.zeros(40064, "float32")
        want[40000:], want[200] = 1, 2
        np.testing.assert_array_equal(out.numpy(), want)

    def test_loop_and_launch_variables_of_a_narrow_integer_dtype(self):
        """An int16 size bound to blockIdx and an int16 loop count (WebGPU, which computes
        narrow integers in 32 bits, had no type for the loop variables)."""
        dev = self.dev()
        mod = tvm.compile(kernels.narrow_loop_variables(), target=self.target_name())
        a = tvm.runtime.tensor(np.arange(10, dtype="float32"), dev)
        mod["narrow_loop_variables"](a, 3)
        np.testing.assert_array_equal(a.numpy(), np.arange(10, dtype="float32") + 3)

    def test_a_narrow_loop_ending_at_its_dtypes_top(self):
        """An int8 loop over 108..127: its end, 128, wrapped in int8 and Vulkan ran no iteration."""
        dev = self.dev()
        mod = tvm.compile(kernels.narrow_loop_to_the_top(), target=self.target_name())
        a = tvm.runtime.tensor(np.zeros(20, "int32"), dev)
        mod["narrow_loop_to_the_top"](a, 108)
        np.testing.assert_array_equal(a.numpy(), np.arange(108, 128, dtype="int32"))

    def test_apache_warp_shuffles(self):
        """``T.tvm_warp_shuffle`` and its up, down and xor forms in segments narrower than the
        warp against NumPy where the backend has them (:attr:`warp_shuffles`), else refused by
        name at compile time."""
        func = kernels.warp_shuffles("float32", 32)
        if not self.warp_shuffles:
            with pytest.raises(Exception, match="tvm_warp_shuffle"):
                tvm.compile(func, target=self.target_name())
            return
        a = random_array((64,), "float32", seed=31)
        got = self.run(func, "warp_shuffles", [a], [((7, 64), "float32")])
        np.testing.assert_array_equal(got, kernels.warp_shuffles_reference(a, 32))

    def test_float_min_and_max_with_nan_and_signed_zeros(self):
        """T.min / T.max of floats pick by ``<`` / ``>`` as TIR defines them (NaN as the second
        operand is the result, as the first it is not; of -0.0 and 0.0 the second), in every float
        dtype the backend lists (float32 always)."""
        dev = self.dev()
        for dtype in [d for d in ALL_DTYPES if d == "float32" or (d in self.dtypes and d.startswith("float"))]:
            if dtype == "bfloat16":
                continue  # NumPy has no bfloat16 to compare in
            a, b = random_array((256,), dtype, 5), random_array((256,), dtype, 6)
            a[:6] = np.array([np.nan, 1.0, np.nan, -0.0, 0.0, np.inf], dtype)
            b[:6] = np.array([1.0, np.nan, np.nan, 0.0, -0.0, -np.inf], dtype)
            mod = tvm.compile(kernels.min_max(dtype), target=self.target_name())
            out = [tvm.runtime.empty((256,), dtype, dev) for _ in range(2)]
            mod["min_max"](tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev), *out)
            for got, want, what in [(out[0], np.where(a < b, a, b), "min"), (out[1], np.where(a > b, a, b), "max")]:
                bits = got.numpy().view(f"uint{np.dtype(dtype).itemsize * 8}")
                nan = np.isnan(want)
                np.testing.assert_array_equal(np.isnan(got.numpy()), nan, err_msg=f"{dtype} {what}: NaN")
                np.testing.assert_array_equal(bits[~nan], want.view(bits.dtype)[~nan], err_msg=f"{dtype} {what}")

    def test_float_remainder(self):
        """T.fmod in every float dtype the backend lists (float32 always) against NumPy's fmod,
        float16 computed as precisely as float32 computes it (quotients below 2**8: Vulkan's and
        WGSL's remainder is x - y * trunc(x / y), inexact for larger ones)."""
        dev = self.dev()
        for dtype in [d for d in ALL_DTYPES if d == "float32" or (d in self.dtypes and d.startswith("float"))]:
            if dtype == "bfloat16":
                continue  # NumPy has no bfloat16 to compare in
            a = (random_array((256,), "float32", 7) * 40).astype(dtype)
            b = (random_array((256,), "float32", 8) * 3 + 0.25).astype(dtype)
            mod = tvm.compile(kernels.float_remainder(dtype), target=self.target_name())
            out = tvm.runtime.empty((256,), dtype, dev)
            mod["fmod"](tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev), out)
            if dtype == "float16":  # within one float16 ulp of the float32 remainder rounded
                want16 = np.fmod(a.astype("float32"), b.astype("float32")).astype("float16")
                np.testing.assert_array_max_ulp(out.numpy(), want16, maxulp=1)
                continue
            want = np.fmod(a.astype("float64"), b.astype("float64"))
            np.testing.assert_allclose(out.numpy().astype("float64"), want, err_msg=dtype, **tolerance(dtype))

    def test_float_floor_remainder(self):
        """``A % B`` of float32 against NumPy's: the divisor's sign, for a zero remainder too
        (4 % -2 is -0.0), so the bits of exact remainders match."""
        dev = self.dev()
        a = (random_array((256,), "float32", 9) * 40).astype("float32")
        b = (random_array((256,), "float32", 10) * 3 + 0.25).astype("float32")
        b[1::2] *= -1
        a[:8], b[:8] = [4, -4, 4, -4, 0, -0.0, 5.5, -5.5], [2, 2, -2, -2, -3, 3, 2, -2]
        mod = tvm.compile(kernels.float_floor_remainder(), target=self.target_name())
        out = tvm.runtime.empty((256,), "float32", dev)
        mod["floormod"](tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev), out)
        want = a % b
        np.testing.assert_array_equal(out.numpy()[:8].view("uint32"), want[:8].view("uint32"))
        np.testing.assert_allclose(out.numpy(), want, **tolerance("float32"))
        np.testing.assert_array_equal(np.signbit(out.numpy()), np.signbit(want))

    def test_float_to_integer_keeps_low_bits(self):
        """float32 within int32 to 8-, 16-, 32- and 64-bit integers keeps the low bits as NumPy on
        x86 (-2.0 to uint64 is 2**64 - 2: PoCL gave 2**64 - 1, Hexagon 0), and to uint64 from
        2**63 up is exact; also when OpenCL prints a run of stores as one vector conversion
        (``convert_uint8`` saturated every negative value)."""
        if not self.float_to_int_keeps_low_bits:
            pytest.skip(f"{self.backend} declares that its float to integer conversions saturate")
        from tvm.script import tir as T

        narrow = ("uint8", "int8", "uint16", "int16", "uint32", "int64")

        @T.prim_func
        def to_ints(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32"), O: T.Buffer((6, 8), "int64"),
                    U: T.Buffer((8,), "uint64"), R: T.Buffer((8,), "uint32")):  # fmt: skip
            for i in T.thread_binding(8, thread="threadIdx.x"):
                for k in T.unroll(6):
                    O[k, i] = T.Select(
                        k == 0,
                        T.Cast("int64", T.Cast("uint8", A[i])),
                        T.Select(
                            k == 1,
                            T.Cast("int64", T.Cast("int8", A[i])),
                            T.Select(
                                k == 2,
                                T.Cast("int64", T.Cast("uint16", A[i])),
                                T.Select(
                                    k == 3,
                                    T.Cast("int64", T.Cast("int16", A[i])),
                                    T.Select(k == 4, T.Cast("int64", T.Cast("uint32", A[i])), T.Cast("int64", A[i])),
                                ),
                            ),
                        ),
                    )
                U[i] = T.Cast("uint64", C[i])
                if i == 0:
                    R[0] = T.Cast("uint32", A[0])
                    R[1] = T.Cast("uint32", A[1])
                    R[2] = T.Cast("uint32", A[2])
                    R[3] = T.Cast("uint32", A[3])

        a = np.array([-2.0, -1.0, -7.5, 5.5, 300.0, -129.0, 70000.0, 2e9], "float32")
        c = np.array([-2.0, -1.0, 5.5, 1e19, 2.0**63, 1.5 * 2.0**63, 0.0, -7.5], "float32")
        dev = self.dev()
        args = [tvm.runtime.tensor(x, dev) for x in (a, c)]
        args += [
            tvm.runtime.empty(shape, dt, dev) for shape, dt in (((6, 8), "int64"), ((8,), "uint64"), ((8,), "uint32"))
        ]
        tvm.compile(to_ints, target=self.target_name())["to_ints"](*args)
        low = a.astype(np.int64)
        for k, dtype in enumerate(narrow):
            np.testing.assert_array_equal(args[2].numpy()[k], low.astype(dtype).astype(np.int64), err_msg=dtype)
        want = np.where(c < 0, c.astype(np.int64).astype(np.uint64), np.maximum(c, 0).astype(np.uint64))
        np.testing.assert_array_equal(args[3].numpy(), want)
        np.testing.assert_array_equal(args[4].numpy()[:4], low[:4].astype("uint32"))

    def test_integer_arithmetic_wraps(self):
        """Sums, differences, products, left shifts and absolute values that leave an integer
        dtype's range wrap to its width, as in NumPy, in every integer dtype the backend lists (int32 always): the
        8- and 16-bit ones too, which C-family languages compute in int, and signed ones, whose
        overflow C leaves undefined."""
        dev = self.dev()
        rng = np.random.default_rng(25)
        for dtype in [d for d in ALL_DTYPES if d == "int32" or (d in self.dtypes and d.startswith(("int", "uint")))]:
            info = np.iinfo(dtype)
            a, b = (rng.integers(info.min, info.max, 256, dtype=dtype, endpoint=True) for _ in range(2))
            a[:4] = np.array([info.max, info.min, info.max, 0], dtype)
            b[:4] = np.array([1, info.max, info.max, info.min], dtype)
            s = rng.integers(0, info.bits, 256).astype(dtype)
            mod = tvm.compile(kernels.integer_wrapping(dtype), target=self.target_name())
            out = tvm.runtime.empty((len(kernels.INTEGER_WRAPPING_ROWS), 256), dtype, dev)
            mod["wrapping"](*(tvm.runtime.tensor(x, dev) for x in (a, b, s)), out)
            want = kernels.integer_wrapping_reference(a, b, s)
            for row, what in enumerate(kernels.INTEGER_WRAPPING_ROWS):
                np.testing.assert_array_equal(out.numpy()[row], want[row], err_msg=f"{dtype}: {what}")

    def test_a_loop_reading_what_it_wrote_a_few_iterations_before(self):
        """A serial loop whose iterations read what one a few elements back wrote (a strided
        running sum) runs in order: Hexagon's vectorizer widened such loops past the
        dependence (991 of 1000 elements wrong)."""
        from tvm.script import tir as T

        n = 1000

        @T.prim_func
        def running(C: T.Buffer((n,), "int32"), X: T.Buffer((n,), "int8")):
            for t in T.thread_binding(1, thread="threadIdx.x"):
                for i in range(n - 4):
                    C[i + 4] = C[i] + C[i + 4]
                for i in range(n - 100):
                    C[i + 100] = C[i + 100] + T.Cast("int32", X[i]) * C[i]

        rng = np.random.default_rng(27)
        c, x = rng.integers(-3, 4, n).astype("int32"), rng.integers(-2, 3, n).astype("int8")
        want = c.copy()
        with np.errstate(over="ignore"):
            for i in range(n - 4):
                want[i + 4] = want[i] + want[i + 4]
            for i in range(n - 100):
                want[i + 100] = want[i + 100] + np.int32(x[i]) * want[i]
        dev = self.dev()
        out = tvm.runtime.tensor(c, dev)
        tvm.compile(running, target=self.target_name())(out, tvm.runtime.tensor(x, dev))
        np.testing.assert_array_equal(out.numpy(), want)

    def test_random_integer_expressions(self):
        """Random integer expressions over every integer dtype the backend lists (int32 always)
        — arithmetic, division and modulo (by 0 too), min/max, bitwise operations, shifts,
        casts and selects — against an exact model of what TIR defines
        (:mod:`tvm.testing.random_programs`), element by element."""
        from tvm.testing import random_programs as rp

        dev = self.dev()
        dtypes = [d for d in ALL_DTYPES if d == "int32" or (d in self.dtypes and d.startswith(("int", "uint")))]
        rng, data = random.Random(26), np.random.default_rng(26)
        for case in range(RANDOM_EXPRESSIONS):
            tree = rp.random_expression(rng, rng.choice(dtypes), dtypes, rng.randrange(1, 5))
            inputs = rp.random_inputs(data, dtypes, 64)
            mod = tvm.compile(rp.kernel(tree, dtypes, 64, threads=True), target=self.target_name())
            out = tvm.runtime.empty((64,), tree[1], dev)
            mod["expression"](*(tvm.runtime.tensor(inputs[d], dev) for d in dtypes), out)
            np.testing.assert_array_equal(
                out.numpy(), rp.expected(tree, inputs), err_msg=f"case {case}: {rp.describe(tree)}"
            )

    def test_random_kernels_match_the_cpu(self):
        """Random kernels with control flow, private arrays written at computed indices, shared
        memory and a barrier (:mod:`tvm.testing.random_kernels`) against the same statements run
        serially on the CPU, element by element. (Comparing such kernels across backends found a
        PoCL and a qemu-hexagon fault, both now worked around.)"""
        from tvm.testing import random_kernels as rk

        self.dev()  # skips where the device is missing, before any compiling
        narrow = next((d for d in ("int8", "uint8") if d in self.dtypes), "int32")
        wide = next((d for d in ("uint16", "int16", "uint8") if d in self.dtypes), "int32")
        for seed in range(RANDOM_KERNELS):
            k = rk.generate(seed, narrow, wide)
            inputs = rk.random_inputs(np.random.default_rng(seed), narrow, wide)
            got = self.run(k.device, "f", inputs, [((rk.N,), "int32")])
            np.testing.assert_array_equal(
                got, rk.reference_output(k, inputs), err_msg=f"random kernel {seed}:\n{k.text}"
            )

    def test_fixed_point_requantization(self):
        """T.q_multiply_shift of int32 Q-numbers (int64 arithmetic, rounding half up, shifts
        either way) against Python's exact integers."""
        if "int64" not in self.dtypes:
            pytest.skip(f"{self.backend} does not list int64 among its dtypes (T.q_multiply_shift computes in it)")
        dev = self.dev()
        a = np.random.default_rng(22).integers(-(2**24), 2**24, 256).astype("int32")
        a[:2] = [2**24 - 1, -(2**24)]

        def exact(x: int, s: int) -> int:
            total = 31 + max(-s, 0)
            return ((x << max(s, 0)) * 1963325822 + (1 << (total - 1))) >> total

        want = np.array([exact(int(x), i % 64 % 9 - 4) for i, x in enumerate(a)], "int32")
        mod = tvm.compile(kernels.requantize(), target=self.target_name())
        out = tvm.runtime.empty((256,), "int32", dev)
        mod["requantize"](tvm.runtime.tensor(a, dev), out)
        np.testing.assert_array_equal(out.numpy(), want)

    def test_local_array_of_a_bounded_symbolic_size(self):
        """A local array of ``T.min(n, 64)`` elements takes the bound (64) as its size."""
        dev = self.dev()
        a = np.random.default_rng(23).random(64 * 64).astype("float32")
        mod = tvm.compile(kernels.bounded_scratch(), target=self.target_name())
        for n in (10, 100):
            out = tvm.runtime.empty((64,), "float32", dev)
            mod["scratch"](tvm.runtime.tensor(a, dev), out, n)
            want = 2 * a.reshape(64, 64)[:, : min(n, 64)].sum(axis=1)
            np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, err_msg=f"n={n}")

    def test_dynamic_shared_memory(self):
        """A ``shared.dyn`` buffer shared by a block's threads: of constant size on every backend,
        sized by a scalar argument where the backend has dynamic shared memory (elsewhere compiling
        that kernel says so: never a per-thread array), also beside a constant-size shared buffer
        and at several sizes in a row."""
        sizes = (False, True) if self.dynamic_shared_memory else (False,)
        if not self.dynamic_shared_memory:
            with pytest.raises(Exception, match="dynamic shared memory"):
                tvm.compile(kernels.reverse_in_dynamic_shared(), target=self.target_name())
        mods = [
            tvm.compile(kernels.reverse_in_dynamic_shared(sized_at_launch=s), target=self.target_name()) for s in sizes
        ]
        dev = self.dev()
        a = random_array((256,), "float32")
        for mod in mods:
            out = tvm.runtime.empty((256,), "float32", dev)
            mod["reverse"](tvm.runtime.tensor(a, dev), out, 3)
            np.testing.assert_array_equal(out.numpy(), a.reshape(4, 64)[:, ::-1].reshape(-1))
        if not self.dynamic_shared_memory:
            return
        # of 8- and 16-bit elements, which a language without them widens: the launch's bytes
        # were computed for the narrow elements
        for dtype in sorted({"int8", "uint8", "int16", "uint16", "float16", "bfloat16"} & set(self.dtypes)):
            mod = tvm.compile(kernels.reverse_in_dynamic_shared(dtype=dtype), target=self.target_name())
            a = random_array((256,), dtype)
            out = tvm.runtime.empty((256,), dtype, dev)
            mod["reverse"](tvm.runtime.tensor(a, dev), out, 3)
            np.testing.assert_array_equal(out.numpy(), a.reshape(4, 64)[:, ::-1].reshape(-1), err_msg=dtype)
        # sized at launch beside a constant-size shared buffer, each size its own
        mod = tvm.compile(kernels.window_sums(), target=self.target_name())
        a = random_array((8192,), "float32")
        for n in (0, 5, 1000):
            out = tvm.runtime.empty((64,), "float32", dev)
            mod["window_sums"](tvm.runtime.tensor(a, dev), out, n)
            want = np.array([a[t : t + n + 1].sum() for t in range(64)], "float32")
            np.testing.assert_allclose(out.numpy(), want, rtol=1e-4, err_msg=f"n={n}")

    def test_while_break_and_continue(self):
        """A ``while`` loop with ``break`` and ``continue`` in every thread, and a ``for`` loop
        left by ``break``."""

        def steps(x: int, limit: int = 100) -> int:
            count = 0
            while x > 1 and count < limit:
                x, count = (x // 2 if x % 2 == 0 else 3 * x + 1), count + 1
            return count

        a = np.arange(256, dtype="int32") * 37 % 1000
        a[:3] = [0, 1, 27]  # 27 takes 111 steps: past the limit
        dev = self.dev()
        args = [tvm.runtime.tensor(a, dev)] + [tvm.runtime.empty((256,), "int32", dev) for _ in range(2)]
        tvm.compile(kernels.bounded_collatz(), target=self.target_name())["collatz"](*args)
        np.testing.assert_array_equal(args[1].numpy(), [steps(int(x)) for x in a])
        np.testing.assert_array_equal(args[2].numpy(), [(int(x) & -int(x)).bit_length() - 1 for x in a])

    def test_one_kernel_over_symbolic_sizes(self):
        mod = tvm.compile(kernels.vector_add(), target=self.target_name())
        dev = self.dev()
        for n in (0, 1, 63, 64, 1000, 4097):
            a, b = random_array((n,), "float32", n), random_array((n,), "float32", n + 1)
            c = tvm.runtime.empty((n,), "float32", dev)
            mod["vector_add"](tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev), c)
            np.testing.assert_allclose(c.numpy(), a + b, **tolerance("float32"))

    def test_vector_lanes(self):
        a = random_array((1024,), "float32")
        self.run_checked(kernels.vector_lanes(), "vector_lanes", [a], [((1024,), "float32")], a * a + 1)

    def test_deeply_nested_expression(self):
        """An expression 300 operations deep prints through intermediate variables: clang-based
        device compilers refuse more than 256 nested brackets."""
        a, b = random_array((1000,), "float32", 1), random_array((1000,), "float32", 2)
        want = kernels.reference_deep_expression(a, b)
        self.run_checked(kernels.deep_expression(), "deep_expression", [a, b], [((1000,), "float32")], want)

    def test_shared_memory_reduction(self):
        a = random_array((7, 300), "float32")
        self.run_checked(kernels.row_sum(), "row_sum", [a], [((7,), "float32")], a.sum(axis=1))

    def test_cross_thread_reduction(self):
        a = random_array((6, 300), "float32")
        self.run_checked(kernels.row_max_blocks(6, 300, 64), "row_max_blocks", [a], [((6,), "float32")], a.max(axis=1))

    def test_row_softmax(self):
        a = random_array((5, 200), "float32")
        self.run_checked(
            kernels.row_softmax(), "row_softmax", [a], [((5, 200), "float32")], kernels.reference_softmax(a)
        )

    def test_partly_scheduled_function(self):
        """Blocks a schedule left unbound run as one-thread kernels, and shared buffers that
        several launches use live in device memory: the function means what it does on the CPU."""
        a = random_array((4, 50), "float32")
        with pytest.warns(tvm.tir.transform.SingleThreadKernelWarning, match="outside its thread-bound loops"):
            with pytest.warns(tvm.tir.transform.MemoryPlacementWarning, match="row_max, row_sum"):
                self.run_checked(
                    kernels.partly_scheduled_softmax(),
                    "partly_scheduled_softmax",
                    [a],
                    [((4, 50), "float32")],
                    kernels.reference_softmax(a),
                )

    def test_index_read_from_memory_is_checked(self):
        """An index a kernel reads from memory is compared with the buffer's extent: in bounds the
        gather matches NumPy; one index past the end (or negative) is an IndexError naming the
        buffer, the extent and the index after the launch, never a read outside the buffer."""
        mod = tvm.compile(kernels.gather(), target=self.target_name())
        dev = self.dev()
        a = random_array((500,), "float32")
        idx = random_array((300,), "int32", 2) * 10  # 0 to 490
        for bad in (None, 500, -7):
            if bad is not None:
                idx[123] = bad
            args = [tvm.runtime.tensor(a, dev), tvm.runtime.tensor(idx, dev), tvm.runtime.empty((300,), "float32", dev)]
            if bad is None:
                mod["gather"](*args)
                np.testing.assert_array_equal(args[2].numpy(), a[idx])
                continue
            with pytest.raises(
                IndexError, match=rf"gather: dimension 0 of buffer 'A' has extent 500, got index {bad} "
            ):
                mod["gather"](*args)

    def test_continue_then_an_unconditional_break(self):
        """A serial loop whose body continues under a condition and then breaks unconditionally
        (a structured-control-flow shape SPIR-V must express with an unreachable block)."""
        dev = self.dev()
        mod = tvm.compile(kernels.first_at_least(), target=self.target_name())
        a = np.random.default_rng(30).random((8, 32)).astype("float32") * 0.6
        a[3] = 0.1  # no value at least 0.5: -1
        b = tvm.runtime.empty((8,), "int32", dev)
        mod["first_at_least"](tvm.runtime.tensor(a, dev), b)
        want = [next((k for k in range(32) if a[r, k] >= 0.5), -1) for r in range(8)]
        np.testing.assert_array_equal(b.numpy(), want)

    def test_pow_of_negative_and_zero_bases_is_cs(self):
        """``T.pow`` gives C's (and NumPy's) results where a shading language's pow is undefined:
        a negative base with a whole exponent, a zero base, a zero exponent."""
        dev = self.dev()
        if "pow" not in self.math_functions:
            pytest.skip(f"{self.backend} does not list pow among its math functions")
        mod = tvm.compile(kernels.power(), target=self.target_name())
        inf, nan = np.inf, np.nan
        x = np.array([-2, -2, -3, -0.5, 2, 0, 0, 0, -2, 3, -2, 1, -1, -inf, -inf, 0, -0.0, -0.0, -2, -0.5], "float32")
        y = np.array([2, 3, 5, 2, 0.5, 0, 2, -1, 0, -1, 0.5, nan, inf, 0.5, -0.5, nan, -1, 3, inf, inf], "float32")
        out = tvm.runtime.empty((20,), "float32", dev)
        mod["power"](tvm.runtime.tensor(x, dev), tvm.runtime.tensor(y, dev), out)
        with np.errstate(divide="ignore", invalid="ignore"):
            want = np.power(x, y)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-5)
        number = ~np.isnan(want)  # a NaN's sign means nothing
        np.testing.assert_array_equal(np.signbit(out.numpy())[number], np.signbit(want)[number])  # -0.0, -inf

    def test_math_functions_match_numpy(self):
        """Each float32 math function of :attr:`math_functions` compiles for the backend and
        matches NumPy over a range where every one is defined."""
        dev = self.dev()
        x = np.linspace(0.1, 3.0, 100, dtype="float32")
        for name in (f for f in self.math_functions if f in kernels.MATH_FUNCTIONS):
            mod = tvm.compile(kernels.unary_math(name), target=self.target_name())
            out = tvm.runtime.empty((100,), "float32", dev)
            mod["unary_math"](tvm.runtime.tensor(x, dev), out)
            want = kernels.MATH_FUNCTIONS[name](x)
            np.testing.assert_allclose(out.numpy(), want, rtol=2e-5, atol=1e-6, err_msg=name)

    def test_assert_in_a_kernel_is_raised_after_the_launch(self):
        """``assert`` inside a kernel: the kernel records the failure and the host raises the
        assert's own exception and message after the launch (never silently dropped)."""
        mod = tvm.compile(kernels.checked_sqrt(), target=self.target_name())
        dev = self.dev()
        a = np.abs(random_array((300,), "float32"))
        b = tvm.runtime.empty((300,), "float32", dev)
        mod["checked_sqrt"](tvm.runtime.tensor(a, dev), b)
        np.testing.assert_allclose(b.numpy(), np.sqrt(a), rtol=1e-6)
        a[123] = -1.0
        b = tvm.runtime.tensor(np.zeros(300, "float32"), dev)
        with pytest.raises(ValueError, match="checked_sqrt: A holds a negative value"):
            mod["checked_sqrt"](tvm.runtime.tensor(a, dev), b)
        assert b.numpy()[123] == 0  # what the assert guards did not run (no sqrt(-1) stored)

    def test_index_check_before_a_barrier(self):
        """A thread whose let-bound index fails its check still reaches the kernel's barrier
        (the others wait there): the gather matches NumPy in bounds, and a bad index is an
        IndexError after the launch, never a hang or a read outside the buffer."""
        mod = tvm.compile(kernels.gather_then_exchange(), target=self.target_name())
        dev = self.dev()
        a = random_array((100,), "float32")
        idx = random_array((64,), "int32", 3) * 2  # 0 to 98
        for bad in (None, 1000000):
            if bad is not None:
                idx[5] = bad
            args = [tvm.runtime.tensor(a, dev), tvm.runtime.tensor(idx, dev), tvm.runtime.empty((64,), "float32", dev)]
            if bad is None:
                mod["gather_exchange"](*args)
                v = a[idx] * 2
                np.testing.assert_allclose(args[2].numpy(), v[::-1] + v, rtol=1e-6)
                continue
            with pytest.raises(IndexError, match=r"buffer 'A' has extent 100, got index 1000000 "):
                mod["gather_exchange"](*args)

    def test_tiled_matmul(self):
        a, b = random_array((32, 48), "float32", 1), random_array((48, 16), "float32", 2)
        self.run_checked(kernels.matmul_tiled(), "matmul_tiled", [a, b], [((32, 16), "float32")], a @ b)

    def test_long_serial_loops_are_right_or_refused(self):
        """A thread that loops 70,000 times gives the right sum or a RuntimeError saying why
        (Mesa's llvmpipe ends a thread after 65,535 loop iterations): never a cut-short result.
        The same kernel with short rows runs everywhere."""
        mod = tvm.compile(kernels.serial_row_sum(), target=self.target_name())
        dev = self.dev()
        for cols in (1000, 70000):
            a = random_array((3, cols), "int32", cols)
            b = tvm.runtime.empty((3,), "int32", dev)
            try:
                mod["serial_row_sum"](tvm.runtime.tensor(a, dev), b)
            except RuntimeError as err:
                assert cols > 65535 and "loop iterations" in str(err), err
                continue
            np.testing.assert_array_equal(b.numpy(), a.sum(axis=1, dtype="int32"))

    def test_a_loop_over_a_product_of_negative_arguments_is_right_or_refused(self):
        """``range(d * d)`` with d = -300 runs 90,000 times: the llvmpipe check counted a negative
        argument as 0 and let the thread be cut short at 65,535 without a word."""
        from tvm.script import tir as T

        @T.prim_func
        def count(a: T.handle, d: T.int32):
            A = T.match_buffer(a, (1,), "int32")
            for t in T.thread_binding(1, thread="threadIdx.x"):
                A[0] = 0
                for j in range(d * d):
                    A[0] = A[0] + 1

        mod = tvm.compile(count, target=self.target_name())
        dev = self.dev()
        for d in (100, -100, -300):
            out = tvm.runtime.empty((1,), "int32", dev)
            try:
                mod["count"](out, d)
            except RuntimeError as err:
                assert d * d > 65535 and "loop iterations" in str(err), err
                continue
            assert out.numpy()[0] == d * d, (d, out.numpy())

    def test_stepped_loops_with_bounds_far_apart(self):
        """``range(lo, hi, s)`` over int32 bounds up to 2**32 - 1 apart runs Python's trips (the
        distance overflowed int32: no trips, or trips where Python has none), and a grid-stride
        loop from the thread index keeps its int32 counter."""
        from tvm.script import tir as T

        @T.prim_func
        def stepped(a: T.handle, lo: T.int32, hi: T.int32, s: T.int32):
            A = T.match_buffer(a, (8,), "int32")
            for t in T.thread_binding(1, thread="threadIdx.x"):
                A[7] = 0
                for i in range(lo, hi, 2**30):
                    A[A[7]] = i
                    A[7] = A[7] + 1
                for j in range(hi, lo, -(2**29) * 3):
                    A[6] = j
                for k in T.serial(lo, hi, step=s):
                    A[5] = k

        mod = tvm.compile(stepped, target=self.target_name())
        dev = self.dev()
        cases = [(-(2**31), 2**31 - 1, 2**29), (10, -(2**31) + 5, 7), (-5, 100, 1000)]
        for lo, hi, s in cases:
            out = tvm.runtime.tensor(np.full(8, -1, "int32"), dev)
            mod["stepped"](out, lo, hi, s)
            got = out.numpy()
            up = list(range(lo, hi, 2**30))
            assert got[7] == len(up) and list(got[: len(up)]) == up, (lo, hi, got)
            down = list(range(hi, lo, -(2**29) * 3))
            assert got[6] == (down[-1] if down else -1), (lo, hi, got)
            along = list(range(lo, hi, s))
            assert got[5] == (along[-1] if along else -1), (lo, hi, s, got)

    def test_tunable_kernels_fit_the_target(self):
        """The zoo's tunable kernels: the largest configuration the target's limits admit
        compiles, and the default for the target runs and matches NumPy."""
        from tvm.testing import tunables

        tgt = tvm.target.Target(self.target_name())
        a, b = random_array((32, 32), "float32", 1), random_array((32, 32), "float32", 2)
        x = random_array((5, 300), "float32")
        u, v = random_array((1001,), "float32", 3), random_array((1001,), "float32", 4)  # a partial last block
        cases = [
            (tunables.tunable_vector_add(), [u, v], (1001,), u + v),
            (tunables.tunable_matmul_tiled(32, 32, 32), [a, b], (32, 32), a @ b),
            (tunables.tunable_row_sum(5, 300), [x], (5,), x.sum(axis=1)),
            (tunables.tunable_row_softmax(5, 300), [x], (5, 300), kernels.reference_softmax(x)),
        ]
        for kernel, inputs, shape, expect in cases:
            fitting = kernel.configs(tgt)
            assert fitting, f"{kernel.key}: no configuration fits {tgt}"
            tvm.compile(kernel.build(fitting[-1]), target=tgt)
            default = kernel.default_config(tgt)
            assert default in fitting, (default, fitting)
            func = kernel.build(default)
            self.run_checked(func, func.global_symbol, inputs, [(shape, "float32")], expect)

    # ------------------------------------------------------------------ fallback

    def test_fallback_has_the_same_kind_bytes_and_source(self, monkeypatch):
        built = tvm.compile(kernels.row_sum(), target=self.target_name()).imports[0]
        monkeypatch.setenv("TVM_COMPILE_FORCE_FALLBACK", "1")
        fallback = tvm.compile(kernels.row_sum(), target=self.target_name()).imports[0]
        assert fallback.kind == built.kind
        assert fallback.save_to_bytes() == built.save_to_bytes()
        assert fallback.inspect_source() == built.inspect_source() and "row_sum_kernel0" in fallback.inspect_source()

    def test_fallback_functions_explain(self, monkeypatch):
        monkeypatch.setenv("TVM_COMPILE_FORCE_FALLBACK", "1")
        fallback = tvm.compile(kernels.vector_add(), target=self.target_name()).imports[0]
        with pytest.raises(RuntimeError) as info:
            fallback.get_function("vector_add_kernel0")()
        msg = str(info.value)
        assert fallback.kind in msg and "vector_add_kernel0" in msg and "TVM_COMPILE_FORCE_FALLBACK" in msg, msg

    # ------------------------------------------------------------------ export

    @pytest.mark.parametrize("autoload", ["1", "0"])
    @pytest.mark.parametrize("exported_as", ["built", "fallback"])
    def test_export_and_reload_in_a_fresh_process(self, tmp_path, monkeypatch, exported_as, autoload):
        """A library exported from the module the backend builds, or from a fallback module (as
        on a machine without the runtime), loads in a fresh process and runs where the device is."""
        path = str(tmp_path / "vector_add.so")
        if exported_as == "fallback":
            monkeypatch.setenv("TVM_COMPILE_FORCE_FALLBACK", "1")
        tvm.compile(kernels.vector_add(), target=self.target_name()).export_library(path)
        proc = run_python(
            f"""
            import numpy as np
            import tvm
            mod = tvm.runtime.load_module({path!r})
            (dev_mod,) = mod.imports
            assert "vector_add_kernel0" in dev_mod.inspect_source()
            dev = tvm.device({self.device or self.backend!r})
            if dev.exist:
                a = np.arange(100, dtype="float32")
                c = tvm.runtime.empty((100,), "float32", dev)
                mod["vector_add"](tvm.runtime.tensor(a, dev), tvm.runtime.tensor(a, dev), c)
                np.testing.assert_allclose(c.numpy(), 2 * a)
                print("ran", dev_mod.kind)
            else:
                try:
                    dev_mod.get_function("vector_add_kernel0")()
                except Exception as err:  # the fallback's error, or the runtime's without a device
                    print("explained", dev_mod.kind, type(err).__name__, err)
            """,
            env={"TVM_DEVICE_BACKEND_AUTOLOAD": autoload},
            clean_tvm_env=True,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert proc.stdout.startswith(("ran ", "explained ")), proc.stdout

    def test_a_child_forked_while_the_device_is_first_used(self):
        """A child forked while another thread of its parent discovers the devices (the first
        use of one) runs right or is refused naming fork(); it waited forever on the discovery
        it inherited half done (opencl, vulkan)."""
        self.dev()
        proc = run_python(
            f"""
            import multiprocessing as mp, os, sys, threading
            import numpy as np, tvm
            target = {self.device or self.backend!r}
            def child(answer):
                try:
                    x = tvm.runtime.tensor(np.arange(4, dtype="float32"), tvm.device(target))
                    answer.send("ran" if x.numpy()[3] == 3 else "WRONG")
                except RuntimeError as err:
                    answer.send("refused" if "fork()" in str(err) else f"error {{err}}")
                os._exit(0)
            first = threading.Thread(target=lambda: tvm.runtime.tensor(np.zeros(4, "float32"), tvm.device(target)))
            first.start()  # the first use of the device: the discovery runs in this thread
            ctx = mp.get_context("fork")
            receive, send = ctx.Pipe(duplex=False)
            p = ctx.Process(target=child, args=(send,))
            p.start()
            first.join()
            p.join(120)
            if p.is_alive():
                p.kill()
                sys.exit("the child hung")
            print(receive.recv() if receive.poll(10) else f"the child said nothing (exit code {{p.exitcode}})")
            """,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        # or glibc's loader assertion, outside this project: a fork while another thread runs
        # dlopen (the driver's) leaves the child's loader broken (docs/status.md, known gaps)
        broken_loader = "Inconsistency detected by ld.so" in proc.stderr
        assert proc.stdout.strip() in ("ran", "refused") or broken_loader, proc.stdout + proc.stderr

    def test_a_child_forked_after_the_device_was_used(self):
        """A child made by fork() after the parent used the device (multiprocessing's default
        start method on Linux) either runs kernels right or raises a RuntimeError that names
        fork(); it never hangs, and never changes the parent's tensors."""
        self.dev()
        proc = run_python(
            f"""
            import multiprocessing as mp, os, sys
            import numpy as np, tvm
            from tvm.testing import kernels
            dev = tvm.device({self.device or self.backend!r})
            mod = tvm.compile(kernels.vector_add(), target={self.target_name()!r})
            a = np.arange(256, dtype="float32")
            def run():
                x, c = tvm.runtime.tensor(a, dev), tvm.runtime.empty((256,), "float32", dev)
                mod["vector_add"](x, x, c)
                return bool((c.numpy() == 2 * a).all())
            kept = tvm.runtime.tensor(np.full(256, 100.0, "float32"), dev)
            assert run()
            def child(answer):
                try:  # refused, or a copy of the parent's tensor that the parent never sees
                    kept.copyfrom(np.zeros(256, "float32"))
                except RuntimeError:
                    pass
                try:
                    answer.send(("ran", run(), tvm.runtime.tensor(np.zeros(256, "float32"), dev).numpy().sum() == 0))
                except RuntimeError as err:
                    answer.send(("refused", "fork()" in str(err), True))
                os._exit(0)
            ctx = mp.get_context("fork")
            receive, send = ctx.Pipe(duplex=False)
            p = ctx.Process(target=child, args=(send,))
            p.start()
            p.join(120)
            if p.is_alive():
                p.kill()
                sys.exit("the child hung")
            if not receive.poll(10):
                sys.exit(f"the child said nothing (exit code {{p.exitcode}})")
            what, right, zeros = receive.recv()
            print(what, right and zeros, bool((kept.numpy() == 100.0).all()) and run())
            """,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert proc.stdout.split() in (["ran", "True", "True"], ["refused", "True", "True"]), proc.stdout

    # ------------------------------------------------------------------ bad input

    def test_bad_arguments_are_python_errors(self):
        mod = tvm.compile(kernels.vector_add(), target=self.target_name())
        host = np.zeros(16, "float32")
        with pytest.raises(TypeError):
            mod["vector_add"](host, host)  # one argument missing
        with pytest.raises(ValueError, match="device"):
            mod["vector_add"](host, host, host)  # host memory where device memory is expected
        dev = self.dev()
        a, c = tvm.runtime.tensor(host, dev), tvm.runtime.empty((16,), "float32", dev)
        with pytest.raises((TypeError, ValueError), match="dtype|float64"):
            mod["vector_add"](a, tvm.runtime.tensor(np.zeros(16, "float64"), dev), c)
        with pytest.raises(ValueError, match="shape"):
            mod["vector_add"](a, tvm.runtime.tensor(np.zeros(15, "float32"), dev), c)

    def test_empty_buffers_run_nothing(self):
        """Host code launching a kernel over buffers of no elements (n = 0): nothing to do, no
        refusal (the example device refused an empty allocation's pointer as no live memory)."""
        mod = tvm.compile(kernels.vector_add(), target=self.target_name())
        dev = self.dev()
        empty = [tvm.runtime.empty((0,), "float32", dev) for _ in range(3)]
        mod["vector_add"](*empty)
        assert empty[2].numpy().shape == (0,)

    def test_a_device_id_that_does_not_exist_is_refused(self):
        """Allocating on, copying to or synchronizing a device id past the last one raises a
        ValueError (the host-memory devices synchronized such a device without a word)."""
        dev = self.dev()
        missing = tvm.device(dev.dlpack_device_type(), 4096)
        assert not missing.exist
        with pytest.raises(ValueError, match="does not exist"):
            missing.sync()
        with pytest.raises(ValueError, match="does not exist"):
            tvm.runtime.empty((4,), "float32", missing)

    def _raw_fill_kernel(self) -> Any:
        """The device kernel of ``A[i] = 3`` over 1024 elements (16 blocks of 64 threads), called
        directly: (buffer, grid, block)."""
        from tvm.script import tir as T

        @T.prim_func
        def fill(a: T.handle):
            A = T.match_buffer(a, (1024,), "float32")
            for bx in T.thread_binding(16, thread="blockIdx.x"):
                for tx in T.thread_binding(64, thread="threadIdx.x"):
                    A[bx * 64 + tx] = T.float32(3)

        mod = tvm.compile(fill, target=self.target_name())
        return mod.imports[0].get_function("fill_kernel0")  # the lowering's name for its first kernel

    def test_a_pointer_that_is_no_live_buffer_is_refused(self):
        """Where buffers are driver objects, a raw pointer that is none of the device's live
        buffers (host memory here) is refused naming the kernel and the argument, before the
        driver sees it."""
        if not self.buffers_are_handles:
            pytest.skip(f"{self.backend} buffers are device addresses: a raw pointer cannot be told apart")
        raw = self._raw_fill_kernel()
        self.dev()
        host = np.zeros(1024, "float32")
        with pytest.raises(ValueError, match=r"kernel fill_kernel0: argument 0 \(.*\) is not a live .* buffer"):
            raw(ctypes.c_void_p(host.ctypes.data), 16, 64)
        np.testing.assert_array_equal(host, np.zeros(1024, "float32"))

    def test_a_raw_pointer_to_too_small_an_allocation_is_refused(self):
        """A raw pointer to device memory of 16 bytes, passed where the kernel writes 1024
        floats: the allocation's own size is the only proof there is (before, PoCL wrote past
        it into the host heap, and hexagon into its neighbour)."""
        sized = self.buffers_are_handles if self.raw_pointers_are_sized is None else self.raw_pointers_are_sized
        if not sized:
            pytest.skip(f"{self.backend} buffers are device addresses: their allocations' sizes are unknown")
        raw = self._raw_fill_kernel()
        dev = self.dev()
        alloc, free = (tvm_ffi.get_global_func(f"runtime.Device{op}Data") for op in ("Alloc", "Free"))
        small = alloc(dev.dlpack_device_type(), dev.index, 16)
        try:
            with pytest.raises(ValueError, match=r"kernel fill_kernel0: argument 0 is \d+ bytes of device memory"):
                raw(small, 16, 64)
        finally:
            free(dev.dlpack_device_type(), dev.index, small)

    @staticmethod
    def _view(tensor: tvm.runtime.Tensor, first: int, count: int) -> tvm.runtime.Tensor:
        """``count`` float32 elements of ``tensor`` from element ``first``, in its memory (a DLPack
        view as another library may hand over)."""
        from tvm.testing.dlpack import HandMadeTensor

        dev = tensor.device
        where = (dev.dlpack_device_type(), dev.index)
        return tvm.runtime.from_dlpack(
            HandMadeTensor(tensor.data_ptr(), (count,), device=where, byte_offset=first * 4, keep=tensor)
        )

    def test_copies_within_one_buffer(self):
        """A tensor copied onto itself, and overlapping views of one buffer copied either way, give
        NumPy's result (OpenCL refused them with CL_MEM_COPY_OVERLAP, WebGPU aborted the process)."""
        dev = self.dev()
        base = np.arange(128, dtype="float32")
        t = tvm.runtime.tensor(base, dev)
        t.copyto(t)
        np.testing.assert_array_equal(t.numpy(), base)
        for src, dst in ((0, 4), (4, 0), (0, 64)):
            t = tvm.runtime.tensor(base, dev)
            self._view(t, src, 60).copyto(self._view(t, dst, 60))
            want = base.copy()
            want[dst : dst + 60] = base[src : src + 60]
            np.testing.assert_array_equal(t.numpy(), want, err_msg=f"view [{src}:] copied to [{dst}:]")

    def test_a_view_past_its_allocation_is_refused(self):
        """A DLPack view that claims more elements than its allocation holds is refused by copies
        and kernels, naming the range, instead of reading and writing past the allocation (the
        example device wrote 16 KB past a 256-byte allocation)."""
        sized = self.buffers_are_handles if self.raw_pointers_are_sized is None else self.raw_pointers_are_sized
        if not sized:
            pytest.skip(f"{self.backend} buffers are device addresses: their allocations' sizes are unknown")
        dev = self.dev()
        small = [tvm.runtime.tensor(np.ones(64, "float32"), dev) for _ in range(3)]
        with pytest.raises(ValueError, match=r"copy source range \[0, 16384\) is outside"):
            self._view(small[0], 0, 4096).numpy()
        add = tvm.compile(kernels.vector_add(), target=self.target_name())["vector_add"]
        with pytest.raises(ValueError, match=r"argument 0 is \d+ bytes of device memory|its memory holds 256"):
            add(*(self._view(t, 0, 4096) for t in small))
        np.testing.assert_array_equal(small[2].numpy(), np.ones(64, "float32"))

    def test_a_view_whose_strides_reach_before_its_memory_is_refused(self):
        """A strided DLPack view of device memory with a negative stride: one inside the
        allocation runs, one reaching before its start is refused by name (kernels wrote up to
        10 KB before a 256-byte allocation: only the upper end was checked)."""
        from tvm.script import tir as T
        from tvm.testing.dlpack import HandMadeTensor

        @T.prim_func
        def copy_rows(a: T.handle, b: T.handle):
            n, s = T.int32(), T.int32()
            A = T.match_buffer(a, (n, 4), "float32")
            B = T.match_buffer(b, (n, 4), "float32", strides=(s, 1))
            for bx in T.thread_binding(n, thread="blockIdx.x"):
                for tx in T.thread_binding(4, thread="threadIdx.x"):
                    B[bx, tx] = A[bx, tx]

        dev = self.dev()
        where = (dev.dlpack_device_type(), dev.index)
        copy = tvm.compile(copy_rows, target=self.target_name())["copy_rows"]
        rows = tvm.runtime.tensor(np.arange(8, dtype="float32").reshape(2, 4), dev)
        out = tvm.runtime.tensor(np.zeros(64, "float32"), dev)  # 256 bytes

        def view(byte_offset: int, stride: int) -> tvm.runtime.Tensor:
            t = HandMadeTensor(out.data_ptr(), (2, 4), where, byte_offset, keep=out, strides=(stride, 1))
            return tvm.runtime.from_dlpack(t)

        if not self.buffers_are_handles:  # a view starting inside the memory: rows go down from there
            copy(rows, view(32, -8))
            want = np.zeros(64, "float32")
            want[8:12], want[0:4] = np.arange(4), np.arange(4, 8)
            np.testing.assert_array_equal(out.numpy(), want)
        with pytest.raises(ValueError, match=r"argument 'B' is a view whose strides reach element -64 of its"):
            copy(rows, view(0, -64))

    def test_a_copy_sees_what_every_stream_wrote(self):
        """Kernels queued on one stream, their output read through another without a sync: the
        copy waits for the device's other streams first (PoCL returned half-done sums)."""
        dev = self.dev()
        create, free = (tvm_ffi.get_global_func(f"runtime.Device{op}Stream") for op in ("Create", "Free"))
        add = tvm.compile(kernels.vector_add(), target=self.target_name())["vector_add"]
        n = 64 * 65535  # as long as one launch may be (65535 blocks): PoCL, unordered, returned partial sums
        ones = tvm.runtime.tensor(np.ones(n, "float32"), dev)
        stream = create(dev) or 0  # devices without streams give null: their one queue
        try:
            for writer_on_stream in (True, False):
                pair = [tvm.runtime.tensor(np.zeros(n, "float32"), dev) for _ in range(2)]
                with tvm_ffi.use_raw_stream(dev, stream if writer_on_stream else 0):
                    for k in range(10):  # ping-pong: no launch reads the buffer it writes
                        add(pair[k % 2], ones, pair[(k + 1) % 2])
                with tvm_ffi.use_raw_stream(dev, 0 if writer_on_stream else stream):
                    got = pair[0].numpy()
                np.testing.assert_array_equal(got, np.full(n, 10, "float32"), err_msg=f"{writer_on_stream=}")
        finally:
            dev.sync()
            free(dev, stream)

    def test_freeing_a_stream_the_device_did_not_make_is_refused(self):
        """A bogus stream handle is a ValueError, never handed to the driver (WebGPU, which makes
        no streams, accepted any handle without a word)."""
        dev = self.dev()
        with pytest.raises(ValueError, match="0x1234"):
            tvm_ffi.get_global_func("runtime.DeviceFreeStream")(dev, 0x1234)

    def test_direct_launch_past_the_compiled_extents_is_refused(self):
        """A raw kernel handle launched with a grid or block larger than the one its body
        indexes for (grid 100000 x block 4096 over 1024 elements) is refused before the launch."""
        raw = self._raw_fill_kernel()
        dev = self.dev()
        a = tvm.runtime.empty((1024,), "float32", dev)
        with pytest.raises(ValueError, match=r"launch extent blockIdx.x = 100000 exceeds 16"):
            raw(a, 100000, 64)
        with pytest.raises(ValueError, match=r"launch extent threadIdx.x = 4096 exceeds 64"):
            raw(a, 16, 4096)
        raw(a, 16, 64)
        dev.sync()
        np.testing.assert_array_equal(a.numpy(), np.full(1024, 3, "float32"))

    def test_direct_launch_past_symbolic_bounds_is_refused(self):
        """A raw kernel handle whose grid and buffer sizes are expressions of its scalar argument
        (``n // 64`` blocks over ``n + 1`` and ``n`` elements; ``n`` floats of dynamic shared
        memory where the backend has it) is refused, before the launch, with a larger
        grid, a smaller buffer or fewer shared bytes than those expressions give, or an ``n``
        outside int32, and runs with what they give."""
        from tvm.script import tir as T

        @T.prim_func
        def shift(a: T.handle, b: T.handle, n: T.int32):
            A = T.match_buffer(a, (n + 1,), "float32")
            B = T.match_buffer(b, (n,), "float32")
            for bx in T.thread_binding(n // 64, thread="blockIdx.x"):
                for tx in T.thread_binding(64, thread="threadIdx.x"):
                    B[bx * 64 + tx] = A[bx * 64 + tx + 1]

        raw = tvm.compile(shift, target=self.target_name()).imports[0].get_function("shift_kernel0")
        dev = self.dev()
        x = random_array((129,), "float32")
        a, b = tvm.runtime.tensor(x, dev), tvm.runtime.empty((128,), "float32", dev)
        with pytest.raises(ValueError, match=r"blockIdx.x = 3 exceeds 2, the extent its code was written for"):
            raw(a, b, 128, 3, 64)
        with pytest.raises(ValueError, match=r"argument 0 holds 128 elements, the kernel accesses 129"):
            raw(tvm.runtime.tensor(x[:128], dev), b, 128, 2, 64)
        with pytest.raises(ValueError, match=r"blockIdx.x = 2 exceeds -1"):
            raw(a, b, -1, 2, 64)  # a negative n: its bound is negative too
        with pytest.raises(ValueError, match=r"argument 2 is int32, got -4294967232, which is outside its range"):
            raw(a, b, -(2**32) + 64, 3, 64)  # would reach the kernel's int32 n as 64
        raw(a, b, 128, 2, 64)
        dev.sync()
        np.testing.assert_array_equal(b.numpy(), x[1:])
        if not self.dynamic_shared_memory:
            return

        @T.prim_func
        def mirror(a: T.handle, b: T.handle, n: T.int32):
            A = T.match_buffer(a, (n,), "float32")
            B = T.match_buffer(b, (n,), "float32")
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                S = T.alloc_buffer((n,), "float32", scope="shared.dyn")
                for i in range(n // 64):
                    S[i * 64 + tx] = A[i * 64 + tx]
                T.tvm_storage_sync("shared")
                for i in range(n // 64):
                    B[i * 64 + tx] = S[n - 1 - (i * 64 + tx)]

        mirror_raw = tvm.compile(mirror, target=self.target_name()).imports[0].get_function("mirror_kernel0")
        x = random_array((128,), "float32")
        a, b = tvm.runtime.tensor(x, dev), tvm.runtime.empty((128,), "float32", dev)
        with pytest.raises(ValueError, match=r"dynamic shared memory of 256 bytes is less than the 512 bytes"):
            mirror_raw(a, b, 128, 64, 256)  # (A, B, n, block, bytes)
        mirror_raw(a, b, 128, 64, 512)
        dev.sync()
        np.testing.assert_array_equal(b.numpy(), x[::-1])

    # ------------------------------------------------------------------ no driver

    def test_activation_without_a_driver(self):
        rec = self.record()
        if rec.status == tvm.backend.RUNTIME_UNAVAILABLE:
            env: dict[str, str] = {}
        elif self.no_driver_env is not None:
            env = dict(self.no_driver_env)
        else:
            pytest.skip(f"the {self.backend} driver is installed here and the backend names no way to hide it")
        proc = run_python(
            f"""
            import tvm
            from tvm.testing import kernels
            rec = tvm.backend.load({self.backend!r})
            print("status:", rec.status)
            print("reason:", rec.reason)
            if rec.status == "active":
                raise SystemExit(0)
            mod = tvm.compile(kernels.vector_add(), target={self.target_name()!r})
            assert "vector_add_kernel0" in mod.imports[0].inspect_source()
            try:
                mod.imports[0].get_function("vector_add_kernel0")()
            except RuntimeError as err:
                print("explained:", err)
            """,
            env={**env, "TVM_COMPILE_FORCE_FALLBACK": ""},
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "status: active" not in proc.stdout, (
            f"no_driver_env = {env} did not hide the {self.backend} driver: the backend is still active in a "
            "process with that environment (its runtime's Init must find no driver under it)"
        )
        assert "status: runtime unavailable" in proc.stdout, proc.stdout
        assert re.search(r"^reason: \S", proc.stdout, re.M), proc.stdout
        assert "explained:" in proc.stdout and "Fix:" in proc.stdout, proc.stdout
