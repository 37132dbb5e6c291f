// Runs a test body once per Highway target that is both compiled and supported by this CPU/runtime.
// The list comes from HWY_TARGETS as seen by the test sources, so they must be built with the same Highway
// target flags as the library; otherwise the ActiveTargetName() check below fails. (Example: em++ -msimd128
// with -DHWY_IS_TEST=1 gives WASM and EMU128, without it WASM only.)
#ifndef ATTNLAB_TESTS_CPP_HWY_TARGETS_H_
#define ATTNLAB_TESTS_CPP_HWY_TARGETS_H_

#include <catch2/catch.hpp>

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "attnlab/attention.h"
#include "hwy/targets.h"

namespace attnlab_test {

// With a single compiled target (e.g. WASM) dispatch is static: there is nothing to mock and no libhwy symbol to
// call (a wasm build may not link one).
#if (HWY_TARGETS & (HWY_TARGETS - 1)) == 0
#define ATTNLAB_TEST_SINGLE_HWY_TARGET 1
#else
#define ATTNLAB_TEST_SINGLE_HWY_TARGET 0
#endif

// Compiled and supported targets, best first.
inline std::vector<int64_t> TestTargets() {
#if ATTNLAB_TEST_SINGLE_HWY_TARGET
  return {static_cast<int64_t>(HWY_TARGETS)};
#else
  return hwy::SupportedAndGeneratedTargets();
#endif
}

// Makes Highway report only `target` as supported (0: real detection again).
inline void SetTargetForTest(int64_t target) {
#if ATTNLAB_TEST_SINGLE_HWY_TARGET
  (void)target;
#else
  hwy::SetSupportedTargetsForTest(target);
#endif
}

inline std::string TargetListString() {
  std::string names;
  for (int64_t t : TestTargets()) names += std::string(names.empty() ? "" : " ") + hwy::TargetName(t);
  return names;
}

// Prints the target list once per test binary run.
inline void PrintTargetsOnce() {
  static const bool printed = [] {
    std::cout << "attnlab tests: Highway targets: " << TargetListString()
              << " (default choice: " << attnlab::ActiveTargetName() << ")" << std::endl;
    return true;
  }();
  (void)printed;
}

// Makes Highway report only `target` as supported; restores real detection on scope exit (also on exceptions,
// e.g. a failed REQUIRE).
class ScopedTarget {
 public:
  explicit ScopedTarget(int64_t target) { SetTargetForTest(target); }
  ~ScopedTarget() { SetTargetForTest(0); }
  ScopedTarget(const ScopedTarget&) = delete;
  ScopedTarget& operator=(const ScopedTarget&) = delete;
};

// Calls fn(target_name) once per target, with dispatch forced to that target.
template <class Fn>
void ForEachTarget(Fn&& fn) {
  PrintTargetsOnce();
  const std::vector<int64_t> targets = TestTargets();
  REQUIRE_FALSE(targets.empty());
  for (int64_t target : targets) {
    ScopedTarget scoped(target);
    const std::string name = hwy::TargetName(target);
    INFO("Highway target " << name);
    REQUIRE(std::string(attnlab::ActiveTargetName()) == name);
    fn(name);
  }
}

}  // namespace attnlab_test

#endif  // ATTNLAB_TESTS_CPP_HWY_TARGETS_H_
