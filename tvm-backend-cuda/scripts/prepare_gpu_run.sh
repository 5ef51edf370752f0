#!/usr/bin/env bash
# Run on the CPU machine, from the repository root, before a GPU session's device run:
# builds the tvm and tvm-backend-cuda wheels and fetches the tvm-ffi wheel for the GPU machine's
# Python (3.12) into ./.whl (git-ignored), which the device run carries (`carry: [".whl"]`).
set -euo pipefail
cd "$(dirname "$0")/../.."
py=.venv/bin/python
[ -x "$py" ] || ci/dev-install.sh tvm-core tvm-backend-cuda
rm -rf .whl && mkdir -p .whl
"$py" -m pip wheel -q --no-deps --no-build-isolation -w .whl ./tvm-core ./tvm-backend-cuda
"$py" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d .whl "apache-tvm-ffi==$(python3 ci/lockstep.py tvm_ffi)"
ls -la .whl
