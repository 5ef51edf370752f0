#!/usr/bin/env bash
# What a newcomer sees: clones this repository (its committed HEAD) into temporary folders and runs
# the README's two commands there, `nox -s demo` then `nox -s tests` in one clone and the reverse
# order in another, with no wheelhouse and no build folder to start from. Takes about 2 x 15 min.
#   ci/fresh_clone_check.sh            # both orders
#   ci/fresh_clone_check.sh demo-first # one order (or tests-first)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
orders=("${@:-demo-first tests-first}")
python3 -m pip install -q "nox>=2024.4"
for order in ${orders[*]}; do
  case $order in
    demo-first) sessions=(demo tests) ;;
    tests-first) sessions=(tests demo) ;;
    *) echo "unknown order '$order' (demo-first or tests-first)" >&2; exit 2 ;;
  esac
  work=$(mktemp -d)
  git clone -q "$repo" "$work/repo"
  for s in "${sessions[@]}"; do
    echo "=== $order: nox -s $s in a fresh clone ($work/repo)"
    start=$SECONDS
    (cd "$work/repo" && python3 -m nox -s "$s")
    echo "=== $order: nox -s $s passed in $((SECONDS - start)) s"
  done
  rm -rf "$work"
done
echo "fresh-clone check: every order passed"
