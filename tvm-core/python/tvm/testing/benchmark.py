"""Helpers of the side-by-side benchmarks (``nox -s bench``): our kernel and a peer's, timed in
the same run with their batches interleaved, summarized the same way, written as JSON.

``ratio`` is always peer time / our time, so higher is better for us and a goal of 0.95 means
"at most 5% slower"; ``ratio_best`` compares the best repeat of each side (load from other
processes only ever adds time, so the best repeat is the least disturbed measurement).
"""

from __future__ import annotations

import json
import statistics
import time
from typing import Any, Callable

Side = tuple[Callable[[], None], Callable[[], None]]


class KernelCall:
    """A compiled function with its arguments on a device: ``run`` calls it, ``sync`` waits for
    the device (the ``(run, sync)`` pair :func:`compare` times)."""

    def __init__(self, fn: Callable[..., Any], args: list[Any], dev: Any):
        self.fn, self.args, self.sync = fn, args, dev.sync

    def run(self) -> None:
        """Launch once."""
        self.fn(*self.args)


class WgpuKernel:
    """The peer of the WebGPU and Vulkan dispatch benchmarks: a hand-written WGSL kernel over
    float32 buffers a, b (inputs) and c (``out_nbytes``), dispatched by wgpu-py (wgpu-native) on
    its high-performance adapter as ``groups`` workgroups."""

    def __init__(self, wgsl: str, a: Any, b: Any, groups: tuple[int, int, int], out_nbytes: int):
        import wgpu

        self.adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        self.device = self.adapter.request_device_sync()
        usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
        self.bufs = [self.device.create_buffer_with_data(data=x, usage=usage) for x in (a, b)]
        self.bufs.append(self.device.create_buffer(size=out_nbytes, usage=usage))
        shader = self.device.create_shader_module(code=wgsl)
        self.pipeline = self.device.create_compute_pipeline(layout="auto", compute={"module": shader})
        entries = [{"binding": i, "resource": {"buffer": buf}} for i, buf in enumerate(self.bufs)]
        self.bind = self.device.create_bind_group(layout=self.pipeline.get_bind_group_layout(0), entries=entries)
        self.groups = groups

    def run(self) -> None:
        """Record and submit one dispatch."""
        encoder = self.device.create_command_encoder()
        compute = encoder.begin_compute_pass()
        compute.set_pipeline(self.pipeline)
        compute.set_bind_group(0, self.bind)
        compute.dispatch_workgroups(*self.groups)
        compute.end()
        self.device.queue.submit([encoder.finish()])

    def sync(self) -> None:
        """Wait for all submitted work (wgpuDevicePoll(wait=true); wgpu-py 0.32's
        on_submitted_work_done_sync fails on a callback signature mismatch)."""
        wait = getattr(self.device, "_poll_wait", None)
        if wait is not None:
            wait()
        else:
            self.device.queue.on_submitted_work_done_sync()

    def result(self) -> Any:
        """Buffer c as a float32 NumPy array."""
        import numpy as np

        return np.frombuffer(self.device.queue.read_buffer(self.bufs[2]), dtype="float32")


def batch_ms(run: Callable[[], None], sync: Callable[[], None], batch: int) -> float:
    """Milliseconds per launch of one batch of ``batch`` launches followed by a sync."""
    t0 = time.perf_counter()
    for _ in range(batch):
        run()
    sync()
    return (time.perf_counter() - t0) * 1e3 / batch


def compare(ours: Side, theirs: Side, batch: int, repeats: int) -> tuple[list[float], list[float]]:
    """ms-per-launch samples of both ``(run, sync)`` pairs after one warm-up each, their batches
    interleaved ABBA so that neither order nor other load favours a side."""
    for run, sync in (ours, theirs):
        run()
        sync()
    a: list[float] = []
    b: list[float] = []
    for i in range(repeats):
        if i % 2 == 0:
            a.append(batch_ms(*ours, batch))
            b.append(batch_ms(*theirs, batch))
        else:
            b.append(batch_ms(*theirs, batch))
            a.append(batch_ms(*ours, batch))
    return a, b


def summarize(
    name: str, params: dict, ours: list[float], theirs: list[float], peer: str, goal: float, nbytes: int | None = None
) -> dict[str, Any]:
    """One case of a result file: medians and bests of both sides (``tvm_ms``, ``<peer>_ms``...),
    ``ratio`` (medians), ``ratio_best`` and ``meets_goal`` (``ratio_best >= goal``), and the
    bandwidth of both when ``nbytes`` (bytes moved per launch) is given."""
    ours_ms, theirs_ms = statistics.median(ours), statistics.median(theirs)
    case: dict[str, Any] = {
        "name": name,
        "params": params,
        "tvm_ms": round(ours_ms, 4),
        f"{peer}_ms": round(theirs_ms, 4),
        "ratio": round(theirs_ms / ours_ms, 4),
        "tvm_min_ms": round(min(ours), 4),
        f"{peer}_min_ms": round(min(theirs), 4),
        "ratio_best": round(min(theirs) / min(ours), 4),
        "repeats": len(ours),
    }
    case["meets_goal"] = case["ratio_best"] >= goal
    if nbytes is not None:
        case["gbps_tvm"] = round(nbytes / (ours_ms * 1e6), 3)
        case[f"gbps_{peer}"] = round(nbytes / (theirs_ms * 1e6), 3)
    return case


def write_json(path: str, data: dict) -> None:
    """Write a result file (indented, newline-terminated)."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
        f.write("\n")


__all__ = ["KernelCall", "WgpuKernel", "batch_ms", "compare", "summarize", "write_json"]
