#!/usr/bin/env bash
# The GEMMs of the GPT-2-small-shaped bench model against the register tile's peak (cpp/bench/gemm_bench.cc: shapes,
# peaks and method in its header), natively and in the wasm simd variant, in one run: builds attnlab_gemm_bench in
# build/native and build/wasm-simd (configured as scripts/build.sh --tests configures them), then alternates the two
# programs for ROUNDS rounds of one pass each, so that the machine's load hits both alike. Each pass prints its own
# tile peak; compare a shape's rate with the peak of the same pass.
#   bash scripts/bench/gemm.sh [ROUNDS [FILTER]]     e.g. scripts/bench/gemm.sh 5 head
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
filter=${2:-}
[ -f build/native/build.ninja ] || cmake -S . -B build/native -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/native --target attnlab_gemm_bench >/dev/null
[ -f build/wasm-simd/build.ninja ] ||
  emcmake cmake -S . -B build/wasm-simd -G Ninja -DCMAKE_BUILD_TYPE=Release -DATTNLAB_WASM_VARIANT=simd >/dev/null
cmake --build build/wasm-simd --target attnlab_gemm_bench >/dev/null
echo "$(lscpu | sed -n 's/^Model name: *//p'), $(date -u +%F), Node $(node --version)"
for ((r = 1; r <= rounds; ++r)); do
  echo "== round $r native"
  build/native/attnlab_gemm_bench 1 "$filter"
  echo "== round $r wasm simd"
  # (--no-experimental-fetch: with Node 20's fetch, Emscripten's glue would fetch the .wasm by path and fail)
  node --no-experimental-fetch build/wasm-simd/attnlab_gemm_bench.js 1 "$filter"
done
