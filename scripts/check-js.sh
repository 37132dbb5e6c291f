#!/usr/bin/env bash
# The JS style check: Prettier (.prettierrc.json) for the layout, ESLint (eslint.config.js) for mistakes, over the
# repository's own JS: web/src, web/demo, tests and scripts (not dist/, build/ or any node_modules/).
#   bash scripts/check-js.sh          check; exit 1 on any difference or lint error
#   bash scripts/check-js.sh --fix    rewrite the layout and what ESLint can fix, then check again
# Needs the devDependencies prettier, eslint, @eslint/js and globals (npm ci).
set -euo pipefail
cd "$(dirname "$0")/.."

dirs=(web/src web/demo tests scripts)
bin=node_modules/.bin
for tool in prettier eslint; do
  [ -x "$bin/$tool" ] || { echo "check-js: $bin/$tool is missing: run npm ci" >&2; exit 1; }
done

# Prettier takes globs, not file types: one glob per folder for .js, .mjs and .cjs files.
globs=()
for d in "${dirs[@]}"; do globs+=("$d/**/*.{js,mjs,cjs}"); done

if [ "${1:-}" = --fix ]; then
  "$bin/prettier" --log-level warn --write "${globs[@]}" eslint.config.js
  "$bin/eslint" --fix "${dirs[@]}" eslint.config.js
fi
"$bin/prettier" --check --log-level warn "${globs[@]}" eslint.config.js
"$bin/eslint" --max-warnings 0 "${dirs[@]}" eslint.config.js
echo "check-js: prettier and eslint clean"
