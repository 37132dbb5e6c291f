#!/usr/bin/env bash
# npm run bench:native: builds only the native benchmark target (and what it links) and runs it.
# Extra arguments go to the program: --quick, --max-run-s S, --reps N, --out DIR.
set -euo pipefail
cd "$(dirname "$0")/../.."
# (Re)configure so that CMake sees cpp/bench/native_bench.cc; keeps the directory's cached options.
if [ -f build/native/CMakeCache.txt ]; then
  cmake -S . -B build/native >build/native.configure.log 2>&1 || { cat build/native.configure.log; exit 1; }
else
  mkdir -p build
  cmake -S . -B build/native -G Ninja -DCMAKE_BUILD_TYPE=Release -DATTNLAB_BUILD_TESTS=OFF \
    >build/native.configure.log 2>&1 || { cat build/native.configure.log; exit 1; }
fi
cmake --build build/native --target attnlab_native_bench -j "$(nproc)"
# The same glibc heap setting as run.sh; it also keeps these numbers comparable with onnxruntime-node's there.
source scripts/bench/heap-env.sh
exec build/native/attnlab_native_bench "$@"
