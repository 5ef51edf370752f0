#!/usr/bin/env bash
# Run on a machine with an NVIDIA GPU, from the repository root, after
# scripts/prepare_gpu_run.sh filled ./.whl on the build machine:
#   bash tvm-backend-cuda/scripts/gpu_run.sh [tests|bench|all]   (default: all)
# Installs the wheels in ./.whl into /tmp/site (numpy, pytest and nvidia-cuda-nvrtc must be
# installed; torch, triton and cupy are optional), then runs the CUDA backend's whole test suite
# (GPU tests included), the OpenCL suite when the NVIDIA OpenCL driver is there, and the benchmarks.
# Logs and JSON go to $OUT (or /tmp/out).
set -uo pipefail
what=${1:-all}
out=${OUT:-/tmp/out}
mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$out/device.txt"
python3 -c "import tvm; print(tvm.backend.report())" 2>&1 | tee "$out/backend_report.txt"
rc=0
if [ "$what" != bench ]; then
  python3 -m pytest -q -ra -p no:cacheprovider tvm-backend-cuda/tests 2>&1 | tee "$out/pytest.log"
  rc=${PIPESTATUS[0]}
  # OpenCL on the GPU: the NVIDIA vendor library through an ICD loader carried in .whl (optional).
  nv_ocl=$(ldconfig -p | awk '/libnvidia-opencl.so.1/ {print $NF; exit}')
  if [ -n "$nv_ocl" ] && [ -f .whl/libOpenCL.so.1 ] && ls .whl/tvm_backend_opencl-*.whl >/dev/null 2>&1; then
    # only the NVIDIA platform: the suites run on opencl(0)
    OCL_ICD_FILENAMES=$nv_ocl OCL_ICD_VENDORS=/nonexistent TVM_OPENCL_LIBRARY=$PWD/.whl/libOpenCL.so.1 \
      python3 -m pytest -q -ra -p no:cacheprovider tvm-backend-opencl/tests >"$out/pytest_opencl.log" 2>&1
    tail -15 "$out/pytest_opencl.log"
  else
    echo "OpenCL suite not run: libnvidia-opencl.so.1 '${nv_ocl}' or .whl/libOpenCL.so.1 missing" | tee "$out/pytest_opencl.log"
  fi
fi
if [ "$what" != tests ]; then
  python3 tvm-backend-cuda/bench/bench_cuda.py "$out/bench_cuda.json" > "$out/bench.log" 2>&1 || echo "bench failed: see bench.log"
  tail -5 "$out/bench.log"
fi
exit "$rc"
