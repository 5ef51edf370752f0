"""Vulkan backend benchmark, on the first Vulkan device (lavapipe in CI):

* vector add (float32, 2^22 elements) and a tiled matmul (float32, 512^3, workgroup-shared tiles
  and barriers): the zoo's tunable kernels (``tvm.testing.tunables``) tuned on the device, our
  SPIR-V emitted from TVMScript, against the same computations written by hand in GLSL the usual
  way (one element per invocation, 256 per workgroup; a 16x16 tiled matmul, one output per
  invocation) and compiled by glslang, both dispatched the same way (through our runtime, so only
  the shader code differs); goal ratio >= 0.95;
* dispatch overhead of a tiny kernel (64 elements, one workgroup): our ``mod["f"](...)`` against
  wgpu-py dispatching an equivalent WGSL kernel on the same device, per dispatch with a wait for
  completion and per dispatch in a batch of 200 followed by one wait; goal: ours lower.

    python tvm-backend-vulkan/bench/bench_vulkan.py results.json

When Vulkan, glslang or wgpu is missing, the JSON says so (``skipped``) for the parts it stops.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
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

GOAL = 0.95
VADD_N = 1 << 22
MM = 512
TILE = 16
TINY = 64

#: What both GLSL kernels start with: the workgroup size from specialization constants 0-2 and
#: the buffers at bindings 0-2, as our kernel interface has them.
GLSL_HEAD = """#version 450
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer B { float b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer C { float c[]; };
"""
VADD_GLSL = (
    GLSL_HEAD
    + """
layout(push_constant) uniform Args { int n; };
void main() {
  int i = int(gl_WorkGroupID.x) * 256 + int(gl_LocalInvocationID.x);
  if (i < n) c[i] = a[i] + b[i];
}
"""
)
MATMUL_GLSL = (
    GLSL_HEAD
    + """
layout(push_constant) uniform Args { int M; int N; int K; };
shared float As[256];
shared float Bs[256];
void main() {
  int bx = int(gl_WorkGroupID.x), by = int(gl_WorkGroupID.y);
  int tx = int(gl_LocalInvocationID.x), ty = int(gl_LocalInvocationID.y);
  float acc = 0.0;
  for (int ko = 0; ko < K / 16; ++ko) {
    As[ty * 16 + tx] = a[(by * 16 + ty) * K + ko * 16 + tx];
    Bs[ty * 16 + tx] = b[(ko * 16 + ty) * N + bx * 16 + tx];
    barrier();
    for (int ki = 0; ki < 16; ++ki) acc += As[ty * 16 + ki] * Bs[ki * 16 + tx];
    barrier();
  }
  c[(by * 16 + ty) * N + bx * 16 + tx] = acc;
}
"""
)
TINY_WGSL = """
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  if (i < arrayLength(&c)) { c[i] = a[i] + b[i]; }
}
"""


def glsl_module(name: str, source: str, arg_types: list[str], tags: list[str]) -> Any:
    """A ``vulkan`` module holding the GLSL kernel ``name`` compiled by glslang, with the same
    kernel interface as ours (bindings, push constants, specialization constants)."""
    import tvm_ffi

    with tempfile.TemporaryDirectory() as tmp:
        src, spv = Path(tmp, f"{name}.comp"), Path(tmp, f"{name}.spv")
        src.write_text(source)
        cmd = ["glslangValidator", "-V", "--target-env", "vulkan1.1", "-e", name, "--source-entrypoint", "main"]
        subprocess.run([*cmd, str(src), "-o", str(spv)], check=True, capture_output=True, text=True)
        payload = spv.read_bytes()
    create = tvm_ffi.get_global_func("ffi.Module.create.vulkan")
    return create("spirv", [[name, arg_types, tags]], payload, [["glsl", source]])


def kernel_cases(dev: Any) -> list[dict]:
    """Vector add and tiled matmul, each the zoo's tunable kernel tuned on this device (every
    configuration tried; the tuning time is recorded), vs the same computations written by hand
    in GLSL the usual way and compiled by glslang, both dispatched through our runtime (only the
    shader code differs)."""
    import tvm

    def on_device(*arrays: Any) -> list[Any]:
        out = tvm.runtime.empty(arrays[0].shape, "float32", dev)
        return [tvm.runtime.tensor(x, dev) for x in arrays] + [out]

    def vadd_peer(a: Any, b: Any) -> KernelCall:
        hand = glsl_module("vadd", VADD_GLSL, ["handle:float32"] * 3 + ["int32"], ["blockIdx.x", "threadIdx.x:256"])
        bufs = on_device(a, b)
        return KernelCall(hand["vadd"], [*bufs, VADD_N, (VADD_N + 255) // 256, 256], dev, bufs[2])

    def matmul_peer(x: Any, y: Any) -> KernelCall:
        tags = ["blockIdx.y", "blockIdx.x", "threadIdx.y:16", "threadIdx.x:16"]
        hand = glsl_module("matmul", MATMUL_GLSL, ["handle:float32"] * 3 + ["int32"] * 3, tags)
        bufs = on_device(x, y)
        grid = [MM // TILE, MM // TILE, TILE, TILE]
        return KernelCall(hand["matmul"], [*bufs, MM, MM, MM, *grid], dev, bufs[2])

    return tuned_kernel_cases("vulkan", dev, "glslang", vadd_peer, matmul_peer, GOAL, n=VADD_N, size=MM, peer_tile=TILE)


def dispatch_cases(dev: Any) -> list[dict]:
    """Dispatch overhead of a one-workgroup kernel: ours vs wgpu-py's, with a wait after each
    dispatch and in batches of 200."""
    import tvm
    from tvm.testing import kernels

    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(TINY, dtype="float32"), rng.standard_normal(TINY, dtype="float32")
    bufs = [tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev), tvm.runtime.empty((TINY,), "float32", dev)]
    mine = KernelCall(tvm.compile(kernels.vector_add("float32", 64, name="tiny"), target="vulkan")["tiny"], bufs, dev)
    theirs = WgpuKernel(TINY_WGSL, a, b, (1, 1, 1), a.nbytes)
    cases = []
    for name, batch, repeats in (("dispatch_and_wait", 1, 2001), ("dispatch_batched", 200, 41)):
        t, w = compare((mine.run, mine.sync), (theirs.run, theirs.sync), batch=batch, repeats=repeats)
        case = summarize(name, {"n": TINY, "batch": batch}, t, w, "wgpu", 1.0)
        case["tvm_us"], case["wgpu_us"] = round(case["tvm_ms"] * 1e3, 2), round(case["wgpu_ms"] * 1e3, 2)
        case["wgpu_adapter"] = theirs.adapter.info.get("device", "")
        cases.append(case)
    np.testing.assert_allclose(bufs[2].numpy(), a + b)
    np.testing.assert_allclose(theirs.result(), a + b)
    return cases


def main(out_path: str) -> int:
    """Run every case that can run here and write ``out_path``."""
    result: dict[str, Any] = {
        "benchmark": "tvm-backend-vulkan: generated SPIR-V vs glslang-compiled GLSL; dispatch vs wgpu-py",
        "goal_ratio": GOAL,
        "ratio_definition": "peer_ms / tvm_ms (higher is better for us); meets_goal uses ratio_best; "
        "dispatch cases meet their goal when ours is faster (ratio_best >= 1)",
        "python": platform.python_version(),
        "cases": [],
    }
    dev = bench_device("vulkan", result, out_path)
    if dev is None:
        return 0
    result.update(device=dev.name, vulkan_api=dev.attr("api_version"), driver_version=dev.attr("driver_version"))
    skipped = []
    if shutil.which("glslangValidator"):
        result["cases"] += kernel_cases(dev)
    else:
        skipped.append("kernel cases: glslangValidator not found (apt-get install glslang-tools)")
    try:
        import wgpu  # noqa: F401
    except ImportError:
        skipped.append("dispatch cases: wgpu-py not installed (pip install wgpu)")
    else:
        result["cases"] += dispatch_cases(dev)
    tuning = tuned_zoo_cases("vulkan", MM, 512, 1024)  # the zoo's tunable kernels, tuned vs untuned
    if skipped:
        result["skipped"] = "; ".join(skipped)
    result["cases"].extend(tuning)
    result["all_meet_goal"] = bool(result["cases"]) and all(c.get("meets_goal", True) for c in result["cases"])
    write_json(out_path, result)
    for c in result["cases"]:
        peer = next(k[:-3] for k in c if k.endswith("_ms") and not k.startswith("tvm") and "_min" not in k)
        ours, theirs = c["tvm_ms"], c[peer + "_ms"]
        print(f"{c['name']}: tvm {ours:.4f} ms, {peer} {theirs:.4f} ms, ratio best {c['ratio_best']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "bench_vulkan.json"))
