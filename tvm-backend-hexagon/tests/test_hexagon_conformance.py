"""The Hexagon backend passes the conformance suite (under qemu-hexagon)."""

from tvm.testing.backend import BackendConformance


class TestHexagonConformance(BackendConformance):
    backend = "hexagon"
    # float16 and bfloat16 are stored as 16 bits and computed as float (v66 has no half math)
    dtypes = ("float32", "float16", "bfloat16", "int32", "int8", "uint8", "int16", "int64", "float64")
    dynamic_shared_memory = True
    raw_pointers_are_sized = True  # its arena knows every allocation
    no_driver_env = {"TVM_HEXAGON_QEMU": "/nonexistent/qemu-hexagon"}
