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
# The same glibc setting as run.sh (see there): every implementation here returns fresh std::vectors, and with
# glibc's defaults their page faults (≈ 10 µs per page in this sandbox) cost more than the attention at L = 512.
# It also keeps these numbers comparable with onnxruntime-node's, which run.sh measures under that setting.
if [ "${BENCH_FRESH_PAGES:-0}" != 1 ]; then
  export MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-4294967296} MALLOC_TRIM_THRESHOLD_=${MALLOC_TRIM_THRESHOLD_:-4294967296}
fi
exec build/native/attnlab_native_bench "$@"
