#!/usr/bin/env bash
# cibuildwheel's before-build step (ci/cibuildwheel.toml): the build requirements with exactly the
# pinned apache-tvm-ffi and, for a backend, the core wheel built just before it.
#   ci/cibuildwheel_before_build.sh PROJECT_DIR PACKAGE_DIR
set -euo pipefail
project=$1
package=$2
python -m pip install -r "$project/ci/requirements-build.txt" \
  "apache-tvm-ffi==$(python "$project/ci/lockstep.py" tvm_ffi)"
if [ "$(basename "$package")" != "tvm-core" ]; then
  python -m pip install --no-deps --no-index --find-links "$project/wheelhouse" \
    "tvm==$(python "$project/ci/lockstep.py" version)"
fi
# The Vulkan backend builds against the Vulkan headers (manylinux_2_28 is AlmaLinux 8: vulkan-headers).
if [ "$(basename "$package")" = "tvm-backend-vulkan" ] && [ ! -f /usr/include/vulkan/vulkan.h ]; then
  if command -v dnf >/dev/null; then dnf install -y -q vulkan-headers; else yum install -y -q vulkan-headers; fi
fi
