#!/usr/bin/env bash
# Builds the WebAssembly package into dist/ (both variants + JS + types) and the native library.
#   scripts/build.sh          package only (what npm start and npm run build need)
#   scripts/build.sh --tests  also every test program (native, wasm-simd, wasm-scalar)
set -euo pipefail
cd "$(dirname "$0")/.."

with_tests=OFF
[ "${1:-}" = "--tests" ] && with_tests=ON
jobs=$(nproc)

configure() {  # dir, then extra cmake arguments; reconfigures only when the test option changes
  local dir=$1
  shift
  if [ ! -f "$dir/build.ninja" ] || ! grep -q "ATTNLAB_BUILD_TESTS:BOOL=$with_tests" "$dir/CMakeCache.txt"; then
    "$@" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DATTNLAB_BUILD_TESTS=$with_tests >"$dir.configure.log" 2>&1 ||
      { cat "$dir.configure.log"; exit 1; }
  fi
}

mkdir -p build
echo "== native build"
configure build/native cmake -S .
cmake --build build/native -j "$jobs"

for variant in simd scalar; do
  echo "== wasm-$variant build"
  simd=ON
  [ $variant = scalar ] && simd=OFF
  configure build/wasm-$variant emcmake cmake -S . -DATTNLAB_WASM_SIMD=$simd -DCMAKE_CROSSCOMPILING_EMULATOR=/usr/bin/node
  cmake --build build/wasm-$variant -j "$jobs"
done

echo "== dist/"
mkdir -p dist
for variant in simd scalar; do
  cp build/wasm-$variant/attnlab-$variant.mjs build/wasm-$variant/attnlab-$variant.wasm dist/
done
cp web/src/* dist/
ls -l dist | awk 'NR > 1 { printf "  %-24s %8d bytes\n", $9, $5 }'
