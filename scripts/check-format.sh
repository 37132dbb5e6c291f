#!/usr/bin/env bash
# Fails when a C++ file of the repository (tracked, or new and not ignored) deviates from .clang-format
# (Google style, 120 columns). scripts/check-format.sh --fix rewrites them in place.
set -euo pipefail
cd "$(dirname "$0")/.."
files=()
while IFS= read -r f; do
  [ -f "$f" ] && files+=("$f")
done < <(git ls-files --cached --others --exclude-standard -- '*.cc' '*.h' | sort -u)
if [ "${1:-}" = --fix ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
if ! clang-format --dry-run --Werror "${files[@]}" 2>/tmp/attnlab-format.$$; then
  grep -E "^[^ ].*: (error|warning):" /tmp/attnlab-format.$$ | cut -d: -f1 | sort | uniq -c | sed 's/^/  /' >&2
  rm -f /tmp/attnlab-format.$$
  echo "check-format: the files above deviate from .clang-format; fix with scripts/check-format.sh --fix" >&2
  exit 1
fi
rm -f /tmp/attnlab-format.$$
echo "check-format: ${#files[@]} C++ files match .clang-format"
