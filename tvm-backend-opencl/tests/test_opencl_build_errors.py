"""Program build failures and missing device features give clear errors, never crashes."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from opencl_testing import make_module


def test_build_error_names_kernel_and_shows_log(dev):
    src = "__kernel void broken_kernel(__global float* a) { a[0] = undefined_identifier_xyz; }\n"
    mod = make_module(src, [["broken_kernel", ["handle"], ["threadIdx.x"]]])
    a = tvm.runtime.empty((4,), "float32", dev)
    with pytest.raises(RuntimeError) as info:
        mod.get_function("broken_kernel")(a, 1)
    msg = str(info.value)
    assert "broken_kernel" in msg
    assert "Build log" in msg
    assert "undefined_identifier_xyz" in msg  # the compiler's own diagnostic
    with pytest.raises(RuntimeError, match="broken_kernel"):  # and again on the next call
        mod.get_function("broken_kernel")(a, 1)


def test_kernel_missing_from_program(dev):
    src = "__kernel void present(__global float* a) { a[0] = 1.0f; }\n"
    mod = make_module(src, [["absent", ["handle"], ["threadIdx.x"]]])
    with pytest.raises(RuntimeError, match="absent"):
        mod.get_function("absent")(tvm.runtime.empty((4,), "float32", dev), 1)
    with pytest.raises(AttributeError):
        mod.get_function("nope")


def _feature_kernel(ext: str, ctype: str) -> str:
    return (
        f"#pragma OPENCL EXTENSION {ext} : enable\n"
        f"__kernel void uses_{ctype}(__global {ctype}* a) {{ a[get_local_id(0)] = ({ctype})1; }}\n"
    )


@pytest.mark.parametrize("ext,ctype", [("cl_khr_fp16", "half"), ("cl_khr_fp64", "double")])
def test_missing_extension_is_named(dev, ext, ctype):
    has = ext in dev.attr("device_extensions").split()
    mod = make_module(_feature_kernel(ext, ctype), [[f"uses_{ctype}", ["handle"], ["threadIdx.x"]]])
    buf = tvm.runtime.empty((4,), "float16" if ctype == "half" else "float64", dev)
    if has:
        mod.get_function(f"uses_{ctype}")(buf, 4)
        assert (buf.numpy() == 1).all()
    else:
        with pytest.raises(RuntimeError, match=f"lacks the {ext} extension") as info:
            mod.get_function(f"uses_{ctype}")(buf, 4)
        assert f"uses_{ctype}" in str(info.value)


def test_lacking_extension_reported_without_device_support(dev):
    """At least one of fp16/fp64 is usually absent on PoCL (fp16): make sure the message is clear."""
    exts = dev.attr("device_extensions").split()
    if "cl_khr_fp16" in exts:
        pytest.skip("device supports cl_khr_fp16")
    mod = make_module(_feature_kernel("cl_khr_fp16", "half"), [["uses_half", ["handle"], ["threadIdx.x"]]])
    with pytest.raises(RuntimeError, match="float16 arithmetic"):
        mod.get_function("uses_half")(tvm.runtime.tensor(np.zeros(4, "float16"), dev), 4)


def test_a_kernel_name_longer_than_opencl_implementations_take_is_refused_by_name():
    """PoCL aborts the process when it links a kernel name of about 245 characters."""
    from tvm.codegen.c_family import CodegenError
    from tvm.testing import kernels

    func = kernels.vector_add(name="v" * 250)
    with pytest.raises(CodegenError, match=r"has 258 characters; OpenCL implementations take at most 200"):
        tvm.compile(func, target="opencl")
    tvm.compile(kernels.vector_add(name="v" * 150), target="opencl")  # within the limit
