"""The OpenCL backend passes the conformance suite (on PoCL where it is installed)."""

from tvm.testing.backend import ALL_DTYPES, BackendConformance


class TestOpenCLConformance(BackendConformance):
    backend = "opencl"
    buffers_are_handles = True
    dtypes = ALL_DTYPES
    typed_views = False  # float16 arrays hold floats unless the target computes in half (cl_khr_fp16)
    no_driver_env = {"TVM_OPENCL_LIBRARY": "/nonexistent/libOpenCL.so.1"}
