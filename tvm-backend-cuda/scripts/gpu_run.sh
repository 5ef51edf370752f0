#!/usr/bin/env bash
# Run on a machine with an NVIDIA GPU, from the repository root, after
# scripts/prepare_gpu_run.sh filled ./.whl on the build machine:
#   bash tvm-backend-cuda/scripts/gpu_run.sh
# Installs the wheels in ./.whl into /tmp/site (numpy, pytest and nvidia-cuda-nvrtc must be
# installed; torch is optional), then runs the CUDA backend's whole test suite (GPU tests included) and
# the benchmarks. Logs and JSON go to $OUT (or /tmp/out).
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
nvidia-smi -L
python3 -c "import tvm; print(tvm.backend.report())" 2>&1 | tee "$out/backend_report.txt"
python3 -m pytest -q -ra -p no:cacheprovider tvm-backend-cuda/tests 2>&1 | tee "$out/pytest.log"
rc=${PIPESTATUS[0]}
python3 tvm-backend-cuda/bench/bench_cuda.py "$out/bench_cuda.json" > "$out/bench.log" 2>&1 || echo "bench failed: see bench.log"
tail -5 "$out/bench.log"
exit "$rc"
