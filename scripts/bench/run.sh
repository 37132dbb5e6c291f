#!/usr/bin/env bash
# npm run bench: installs the peer libraries (scripts/bench/package.json, kept out of the package's own
# dependencies), makes sure dist/ is built, then runs the side-by-side benchmark (scripts/bench/run.mjs).
# Results: build/bench/results.json and build/bench/results.md.
#   BENCH_SKIP_BUILD=1   use dist/ as it is (still required to exist)
#   BENCH_QUICK=1        small sizes only (smoke test); see run.mjs for the other knobs
set -euo pipefail
cd "$(dirname "$0")/../.."

bench=scripts/bench
source $bench/prepare.sh dist/index.mjs dist/attnlab-simd.wasm dist/attnlab-scalar.wasm

# The glibc heap setting shared with native.sh.
source $bench/heap-env.sh

echo "== node scripts/bench/run.mjs"
exec node $bench/run.mjs
