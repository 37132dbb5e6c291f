#!/usr/bin/env bash
# Package test: what a user of the published `attnlab` npm package gets, from the packed tarball.
#   1. `npm pack` (dist/ must be built) and check the tarball's file list: everything expected, nothing else;
#   2. publint and @arethetypeswrong/cli on the tarball;
#   3. install the tarball into a consumer folder (tests/package/consumer/, copied to build/package-consumer/, whose
#      pinned bundlers npm ci installs from its package-lock.json);
#   4. node: ESM `import 'attnlab'` and CJS `require('attnlab')`; `tsc --noEmit` of TypeScript consumers;
#   5. the bundler matrix, each checked in headless Chromium (tests/package/browser.mjs) with the tutorial's §5
#      numbers: Vite 8 dev and build + preview, Vite 7 dev (with the README's config), webpack 5, esbuild (copy
#      step + wasmPaths), Rollup (+ @web/rollup-plugin-import-meta-assets), a plain page with an import map and a
#      module worker, and a cross-origin page (package on another port, with CORS; without CORS it must fail);
#   6. npm run build:demo's build/site/ served under a sub-path: the demo page loads with no failed request.
# The README's "Bundlers" section gives exactly these recipes. Ends with "package test: N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CONSUMER=$ROOT/build/package-consumer

# The WebAssembly variants and the files each ships: wasm-variants.json, the one table.
mapfile -t VARIANTS < <(node -p "require('./wasm-variants.json').variants.map((v) => v.name).join('\n')")
mapfile -t VARIANT_FILES < <(node -p "require('./wasm-variants.json').variants.flatMap((v) => v.files).join('\n')")
for f in dist/index.mjs dist/index.cjs dist/index.d.ts "${VARIANT_FILES[@]/#/dist/}"; do
  [ -f "$f" ] || { echo "test-package: $f is missing; build first (bash scripts/build.sh)" >&2; exit 1; }
