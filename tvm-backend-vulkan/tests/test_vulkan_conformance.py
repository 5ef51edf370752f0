"""The Vulkan backend passes the conformance suite (on lavapipe where it is installed)."""

from tvm.testing.backend import BackendConformance


class TestVulkanConformance(BackendConformance):
    backend = "vulkan"
    dtypes = (
        "float32",
        "float64",
        "float16",
        "bfloat16",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
    )
    no_driver_env = {"TVM_VULKAN_LIBRARY": "/nonexistent/libvulkan.so.1"}
