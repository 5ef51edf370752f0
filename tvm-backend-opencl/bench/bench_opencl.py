"""OpenCL backend benchmark: our generated OpenCL C vs the same kernels written by hand in
OpenCL C and run through pyopencl, on the same device in the same run.

    python tvm-backend-opencl/bench/bench_opencl.py results.json

Cases: vector add (float32, 2^22 elements, 256 work-items per group) and a 16x16-tiled matmul
(float32, 512^3) using __local tiles and barriers. Both sides use identical global/local sizes;
each sample is one batch of launches followed by a queue finish, the two sides' batches
interleaved (alternating which goes first).
``ratio_best`` = pyopencl time / our time over the best repeat of each side (higher is better; the
goal is >= 0.95): load from other processes only ever adds time, so the best repeat is the least
disturbed measurement on a shared machine. ``ratio`` is the same from the medians.
When OpenCL or pyopencl is missing, the JSON says so in ``skipped``.
"""

from __future__ import annotations

import platform
import sys
from typing import Any

import numpy as np
from tvm.testing import kernels
from tvm.testing.benchmark import bench_device, compare, summarize, tuned_zoo_cases, write_json

GOAL = 0.95
VADD_N = 1 << 22
MM = 512
TILE = 16

VADD_CL = r"""
__kernel void vadd(__global const float* restrict a, __global const float* restrict b,
                   __global float* restrict c, int n) {
  int i = get_group_id(0) * 256 + get_local_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
"""

MATMUL_CL = r"""
__kernel void matmul(__global const float* restrict A, __global const float* restrict B,
                     __global float* restrict C, int M, int N, int K) {
  __local float As[256];
  __local float Bs[256];
  int bx = get_group_id(0), by = get_group_id(1);
  int tx = get_local_id(0), ty = get_local_id(1);
  float acc = 0.0f;
  for (int ko = 0; ko < K / 16; ++ko) {
    As[ty * 16 + tx] = A[(by * 16 + ty) * K + ko * 16 + tx];
    Bs[ty * 16 + tx] = B[(ko * 16 + ty) * N + bx * 16 + tx];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int ki = 0; ki < 16; ++ki) acc += As[ty * 16 + ki] * Bs[ki * 16 + tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  C[(by * 16 + ty) * N + bx * 16 + tx] = acc;
}
"""


def tvm_kernels() -> dict[str, Any]:
    """The same two kernels as TVMScript (compiled by tvm.compile to OpenCL C), from the shared
    kernel zoo: vector add with 256 work-items per group, and the 16x16-tiled matmul over
    symbolic M, N, K (the sizes come from the arguments, like the hand-written kernel's)."""
    return {
        "vadd": kernels.vector_add("float32", 256, name="vadd"),
        "matmul": kernels.matmul_tiled(tile=TILE, name="matmul"),
    }


class TVMSide:
    """A kernel compiled by tvm.compile and run through our OpenCL runtime."""

    def __init__(self, dev: Any, name: str, inputs: list[np.ndarray], out_shape: tuple):
        import tvm

        self.mod = tvm.compile(tvm_kernels()[name], target="opencl")
        self.args = [tvm.runtime.tensor(x, dev) for x in inputs]
        self.out = tvm.runtime.empty(out_shape, "float32", dev)
        self.fn = self.mod[name]
        self.sync = dev.sync

    def run(self) -> None:
        self.fn(*self.args, self.out)

    def result(self) -> np.ndarray:
        return self.out.numpy()


class PyOpenCLSide:
    """The hand-written kernel built and launched by pyopencl on the first device."""

    def __init__(
        self,
        name: str,
        source: str,
        inputs: list[np.ndarray],
        out_shape: tuple,
        global_size: tuple,
        local_size: tuple,
        scalars: list[np.generic],
    ):
        import pyopencl as cl

        self.cl = cl
        device = cl.get_platforms()[0].get_devices()[0]
        self.device_name = device.name
        ctx = cl.Context([device])
        self.queue = cl.CommandQueue(ctx)
        mf = cl.mem_flags
        # kept on self: a kernel does not keep its argument buffers alive in pyopencl
        self.bufs = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=x) for x in inputs]
        self.out = np.empty(out_shape, "float32")
        self.obuf = cl.Buffer(ctx, mf.READ_WRITE, self.out.nbytes)
        self.kernel = getattr(cl.Program(ctx, source).build(), name)
        self.kernel.set_args(*self.bufs, self.obuf, *scalars)
        self.global_size, self.local_size = global_size, local_size

    def run(self) -> None:
        self.cl.enqueue_nd_range_kernel(self.queue, self.kernel, self.global_size, self.local_size)

    def sync(self) -> None:
        self.queue.finish()

    def result(self) -> np.ndarray:
        self.cl.enqueue_copy(self.queue, self.out, self.obuf)
        self.queue.finish()
        return self.out


