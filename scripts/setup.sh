#!/usr/bin/env bash
# Installs what attnlab needs from Debian 12's apt and the npm registry. Idempotent: installs only what is
# missing. Not root: prints the exact apt-get line and exits non-zero.
#   scripts/setup.sh          everything npm test needs (compilers, sanitizers, Chromium, PyTorch, npm dev tools)
#   scripts/setup.sh --light  only what building the wasm package and serving the demo need (npm start, build)
set -euo pipefail
cd "$(dirname "$0")/.."

profile=full
[ "${1:-}" = --light ] && profile=light
# The wasm build: Emscripten, CMake + Ninja, and the header-only dependencies CMakeLists.txt links into em++'s view.
APT_PACKAGES=(cmake ninja-build emscripten libhwy-dev libeigen3-dev catch2 nlohmann-json3-dev)
if [ $profile = full ]; then
  # Native builds (g++, clang + its sanitizer/fuzzer runtime), the browser tests, the PyTorch references.
  APT_PACKAGES+=(g++ clang libclang-rt-14-dev chromium fonts-wqy-zenhei python3-torch python3-numpy)
fi

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
# Node.js and npm may come from elsewhere (e.g. NodeSource, which bundles npm): only the commands matter.
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if ((${#missing[@]})); then
  if [ "$(id -u)" != 0 ]; then
    echo "attnlab setup: missing Debian packages. Run as root:" >&2
    echo "  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 1
  fi
  echo "attnlab setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm dev tools of the tests (playwright-core, typescript, vite, …), exactly as the lock file says.
if [ $profile = full ] && [ -f package-lock.json ] && { [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; }; then
  echo "attnlab setup: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi
