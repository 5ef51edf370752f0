#!/usr/bin/env bash
# Run on the build machine, from the repository root, before scripts/gpu_run.sh runs on a machine
# with an NVIDIA GPU: builds the tvm, tvm-backend-cuda and tvm-backend-opencl wheels, fetches the
# tvm-ffi wheel for the GPU machine's Python (3.12) and copies this machine's OpenCL ICD loader
# (when there is one) into ./.whl (git-ignored); copy the repository with ./.whl there.
set -euo pipefail
cd "$(dirname "$0")/../.."
py=.venv/bin/python
[ -x "$py" ] || ci/dev-install.sh tvm-core tvm-backend-cuda tvm-backend-opencl
rm -rf .whl && mkdir -p .whl
"$py" -m pip wheel -q --no-deps --no-build-isolation -w .whl ./tvm-core ./tvm-backend-cuda ./tvm-backend-opencl
"$py" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d .whl "apache-tvm-ffi==$(python3 ci/lockstep.py tvm_ffi)"
icd=$(ldconfig -p | awk '/libOpenCL.so.1 / {print $NF; exit}')
[ -n "$icd" ] && cp -L "$icd" .whl/libOpenCL.so.1
ls -la .whl