def main(out_path: str) -> int:
    result: dict[str, Any] = {
        "benchmark": "tvm-backend-opencl: generated OpenCL C vs hand-written OpenCL C via pyopencl",
        "goal_ratio": GOAL,
        "ratio_definition": "pyopencl_ms / tvm_ms (>= goal means our path is at most 5% slower); "
        "meets_goal uses ratio_best (best repeat of each side)",
        "python": platform.python_version(),
        "cases": [],
    }
    dev = bench_device("opencl", result, out_path, requires=("pyopencl",))
    if dev is None:
        return 0
    result["device"] = dev.name
    result["opencl_version"] = dev.compute_version
    result["driver_version"] = dev.attr("driver_version")
    rng = np.random.default_rng(0)

    a, b = rng.standard_normal(VADD_N, dtype="float32"), rng.standard_normal(VADD_N, dtype="float32")
    groups = (VADD_N + 255) // 256
    ours = TVMSide(dev, "vadd", [a, b], (VADD_N,))
    theirs = PyOpenCLSide("vadd", VADD_CL, [a, b], (VADD_N,), (groups * 256,), (256,), [np.int32(VADD_N)])
    t_s, p_s = compare((ours.run, ours.sync), (theirs.run, theirs.sync), batch=10, repeats=25)
    np.testing.assert_allclose(ours.result(), a + b)
    np.testing.assert_allclose(theirs.result(), a + b)
    params = {"n": VADD_N, "dtype": "float32", "local_size": [256]}
    result["cases"].append(summarize("vector_add", params, t_s, p_s, "pyopencl", GOAL, 3 * VADD_N * 4))

    x = rng.standard_normal((MM, MM), dtype="float32")
    y = rng.standard_normal((MM, MM), dtype="float32")
    ours = TVMSide(dev, "matmul", [x, y], (MM, MM))
    theirs = PyOpenCLSide("matmul", MATMUL_CL, [x, y], (MM, MM), (MM, MM), (TILE, TILE), [np.int32(MM)] * 3)
    t_s, p_s = compare((ours.run, ours.sync), (theirs.run, theirs.sync), batch=1, repeats=15)
    ref = x @ y
    np.testing.assert_allclose(ours.result(), ref, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(theirs.result(), ref, rtol=1e-3, atol=1e-3)
    params = {"m": MM, "n": MM, "k": MM, "dtype": "float32", "tile": TILE}
    case = summarize("matmul_tiled", params, t_s, p_s, "pyopencl", GOAL)
    case["gflops_tvm"] = round(2 * MM**3 / (case["tvm_ms"] * 1e6), 3)
    case["gflops_pyopencl"] = round(2 * MM**3 / (case["pyopencl_ms"] * 1e6), 3)
    result["cases"].append(case)
    # the zoo's tunable matmul: tvm.tune's best against its untuned default (tile 8), goal 1.2x
    result["cases"].extend(tuned_zoo_cases("opencl", MM, 1024, 1024, matmul_goal=1.2))
    result["all_meet_goal"] = all(c.get("meets_goal", True) for c in result["cases"])
    write_json(out_path, result)
    for c in result["cases"][:-3]:  # the tuning cases printed their own lines
        peer = "pyopencl"
        print(
            f"{c['name']}: tvm {c['tvm_ms']:.3f} ms, {peer} {c[peer + '_ms']:.3f} ms, "
            f"ratio best-of {c['ratio_best']:.3f} (medians {c['ratio']:.3f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "bench_opencl.json"))
