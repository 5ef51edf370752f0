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
from typing import Any, Callable, Sequence

Side = tuple[Callable[[], None], Callable[[], None]]


class KernelCall:
    """A compiled function with its arguments on a device: ``run`` calls it, ``sync`` waits for
    the device (the ``(run, sync)`` pair :func:`compare` times); ``out`` is the tensor it writes."""

    def __init__(self, fn: Callable[..., Any], args: list[Any], dev: Any, out: Any = None):
        self.fn, self.args, self.sync, self.out = fn, args, dev.sync, out

    def run(self) -> None:
        """Launch once."""
        self.fn(*self.args)

    def result(self) -> Any:
        """What the function wrote into ``out``, as a NumPy array."""
        return self.out.numpy()


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
    name: str,
    params: dict,
    ours: list[float],
    theirs: list[float],
    peer: str,
    goal: float | None,
    nbytes: int | None = None,
) -> dict[str, Any]:
    """One case of a result file: medians and bests of both sides (``tvm_ms``, ``<peer>_ms``...),
    ``ratio`` (medians), ``ratio_best`` and ``meets_goal`` (``ratio_best >= goal``; absent for a
    case recorded without a goal), and the bandwidth of both when ``nbytes`` (bytes moved per
    launch) is given."""
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
    if goal is not None:
        case["meets_goal"] = case["ratio_best"] >= goal
    if nbytes is not None:
        case["gbps_tvm"] = round(nbytes / (ours_ms * 1e6), 3)
        case[f"gbps_{peer}"] = round(nbytes / (theirs_ms * 1e6), 3)
    return case


def tuned_function(
    kernel: Any,
    target: str,
    inputs: list[Any],
    output: tuple[tuple[int, ...], str],
    reference: Any,
    budget_s: float = 120.0,
) -> tuple[Any, Any]:
    """``kernel`` (a :class:`tvm.tune.Tunable`) searched on ``target``'s device with an in-memory
    database (a benchmark neither reads nor changes the user's records): its best PrimFunc and the
    :class:`tvm.tune.TuneResult`."""
    import tvm
    from tvm.tune import Database

    tgt = tvm.target.Target(target)
    db = Database(None)
    result = tvm.tune.tune(
        kernel, tgt, inputs=inputs, outputs=[output], reference=reference, database=db, budget_s=budget_s
    )
    return kernel.select(tgt, database=db), result


def tuned_call(
    kernel: Any,
    target: str,
    inputs: list[Any],
    output: tuple[tuple[int, ...], str],
    reference: Any,
    dev: Any,
    budget_s: float = 120.0,
) -> tuple[KernelCall, Any]:
    """``kernel`` (a :class:`tvm.tune.Tunable`) tuned on ``target`` (:func:`tuned_function`),
    compiled and bound to copies of ``inputs`` and an empty ``output`` on ``dev``: the
    :class:`KernelCall` and the :class:`tvm.tune.TuneResult` (``search_s`` is the search's time)."""
    func, result = tuned_function(kernel, target, inputs, output, reference, budget_s)
    return compiled_call(func, target, inputs, output, dev), result


def compiled_call(
    func: Any, target: Any, inputs: list[Any], output: tuple[tuple[int, ...], str], dev: Any
) -> KernelCall:
    """``func`` compiled for ``target`` and bound to copies of ``inputs`` and an empty ``output``
    (shape, dtype) on ``dev``, which it writes."""
    import numpy as np

    import tvm

    out = tvm.runtime.empty(output[0], output[1], dev)
    args = [tvm.runtime.tensor(np.asarray(x), dev) for x in inputs] + [out]
    return KernelCall(tvm.compile(func, target=target)[func.global_symbol], args, dev, out)


def tuned_peer_case(
    name: str,
    kernel: Any,
    target: str,
    inputs: list[Any],
    reference: Any,
    dev: Any,
    peer: tuple[str, Any],
    *,
    params: dict,
    batch: int,
    repeats: int,
    budget_s: float,
    goal: float | None,
    nbytes: int | None = None,
) -> dict[str, Any]:
    """One case of a device benchmark: ``kernel`` tuned on ``target`` (:func:`tuned_call`) timed
    against ``peer`` (its name, and an object with ``run``, ``sync`` and ``result``) with
    :func:`compare`; both results checked against ``reference`` (float32 tolerance), the case
    summarized with the configuration found and the search's time (``tuning_s``)."""
    import numpy as np

    output = (reference.shape, str(reference.dtype))
    ours, result = tuned_call(kernel, target, inputs, output, reference, dev, budget_s)
    peer_name, theirs = peer
    t, p = compare((ours.run, ours.sync), (theirs.run, theirs.sync), batch=batch, repeats=repeats)
    for side in (ours, theirs):
        np.testing.assert_allclose(side.result().reshape(reference.shape), reference, rtol=1e-3, atol=1e-3)
    case = summarize(name, {**params, "config": result.best_config}, t, p, peer_name, goal, nbytes)
    case["tuning_s"] = round(result.search_s, 1)
    return case


