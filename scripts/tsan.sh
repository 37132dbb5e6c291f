#!/usr/bin/env bash
# ThreadSanitizer suite: the Catch2 cases that run attnlab's ParallelFor paths (cpp/src/parallel.cc's pool and the
# kernels that split over it) at several thread counts, natively under clang -fsanitize=thread.
#   scripts/tsan.sh               build build/tsan (CMake option ATTNLAB_TSAN: the library and attnlab_tsan_tests,
#                                 from tests/cpp/parallel_test.cc, attention/sdpa_modern_test.cc and
#                                 attention/attention_decode_test.cc only, one Highway target) and run the cases tagged
#                                 [parallel] or [threads]
#   scripts/tsan.sh --build-only  build only
#   scripts/tsan.sh -- ARGS...    run the suite with Catch2 arguments ARGS instead of the tags (e.g. '*' for every
#                                 case of the three files)
# Any ThreadSanitizer report stops the run (halt_on_error=1) and the script exits non-zero, as it does for a
# failing case. No suppressions. Environment: TSAN_CXX (default clang++), TSAN_BUILD_JOBS (default: the number of
# cores), TSAN_OPTIONS (replaces the default below).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=run
cases=('[parallel],[threads]' --warn NoTests)  # (no matching case: a failure, not a pass)
while (($#)); do
  case "$1" in
    --build-only) mode=build ;;
    --)
      shift
      cases=("$@")
      break
      ;;
    *)
      echo "usage: scripts/tsan.sh [--build-only] [-- CATCH2_ARGS...]" >&2
      exit 2
      ;;
  esac
  shift
done

out=build/tsan
cxx=${TSAN_CXX:-clang++}
mkdir -p "$out"
# A compiler change needs a fresh configuration; otherwise CMake and Ninja rebuild only what changed.
if [ ! -f "$out/CMakeCache.txt" ] || [ "$(cat "$out/compiler" 2>/dev/null)" != "$cxx" ]; then
  rm -rf "$out/CMakeCache.txt" "$out/CMakeFiles"
  cmake -S . -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER="$cxx" -DATTNLAB_TSAN=ON \
    -DATTNLAB_BUILD_TESTS=OFF >"$out/configure.log" || { cat "$out/configure.log"; exit 1; }
  echo "$cxx" >"$out/compiler"
fi
# Only this target: not the tutorial, the benchmark or the other test files.
cmake --build "$out" --target attnlab_tsan_tests -- -j"${TSAN_BUILD_JOBS:-$(nproc)}"
[ "$mode" = build ] && exit 0

# second_deadlock_stack: a lock-order report shows both stacks. halt_on_error: the first report ends the run with
# TSan's exit code (66), so no report can scroll by unnoticed.
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
echo "tsan: $out/attnlab_tsan_tests ${cases[*]} (TSAN_OPTIONS=$TSAN_OPTIONS)"
rc=0
"$out/attnlab_tsan_tests" "${cases[@]}" || rc=$?
if ((rc != 0)); then
  echo "tsan: FAILED (exit $rc: a ThreadSanitizer report (66) or a failing case, above)" >&2
  exit "$rc"
fi
echo "tsan: no reports"
