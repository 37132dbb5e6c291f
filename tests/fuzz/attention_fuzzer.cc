// libFuzzer driver of attnlab (scripts/fuzz.sh builds and runs it). All decoding and checking lives in the fuzz
// target library (fuzz_target.h), shared with the Catch2 replay of tests/fuzz/corpus and tests/fuzz/regressions.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const attnlab_fuzz::Options options = attnlab_fuzz::OptionsFromEnv();
  const std::string finding = attnlab_fuzz::RunOne(data, size, options);
  if (!finding.empty()) {
    std::fprintf(stderr, "\n==attnlab-fuzz== FINDING: %s\n", finding.c_str());
    std::fflush(stderr);
    std::abort();  // libFuzzer saves the input as crash-<sha1>
  }
  return 0;
}