def tuned_kernel_cases(
    target: str,
    dev: Any,
    peer_name: str,
    vector_add_peer: Callable[[Any, Any], Any],
    matmul_peer: Callable[[Any, Any], Any],
    goal: float,
    *,
    n: int,
    size: int,
    peer_tile: int,
) -> list[dict[str, Any]]:
    """The two kernel cases of a device benchmark (:func:`tuned_peer_case`): a float32 vector
    add of ``n`` elements and a ``size``-cubed tiled matmul, the zoo's tunable kernels tuned on
    ``target``, against ``peer_name``'s hand-written ones, which ``vector_add_peer(a, b)`` and
    ``matmul_peer(x, y)`` make for the inputs (one element per invocation, 256 per workgroup;
    ``peer_tile`` x ``peer_tile`` tiles, one output per invocation)."""
    import numpy as np

    from tvm.testing import tunables

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(n, dtype="float32"), rng.standard_normal(n, dtype="float32")
    vadd = tuned_peer_case(
        "vector_add",
        tunables.tunable_vector_add("float32", name="vadd"),
        target,
        [a, b],
        a + b,
        dev,
        (peer_name, vector_add_peer(a, b)),
        params={"n": n, "dtype": "float32", "peer_workgroup": [256]},
        batch=10,
        repeats=15,
        budget_s=300,
        goal=goal,
        nbytes=3 * n * 4,
    )
    x, y = (rng.standard_normal((size, size), dtype="float32") for _ in range(2))
    matmul = tuned_peer_case(
        "matmul_tiled",
        tunables.tunable_matmul_tiled(size, size, size, name="matmul"),
        target,
        [x, y],
        x @ y,
        dev,
        (peer_name, matmul_peer(x, y)),
        params={"m": size, "n": size, "k": size, "dtype": "float32", "peer_tile": peer_tile},
        batch=1,
        repeats=5,
        budget_s=600,
        goal=goal,
    )
    for side, ms in (("tvm", matmul["tvm_ms"]), (peer_name, matmul[f"{peer_name}_ms"])):
        matmul[f"gflops_{side}"] = round(2 * size**3 / (ms * 1e6), 3)
    return [vadd, matmul]


def tuned_vs_untuned(
    kernel: Any,
    target: str,
    inputs: list[Any],
    output: tuple[tuple[int, ...], str],
    reference: Any,
    goal: float | None = 1.2,
    repeats: int = 9,
    budget_s: float = 120.0,
    untuned: dict | None = None,
    name: str = "tuned_vs_untuned",
) -> dict[str, Any]:
    """One case of a backend's benchmark: ``tvm.tune`` searches ``kernel`` (a
    :class:`tvm.tune.Tunable`) on ``target``'s device, then its best configuration and an untuned
    one (``untuned``, else the kernel's default for the target) run side by side
    (``untuned_ms``; ratio = untuned / tuned, ``goal`` on the best repeats). The target's default
    configuration and its time in the search are recorded too. The records stay in memory: the
    run's result does not depend on, or change, the user's tuning database."""
    import numpy as np

    import tvm

    tgt = tvm.target.Target(target)
    dev = tvm.device(tgt.device_type, 0)
    tuned, result = tuned_function(kernel, target, inputs, output, reference, budget_s)
    baseline = dict(untuned) if untuned is not None else result.default_config
    calls = [compiled_call(func, tgt, inputs, output, dev) for func in (tuned, kernel.build(baseline))]
    best, other = calls
    t, u = compare((best.run, best.sync), (other.run, other.sync), batch=1, repeats=repeats)
    for call in calls:
        np.testing.assert_allclose(call.result(), reference, rtol=1e-3, atol=1e-3)
    params = {
        "kernel": kernel.key,
        "tuned": result.best_config,
        "untuned": baseline,
        "target_default": result.default_config,
    }
    case = summarize(name, params, t, u, "untuned", goal)
    case["search_best_ms"] = round(result.best_ms, 4)
    case["search_default_ms"] = None if result.default_ms is None else round(result.default_ms, 4)
    case["configurations_tried"] = len(result.trials)
    case["configurations_failed"] = sum("error" in trial for trial in result.trials)
    print(
        f"{name} {kernel.key} on {target}: tuned {result.best_config} {case['tvm_ms']:.3f} ms, "
        f"untuned {baseline} {case['untuned_ms']:.3f} ms (ratio best {case['ratio_best']:.3f}); "
        f"target default {result.default_config} {case['search_default_ms']} ms in the search",
        flush=True,
    )
    return case


