#!/usr/bin/env bash
# The JS style check: Prettier (.prettierrc.json) for the layout, ESLint (eslint.config.js) for mistakes, over the
# repository's own JS in web/src, web/demo, tests and scripts (tracked, or new and not ignored: no build output).
#   bash scripts/check-js.sh          check; exit 1 on any difference or lint error
#   bash scripts/check-js.sh --fix    rewrite the layout and what ESLint can fix, then check again
# Needs the devDependencies prettier, eslint, @eslint/js and globals (npm ci).
set -euo pipefail
cd "$(dirname "$0")/.."

bin=node_modules/.bin
for tool in prettier eslint; do
  [ -x "$bin/$tool" ] || { echo "check-js: $bin/$tool is missing: run npm ci" >&2; exit 1; }
done
files=(eslint.config.js)
while IFS= read -r f; do
  [ -f "$f" ] && files+=("$f")
done < <(git ls-files --cached --others --exclude-standard -- web/src web/demo tests scripts |
  grep -E '\.(js|mjs|cjs)$' | sort -u)

if [ "${1:-}" = --fix ]; then
  "$bin/prettier" --log-level warn --write "${files[@]}"
  "$bin/eslint" --fix "${files[@]}"
fi
"$bin/prettier" --log-level warn --check "${files[@]}"
"$bin/eslint" --max-warnings 0 "${files[@]}"
echo "check-js: ${#files[@]} JS files pass prettier and eslint"
