"""Hexagon backend benchmark, under qemu-hexagon:

* launch round trip of a one-thread kernel: our long-lived simulator process (goal <= 100 us)
  against starting one simulator process per launch, the peer baseline;
* vector add of 2^20 elements (float32 and int32), built with HVX (``hexagon``) and without
  (``hexagon -hvx=0``), each against the same kernel run one process per launch; and the HVX
  speedup over scalar code of the same kernel (goal > 1).

    python tvm-backend-hexagon/bench/bench_hexagon.py results.json

When the simulator or the compiler is missing, the JSON says so (``skipped``).
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from typing import Any

import numpy as np
from tvm.testing.benchmark import KernelCall, bench_device, compare, summarize, tuned_zoo_cases, write_json

PEER = "process_per_launch"
ROUND_TRIP_GOAL_US = 100.0
N = 1 << 20
BLOCK = 1024


class PerLaunchProcess(KernelCall):
    """The peer: the same kernel with a new simulator process for every launch, called directly
    (no host function) from a copy of the device module, which has a simulator of its own."""

    def __init__(self, mod: Any, kernel: str, args: list[Any], dev: Any):
        import tvm_ffi

        copy = tvm_ffi.get_global_func("ffi.Module.load_from_bytes.hexagon")(mod.imports[0].save_to_bytes())
        super().__init__(copy.get_function(kernel), args, dev)

    def run(self) -> None:
        """Launch once in a fresh simulator process."""
        os.environ["TVM_HEXAGON_PROCESS_PER_LAUNCH"] = "1"
        try:
            self.fn(*self.args)
        finally:
            del os.environ["TVM_HEXAGON_PROCESS_PER_LAUNCH"]


def round_trip_case(dev: Any) -> dict:
    """A one-thread kernel over one element: what a launch costs beyond the kernel itself."""
    import tvm
    from tvm.testing import kernels

    a = tvm.runtime.tensor(np.ones(1, "float32"), dev)
    c = tvm.runtime.empty((1,), "float32", dev)
    mod = tvm.compile(kernels.vector_add(block=1, name="tiny"), target="hexagon")
    ours = KernelCall(mod["tiny"], [a, a, c], dev)
    peer = PerLaunchProcess(mod, "tiny_kernel0", [a, a, c, 1, 1, 1], dev)  # n, grid, block
    t, p = compare((ours.run, ours.sync), (peer.run, peer.sync), batch=20, repeats=11)
    case = summarize("launch_round_trip", {"n": 1, "block": 1}, t, p, PEER, 1.0)
    case["tvm_us"], case[f"{PEER}_us"] = round(case["tvm_ms"] * 1e3, 1), round(case[f"{PEER}_ms"] * 1e3, 1)
    case["goal_us"] = ROUND_TRIP_GOAL_US
    case["meets_goal"] = case["tvm_us"] <= ROUND_TRIP_GOAL_US
    np.testing.assert_array_equal(c.numpy(), [2.0])
    return case


def vector_add_cases(dev: Any, dtype: str) -> list[dict]:
    """Vector add with and without HVX, each against one process per launch."""
    import tvm
    from tvm.testing import kernels

    x = (np.arange(N) % 1000).astype(dtype)
    a = tvm.runtime.tensor(x, dev)
    cases = []
    for target, hvx in (("hexagon", True), ("hexagon -hvx=0", False)):
        c = tvm.runtime.empty((N,), dtype, dev)
        mod = tvm.compile(kernels.vector_add(dtype, BLOCK, name="vadd"), target=target)
        ours = KernelCall(mod["vadd"], [a, a, c], dev)
        peer = PerLaunchProcess(mod, "vadd_kernel0", [a, a, c, N, N // BLOCK, BLOCK], dev)
        t, p = compare((ours.run, ours.sync), (peer.run, peer.sync), batch=1, repeats=5)
        np.testing.assert_array_equal(c.numpy(), x + x)
        name = f"vector_add_{dtype}_{'hvx' if hvx else 'scalar'}"
        cases.append(
            summarize(name, {"n": N, "dtype": dtype, "block": BLOCK, "target": target}, t, p, PEER, 1.0, 3 * x.nbytes)
        )
    hvx_case, scalar_case = cases
    hvx_case["hvx_speedup"] = round(scalar_case["tvm_min_ms"] / hvx_case["tvm_min_ms"], 3)
    hvx_case["hvx_goal"] = "hvx_speedup > 1"
    hvx_case["meets_hvx_goal"] = hvx_case["hvx_speedup"] > 1.0
    return cases


def simulator_version(qemu: str) -> str:
    """The first line of ``<qemu> --version``."""
    try:
        out = subprocess.run([qemu, "--version"], capture_output=True, text=True, timeout=30).stdout
    except OSError as err:
        return f"unknown ({err})"
    return out.splitlines()[0] if out else "unknown"


def main(out_path: str) -> int:
    """Run every case that can run here and write ``out_path``."""
    result: dict[str, Any] = {
        "benchmark": "tvm-backend-hexagon under qemu-hexagon: a long-lived simulator process per module "
        "vs one simulator process per launch; HVX vs scalar code",
        "peer": "the same executable run by a new qemu-hexagon process for every launch "
        "(TVM_HEXAGON_PROCESS_PER_LAUNCH=1)",
        "ratio_definition": "peer_ms / tvm_ms (higher is better for us)",
        "python": platform.python_version(),
        "cases": [],
    }
    dev = bench_device("hexagon", result, out_path)
    if dev is None:
        return 0
    import shutil

    qemu = os.environ.get("TVM_HEXAGON_QEMU") or shutil.which("qemu-hexagon") or shutil.which("qemu-hexagon-static")
    result.update(device=dev.name, simulator=simulator_version(qemu or "qemu-hexagon"))
    result["cases"] = [round_trip_case(dev)] + vector_add_cases(dev, "float32") + vector_add_cases(dev, "int32")
    # the zoo's tunable matmul vs its default: small, since barrier kernels run as thread teams
    result["cases"].extend(tuned_zoo_cases("hexagon", 64, 64, 256, budget_s=60))
    result["all_meet_goal"] = all(c.get("meets_goal", True) and c.get("meets_hvx_goal", True) for c in result["cases"])
    write_json(out_path, result)
    for c in result["cases"][:-3]:  # the tuning cases printed their own lines
        extra = f", HVX speedup {c['hvx_speedup']}" if "hvx_speedup" in c else ""
        print(f"{c['name']}: tvm {c['tvm_ms']:.4f} ms, {PEER} {c[f'{PEER}_ms']:.4f} ms{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "bench_hexagon.json"))
