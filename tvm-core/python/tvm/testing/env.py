"""``tvm.testing.env``: whether this machine can run a kind of test, as Apache TVM's test files
ask it (``@pytest.mark.skipif(not env.has_cuda(), reason="need cuda")``).

Each probe answers from the installed backends and the devices they find, once per process, and
never raises: a missing backend or driver answers False. Libraries this project does not bind
(cuDNN, cuBLAS, NCCL, ...) and toolchains it does not use (LLVM, nvcc) answer False.
"""

from __future__ import annotations

import functools

_GPU_KINDS = ("cuda", "rocm", "opencl", "metal", "vulkan", "webgpu")


@functools.cache
def device_exists(kind: str, index: int = 0) -> bool:
    """Whether device ``index`` of ``kind`` (a device or target name) is present and usable."""
    import tvm

    try:
        return bool(tvm.device(kind.split()[0], index).exist)
    except Exception:  # noqa: BLE001  (an unknown kind or a failed backend: no such device)
        return False


def _version(text: object) -> tuple[int, int]:
    major, _, minor = str(text or "0").partition(".")
    return (int(major) if major.isdigit() else 0, int(minor[:1]) if minor[:1].isdigit() else 0)


def _device_probe(kind: str, what: str):
    def probe() -> bool:
        return device_exists(kind)

    probe.__name__ = f"has_{kind}"
    probe.__doc__ = f"{what} is present."
    return probe


has_cuda = _device_probe("cuda", "A CUDA device")
has_rocm = _device_probe("rocm", "A ROCm device")
has_opencl = _device_probe("opencl", "An OpenCL device (PoCL's CPU device counts)")
has_vulkan = _device_probe("vulkan", "A Vulkan device (lavapipe counts)")
has_metal = _device_probe("metal", "A Metal device")
has_webgpu = _device_probe("webgpu", "A WebGPU adapter")
has_hexagon = _device_probe("hexagon", "A Hexagon device (or its simulator)")


def has_gpu() -> bool:
    """Any GPU-like device is present."""
    return any(device_exists(kind) for kind in _GPU_KINDS)


def has_multi_gpu() -> bool:
    """Two CUDA devices are present."""
    return device_exists("cuda", 1)


def has_cuda_compute(major: int, minor: int = 0) -> bool:
    """A CUDA device of compute capability ``major.minor`` or newer is present."""
    if not has_cuda():
        return False
    import tvm

    return _version(tvm.cuda(0).compute_version) >= (major, minor)


def has_llvm() -> bool:
    """The ``llvm`` target compiles (here it names the CPU target, built through C)."""
    return True


def has_llvm_min_version(major: int) -> bool:
    """False: code is generated without LLVM."""
    return False


def has_nvcc_version(*version: int) -> bool:
    """False: CUDA C is compiled with NVRTC, not nvcc."""
    return False


def has_nvptx() -> bool:
    """False: CUDA code is generated as CUDA C, not through LLVM's NVPTX."""
    return False


def has_cpu_feature(feature: str) -> bool:
    """Whether this CPU reports ``feature`` (a flag of /proc/cpuinfo, such as ``avx512f``)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line for line in f if line.startswith("flags")), "")
    except OSError:
        return False
    return feature.lower() in flags.split()


def has_x86_avx512() -> bool:
    """The CPU has AVX-512 (foundation)."""
    return has_cpu_feature("avx512f")


def has_x86_vnni() -> bool:
    """The CPU has AVX-512 VNNI."""
    return has_cpu_feature("avx512_vnni")


def _absent(what: str):
    def probe(*args: object) -> bool:
        return False

    probe.__name__ = f"has_{what}"
    probe.__doc__ = f"False: this project does not bind {what}."
    return probe


has_cudnn = _absent("cudnn")
has_cublas = _absent("cublas")
has_hipblas = _absent("hipblas")
has_nccl = _absent("nccl")
has_nvshmem = _absent("nvshmem")
has_cudagraph = _absent("cudagraph")
has_matrixcore = _absent("matrixcore")
has_adreno_opencl = _absent("adreno_opencl")
has_hexagon_toolchain = _absent("hexagon_toolchain")


def build_flag_enabled(flag: str) -> bool:
    """False: the runtime has no optional build flags (each backend is a wheel of its own)."""
    return False
