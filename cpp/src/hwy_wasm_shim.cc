// WebAssembly builds only: the few non-inline symbols of libhwy 1.0.3 that attnlab's Highway code references
// (Debian's libhwy.so is x86-only). Abort throws, so a failed internal HWY_ASSERT reaches JS as an Error
// instead of killing the module.
#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "hwy/aligned_allocator.h"
#include "hwy/base.h"
#include "hwy/targets.h"

namespace hwy {

HWY_DLLEXPORT HWY_NORETURN void HWY_FORMAT(3, 4) Abort(const char* file, int line, const char* format, ...) {
  char detail[800];
  va_list args;
  va_start(args, format);
  vsnprintf(detail, sizeof(detail), format, args);
  va_end(args);
  char message[1000];
  snprintf(message, sizeof(message), "internal error at %s:%d: %s", file, line, detail);
  throw std::runtime_error(message);
}

namespace {
std::atomic<int64_t> g_disabled_targets{0};
std::atomic<int64_t> g_targets_for_test{0};
}  // namespace

HWY_DLLEXPORT int64_t SupportedTargets() {
  const int64_t for_test = g_targets_for_test.load();
  int64_t targets = for_test ? for_test : (HWY_WASM | HWY_EMU128 | HWY_SCALAR);
  targets &= ~g_disabled_targets.load();
  return targets ? targets : HWY_STATIC_TARGET;
}

HWY_DLLEXPORT void DisableTargets(int64_t disabled) {
  g_disabled_targets = disabled & ~HWY_ENABLED_BASELINE;
  GetChosenTarget().DeInit();
}

HWY_DLLEXPORT void SetSupportedTargetsForTest(int64_t targets) {
  g_targets_for_test = targets;
  GetChosenTarget().DeInit();
}

HWY_DLLEXPORT ChosenTarget& GetChosenTarget() {
  static ChosenTarget chosen;
  return chosen;
}

HWY_DLLEXPORT void* AllocateAlignedBytes(size_t payload, AllocPtr alloc_ptr, void* opaque) {
  const size_t align = HWY_ALIGNMENT;
  void* raw =
      alloc_ptr ? alloc_ptr(opaque, payload + align + sizeof(void*)) : std::malloc(payload + align + sizeof(void*));
  if (!raw) return nullptr;
  uintptr_t p = reinterpret_cast<uintptr_t>(raw) + sizeof(void*);
  p = (p + align - 1) & ~(uintptr_t(align) - 1);
  reinterpret_cast<void**>(p)[-1] = raw;
  return reinterpret_cast<void*>(p);
}

HWY_DLLEXPORT void FreeAlignedBytes(const void* aligned, FreePtr free_ptr, void* opaque) {
  if (!aligned) return;
  void* raw = reinterpret_cast<void* const*>(aligned)[-1];
  if (free_ptr) {
    free_ptr(opaque, raw);
  } else {
    std::free(raw);
  }
}

HWY_DLLEXPORT void AlignedDeleter::DeleteAlignedArray(void* aligned, FreePtr free_ptr, void* opaque,
                                                      ArrayDeleter /*deleter*/) {
  FreeAlignedBytes(aligned, free_ptr, opaque);  // trivially destructible element types only
}

}  // namespace hwy
