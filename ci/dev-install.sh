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
.venv/bin/python -m pip install -q -r ci/requirements-build.txt "apache-tvm-ffi==$("$py" ci/lockstep.py tvm_ffi)"
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
# Mirror the built native libraries into the source trees, so that
#   PYTHONPATH=tvm-core/python:tvm-backend-x/python .venv/bin/python ...
# runs the Python sources in place (entry points still come from the installed wheels).
site=$(.venv/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
for p in "${pkgs[@]}"; do
  for src in "$p"/python/*/; do
    mod=$(basename "$src")
    if [ -d "$site/$mod/lib" ]; then
      mkdir -p "$src/lib"
      # copy + rename: a process using the old library keeps its (unlinked) file
      for so in "$site/$mod/lib/"*.so; do
        [ -e "$so" ] || continue
        cp -f "$so" "$src/lib/.$(basename "$so").tmp" && mv -f "$src/lib/.$(basename "$so").tmp" "$src/lib/$(basename "$so")"
      done
    fi
  done
done
