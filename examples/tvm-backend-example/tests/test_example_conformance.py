"""The example backend passes the conformance suite (the same few lines a vendor writes)."""

from tvm.testing.backend import BackendConformance


class TestExampleConformance(BackendConformance):
    backend = "example"
    dtypes = ("float32", "float16", "int32", "int8", "uint8", "int64", "float64")
    no_driver_env = {"TVM_EXAMPLE_SIMULATE_NO_DRIVER": "1"}
    raw_pointers_are_sized = True  # its memory is the core's host allocations, sizes known
