#!/usr/bin/env bash
# npm test: set-up, build everything, then every test suite; ends with a table of each suite's wall time.
# Stops at the first failing suite. Independent suites that leave cores idle run side by side (logs in
# build/test-logs/).
#   scripts/test.sh          everything (npm test)
#   scripts/test.sh --quick  the JS API suites + the wasm-simd Catch2 suite, incremental (npm run test:quick)
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
case "${1:-}" in
  '') ;;
  --quick) quick=1 ;;
  *) echo "usage: scripts/test.sh [--quick]" >&2; exit 2 ;;
esac
mkdir -p build/test-logs

names=()
times=()
results=()
started=$SECONDS
record() { names+=("$1"); times+=("$2"); results+=("$3"); }
table() {
  local status=$? i
  ((${#names[@]})) || return $status
  echo
  printf '%-66s %7s  %s\n' "suite" "wall" "result"
  for i in "${!names[@]}"; do
    printf '%-66s %6ss  %s\n' "${names[$i]}" "${times[$i]}" "${results[$i]}"
  done
  printf '%-66s %6ss\n' "total (side-by-side suites overlap)" $((SECONDS - started))
  return $status
}
trap table EXIT

# suite NAME COMMAND...: runs COMMAND in the foreground; a failure ends npm test.
suite() {
  local name=$1 t0=$SECONDS
  shift
  echo "== $name"
  if "$@"; then
    record "$name" $((SECONDS - t0)) ok
  else
    record "$name" $((SECONDS - t0)) FAILED
    exit 1
  fi
}

# side_by_side NAME1 FUNCTION1 NAME2 FUNCTION2: runs both at once, then shows their logs.
side_by_side() {
  local -a name=("$1" "$3") fn=("$2" "$4") pid=()
  local i failed=0
  echo "== ${name[0]}  +  ${name[1]} (side by side)"
  for i in 0 1; do
    (
      t0=$SECONDS
      if ${fn[$i]} >"build/test-logs/${fn[$i]}.log" 2>&1; then r=ok; else r=FAILED; fi
      echo "$((SECONDS - t0)) $r" >"build/test-logs/${fn[$i]}.status"
    ) &
    pid+=($!)
  done
  wait "${pid[@]}" || true
  for i in 0 1; do
    local t r
    read -r t r <"build/test-logs/${fn[$i]}.status"
    echo "-- ${name[$i]}: $r in ${t}s (log: build/test-logs/${fn[$i]}.log)"
    if [ "$r" = ok ]; then tail -n 25 "build/test-logs/${fn[$i]}.log"; else tail -n 80 "build/test-logs/${fn[$i]}.log"; failed=1; fi
    record "${name[$i]}" "$t" "$r"
  done
  ((failed == 0)) || exit 1
}

run_ctest() {  # build dir, label[, jobs]: full log in build/<label>-ctest.log, summary on stdout
  local log="build/$2-ctest.log"
  if ! ctest --test-dir "$1" --output-on-failure -V -j "${3:-$(nproc)}" >"$log" 2>&1; then
    grep -vE "^[0-9]+: *$" "$log" | tail -n 80 | cut -c1-400
    echo "$2: FAILED (full log: $log)"
    return 1
  fi
  grep -hE "targets:|fixtures:|All tests passed|tests passed|test cases" "$log" | sed 's/^[0-9]*: //' | sort | uniq -c | cut -c1-300
  tail -n 3 "$log"
}
wasm_simd_catch2() { run_ctest build/wasm-simd wasm-simd; }
wasm_scalar_catch2() { run_ctest build/wasm-scalar wasm-scalar; }
wasm_simd_threaded_catch2() { run_ctest build/wasm-simd-threaded wasm-simd-threaded; }
js_api() { node --test tests/js/; }
docs_links() { node --test tests/package/; }
# (The ThreadSanitizer build, scripts/tsan.sh: one Highway target, about a minute, after the main build.)
main_build() { bash scripts/build.sh --tests && bash scripts/tsan.sh --build-only; }
# One sanitizer configuration (build/fuzz: clang, ASan + UBSan at -O1, see CMakeLists.txt's ATTNLAB_FUZZ): the
# Catch2 suite and the libFuzzer target link the same library objects, built in one Ninja run. Its ctest runs on
# one core beside the fuzzer on the other. halt_on_error: the checks the fuzzer keeps recoverable stop it too.
sanitizer_build() { bash scripts/fuzz.sh --build-only --with-tests; }
asan() { UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 run_ctest build/fuzz native-asan 1; }
# One core each beside the fuzzer: the sanitizer ctest, then the JavaScript suites (node --test runs one file at a
# time on two cores).
asan_then_js() {
  local t0=$SECONDS
  asan || return 1
  echo "-- native Catch2 suite under ASan + UBSan: ok in $((SECONDS - t0))s; JavaScript API (node --test tests/js/):"
  js_api
}
# Deterministic: the committed corpus and regressions, then a fixed number of executions from a fixed seed, not a
# time (the same work on every machine, the same printed result on every run; a CI failure reproduces with
# the same command). Open-ended fuzzing, from a random seed for a given time, is npm run fuzz (scripts/fuzz.sh).
kFuzzRuns=16000
kFuzzSeed=20261130
fuzz_fixed() { bash scripts/fuzz.sh --runs "$kFuzzRuns" --seed "$kFuzzSeed"; }
package() { bash scripts/test-package.sh; }
# The style holds without anyone policing it: C++ (.clang-format), JS (Prettier + ESLint), and web/src's JS checked
# against the raw module's contract (cpp/bindings/embind.d.ts).
style() { bash scripts/check-format.sh && bash scripts/check-js.sh && node_modules/.bin/tsc -p web/tsconfig.json && echo "tsc: web/src matches cpp/bindings/embind.d.ts" && node_modules/.bin/tsc -p web/demo/tsconfig.json && echo "tsc: web/demo type-checks against the package's public types"; }
e2e() { bash scripts/test-e2e.sh; }

if ((quick)); then
  suite "set-up (scripts/setup.sh)" bash scripts/setup.sh
  suite "build: package + wasm-simd Catch2 (scripts/build.sh --quick)" bash scripts/build.sh --quick
  side_by_side "wasm-simd Catch2 suite under node (ctest)" wasm_simd_catch2 "JavaScript API (node --test tests/js/)" js_api
  suite "docs: links and cited paths (node --test tests/package/)" docs_links
  echo "npm run test:quick: passed"
  exit 0
fi

suite "set-up (scripts/setup.sh)" bash scripts/setup.sh
suite "docs: links and cited paths (node --test tests/package/)" docs_links
suite "style: clang-format, Prettier + ESLint, tsc of web/src against embind.d.ts" style
# The two builds side by side (each Ninja run uses every core): each fills the other's serial stretches
# (configure steps, links, test discovery), and the sanitizer build starts at once.
side_by_side "build: native + every wasm variant with tests, ThreadSanitizer suite (build.sh --tests, tsan.sh)" main_build \
  "build: Catch2 suite + libFuzzer target under ASan + UBSan (scripts/fuzz.sh --build-only --with-tests)" \
  sanitizer_build
suite "build: demo site build/site/ (scripts/build.sh --site)" bash scripts/build.sh --site
suite "native Catch2 suite, every Highway target (ctest)" run_ctest build/native native
suite "native ThreadSanitizer suite: the ParallelFor paths at several thread counts (scripts/tsan.sh)" \
  bash scripts/tsan.sh
side_by_side "wasm-simd Catch2 suite under node (ctest)" wasm_simd_catch2 \
  "wasm-scalar Catch2 suite under node (ctest)" wasm_scalar_catch2
# Uses both cores itself (up to 8 threads in parallel_test.cc): alone.
suite "wasm-simd-threaded Catch2 suite under node (ctest)" wasm_simd_threaded_catch2
side_by_side "native Catch2 suite under ASan + UBSan (ctest), then JavaScript API (node --test tests/js/)" \
  asan_then_js "libFuzzer target: corpus + regressions, then $kFuzzRuns runs from seed $kFuzzSeed (a finding fails)" \
  fuzz_fixed
suite "package: tarball, publint/attw, Node, tsc, bundler matrix in Chromium (scripts/test-package.sh)" package
suite "demo page end to end in Chromium (scripts/test-e2e.sh)" e2e
echo "npm test: all suites passed"
