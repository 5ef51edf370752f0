"""The CPU backend lives in the core: target kind ``c`` (alias ``llvm``) on device ``cpu``."""

from __future__ import annotations

import os

from .target.target import TargetKind, register_target_kind


def register() -> None:
    """Register the host target kind and the CPU target detector."""
    from .backend._ownership import CORE, claim
    from .target.detect_target import register_device_target_detector

    for what, keys in (("device type", (1,)), ("device name", ("cpu", "llvm", "c")), ("target kind", ("c", "llvm"))):
        for key in keys:
            claim(what, key, CORE, "tvm")
    register_target_kind(TargetKind("c", 1, "core", ("cpu",), {}), aliases=("llvm",))
    register_device_target_detector(1, _detect_cpu)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_one_openmp_thread_after_fork)


def _one_openmp_thread_after_fork() -> None:
    """In a child made by ``fork()``: parallel loops run on one thread. GCC's OpenMP runtime
    (libgomp) keeps the forking thread's pool of worker threads, which the child does not have,
    and its next parallel loop waits for them forever (``multiprocessing``'s default start method
    on Linux, a PyTorch DataLoader's workers). LLVM's libomp starts afresh by itself. No parallel
    region is active either (max-active-levels 0), so a ``num_threads`` clause asking for a team
    (a device that runs a block's threads as one) gets one thread, not the pool's."""
    import ctypes

    try:
        gomp = ctypes.CDLL("libgomp.so.1", mode=getattr(os, "RTLD_NOLOAD", 0) | ctypes.RTLD_GLOBAL)
    except OSError:  # not loaded in this process: no pool to inherit
        return
    gomp.omp_set_num_threads(1)
    gomp.omp_set_max_active_levels(0)


def _detect_cpu(dev) -> "Target":  # noqa: F821 - imported on call
    """The host target (``c``) with the number of cores."""
    from .target import Target

    return Target({"kind": "c", "num_cores": dev.multi_processor_count or 1})
