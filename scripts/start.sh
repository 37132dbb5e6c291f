#!/usr/bin/env bash
# npm start: install what the wasm build needs (light profile), build only the package (both wasm variants into
# dist/; no native library, no tests), serve the demo page. After npm test has run once, this takes seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --light
bash scripts/build.sh
exec node scripts/serve.mjs
