#!/usr/bin/env bash
# Builds the publishable wheels with cibuildwheel into ./wheelhouse, the core first (every backend
# builds against it): Linux x86_64 and aarch64 as py3-none-manylinux_2_28 (needs Docker or Podman;
# aarch64 under QEMU), or macOS arm64 (the core and the metal backend) on a Mac.
#   ci/release_wheels.sh            # every package for this platform
#   ci/release_wheels.sh tvm-core   # some of them
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q "cibuildwheel>=3.0"
if [ $# -gt 0 ]; then
  pkgs=("$@")
else
  pkgs=(tvm-core)
  if [ "$(uname)" = Darwin ]; then
    [ -f tvm-backend-metal/pyproject.toml ] && pkgs+=(tvm-backend-metal)
  else
    for d in tvm-backend-*/; do
      [ -f "$d/pyproject.toml" ] && pkgs+=("${d%/}")
    done
  fi
fi
mkdir -p wheelhouse
for pkg in "${pkgs[@]}"; do
  echo "=== cibuildwheel $pkg"
  python -m cibuildwheel --config-file ci/cibuildwheel.toml --output-dir wheelhouse "$pkg"
done
python ci/check_wheels.py wheelhouse/tvm*.whl
