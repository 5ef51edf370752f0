#!/usr/bin/env bash
# Developer loop: build the given packages (default: all present) as wheels, without build
# isolation, and install them into ./.venv.  Incremental: CMake build dirs are kept in build/.
#   ci/dev-install.sh                      # everything
#   ci/dev-install.sh tvm-core tvm-backend-opencl
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
py=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$py" -m venv .venv
fi
.venv/bin/python -m pip install -q -r ci/requirements-build.txt
pkgs=("$@")
if [ ${#pkgs[@]} -eq 0 ]; then
  pkgs=(tvm-core)
  for d in tvm-backend-*/ examples/*/; do
    [ -f "$d/pyproject.toml" ] && pkgs+=("${d%/}")
  done
fi
mkdir -p build/dev-wheels
for p in "${pkgs[@]}"; do
  rm -f build/dev-wheels/*.whl
  .venv/bin/python -m pip wheel -q --no-deps --no-build-isolation -w build/dev-wheels "./$p"
  .venv/bin/python -m pip install -q --no-deps --force-reinstall build/dev-wheels/*.whl
  echo "installed $p"
done
