// The frame of a kernel test file below the public API (tests/cpp/ops/), in Highway's own test style (its
// HWY_EXPORT_AND_TEST_P). The file includes itself once per compiled target (HWY_TARGET_INCLUDE + foreach_target.h)
// and writes its per-target checks, functions returning a SweepResult (kernel_sweep.h), between
// ATTNLAB_BEGIN_TARGET_CHECKS() and ATTNLAB_END_TARGET_CHECKS(): in attnlab::HWY_NAMESPACE, inside an anonymous
// namespace (one copy per target, private to the file). After them, under HWY_ONCE, each
// ATTNLAB_TEST_ON_EVERY_TARGET(check, name, tags) exports a check for dynamic dispatch and makes it a Catch2 test case
// that runs it once on every compiled target. The names HWY_EXPORT makes are per check, so a check is exported once
// per file; the files compile on their own, never in a unity batch (CMakeLists.txt).
#ifndef ATTNLAB_TESTS_CPP_OPS_PER_TARGET_H_
#define ATTNLAB_TESTS_CPP_OPS_PER_TARGET_H_

#include <catch2/catch.hpp>

#include "hwy/highway.h"
#include "kernel_sweep.h"

// Opens attnlab::HWY_NAMESPACE::(anonymous), with the target's attributes (HWY_BEFORE_NAMESPACE).
#define ATTNLAB_BEGIN_TARGET_CHECKS() \
  HWY_BEFORE_NAMESPACE();             \
  namespace attnlab {                 \
  namespace HWY_NAMESPACE {           \
  namespace {                         \
  using attnlab_test::SweepResult

// Closes what ATTNLAB_BEGIN_TARGET_CHECKS() opened.
#define ATTNLAB_END_TARGET_CHECKS() \
  } /* namespace */                 \
  } /* namespace HWY_NAMESPACE */   \
  } /* namespace attnlab */         \
  HWY_AFTER_NAMESPACE()

// The test case `name` (Catch2 tags `tags`): attnlab_test::CheckSweepOnEveryTarget of the per-target `check`.
#define ATTNLAB_TEST_ON_EVERY_TARGET(check, name, tags)                                  \
  namespace attnlab {                                                                    \
  namespace {                                                                            \
  HWY_EXPORT(check);                                                                     \
  TEST_CASE(name, tags) {                                                                \
    attnlab_test::CheckSweepOnEveryTarget([] { return HWY_DYNAMIC_DISPATCH(check)(); }); \
  }                                                                                      \
  } /* namespace */                                                                      \
  } /* namespace attnlab */                                                              \
  static_assert(true, "ATTNLAB_TEST_ON_EVERY_TARGET(...) takes a semicolon")

#endif  // ATTNLAB_TESTS_CPP_OPS_PER_TARGET_H_
