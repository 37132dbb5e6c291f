#!/usr/bin/env bash
# Regenerates tests/consistency/native_cases.json (random SDPA / MHA cases with the native build's outputs), which
# tests/js/nan_policy.test.mjs compares both wasm variants against and tests/cpp/consistency_test.cc re-checks
# natively. Builds the library natively (Release flags, default Highway targets) into build/consistency; -j1.
set -euo pipefail
cd "$(dirname "$0")/.."
CXX=${CXX:-g++}
out=build/consistency
mkdir -p "$out"
flags=(-std=c++17 -O2 -Icpp/include -I.)
sources=(cpp/src/checks.cc cpp/src/kernels.cc cpp/src/multi_head_attention.cc cpp/src/sdpa.cc)
hash=$(cat "${sources[@]}" cpp/src/*.h cpp/include/attnlab/*.h tests/consistency/make_native_cases.cc | sha1sum | cut -d' ' -f1)
if [ "$(cat "$out/stamp" 2>/dev/null)" != "$hash" ]; then
  objs=()
  for src in "${sources[@]}" tests/consistency/make_native_cases.cc; do
    echo "consistency: compiling $src"
    "$CXX" "${flags[@]}" -c "$src" -o "$out/$(basename "${src%.cc}").o"
    objs+=("$out/$(basename "${src%.cc}").o")
  done
  "$CXX" "${objs[@]}" -lhwy -o "$out/make_native_cases"
  echo "$hash" >"$out/stamp"
fi
"$out/make_native_cases" tests/consistency/native_cases.json
