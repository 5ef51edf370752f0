"""What a tuning record is valid for: the device it was measured on, and what the target's ISA
says about vector width and registers."""

from __future__ import annotations

import os
import platform
from functools import lru_cache
from typing import Any


@lru_cache(maxsize=None)
def _cpuinfo() -> tuple[str, frozenset[str]]:
    """(model name, flags) of this machine's CPU (Linux /proc/cpuinfo; elsewhere platform data)."""
    model, flags = platform.processor() or platform.machine(), set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key in ("model name", "Model", "CPU part") and model in ("", platform.machine()):
                    model = value.strip()
                elif key in ("flags", "Features"):
                    flags.update(value.split())
    except OSError:
        pass
    if platform.machine() in ("arm64", "aarch64"):
        flags.add("neon")
    return model, frozenset(flags)


def cpu_model() -> str:
    """This machine's CPU model name."""
    return _cpuinfo()[0]


def cpu_identity() -> str:
    """This machine's CPU model and its ISA flags, in one line: what ``-march=native`` means here."""
    model, flags = _cpuinfo()
    return f"{platform.machine()} {model}: {' '.join(sorted(flags))}"


def _as_target(target: Any) -> Any:
    """``target`` as a :class:`tvm.target.Target` (a string or dict is parsed); None stays None."""
    if target is None or hasattr(target, "kind"):
        return target
    from tvm.target import Target

    return Target(target)


def isa_features(target: Any = None) -> frozenset[str]:
    """The vector ISA features the CPU target compiles for: this machine's (``-mcpu=native`` or no
    ``-mcpu``), or those implied by an x86 ``-mcpu`` name. ``target``: a Target, or a string or
    dict that makes one."""
    target = _as_target(target)
    return mcpu_features(str(getattr(target, "attrs", {}).get("mcpu", "native")) if target is not None else "native")


def mcpu_features(mcpu: str) -> frozenset[str]:
    """The vector ISA features code compiled with ``-march=<mcpu>`` may use (``native``: this
    machine's)."""
    if mcpu in ("native", "", "None"):
        return _cpuinfo()[1] & {"sse4_2", "avx", "avx2", "fma", "avx512f", "neon", "asimd", "sve"}
    if "avx512" in mcpu or mcpu in ("skylake-avx512", "icelake-server", "sapphirerapids", "znver4", "znver5"):
        return frozenset({"avx2", "fma", "avx512f"})
    if mcpu in ("haswell", "broadwell", "skylake", "znver1", "znver2", "znver3", "x86-64-v3"):
        return frozenset({"avx2", "fma"})
    return frozenset()


def vector_lanes(target: Any = None, dtype_bits: int = 32) -> int:
    """Lanes of the widest vector register the target has for ``dtype_bits`` elements: AVX-512 16,
    AVX2 8, NEON/SSE 4 (float32)."""
    return vector_bits(isa_features(target)) // dtype_bits


def vector_bits(features: frozenset[str]) -> int:
    """Bits of the widest vector register an ISA with ``features`` has (AVX-512 512, AVX 256,
    else 128)."""
    return 512 if "avx512f" in features else 256 if "avx2" in features or "avx" in features else 128


def vector_registers(target: Any = None) -> int:
    """How many vector registers the target has (AVX-512 and NEON 32, AVX2 16)."""
    feats = isa_features(_as_target(target))
    return 32 if "avx512f" in feats or "neon" in feats or "asimd" in feats else 16


#: What a device kernel's default assumes where neither the device nor the target says more: a
#: conservative block any GPU API accepts (WebGPU's portable limits).
PORTABLE_LIMITS = {"max_threads": 256, "warp_size": 32, "shared_memory": 16384}


def device_limits(target: Any) -> dict[str, int]:
    """Threads per block (``max_threads``), lanes per warp/wavefront/sub-group (``warp_size``)
    and bytes of shared memory per block (``shared_memory``) a default kernel configuration for
    ``target`` may assume: the smaller of what device 0 of the target's kind reports and what
    the target declares (its capabilities), else :data:`PORTABLE_LIMITS`."""
    target = _as_target(target)
    limits = dict(PORTABLE_LIMITS)
    declared = {
        "max_threads": target.capability("max_num_threads"),
        "shared_memory": target.capability("max_shared_memory_per_block"),
    }
    reported: dict[str, Any] = {}
    try:
        import tvm

        dev = tvm.device(target.kind.name, 0)
        if dev.exist:
            reported = {
                "max_threads": dev.max_threads_per_block,
                "warp_size": dev.warp_size,
                "shared_memory": dev.max_shared_memory_per_block,
            }
    except Exception:  # noqa: BLE001 - no device: what the target declares
        pass
    for name in limits:
        known = [int(v) for v in (declared.get(name), reported.get(name)) if isinstance(v, int) and v > 0]
        if known:
            limits[name] = min(known)
    return limits


def device_fingerprint(target: Any) -> str:
    """What a measurement on ``target`` depends on besides the code: for a CPU target, the CPU
    model, its vector ISA and the core count; for a device target, the device's name, compute
    version and driver (device 0 of the target's kind), or the kind alone without a device."""
    target = _as_target(target)
    kind = getattr(getattr(target, "kind", None), "name", str(target))
    if getattr(getattr(target, "kind", None), "codegen", None) is None:
        model, _ = _cpuinfo()
        feats = ",".join(sorted(isa_features(target)))
        return f"cpu:{model}|{feats}|{os.cpu_count()} cores"
    try:
        import tvm

        dev = tvm.device(kind, 0)
        if dev.exist:
            return f"{kind}:{dev.name}|{dev.attr('compute_version')}|{dev.attr('driver_version')}"
    except Exception:  # noqa: BLE001 - no device: the kind alone
        pass
    return f"{kind}:no device"
