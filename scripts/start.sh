#!/usr/bin/env bash
# npm start: set-up, build the package, serve the demo page.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
exec node scripts/serve.mjs
