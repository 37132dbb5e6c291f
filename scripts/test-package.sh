#!/usr/bin/env bash
# Package test: what a user of the published `attnlab` npm package gets.
#   1. `npm pack` the repository (dist/ must be built) and check the tarball's file list;
#   2. install the tarball into a throw-away consumer folder (copied from tests/package/consumer/);
#   3. node: ESM `import 'attnlab'` and CJS `require('attnlab')` compute an SDPA and an MHA in both variants;
#   4. `tsc --noEmit` of TypeScript consumers: nodenext ESM (.mts) + CJS (.cts), moduleResolution bundler, `using`;
#   5. a Vite production build of a tiny app that imports `attnlab` (the .wasm files must be emitted as assets);
#   6. headless Chromium (playwright-core + /usr/bin/chromium) loads the built app (page + module Web Worker) and
#      the unbundled package (page + worker) from a static server on 127.0.0.1; each checks the numbers.
# Ends with "package test: N passed, N failed" and exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

for f in dist/index.mjs dist/index.cjs dist/index.d.ts dist/attnlab-simd.wasm dist/attnlab-scalar.wasm; do
  [ -f "$f" ] || { echo "test-package: $f is missing; build first (bash scripts/build.sh)" >&2; exit 1; }
done
for tool in tsc vite; do
  [ -x "node_modules/.bin/$tool" ] || { echo "test-package: node_modules/.bin/$tool is missing; run npm ci" >&2; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/attnlab-package.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

# step NAME COMMAND...: runs COMMAND, shows (the end of) its output, counts the result.
step() {
  local name=$1
  shift
  echo "-- $name"
  if "$@" >"$tmp/step.log" 2>&1; then
    cut -c1-300 "$tmp/step.log" | tail -20 | sed 's/^/   /'
    echo "ok: $name"
    passed=$((passed + 1))
  else
    cut -c1-300 "$tmp/step.log" | tail -60 | sed 's/^/   /'
    echo "FAIL: $name"
    failed=$((failed + 1))
  fi
}

pack() {
  local name
  name=$(npm pack --silent --pack-destination "$tmp" | tail -1)
  mv "$tmp/$name" "$tmp/attnlab.tgz"
  tar -tzf "$tmp/attnlab.tgz" | sort >"$tmp/files.txt"
  cat "$tmp/files.txt"
  local want
  for want in package.json dist/index.mjs dist/index.cjs dist/index.d.ts dist/index.d.cts dist/loader.mjs \
    dist/validate.mjs dist/version.mjs dist/attnlab-simd.mjs dist/attnlab-simd.wasm dist/attnlab-scalar.mjs \
    dist/attnlab-scalar.wasm; do
    grep -qx "package/$want" "$tmp/files.txt" || { echo "missing from the tarball: $want"; return 1; }
  done
  if grep -E '^package/(cpp|tests|scripts|web|build)/' "$tmp/files.txt"; then
    echo "the tarball ships files that are not part of the package"
    return 1
  fi
}

install_consumer() {
  cp -R tests/package/consumer "$tmp/consumer"
  (cd "$tmp/consumer" && npm install --no-audit --no-fund --loglevel=error "$tmp/attnlab.tgz")
  ls "$tmp/consumer/node_modules/attnlab/dist"
}

tsc_check() {
  local config
  for config in nodenext bundler using; do
    echo "tsc -p types/tsconfig.$config.json"
    "$ROOT/node_modules/.bin/tsc" -p "$tmp/consumer/types/tsconfig.$config.json"
  done
}

vite_build() {
  (cd "$tmp/consumer/app" && "$ROOT/node_modules/.bin/vite" build)
  local assets="$tmp/consumer/app/dist/assets"
  ls -l "$assets"
  local variant n
  for variant in simd scalar; do
    n=$(find "$assets" -name "attnlab-$variant*.wasm" | wc -l)
    [ "$n" -ge 1 ] || { echo "the Vite build did not emit attnlab-$variant.wasm as an asset"; return 1; }
    cmp -s "$(find "$assets" -name "attnlab-$variant*.wasm" | head -1)" "dist/attnlab-$variant.wasm" ||
      { echo "the emitted attnlab-$variant.wasm differs from dist/"; return 1; }
  done
}

step "npm pack" pack
if [ -f "$tmp/attnlab.tgz" ] && step "install the tarball into a consumer folder" install_consumer &&
  [ -d "$tmp/consumer/node_modules/attnlab" ]; then
  step "node: ESM import 'attnlab'" node "$tmp/consumer/esm.mjs"
  step "node: CJS require('attnlab')" node "$tmp/consumer/cjs.cjs"
  step "tsc --noEmit: TypeScript consumers (nodenext ESM + CJS, bundler, using)" tsc_check
  step "vite build of a consumer app (.wasm emitted as assets)" vite_build
  step "headless Chromium: Vite-built app and unbundled package, page and Web Worker" \
    node tests/package/browser.mjs "$tmp/consumer" /app/dist/index.html /plain/index.html
fi

echo "package test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
