#!/usr/bin/env bash
# npm run bench: installs the peer libraries (scripts/bench/package.json, kept out of the package's own
# dependencies), makes sure dist/ is built, then runs the side-by-side benchmark (scripts/bench/run.mjs).
# Results: build/bench/results.json and build/bench/results.md.
#   BENCH_SKIP_BUILD=1   use dist/ as it is (still required to exist)
#   BENCH_QUICK=1        small sizes only (smoke test); see run.mjs for the other knobs
set -euo pipefail
cd "$(dirname "$0")/../.."

bench=scripts/bench
if [ ! -f $bench/node_modules/.package-lock.json ] ||
  [ $bench/package-lock.json -nt $bench/node_modules/.package-lock.json ]; then
  echo "== npm ci (scripts/bench)"
  # onnxruntime-node's install script would try to download GPU binaries; its CPU binary ships in the package.
  (cd $bench && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund)
fi

if [ "${BENCH_SKIP_BUILD:-0}" != 1 ]; then
  echo "== bash scripts/build.sh"
  bash scripts/build.sh
fi
for f in dist/index.mjs dist/attnlab-simd.wasm dist/attnlab-scalar.wasm; do
  [ -f "$f" ] || { echo "missing $f: run bash scripts/build.sh" >&2; exit 1; }
done

# The glibc heap setting shared with native.sh.
source $bench/heap-env.sh

echo "== node scripts/bench/run.mjs"
exec node $bench/run.mjs
