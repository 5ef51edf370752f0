"""The host side of device launches, end to end on the CPU.

A test-only target kind ``simdev`` (device type CPU) has a code generator that prints the kernels
with the shared :class:`CFamilyPrinter` (thread tags become loop counters of a sequential
"launch") and compiles them into a tvm-ffi library whose functions follow the device-kernel
convention: kernel arguments (pointers as opaque handles, scalars as int64/float64) followed by
the launch extents. ``tvm.compile`` imports it into the host library, whose generated C looks
kernels up with ``TVMFFIEnvModLookupFromImports``: the same path a CUDA or OpenCL module takes.
"""

from __future__ import annotations

import numpy as np
import pytest
import tvm_ffi

import tvm
from tvm.codegen.c_family import CFamilyPrinter
from tvm.codegen.c_host import CPrinter
from tvm.contrib import cc
from tvm.target.target import TargetKind, register_target_kind, unregister_target_kind
from tvm.tir import (
    Buffer,
    BufferStore,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    PrimFunc,
    Var,
    dtype as _dt,
)

TAGS = ("blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z")


class SimPrinter(CFamilyPrinter):
    """CPU C where each thread index is a parameter of the kernel body."""

    THREAD_INDEX = {t: "tvm_" + t.replace(".", "_") for t in TAGS}
    KERNEL_QUALIFIER = "static void"

    def kernel_signature(self, func: PrimFunc, name: str) -> str:
        params = [self.param_decl(func, p) for p in func.params]
        params += [f"int64_t {v}" for v in self.THREAD_INDEX.values()]
        return f"{self.KERNEL_QUALIFIER} {name}_body({', '.join(params)})"


def sim_codegen(kernels: list[PrimFunc], target) -> tvm_ffi.Module:
    """Device codegen of ``simdev``: one exported tvm-ffi function per kernel."""
    p = SimPrinter()
    parts = []
    for k in kernels:
        name = k.global_symbol
        parts.append(p.print_kernel(k, name))  # defines <name>_body
        tags = list(k.attrs["launch_params"])
        nk = len(k.params)
        w = [
            f"int __tvm_ffi_{name}(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {{",
            f"  if (num_args != {nk + len(tags)}) "
            f'{{ TVMFFIErrorSetRaisedFromCStr("TypeError", "{name}: bad launch"); return -1; }}',
        ]
        call = []
        for i, prm in enumerate(k.params):
            if prm.dtype == "handle":
                buf = k.buffer_map[prm]
                call.append(f"({p.type_name(buf.dtype)}*)args[{i}].v_ptr")
            elif _dt.is_float(prm.dtype):
                call.append(f"({p.compute_type(prm.dtype)})args[{i}].v_float64")
            else:
                call.append(f"({p.compute_type(prm.dtype)})args[{i}].v_int64")
        ext = {t: "1" for t in TAGS}
        for j, t in enumerate(tags):
            ext[t] = f"args[{nk + j}].v_int64"
        loops = ""
        for t in TAGS:
            v = p.THREAD_INDEX[t]
            loops += f"  for (int64_t {v} = 0; {v} < {ext[t]}; ++{v})\n"
        idx = ", ".join(p.THREAD_INDEX[t] for t in TAGS)
        w.append(loops + f"    {name}_body({', '.join(call)}, {idx});")
        w.append("  return 0;\n}")
        parts.append("\n".join(w))
    head = "#include <math.h>\n#include <stdbool.h>\n#include <stdint.h>\n#include <tvm/ffi/c_api.h>\n" + p.prelude()
    path, _ = cc.compile_shared(head + "\n" + "\n".join(parts), extra_flags=["-fvisibility=default"])
    return tvm_ffi.load_module(path)


@pytest.fixture(scope="module", autouse=True)
def simdev(tmp_path_factory):
    register_target_kind(TargetKind("simdev", 1, "test", ("gpu",), {}, sim_codegen))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TVM_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        yield
    unregister_target_kind("simdev")


def saxpy(block: int = 32) -> PrimFunc:
    n = Var("n", "int32")
    alpha = Var("alpha", "float32")
    X, Y = Buffer("X", (n,), "float32"), Buffer("Y", (n,), "float32")
    bx, tx = Var("bx", "int32"), Var("tx", "int32")
    i = bx * block + tx
    body = For(
        bx,
        IntImm("int32", 0),
        (n + (block - 1)) // block,
        ForKind.THREAD_BINDING,
        For(
            tx,
            IntImm("int32", 0),
            IntImm("int32", block),
            ForKind.THREAD_BINDING,
            IfThenElse(i < n, BufferStore(Y, alpha * X[i] + Y[i], (i,))),
            thread_tag="threadIdx.x",
        ),
        thread_tag="blockIdx.x",
    )
    return PrimFunc([X.data, Y.data, alpha], body, {X.data: X, Y.data: Y}, {"global_symbol": "saxpy"})


def test_launch_through_imported_device_module():
    mod = tvm.compile(saxpy(), "simdev")
    src = mod.inspect_source()
    assert 'TVMFFIEnvModLookupFromImports(__tvm_ffi__library_ctx, "saxpy_kernel' in src
    assert [m.kind for m in mod.imports] == ["library"]
    for n in (1, 31, 32, 100):
        x = np.arange(n, dtype="float32")
        y = np.ones(n, "float32")
        mod.saxpy(x, y, 2.0)
        np.testing.assert_allclose(y, 2 * np.arange(n) + 1)


def test_two_modules_of_the_same_code_are_independent():
    """Libraries with launches keep per-library state; a second compile loads its own copy."""
    m1 = tvm.compile(saxpy(), "simdev")
    m2 = tvm.compile(saxpy(), "simdev")
    assert m2._build_info.cache_hit
    del m1
    import gc

    gc.collect()
    x, y = np.ones(8, "float32"), np.zeros(8, "float32")
    m2.saxpy(x, y, 3.0)
    np.testing.assert_array_equal(y, 3)


def test_missing_kernel_raises():
    """A host library whose device module lacks the kernel raises a Python error, not a crash."""
    from tvm.tir.transform import lower

    low = lower(saxpy(), tvm.target.Target("simdev"))
    from tvm.codegen.c_host import generate_host

    src = generate_host([low.host], 1)
    path, _ = cc.compile_shared(src.code)
    from tvm.runtime.library import load_library

    lib = load_library(path, private=True)
    with pytest.raises(Exception, match="saxpy_kernel"):
        lib["saxpy"](np.ones(4, "float32"), np.ones(4, "float32"), 1.0)


def test_cpu_printer_is_a_cfamily_printer():
    assert issubclass(CPrinter, CFamilyPrinter)
