#!/usr/bin/env bash
# Browser end-to-end test of the demo page (tests/e2e/): serves the repo with scripts/serve.mjs on a free
# port and drives Debian's headless Chromium with npm playwright-core, one test file per area of the page (both
# languages). Screenshots of every part, 中文 and English, 1280 and 400 px: build/screenshots/.
set -euo pipefail
cd "$(dirname "$0")/.."

[ -f dist/index.mjs ] || { echo "test-e2e: dist/index.mjs is missing; run bash scripts/build.sh first" >&2; exit 1; }
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || { echo "test-e2e: ${CHROMIUM:-/usr/bin/chromium} is missing; bash scripts/setup.sh installs it" >&2; exit 1; }
[ -d node_modules/playwright-core ] || { echo "test-e2e: node_modules/playwright-core is missing; run npm ci" >&2; exit 1; }

mkdir -p build/screenshots
node --test --test-reporter=spec tests/e2e/
echo "test-e2e: screenshots in build/screenshots/:"
ls build/screenshots | sed 's/^/  /'
