#!/usr/bin/env bash
# Run on a machine with an NVIDIA GPU, from the repository root, after
# scripts/prepare_gpu_run.sh filled ./.whl on the build machine:
#   bash tvm-backend-cuda/scripts/gpu_run.sh [tests|bench|all]   (default: all)
# Installs the wheels in ./.whl into /tmp/site (numpy, pytest and nvidia-cuda-nvrtc must be
# installed; torch, triton and cupy are optional), then runs the CUDA backend's whole test suite
# (GPU tests included), the benchmarks, then the OpenCL and Vulkan suites on the NVIDIA drivers
# when they are there. Each step has a time limit (seconds: TESTS_S, BENCH_S, OPENCL_S, VULKAN_S)
# and each test one of TEST_S (pytest-timeout, when installed); CUDA_TESTS, OPENCL_TESTS and
# VULKAN_TESTS choose the test files (default: each whole suite). When ./.gl holds Debian packages
# of the Vulkan loader and GLVND (the NVIDIA Vulkan driver's dependencies), they are unpacked into
# a temporary folder that the Vulkan suite loads them from. Logs and JSON go to $OUT (or /tmp/out).
set -uo pipefail
what=${1:-all}
out=${OUT:-/tmp/out}
mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$out/device.txt"
python3 -c "import tvm; print(tvm.backend.report())" 2>&1 | tee "$out/backend_report.txt"
gl_lib=""  # the GLVND libraries and Vulkan loader of ./.gl, unpacked into a folder of their own
if ls .gl/*.deb >/dev/null 2>&1; then
  gl_root=$(mktemp -d)
  for f in .gl/*.deb; do dpkg -x "$f" "$gl_root"; done
  gl_lib=$gl_root/usr/lib/x86_64-linux-gnu
fi
per_test=()
python3 -c "import pytest_timeout" 2>/dev/null && per_test=(-p timeout --timeout "${TEST_S:-60}")
rc=0
pytest_in() {  # pytest_in SECONDS LOG ARGS...: the suite under a time limit, its summary shown
  local limit=$1 log=$2
  shift 2
  timeout -k 10 "$limit" python3 -m pytest -q -ra -p no:cacheprovider ${per_test[@]+"${per_test[@]}"} "$@" >"$log" 2>&1
  local status=$?
  [ "$status" = 124 ] && echo "stopped after ${limit} s" >>"$log"
  tail -12 "$log"
  return "$status"
}
if [ "$what" != bench ]; then
  # shellcheck disable=SC2086
  pytest_in "${TESTS_S:-300}" "$out/pytest.log" ${CUDA_TESTS:-tvm-backend-cuda/tests} || rc=1
fi
if [ "$what" != tests ]; then
  timeout -k 10 "${BENCH_S:-900}" python3 tvm-backend-cuda/bench/bench_cuda.py "$out/bench_cuda.json" >"$out/bench.log" 2>&1 ||
    echo "bench failed or stopped: see bench.log"
  tail -25 "$out/bench.log"
fi
if [ "$what" != bench ]; then
  nv_ocl=$(ldconfig -p | awk '/libnvidia-opencl.so.1/ && !found {print $NF; found = 1}')
  if [ -n "$nv_ocl" ] && [ -f .whl/libOpenCL.so.1 ] && ls .whl/tvm_backend_opencl-*.whl >/dev/null 2>&1; then
    # only the NVIDIA platform, registered in a vendors folder of its own: the suites run on opencl(0)
    vendors=$(mktemp -d)
    echo "$nv_ocl" >"$vendors/nvidia.icd"
    OCL_ICD_VENDORS=$vendors TVM_OPENCL_LIBRARY=$PWD/.whl/libOpenCL.so.1 \
      pytest_in "${OPENCL_S:-120}" "$out/pytest_opencl.log" ${OPENCL_TESTS:-tvm-backend-opencl/tests}
  else
    echo "OpenCL suite not run: libnvidia-opencl.so.1 ('${nv_ocl}'), .whl/libOpenCL.so.1 or the tvm_backend_opencl wheel in .whl is missing" | tee "$out/pytest_opencl.log"
  fi
  nv_vk=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  [ -f "$nv_vk" ] || nv_vk=$(ls /usr/share/vulkan/icd.d/nvidia_icd*.json /etc/vulkan/icd.d/nvidia_icd*.json 2>/dev/null | head -1)
  vk_loader=$gl_lib/libvulkan.so.1
  [ -n "$gl_lib" ] && [ -f "$vk_loader" ] ||
    vk_loader=$(ldconfig -p | awk '$1 == "libvulkan.so.1" && !found {print $NF; found = 1}')
  [ -n "$vk_loader" ] || vk_loader=$PWD/.whl/libvulkan.so.1
  if [ -n "$nv_vk" ] && [ -f "$vk_loader" ] && ls .whl/tvm_backend_vulkan-*.whl >/dev/null 2>&1; then
    LD_LIBRARY_PATH=$gl_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} VK_DRIVER_FILES=$nv_vk \
      TVM_VULKAN_LIBRARY=$vk_loader TVM_SPIRV_TOOLS=$PWD/.whl/spirv-tools \
      pytest_in "${VULKAN_S:-120}" "$out/pytest_vulkan.log" ${VULKAN_TESTS:-tvm-backend-vulkan/tests}
  else
    echo "Vulkan suite not run: the NVIDIA Vulkan driver ('${nv_vk}'), a Vulkan loader or the tvm_backend_vulkan wheel in .whl is missing" | tee "$out/pytest_vulkan.log"
  fi
fi
exit "$rc"
