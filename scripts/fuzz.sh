#!/usr/bin/env bash
# Builds the libFuzzer target (tests/fuzz/attention_fuzzer.cc: SDPA and MultiHeadAttention under
# ASan + UBSan) and runs it.
#   scripts/fuzz.sh [SECONDS]          open-ended fuzzing (npm run fuzz): SECONDS (default 60) from a random seed,
#                                      from tests/fuzz/corpus + tests/fuzz/regressions + build/fuzz/corpus (which
#                                      it grows); prints the seed (rerun one with FUZZ_FLAGS=-seed=N)
#   scripts/fuzz.sh --runs N [--seed S]
#                                      the deterministic run of npm test: every input of tests/fuzz/corpus and
#                                      tests/fuzz/regressions once (in sorted order), then mutations up to N
#                                      executions in all, from seed S (default 20261130). Not time-bounded, no
#                                      corpus carried over from an earlier run: the same command does the same work
#                                      on every machine, and prints the same result line (coverage, corpus size,
#                                      units added) twice in a row for one build
#   scripts/fuzz.sh --lenient ...      do not check the strict NaN policy (checked by default; see
#                                      tests/fuzz/fuzz_target.h)
#   scripts/fuzz.sh --replay FILE...   run the given inputs once each (prints the decoded case of a finding)
#   scripts/fuzz.sh --build-only       build only
#   scripts/fuzz.sh --build-only --with-tests
#                                      also build the Catch2 suite (attnlab_tests) and the poem trainer (whose
#                                      --selftest is in ctest) in the same configuration, in the same Ninja run:
#                                      npm test's sanitizer suite, on the same library objects
#                                      as the fuzzer (the kernels compile once under the sanitizers)
# Every finding (crash, sanitizer report, invariant violation, timeout, out-of-memory, leak) is copied into
# tests/fuzz/regressions/ (commit it: tests/cpp/fuzz_regressions_test.cc replays it forever) and the script
# exits 1. Environment: FUZZ_JOBS (default 1; open-ended fuzzing only), FUZZ_CXX (default clang++),
# FUZZ_BUILD_JOBS (default: the number of cores), FUZZ_FLAGS (extra libFuzzer flags).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=fuzz
seconds=60
runs=
seed=20261130
strict=1
replay=()
targets=(attnlab_fuzzer)
usage() {
  echo "usage: scripts/fuzz.sh [--lenient] [SECONDS | --runs N [--seed S]] | --replay FILE... | --build-only [--with-tests]" >&2
  exit 2
}
number() { [[ "${1:-}" =~ ^[0-9]+$ ]] || usage; }
while (($#)); do
  case "$1" in
    --strict) strict=1 ;;
    --lenient) strict=0 ;;
    --build-only) mode=build ;;
    --with-tests) targets+=(attnlab_tests attnlab_train_poems) ;;
    --runs)
      number "${2:-}"
      runs=$2
      shift
      ;;
    --seed)
      number "${2:-}"
      seed=$2
      shift
      ;;
    --replay)
      mode=replay
      shift
      replay=("$@")
      break
      ;;
    *[!0-9]* | '') usage ;;
    *) seconds=$1 ;;
  esac
  shift
done

out=build/fuzz
mkdir -p "$out/corpus" "$out/artifacts"
# CMake builds the library, the fuzz target (tests/fuzz/*.cc, also linked by the Catch2 replay) and the driver
# with the ATTNLAB_FUZZ flags, incrementally; FUZZ_CXX picks the compiler (libFuzzer needs clang). The folder is
# configured with the Catch2 suite and the poem trainer, which Ninja builds only when asked (--with-tests).
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
common=(-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=4096 -print_final_stats=1
  -artifact_prefix="$out/artifacts/")
set +e
if [ -n "$runs" ]; then
  # Deterministic: the seeds come from a sorted list (-seed_inputs), not from directory listings (whose order
  # differs between file systems, and which libFuzzer shuffles with the seed); new units go to a fresh folder that
  # is never read back (-reload=0); no time limit, no fork mode; and no mutations from the values of recent
  # integer compares (-use_cmp=0): some of them are addresses, which ASLR changes from run to run (two runs
  # diverged after 359 executions with them). What stays machine-dependent is speed, and what the compiler makes
  # of the code (another clang may instrument other edges).
  # Targets are chosen among AVX2 and below (ATTNLAB_FUZZ_PORTABLE): with AVX-512 in the choice, an AVX-512 host ran
  # other code than an AVX2 one, so its coverage, and then its mutations, differed (CI found what no run here did).
  export ATTNLAB_FUZZ_PORTABLE=1
  echo "fuzz: the corpus and regressions, then up to $runs executions from seed $seed (strict NaN policy: $strict)"
  rm -rf "$out/fixed-corpus"
  mkdir -p "$out/fixed-corpus"
  find tests/fuzz/corpus tests/fuzz/regressions -type f ! -name '.*' ! -name README.md | LC_ALL=C sort |
    paste -sd, - >"$out/seed-inputs.txt"
  # Address randomisation may stay on: the build leaves out libFuzzer's stack-depth feature, whose value depended
  # on the stack's address (CMakeLists.txt, ATTNLAB_FUZZ_COVERAGE; docs/robustness.md "Fuzzing").
  # shellcheck disable=SC2086
  "$bin" -runs="$runs" -seed="$seed" -use_cmp=0 -reload=0 "${common[@]}" \
    -seed_inputs=@"$out/seed-inputs.txt" ${FUZZ_FLAGS:-} "$out/fixed-corpus" >"$out/fuzz.log" 2>&1
  rc=$?
else
  echo "fuzz: running for ${seconds}s (strict NaN policy: $strict) from tests/fuzz/corpus and tests/fuzz/regressions"
  jobs=()
  [ "${FUZZ_JOBS:-1}" -gt 1 ] && jobs=(-fork="$FUZZ_JOBS" -ignore_crashes=0)
  # shellcheck disable=SC2086
  "$bin" -max_total_time="$seconds" "${jobs[@]}" "${common[@]}" ${FUZZ_FLAGS:-} \
    "$out/corpus" tests/fuzz/corpus tests/fuzz/regressions >"$out/fuzz.log" 2>&1
  rc=$?
fi
set -e
if [ -n "$runs" ]; then
  # The result without what depends on the machine's speed (exec/s, rss, times): the same on every run.
  grep -E "^INFO: seed corpus: files:" "$out/fuzz.log" | sed -E 's/ rss: [0-9]+Mb//' || true
  grep -E "^#[0-9]+.*DONE" "$out/fuzz.log" | sed -E 's/ exec\/s: [0-9]+//; s/ rss: [0-9]+Mb//' || true
  grep -E "stat::number_of_executed_units|stat::new_units_added" "$out/fuzz.log" || true
else
  grep -E "^INFO: Seed:|^#[0-9]+.*DONE|stat::number_of_executed_units|stat::average_exec_per_sec|stat::new_units_added" \
    "$out/fuzz.log" || true
fi
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
