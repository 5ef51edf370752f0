#!/usr/bin/env bash
# Run on the build machine, from the repository root, before scripts/gpu_run.sh runs on a machine
# with an NVIDIA GPU: builds the tvm, tvm-backend-cuda, tvm-backend-opencl and tvm-backend-vulkan
# wheels, fetches the tvm-ffi wheel for the GPU machine's Python (3.12) and copies this machine's
# OpenCL ICD loader, Vulkan loader and SPIRV-Tools (when there are) into ./.whl (git-ignored);
# copy the repository with ./.whl there.
set -euo pipefail
cd "$(dirname "$0")/../.."
py=.venv/bin/python
[ -x "$py" ] || ci/dev-install.sh tvm-core tvm-backend-cuda tvm-backend-opencl tvm-backend-vulkan
rm -rf .whl && mkdir -p .whl
"$py" -m pip wheel -q --no-deps --no-build-isolation -w .whl ./tvm-core ./tvm-backend-cuda ./tvm-backend-opencl \
  ./tvm-backend-vulkan
"$py" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d .whl "apache-tvm-ffi==$(python3 ci/lockstep.py tvm_ffi)"
# awk reads all of ldconfig's output: an early exit could end ldconfig by SIGPIPE, and pipefail the script
loader() { ldconfig -p | awk -v so="$1" '$1 == so && !found {print $NF; found = 1}'; }
icd=$(loader libOpenCL.so.1)
[ -n "$icd" ] && cp -L "$icd" .whl/libOpenCL.so.1
vk=$(loader libvulkan.so.1)
[ -n "$vk" ] && cp -L "$vk" .whl/libvulkan.so.1
for tool in spirv-val spirv-dis; do
  found=$(command -v "$tool" || true)
  [ -n "$found" ] && mkdir -p .whl/spirv-tools && cp -L "$found" .whl/spirv-tools/
done
ls -la .whl
