"""Import cost: median in-process time of `import tvm` with the core only, with the example
backend installed, and with every backend wheel installed, next to `import tvm_ffi` alone, all
in the same run. Goal: import tvm with backends installed <= 1.15 x import tvm_ffi.

Usage: python bench/bench_import.py [out.json] (wheels from ./wheelhouse or $TVM_WHEELHOUSE)."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "ci"))
from wheel_venv import wheelhouse_venv  # noqa: E402

RUNS = int(os.environ.get("BENCH_IMPORT_RUNS", "25"))
TIMER = "import time; t = time.perf_counter(); import {mod}; print(time.perf_counter() - t)"


def time_import(py: str, mod: str, cache: str) -> float:
    """One fresh-process measurement of importing ``mod``, in seconds."""
    env = {**os.environ, "TVM_CACHE_DIR": cache}
    env.pop("PYTHONPATH", None)
    out = subprocess.run([py, "-c", TIMER.format(mod=mod)], capture_output=True, text=True, env=env, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main(out_path: str) -> None:
    """Measure and write the JSON."""
    wheelhouse = Path(os.environ.get("TVM_WHEELHOUSE", ROOT / "wheelhouse"))
    backends = sorted({w.name.split("-")[0].replace("_", "-") for w in wheelhouse.glob("tvm_backend_*.whl")})
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        envs = {
            "core_only": wheelhouse_venv(base, "core", ["tvm"], wheelhouse),
            "with_example_backend": wheelhouse_venv(base, "example", ["tvm", "tvm-backend-example"], wheelhouse),
            "with_all_backends": wheelhouse_venv(base, "all", ["tvm", *backends], wheelhouse),
        }
        cache = str(base / "cache")
        samples: dict[str, list[float]] = {k: [] for k in ["tvm_ffi", *envs]}
        for py in envs.values():  # warm the file cache and the entry-point scan cache
            time_import(py, "tvm", cache)
        for _ in range(RUNS):
            samples["tvm_ffi"].append(time_import(envs["core_only"], "tvm_ffi", cache))
            for name, py in envs.items():
                samples[name].append(time_import(py, "tvm", cache))
    med = {k: statistics.median(v) * 1e3 for k, v in samples.items()}
    result = {
        "benchmark": "import time (ms, median of fresh processes)",
        "runs": RUNS,
        "machine": {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count()},
        "median_ms": {
            "import tvm_ffi": med["tvm_ffi"],
            "import tvm (core only)": med["core_only"],
            "import tvm (+ example backend)": med["with_example_backend"],
            f"import tvm (+ {', '.join(backends)})": med["with_all_backends"],
        },
        "ratio_vs_tvm_ffi": {k: med[k] / med["tvm_ffi"] for k in envs},
        "goal": "import tvm with backends installed <= 1.15 x import tvm_ffi",
        "goal_met": med["with_example_backend"] / med["tvm_ffi"] <= 1.15,
    }
    Path(out_path).parent.mkdir(parents=True, exist_ok=True)
    Path(out_path).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "bench" / "results" / "import.json"))