def tuned_matmul_case(
    target: str, size: int, seed: int = 0, budget_s: float = 120.0, goal: float | None = None
) -> dict[str, Any]:
    """:func:`tuned_vs_untuned` for the zoo's tunable ``size``-cubed float32 ``matmul_tiled`` on
    ``target`` against a fixed tile of 8 with one output per thread."""
    import numpy as np

    from tvm.testing import tunables

    rng = np.random.default_rng(seed)
    x, y = (rng.standard_normal((size, size), dtype="float32") for _ in range(2))
    kernel = tunables.tunable_matmul_tiled(size, size, size, name="matmul")
    return tuned_vs_untuned(
        kernel,
        target,
        [x, y],
        ((size, size), "float32"),
        x @ y,
        goal,
        budget_s=budget_s,
        untuned={"tile": 8, "work": 1},
    )


def tuned_zoo_cases(
    target: str,
    matmul_size: int,
    rows: int,
    cols: int,
    seed: int = 0,
    budget_s: float = 120.0,
    matmul_goal: float | None = None,
) -> list[dict[str, Any]]:
    """The zoo's tunable kernels tuned on ``target`` (the cases every device backend's benchmark
    runs): :func:`tuned_matmul_case` (``matmul_goal``), then the row sum and row softmax of a
    ``rows x cols`` float32 matrix against the kernels' fixed 64 threads per block (recorded
    without a goal). ``budget_s`` is each search's time budget."""
    import numpy as np

    from tvm.testing import kernels, tunables

    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, cols), dtype="float32")
    out = ((rows,), "float32"), ((rows, cols), "float32")
    return [
        tuned_matmul_case(target, matmul_size, seed, budget_s, matmul_goal),
        tuned_vs_untuned(
            tunables.tunable_row_sum(rows, cols),
            target,
            [x],
            out[0],
            x.sum(axis=1),
            None,
            budget_s=budget_s,
            untuned={"block": 64},
            name="tuned_row_sum",
        ),
        tuned_vs_untuned(
            tunables.tunable_row_softmax(rows, cols),
            target,
            [x],
            out[1],
            kernels.reference_softmax(x),
            None,
            budget_s=budget_s,
            untuned={"block": 64},
            name="tuned_row_softmax",
        ),
    ]


def bench_device(backend: str, result: dict, out_path: str, requires: Sequence[str] = ()) -> Any:
    """The device ``<backend>(0)`` a benchmark runs on; or None, after writing ``result`` to
    ``out_path`` with ``skipped`` saying why nothing can run: the backend does not load, no
    device exists, or a module of ``requires`` (the peer's package) is not installed."""
    import importlib

    import tvm
    from tvm.testing.backend import unavailable_reason

    try:
        why = unavailable_reason(backend)
        if why:
            raise RuntimeError(why)
        for name in requires:
            importlib.import_module(name)
        return tvm.device(backend, 0)
    except Exception as err:  # noqa: BLE001 - report why nothing ran
        result["skipped"] = f"{type(err).__name__}: {err}"
        write_json(out_path, result)
        print(result["skipped"])
        return None


def write_json(path: str, data: dict) -> None:
    """Write a result file (indented, newline-terminated)."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
        f.write("\n")


__all__ = [
    "KernelCall",
    "bench_device",
    "WgpuKernel",
    "batch_ms",
    "compiled_call",
    "compare",
    "summarize",
    "tuned_call",
    "tuned_function",
    "tuned_kernel_cases",
    "tuned_matmul_case",
    "tuned_peer_case",
    "tuned_vs_untuned",
    "tuned_zoo_cases",
    "write_json",
]
