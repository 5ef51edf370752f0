"""The CUDA backend passes the conformance suite (the device checks run where a GPU is)."""

from tvm.testing.backend import BackendConformance


class TestCUDAConformance(BackendConformance):
    backend = "cuda"
    dtypes = ("float32", "float16", "bfloat16", "int32", "int8", "int64", "float64")
    warp_shuffles = True
    no_driver_env = {"TVM_CUDA_DRIVER": "/nonexistent/libcuda.so.1"}
