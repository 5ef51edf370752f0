"""WebGPU backend benchmark, on wgpu-native's first adapter (lavapipe in CI):

* vector add (float32, 2^22 elements) and a tiled matmul (float32, 512^3, workgroup tiles and
  barriers): the zoo's tunable kernels (``tvm.testing.tunables``) tuned on the adapter (elements
  per invocation and workgroup size; tile and register block per invocation for the matmul),
  generated from TVMScript and dispatched by our runtime, against the
  same computations written by hand in WGSL the usual way (one element per invocation; a 16x16
  tiled matmul, one output per invocation) and dispatched by wgpu-py on the same adapter
  (tinygrad's WebGPU device needs Dawn's library, which no package here provides); goal
  ratio >= 1.0;
* dispatch overhead of a tiny kernel (64 elements, one workgroup): ours against wgpu-py's, with a
  wait after each dispatch and in batches of 200; goal: ours lower.

    python tvm-backend-webgpu/bench/bench_webgpu.py results.json

When WebGPU or wgpu-py is missing, the JSON says so (``skipped``).
"""

from __future__ import annotations

import platform
import sys
from typing import Any

import numpy as np
from tvm.testing.benchmark import (
    KernelCall,
    WgpuKernel,
    bench_device,
    compare,
    summarize,
    tuned_kernel_cases,
    tuned_zoo_cases,
    write_json,
)

GOAL = 1.0
VADD_N = 1 << 22
MM = 512
TILE = 16
TINY = 64

HEAD = """
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
"""
VADD_WGSL = (
    HEAD
    + """
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  if (i < arrayLength(&c)) { c[i] = a[i] + b[i]; }
}
"""
)
MATMUL_WGSL = (
    HEAD
    + """
const N: u32 = 512u;
var<workgroup> As: array<f32, 256>;
var<workgroup> Bs: array<f32, 256>;
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let tx = lid.x; let ty = lid.y;
  let row = wid.y * 16u + ty; let col = wid.x * 16u + tx;
  var acc = 0.0;
  for (var ko = 0u; ko < N / 16u; ko++) {
    As[ty * 16u + tx] = a[row * N + ko * 16u + tx];
    Bs[ty * 16u + tx] = b[(ko * 16u + ty) * N + col];
    workgroupBarrier();
    for (var ki = 0u; ki < 16u; ki++) { acc += As[ty * 16u + ki] * Bs[ki * 16u + tx]; }
    workgroupBarrier();
  }
  c[row * N + col] = acc;
}
"""
)


def kernel_cases(dev: Any) -> list[dict]:
    """Vector add and tiled matmul, each the zoo's tunable kernel tuned on this adapter (every
    configuration tried; the tuning time is recorded), with our runtime, vs hand-written WGSL
    through wgpu-py."""
    return tuned_kernel_cases(
        "webgpu",
        dev,
        "wgpu",
        lambda a, b: WgpuKernel(VADD_WGSL, a, b, ((VADD_N + 255) // 256, 1, 1), a.nbytes),
        lambda x, y: WgpuKernel(MATMUL_WGSL, x, y, (MM // TILE, MM // TILE, 1), MM * MM * 4),
        GOAL,
        n=VADD_N,
        size=MM,
        peer_tile=TILE,
    )


def dispatch_cases(dev: Any) -> list[dict]:
    """Dispatch overhead of a one-workgroup kernel: ours vs wgpu-py's."""
    import tvm
    from tvm.testing import kernels

    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(TINY, dtype="float32"), rng.standard_normal(TINY, dtype="float32")
    bufs = [tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev), tvm.runtime.empty((TINY,), "float32", dev)]
    ours = KernelCall(tvm.compile(kernels.vector_add("float32", 64, name="tiny"), target="webgpu")["tiny"], bufs, dev)
    peer = WgpuKernel(VADD_WGSL.replace("workgroup_size(256)", "workgroup_size(64)"), a, b, (1, 1, 1), a.nbytes)
    cases = []
    for name, batch, repeats in (("dispatch_and_wait", 1, 2001), ("dispatch_batched", 200, 41)):
        t, w = compare((ours.run, ours.sync), (peer.run, peer.sync), batch=batch, repeats=repeats)
        case = summarize(name, {"n": TINY, "batch": batch}, t, w, "wgpu", 1.0)
        case["tvm_us"], case["wgpu_us"] = round(case["tvm_ms"] * 1e3, 2), round(case["wgpu_ms"] * 1e3, 2)
        cases.append(case)
    np.testing.assert_allclose(bufs[2].numpy(), a + b)
    np.testing.assert_allclose(peer.result(), a + b)
    return cases


def main(out_path: str) -> int:
    """Run every case that can run here and write ``out_path``."""
    result: dict[str, Any] = {
        "benchmark": "tvm-backend-webgpu: generated WGSL and our runtime vs hand-written WGSL through wgpu-py",
        "peer": "wgpu-py dispatching hand-written WGSL (tinygrad's WebGPU device needs Dawn's libwebgpu_dawn, "
        "which no package here provides)",
        "goal_ratio": GOAL,
        "ratio_definition": "peer_ms / tvm_ms (higher is better for us); meets_goal uses ratio_best",
        "python": platform.python_version(),
        "cases": [],
    }
    dev = bench_device("webgpu", result, out_path, requires=("wgpu",))
    if dev is None:
        return 0
    result.update(adapter=dev.name, backend=dev.attr("backend"), wgpu_native=dev.attr("driver_version"))
    result["cases"] = kernel_cases(dev) + dispatch_cases(dev)
    tuning = tuned_zoo_cases("webgpu", MM, 512, 1024)  # the zoo's tunable kernels, tuned vs untuned
    result["all_meet_goal"] = all(c.get("meets_goal", True) for c in result["cases"] + tuning)
    write_json(out_path, {**result, "cases": result["cases"] + tuning})
    for c in result["cases"]:
        print(f"{c['name']}: tvm {c['tvm_ms']:.4f} ms, wgpu {c['wgpu_ms']:.4f} ms, ratio best {c['ratio_best']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "bench_webgpu.json"))