done
[ -x node_modules/.bin/tsc ] || { echo "test-package: node_modules/.bin/tsc is missing; run npm ci" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/attnlab-package.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

# step NAME COMMAND...: runs COMMAND, shows (the end of) its output, counts the result; ok=1 when it passed.
ok=0
step() {
  local name=$1
  shift
  echo "-- $name"
  local t0=$SECONDS
  if "$@" >"$tmp/step.log" 2>&1; then
    cut -c1-300 "$tmp/step.log" | tail -12 | sed 's/^/   /'
    echo "ok: $name ($((SECONDS - t0)) s)"
    passed=$((passed + 1))
    ok=1
  else
    cut -c1-300 "$tmp/step.log" | tail -60 | sed 's/^/   /'
    echo "FAIL: $name"
    failed=$((failed + 1))
    ok=0
  fi
}

pack() {
  # dist/ was just built (prepack would rebuild it; npm test builds it first).
  local name
  name=$(npm pack --ignore-scripts --silent --pack-destination "$tmp" | tail -1)
  mv "$tmp/$name" "$tmp/attnlab.tgz"
  tar -tzf "$tmp/attnlab.tgz" | sed 's|^package/||' | sort >"$tmp/files.txt"
  # What may ship: the package's metadata and notices, each variant's files (and dist/package.json, which makes a
  # threaded variant's classic-script worker CommonJS in Node), and web/src's modules + generated files.
  {
    printf '%s\n' package.json README.md CHANGELOG.md LICENSE THIRD_PARTY_NOTICES dist/index.d.ts dist/index.d.cts \
      dist/version.mjs dist/package.json dist/index.d.mts dist/interop.d.mts dist/models.d.mts dist/worker.d.mts dist/viz.d.mts dist/analysis.d.mts "${VARIANT_FILES[@]/#/dist/}"
    for f in web/src/*.mjs web/src/*.cjs web/src/*.d.ts; do echo "dist/${f#web/src/}"; done
  } | sort -u >"$tmp/expected.txt"
  cat "$tmp/files.txt"
  local bad=0
  comm -13 "$tmp/expected.txt" "$tmp/files.txt" | sed 's/^/unexpected in the tarball: /' | grep . && bad=1
  comm -23 "$tmp/expected.txt" "$tmp/files.txt" | sed 's/^/missing from the tarball: /' | grep . && bad=1
  return $bad
}

lint() {
  mkdir -p "$tmp/unpacked"
  tar -xzf "$tmp/attnlab.tgz" -C "$tmp/unpacked"
  (cd "$CONSUMER" && npx --no-install publint run "$tmp/unpacked/package" --pack false --strict)
  # The main entry serves every resolution mode (node10, node16 CJS and ESM, bundler). attnlab/worker,
  # attnlab/viz and attnlab/analysis are ESM-only by design. The .wasm subpaths are assets for bundlers, not
  # modules: not checked.
  (cd "$CONSUMER" && npx --no-install attw "$tmp/attnlab.tgz" --format table-flipped --entrypoints .)
  (cd "$CONSUMER" && npx --no-install attw "$tmp/attnlab.tgz" --format table-flipped --profile esm-only \
    --entrypoints ./worker ./viz ./analysis)
}

install_consumer() (
  mkdir -p "$CONSUMER"
  # Fresh sources each run; the installed tools stay (npm ci only when the lock file changed).
  find "$CONSUMER" -mindepth 1 -maxdepth 1 ! -name node_modules -exec rm -rf {} +
  cp -R tests/package/consumer/. "$CONSUMER/"
  cd "$CONSUMER"
  if [ ! -f node_modules/.package-lock.json ] || ! cmp -s package-lock.json node_modules/.attnlab-lock.json; then
    npm ci --no-audit --no-fund --loglevel=error
    cp package-lock.json node_modules/.attnlab-lock.json
  fi
  npm install --no-save --no-audit --no-fund --loglevel=error "$tmp/attnlab.tgz"
  ls node_modules/attnlab/dist
)

tsc_check() {
  local config
  for config in nodenext bundler using; do
    echo "tsc -p types/tsconfig.$config.json"
    "$ROOT/node_modules/.bin/tsc" -p "$CONSUMER/types/tsconfig.$config.json"
  done
}

# emitted_wasm DIR: every variant's .wasm file was emitted under DIR (under any name), byte-identical to dist/.
emitted_wasm() {
  local variant file found
  for variant in "${VARIANTS[@]}"; do
    found=
    while IFS= read -r file; do cmp -s "$file" "$ROOT/dist/attnlab-$variant.wasm" && found=$file; done \
      < <(find "$1" -name '*.wasm')
    [ -n "$found" ] || { echo "no copy of dist/attnlab-$variant.wasm emitted under $1"; return 1; }
    echo "attnlab-$variant.wasm emitted as ${found#"$1"/}"
  done
}

# The build commands below are the README's "Bundlers" recipes, run in the consumer folder.
vite_build() { (cd "$CONSUMER" && npx --no-install vite build app --config app/vite.config.mjs) && emitted_wasm "$CONSUMER/app/dist"; }
webpack_build() { (cd "$CONSUMER" && npx --no-install webpack --config webpack/webpack.config.mjs) && emitted_wasm "$CONSUMER/webpack/dist"; }
esbuild_build() {
  (cd "$CONSUMER" &&
    npx --no-install esbuild esbuild/main.js --bundle --format=esm --outfile=esbuild/out/main.js &&
    mkdir -p esbuild/wasm && cp node_modules/attnlab/dist/*.wasm esbuild/wasm/)
}
rollup_build() { (cd "$CONSUMER" && npx --no-install rollup --config rollup/rollup.config.mjs) && emitted_wasm "$CONSUMER/rollup/dist"; }
browser() { node tests/package/browser.mjs "$CONSUMER" "$1"; }

step "npm pack: the tarball holds exactly the package's files" pack
[ -f "$tmp/attnlab.tgz" ] && step "install the tarball into the consumer folder" install_consumer
if ((ok)); then
  step "publint + @arethetypeswrong/cli on the tarball" lint
  step "node: ESM import 'attnlab'" node "$CONSUMER/esm.mjs"
  step "node: CJS require('attnlab')" node "$CONSUMER/cjs.cjs"
  step "node: ESM import 'attnlab/analysis' (no wasm)" node "$CONSUMER/analysis.mjs"
  step "tsc --noEmit: TypeScript consumers (nodenext ESM + CJS, bundler, using)" tsc_check
  step "Vite 8 dev server, no configuration: page + module worker" browser vite8-dev
  step "Vite 7 dev server with optimizeDeps.exclude: page + module worker (without: fails)" browser vite7-dev
  step "Vite 8 build (.wasm emitted as assets)" vite_build
  ((ok)) && step "Vite 8 preview of the build: page + module worker" browser vite8-preview
  step "webpack 5 build (.wasm emitted as assets)" webpack_build
  ((ok)) && step "webpack 5 bundle: page + module worker" browser webpack
  step "esbuild bundle + copy of the .wasm files" esbuild_build
  ((ok)) && step "esbuild bundle with wasmPaths: page" browser esbuild
  step "Rollup build with @web/rollup-plugin-import-meta-assets" rollup_build
  ((ok)) && step "Rollup bundle: page" browser rollup
  step "no bundler: import map page + module worker" browser import-map
  step "no bundler, cross-origin isolated (COOP/COEP): simd-threaded in the page + module worker" \
    browser import-map-isolated
  step "cross-origin page (package served with CORS; without CORS it fails)" browser cross-origin
fi
site() {
  [ -f build/site/index.html ] || { echo "build/site/ is missing: bash scripts/build.sh --site"; return 1; }
  browser site
}
step "npm run build:demo: build/site/ served under a sub-path, every demo part mounts" site

echo "package test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
