"""CPU benchmarks, each side by side with its peer in the same run; results as JSON.

    python bench/bench_cpu.py [out.json]        (default bench/results/cpu.json)

* vector add, 16M float32            vs NumPy ``np.add(a, b, out=c)``     goal >= 1.0x NumPy
* sum reduction, 16M float32         vs NumPy ``a.sum()``                 goal >= 1.0x NumPy
* matmul 1024x1024 float32           vs NumPy ``a @ b`` (OpenBLAS)        goal >= 0.8x tuned, 0.5x untuned
  (the zoo's tunable matmul: its default for this CPU's vector ISA, then tvm.tune on this machine
  within 2 minutes and tvm.compile from the stored record; the ISA and both configurations are
  recorded)
* call overhead, 3 tensor arguments  vs a raw tvm-ffi C-ABI function      goal <= 1.5x raw
* compile time of the vector add: cold (empty cache) and cache hit        goal hit <= 5 ms

"Speed vs NumPy" is NumPy's time / TVM's time (higher is better). Times are the best of repeated
runs after a warm-up (interleaved runs of both sides; the best run is the least disturbed one on a
shared machine); the load average at the start is recorded with the results.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np
import tvm_ffi

import tvm
from tvm.contrib import cc
from tvm.script import tir as T
from tvm.testing import kernels

TARGET = "c -mcpu=native"
N = 16 << 20


@T.prim_func
def vector_add(A: T.Buffer((N,), "float32"), B: T.Buffer((N,), "float32"), C: T.Buffer((N,), "float32")):
    for io in T.parallel(N // 4096):
        for ii in T.vectorized(4096):
            C[io * 4096 + ii] = A[io * 4096 + ii] + B[io * 4096 + ii]


@T.prim_func
def vector_add_serial(A: T.Buffer((N,), "float32"), B: T.Buffer((N,), "float32"), C: T.Buffer((N,), "float32")):
    for i in T.vectorized(N):
        C[i] = A[i] + B[i]


@T.prim_func
def vector_sum(A: T.Buffer((N,), "float32"), S: T.Buffer((1,), "float32")):
    # 32 lanes of partial sums (independent vector accumulators), combined at the end. One
    # thread: like NumPy's sum, and robust on a shared 2-core machine.
    acc = T.alloc_buffer((32,), "float32", scope="local")
    for j in T.vectorized(32):
        acc[j] = T.float32(0)
    for i in range(N // 32):
        for j in T.vectorized(32):
            acc[j] = acc[j] + A[i * 32 + j]
    S[0] = T.float32(0)
    for j in range(32):
        S[0] = S[0] + acc[j]


@T.prim_func
def touch3(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    C[0] = A[0] + B[0]


RAW_C = """
#include <tvm/ffi/c_api.h>
__attribute__((visibility("default")))
int __tvm_ffi_raw3(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  if (num_args != 3) return -1;
  DLTensor* a = (DLTensor*)((char*)args[0].v_obj + sizeof(TVMFFIObject));
  DLTensor* b = (DLTensor*)((char*)args[1].v_obj + sizeof(TVMFFIObject));
  DLTensor* c = (DLTensor*)((char*)args[2].v_obj + sizeof(TVMFFIObject));
  ((float*)c->data)[0] = ((float*)a->data)[0] + ((float*)b->data)[0];
  return 0;
}
"""


def best_times(
    fns: list[Callable[[], object]], repeat: int = 15, warmup: int = 2, settle_s: float = 0.0
) -> list[float]:
    """Best seconds of each ``fn()`` over ``repeat`` interleaved rounds. ``settle_s`` is a pause
    before each timed call: multi-threaded sides leave worker threads spinning after they return
    (OpenBLAS's for about 0.1 s), which on a 2-core machine slows whichever side runs next by up
    to 1.7x (measured here with the matmul; this, not the kernel, was most of the gap the earlier
    runs of this benchmark recorded)."""
    for fn in fns:
        for _ in range(warmup):
            fn()
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for k, fn in enumerate(fns):
            if settle_s:
                time.sleep(settle_s)
            t = time.perf_counter()
            fn()
            best[k] = min(best[k], time.perf_counter() - t)
    return best


def per_call(fns: list[Callable[..., object]], args: tuple, calls: int = 50_000, rounds: int = 9) -> list[float]:
    """Best-of-rounds seconds per call of each ``fn(*args)`` (rounds interleaved)."""
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for k, fn in enumerate(fns):
            t = time.perf_counter()
            for _ in range(calls):
                fn(*args)
            best[k] = min(best[k], (time.perf_counter() - t) / calls)
    return best


def row(name: str, tvm_s: float, ref_s: float, ref_name: str, goal: float) -> dict:
    speed = ref_s / tvm_s
    ok = speed >= goal
    print(
        f"{name:<22} tvm {tvm_s * 1e3:9.3f} ms   {ref_name} {ref_s * 1e3:9.3f} ms   "
        f"speed {speed:5.2f}x (goal >= {goal}x) {'OK' if ok else 'MISSED'}",
        flush=True,
    )
    return {"tvm_ms": tvm_s * 1e3, f"{ref_name}_ms": ref_s * 1e3, "speed_vs_ref": speed, "goal": goal, "met": ok}


def matmul_rows(rng: np.random.Generator) -> dict:
    """The zoo's tunable 1024^3 matmul: its untuned default for this target, then tuned here
    (tvm.tune, stored in the run's tuning database) and compiled from the record, both against
    NumPy in the same run."""
    tgt = tvm.target.Target(TARGET)
    ma, mb = rng.random((1024, 1024), dtype="float32"), rng.random((1024, 1024), dtype="float32")
    mc, md = np.zeros((1024, 1024), "float32"), np.zeros((1024, 1024), "float32")
    tma, tmb, tmc, tmd = (tvm_ffi.from_dlpack(x) for x in (ma, mb, mc, md))
    kernel = kernels.tunable_matmul_cpu(1024, 1024, 1024)
    default = kernel.default_config(tgt)
    f_default = tvm.compile(kernel.build(default), TARGET)["matmul"]
    t = time.perf_counter()
    tuned = tvm.tune.tune(kernel, TARGET, inputs=[ma, mb], outputs=[((1024, 1024), "float32")], reference=ma @ mb)
    tuning_s = time.perf_counter() - t
    f_tuned = tvm.compile(kernel, TARGET)["matmul"]  # from the stored record, no search
    for f, out, arr in ((f_default, tmc, mc), (f_tuned, tmd, md)):
        f(tma, tmb, out)
        np.testing.assert_allclose(arr, ma @ mb, rtol=1e-3)
    t_def, t_tuned, t_np = best_times(
        [lambda: f_default(tma, tmb, tmc), lambda: f_tuned(tma, tmb, tmd), lambda: ma @ mb], 9, settle_s=0.2
    )
    rows = {
        "matmul_1024_f32": row("matmul 1024 f32 tuned", t_tuned, t_np, "numpy", 0.8),
        "matmul_1024_f32_untuned": row("matmul 1024 f32 default", t_def, t_np, "numpy", 0.5),
    }
    rows["matmul_1024_f32"].update(
        config=tuned.best_config,
        tvm_gflops=2 * 1024**3 / t_tuned / 1e9,
        tuning_s=tuning_s,
        configurations_tried=len(tuned.trials),
        goal_tuning_s=120,
    )
    rows["matmul_1024_f32_untuned"].update(config=default, tvm_gflops=2 * 1024**3 / t_def / 1e9)
    return rows


def main() -> None:
    out_path = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent / "results" / "cpu.json")
    rng = np.random.default_rng(0)
    results: dict = {
        "machine": {
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "compiler": cc.compiler_version(),
            "numpy": np.__version__,
            "target": TARGET,
            "load_average_1min": os.getloadavg()[0],
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", ""),
            "cpu_model": tvm.tune.cpu_model(),
            "vector_isa": sorted(tvm.tune.isa_features(tvm.target.Target(TARGET))),
        }
    }
    with tempfile.TemporaryDirectory(prefix="tvm-bench-cache-") as cache:
        os.environ["TVM_CACHE_DIR"] = cache
        t = time.perf_counter()
        add_mod = tvm.compile(vector_add, TARGET)
        cold = time.perf_counter() - t
        hits = []
        for _ in range(20):
            t = time.perf_counter()
            m = tvm.compile(vector_add, TARGET)
            hits.append(time.perf_counter() - t)
            assert m._build_info.cache_hit
        hit = statistics.median(hits)
        print(
            f"{'compile vector add':<22} cold {cold * 1e3:8.1f} ms   cache hit {hit * 1e3:6.2f} ms "
            f"(goal <= 5 ms) {'OK' if hit <= 5e-3 else 'MISSED'}",
            flush=True,
        )
        results["compile_vector_add"] = {
            "cold_ms": cold * 1e3,
            "cache_hit_ms": hit * 1e3,
            "goal_hit_ms": 5.0,
            "met": hit <= 5e-3,
        }

        a, b = rng.random(N, dtype="float32"), rng.random(N, dtype="float32")
        c = np.zeros(N, "float32")
        ta, tb, tc = (tvm_ffi.from_dlpack(x) for x in (a, b, c))
        # two schedules (parallel over 2 cores, one vectorized loop): report the faster one,
        # as a tuner would pick it on this machine
        f_par = add_mod["vector_add"]
        f_ser = tvm.compile(vector_add_serial, TARGET)["vector_add_serial"]
        for f in (f_par, f_ser):
            c[:] = 0
            f(ta, tb, tc)
            np.testing.assert_array_equal(c, a + b)
        t_par, t_ser, t_np = best_times(
            [lambda: f_par(ta, tb, tc), lambda: f_ser(ta, tb, tc), lambda: np.add(a, b, out=c)]
        )
        results["vector_add_16M_f32"] = row("vector add 16M f32", min(t_par, t_ser), t_np, "numpy", 1.0)
        results["vector_add_16M_f32"].update(
            schedule="parallel" if t_par <= t_ser else "serial", parallel_ms=t_par * 1e3, serial_ms=t_ser * 1e3
        )

        s = np.zeros(1, "float32")
        ts_ = tvm_ffi.from_dlpack(s)
        fsum = tvm.compile(vector_sum, TARGET)["vector_sum"]
        fsum(ta, ts_)
        np.testing.assert_allclose(s[0], a.astype("float64").sum(), rtol=1e-4)
        results["sum_16M_f32"] = row("sum 16M f32", *best_times([lambda: fsum(ta, ts_), lambda: a.sum()]), "numpy", 1.0)

        results.update(matmul_rows(rng))

        # call overhead: the compiled function (argument checks included) vs a raw C-ABI function,
        # once the worker threads of the parallel kernels above have gone idle
        time.sleep(1.0)
        raw_path, _ = cc.compile_shared(RAW_C, name="raw3")
        raw = tvm_ffi.load_module(raw_path)["raw3"]
        small = [tvm_ffi.from_dlpack(np.ones(8, "float32")) for _ in range(3)]
        ftouch = tvm.compile(touch3, TARGET)["touch3"]
        t_tvm, t_raw = per_call([ftouch, raw], tuple(small))
        ratio = t_tvm / t_raw
        print(
            f"{'call overhead (3 args)':<22} tvm {t_tvm * 1e9:7.1f} ns   raw C-ABI {t_raw * 1e9:7.1f} ns   "
            f"ratio {ratio:4.2f}x (goal <= 1.5x) {'OK' if ratio <= 1.5 else 'MISSED'}",
            flush=True,
        )
        results["call_overhead_3_tensors"] = {
            "tvm_ns": t_tvm * 1e9,
            "raw_ns": t_raw * 1e9,
            "ratio": ratio,
            "goal": 1.5,
            "met": ratio <= 1.5,
        }
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {out_path}")


if __name__ == "__main__":
    main()
