"""The OpenCL backend passes the conformance suite (on PoCL where it is installed)."""

from tvm.testing.backend import ALL_DTYPES, BackendConformance


class TestOpenCLConformance(BackendConformance):
    backend = "opencl"
    buffers_are_handles = True
    dtypes = ALL_DTYPES
    no_driver_env = {"TVM_OPENCL_LIBRARY": "/nonexistent/libOpenCL.so.1"}
