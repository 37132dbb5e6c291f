#!/usr/bin/env bash
# Builds the libFuzzer target (tests/fuzz/attention_fuzzer.cc: SDPA and MultiHeadAttention under
# ASan + UBSan) and runs it.
#   scripts/fuzz.sh SECONDS            fuzz for SECONDS (default 60) from tests/fuzz/corpus + tests/fuzz/regressions
#   scripts/fuzz.sh --lenient SECONDS  do not check the strict NaN policy (checked by default; see fuzz_target.h)
#   scripts/fuzz.sh --replay FILE...   run the given inputs once each (prints the decoded case of a finding)
#   scripts/fuzz.sh --build-only
# Every finding (crash, sanitizer report, invariant violation, timeout, out-of-memory, leak) is copied into
# tests/fuzz/regressions/ (commit it: tests/cpp/fuzz_regressions_test.cc replays it forever) and the script
# exits 1. New interesting inputs go to build/fuzz/corpus (not committed). Environment: FUZZ_JOBS (default 1),
# FUZZ_CXX (default clang++), FUZZ_FLAGS (extra libFuzzer flags).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=fuzz
seconds=60
strict=1
replay=()
while (($#)); do
  case "$1" in
    --strict) strict=1 ;;
    --lenient) strict=0 ;;
    --build-only) mode=build ;;
    --replay)
      mode=replay
      shift
      replay=("$@")
      break
      ;;
    *[!0-9]* | '')
      echo "usage: scripts/fuzz.sh [--lenient] [SECONDS] | --replay FILE... | --build-only" >&2
      exit 2
      ;;
    *) seconds=$1 ;;
  esac
  shift
done

CXX=${FUZZ_CXX:-clang++}
out=build/fuzz
mkdir -p "$out/obj" "$out/corpus" "$out/artifacts"
# pointer-overflow and float-cast-overflow are recoverable so that tests/fuzz/ubsan.supp can silence known, reported reports; every
# other UBSan check (and any pointer-overflow not listed there: halt_on_error=1) stops the run.
common=(-std=c++17 -O1 -g -fno-omit-frame-pointer -fno-sanitize-recover=all -fsanitize-recover=pointer-overflow,float-cast-overflow
  -DHWY_IS_TEST=1 -Icpp/include -I.)
lib_flags=("${common[@]}" -fsanitize=fuzzer-no-link,address,undefined)
drv_flags=("${common[@]}" -fsanitize=fuzzer,address,undefined)

# Incremental: the library objects are rebuilt when a library source or header changed (content hash, so that
# an edit made while compiling is never missed), the driver when it or fuzz_target.h changed.
lib_sources=(cpp/src/checks.cc cpp/src/kernels.cc cpp/src/multi_head_attention.cc cpp/src/sdpa.cc)
hash_of() { cat "$@" | sha1sum | cut -d' ' -f1; }
flags_hash=$(echo "$CXX ${common[*]}" | sha1sum | cut -d' ' -f1)
lib_hash=$(hash_of "${lib_sources[@]}" cpp/src/*.h cpp/include/attnlab/*.h)-$flags_hash
drv_hash=$(hash_of tests/fuzz/attention_fuzzer.cc tests/fuzz/fuzz_target.h cpp/include/attnlab/*.h)-$flags_hash
objs=()
relink=0
if [ "$(cat "$out/obj/lib.stamp" 2>/dev/null)" != "$lib_hash" ]; then
  rm -f "$out/obj/lib.stamp"
  for src in "${lib_sources[@]}"; do
    echo "fuzz: compiling $src"
    "$CXX" "${lib_flags[@]}" -c "$src" -o "$out/obj/$(basename "${src%.cc}").o"
  done
  echo "$lib_hash" >"$out/obj/lib.stamp"
  relink=1
fi
for src in "${lib_sources[@]}"; do objs+=("$out/obj/$(basename "${src%.cc}").o"); done
if [ "$(cat "$out/obj/driver.stamp" 2>/dev/null)" != "$drv_hash" ]; then
  rm -f "$out/obj/driver.stamp"
  echo "fuzz: compiling tests/fuzz/attention_fuzzer.cc"
  "$CXX" "${drv_flags[@]}" -c tests/fuzz/attention_fuzzer.cc -o "$out/obj/attention_fuzzer.o"
  echo "$drv_hash" >"$out/obj/driver.stamp"
  relink=1
fi
objs+=("$out/obj/attention_fuzzer.o")
bin="$out/attention_fuzzer"
if ((relink)) || [ ! -x "$bin" ]; then
  echo "fuzz: linking $bin"
  "$CXX" "${drv_flags[@]}" "${objs[@]}" -lhwy -o "$bin"
fi
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
