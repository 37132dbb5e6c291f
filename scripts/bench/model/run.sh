#!/usr/bin/env bash
# npm run bench:model (bash scripts/bench/model/run.sh): the whole-model benchmark (docs/benchmarks.md, "Whole
# models"). A GPT-2-small-shaped model with seeded random weights (export_gpt2.py: Hugging Face folder +
# prefill.onnx / decode.onnx of the same weights, cached in build/bench/gpt2-small), then
#   1. wasm.mjs    attnlab (simd, simd-threaded@1/@2) vs onnxruntime-web 1.30 (1 and 2 threads), one Node process
#   2. native.mjs  attnlab native (cpp/bench/model_bench.cc, 1 and 2 threads) vs onnxruntime-node 1.30
#   3. report.mjs  build/bench/model-results.md (and model-wasm.json, model-native.json)
#   4. train.mjs   training steps of the poem model's configuration: attnlab native, wasm simd and
#                  simd-threaded@2, PyTorch 1.13 (/usr/bin/python3): build/bench/model-train.{md,json}
# About 15-25 minutes on 2 cores. Knobs (all optional):
#   BENCH_SKIP_BUILD=1        use dist/ as it is (else scripts/build.sh first, as npm run bench)
#   BENCH_MODEL_NATIVE=0      skip the native phase; BENCH_MODEL_WASM=0 skip the wasm phase; BENCH_MODEL_TRAIN=0
#                             skip the training phase (its knobs: train.mjs's header)
#   BENCH_OUT=DIR             where the results go (default build/bench)
#   BENCH_NATIVE_BUILD=DIR    CMake build folder of the native program (default build/native, as bench:native)
#   BENCH_MODEL_PREFILL=128,512  BENCH_MODEL_DECODE=128,512,1024  BENCH_MODEL_ROUNDS=5 (prefill rounds, at least)
#   BENCH_MODEL_DECODE_ROUNDS=4  BENCH_MODEL_VARIANTS=simd,simd-threaded@2  BENCH_MODEL_BREAKDOWN=0 (or a list)
#   BENCH_MODEL_MEMORY=0      skip the fresh-process memory rows; BENCH_QUICK=1 small sizes (smoke test)
#   BENCH_MODEL_DIR=DIR       another export (e.g. export_gpt2.py --layers 2 --vocab 1000 --out DIR)
set -euo pipefail
cd "$(dirname "$0")/../../.."

bench=scripts/bench
source $bench/prepare.sh dist/index.mjs dist/attnlab-simd.wasm

inference=1 # the GPT-2 phases (1-3)
if [ "${BENCH_MODEL_WASM:-1}" = 0 ] && [ "${BENCH_MODEL_NATIVE:-1}" = 0 ]; then inference=0; fi
if [ $inference = 1 ] && [ -z "${BENCH_MODEL_DIR:-}" ]; then
  echo "== export_gpt2.py (build/bench/gpt2-small; skipped when up to date)"
  /usr/bin/python3 $bench/model/export_gpt2.py
fi

source $bench/heap-env.sh
if [ "${BENCH_MODEL_WASM:-1}" != 0 ]; then
  echo "== node $bench/model/wasm.mjs"
  node --expose-gc $bench/model/wasm.mjs
fi
dir=${BENCH_NATIVE_BUILD:-build/native}
if [ "${BENCH_MODEL_NATIVE:-1}" != 0 ] || [ "${BENCH_MODEL_TRAIN:-1}" != 0 ]; then
  echo "== native program ($dir, target attnlab_model_bench)"
  if [ -f "$dir/CMakeCache.txt" ]; then
    cmake -S . -B "$dir" >build/model-bench.configure.log 2>&1 || { cat build/model-bench.configure.log; exit 1; }
  else
    mkdir -p build
    cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DATTNLAB_BUILD_TESTS=OFF \
      >build/model-bench.configure.log 2>&1 || { cat build/model-bench.configure.log; exit 1; }
  fi
  cmake --build "$dir" --target attnlab_model_bench -j "$(nproc)"
fi
export BENCH_MODEL_NATIVE_BIN="$dir/attnlab_model_bench"
if [ "${BENCH_MODEL_NATIVE:-1}" != 0 ]; then
  echo "== node $bench/model/native.mjs"
  node $bench/model/native.mjs
fi
if [ $inference = 1 ]; then
  node $bench/model/report.mjs >/dev/null
  echo "wrote ${BENCH_OUT:-build/bench}/model-results.md"
fi
if [ "${BENCH_MODEL_TRAIN:-1}" != 0 ]; then
  echo "== node $bench/model/train.mjs"
  node $bench/model/train.mjs
fi
