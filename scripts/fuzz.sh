#!/usr/bin/env bash
# Builds the libFuzzer target (tests/fuzz/attention_fuzzer.cc: SDPA and MultiHeadAttention under
# ASan + UBSan) and runs it.
#   scripts/fuzz.sh SECONDS            fuzz for SECONDS (default 60) from tests/fuzz/corpus + tests/fuzz/regressions
#   scripts/fuzz.sh --lenient SECONDS  do not check the strict NaN policy (checked by default; see
#                                      tests/fuzz/fuzz_target.h)
#   scripts/fuzz.sh --replay FILE...   run the given inputs once each (prints the decoded case of a finding)
#   scripts/fuzz.sh --build-only       build only
#   scripts/fuzz.sh --build-only --with-tests
#                                      also build the Catch2 suite (attnlab_tests) in the same configuration, in
#                                      the same Ninja run: npm test's sanitizer suite, on the same library objects
#                                      as the fuzzer (the kernels compile once under the sanitizers)
# Every finding (crash, sanitizer report, invariant violation, timeout, out-of-memory, leak) is copied into
# tests/fuzz/regressions/ (commit it: tests/cpp/fuzz_regressions_test.cc replays it forever) and the script
# exits 1. New interesting inputs go to build/fuzz/corpus (not committed). Environment: FUZZ_JOBS (default 1),
# FUZZ_CXX (default clang++), FUZZ_BUILD_JOBS (default: the number of cores), FUZZ_FLAGS (extra libFuzzer flags).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=fuzz
seconds=60
strict=1
replay=()
targets=(attnlab_fuzzer)
while (($#)); do
  case "$1" in
    --strict) strict=1 ;;
    --lenient) strict=0 ;;
    --build-only) mode=build ;;
    --with-tests) targets+=(attnlab_tests) ;;
    --replay)
      mode=replay
      shift
      replay=("$@")
      break
      ;;
    *[!0-9]* | '')
      echo "usage: scripts/fuzz.sh [--lenient] [SECONDS] | --replay FILE... | --build-only [--with-tests]" >&2
      exit 2
      ;;
    *) seconds=$1 ;;
  esac
  shift
done

out=build/fuzz
mkdir -p "$out/corpus" "$out/artifacts"
# CMake builds the library, the fuzz target (tests/fuzz/*.cc, also linked by the Catch2 replay) and the driver
# with the ATTNLAB_FUZZ flags, incrementally; FUZZ_CXX picks the compiler (libFuzzer needs clang). The folder is
# configured with the Catch2 suite, which Ninja builds only when asked (--with-tests).
cxx=${FUZZ_CXX:-clang++}
if [ ! -f "$out/CMakeCache.txt" ] || [ "$(cat "$out/compiler" 2>/dev/null)" != "$cxx" ]; then
  rm -rf "$out/CMakeCache.txt" "$out/CMakeFiles"
fi
if [ ! -f "$out/CMakeCache.txt" ] || ! grep -q "^ATTNLAB_BUILD_TESTS:BOOL=ON" "$out/CMakeCache.txt"; then
  cmake -S . -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER="$cxx" -DATTNLAB_FUZZ=ON \
    -DATTNLAB_BUILD_TESTS=ON >"$out/configure.log" || { cat "$out/configure.log"; exit 1; }
  echo "$cxx" >"$out/compiler"
fi
cmake --build "$out" --target "${targets[@]}" -- -j"${FUZZ_BUILD_JOBS:-$(nproc)}"
bin="$out/attention_fuzzer"
[ "$mode" = build ] && exit 0

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:suppressions=$PWD/tests/fuzz/ubsan.supp}
export ATTNLAB_FUZZ_STRICT=$strict

if [ "$mode" = replay ]; then
  exec "$bin" -runs=1 "${replay[@]}"
fi

mkdir -p tests/fuzz/regressions
rm -f "$out"/artifacts/*
echo "fuzz: running for ${seconds}s (strict NaN policy: $strict) from tests/fuzz/corpus and tests/fuzz/regressions"
jobs=()
[ "${FUZZ_JOBS:-1}" -gt 1 ] && jobs=(-fork="$FUZZ_JOBS" -ignore_crashes=0)
set +e
# shellcheck disable=SC2086
"$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=4096 \
  "${jobs[@]}" -print_final_stats=1 \
  -artifact_prefix="$out/artifacts/" ${FUZZ_FLAGS:-} \
  "$out/corpus" tests/fuzz/corpus tests/fuzz/regressions >"$out/fuzz.log" 2>&1
rc=$?
set -e
grep -E "^#[0-9]+.*DONE|stat::number_of_executed_units|stat::average_exec_per_sec|stat::new_units_added" \
  "$out/fuzz.log" || true
found=0
for f in "$out"/artifacts/*; do
  [ -f "$f" ] || continue
  case "$(basename "$f")" in slow-unit-*) continue ;; esac  # slow but within -timeout: not a finding
  found=1
  name=$(basename "$f")
  cp "$f" "tests/fuzz/regressions/$name"
  echo "fuzz: FINDING saved as tests/fuzz/regressions/$name"
done
if ((found)) || ((rc != 0)); then
  grep -E "==attnlab-fuzz==|ERROR: |SUMMARY: |runtime error" "$out/fuzz.log" | head -n 20 | cut -c1-2000 || true
  echo "fuzz: FAILED (exit $rc; full log: $out/fuzz.log; reproduce: scripts/fuzz.sh --replay tests/fuzz/regressions/<file>)"
  exit 1
fi
echo "fuzz: no findings"
