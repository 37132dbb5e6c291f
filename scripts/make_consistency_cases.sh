#!/usr/bin/env bash
# Regenerates tests/consistency/native_cases.json (random SDPA / MHA cases with the native build's outputs), which
# tests/js/nan_policy.test.mjs compares both wasm variants against and tests/cpp/consistency_test.cc re-checks
# natively. CMake builds the generator (target attnlab_make_consistency_cases, Release flags, default Highway
# targets) into build/consistency; CXX picks the compiler (default g++).
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/consistency
mkdir -p "$out"
if [ ! -f "$out/CMakeCache.txt" ]; then
  cmake -S . -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="${CXX:-g++}" \
    -DATTNLAB_BUILD_TESTS=OFF >"$out/configure.log" || { cat "$out/configure.log"; exit 1; }
fi
cmake --build "$out" --target attnlab_make_consistency_cases -- -j1
"$out/attnlab_make_consistency_cases" tests/consistency/native_cases.json
