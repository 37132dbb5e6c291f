// Replays every input of tests/fuzz/regressions/ (findings the fuzzer ever made; kept forever) and
// tests/fuzz/corpus/ (the seeds) through the fuzz target's own decode + check code (tests/fuzz/fuzz_target.h: the
// library attnlab_fuzz_target, which the libFuzzer driver links too), on every Highway target. Plus hand-written
// regressions of hostile sizes found by review.
#include <catch2/catch.hpp>

#include <dirent.h>
#if !defined(__EMSCRIPTEN__)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define ATTNLAB_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTNLAB_UNDER_ASAN 1
#endif
#endif
#if defined(ATTNLAB_UNDER_ASAN)
// Under ASan (the ATTNLAB_FUZZ build) an absurd allocation must throw std::bad_alloc (a reportable finding)
// rather than abort the whole suite: regressions may hold inputs that once made the library allocate terabytes.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1:max_allocation_size_mb=16384"; }
#endif

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnlab/attention.h"
#include "hwy_targets.h"
#include "tests/fuzz/fuzz_target.h"

namespace {

#ifndef ATTNLAB_FIXTURE_DIR
#error "ATTNLAB_FIXTURE_DIR (tests/fixtures/torch, absolute) must be defined by the build"
#endif
const std::string kFuzzDir = ATTNLAB_FIXTURE_DIR "/../../fuzz";

// Regular files of `dir` (sorted), skipping dot files; empty when the directory does not exist.
std::vector<std::string> ListFiles(const std::string& dir) {
  std::vector<std::string> files;
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* entry = readdir(d)) {
      const std::string name = entry->d_name;
      if (name.empty() || name[0] == '.' || name == "README.md") continue;
      files.push_back(dir + "/" + name);
    }
    closedir(d);
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Runs one input. Natively, a finding kept in tests/fuzz/regressions runs in a child process with a 10 s alarm and
// (without ASan) a 16 GiB address-space limit, so that an unfixed hang or a huge allocation fails this test instead
// of hanging the suite or exhausting the machine. (WebAssembly has no fork: run in-process there, except hangs.)
std::string Replay(const std::string& path, const attnlab_fuzz::Options& options, bool isolate) {
  const std::vector<uint8_t> bytes = ReadBytes(path);
#if defined(__EMSCRIPTEN__)
  isolate = false;  // no fork: an unfixed hang would hang the suite here (the native run reports it first)
#endif
  if (!isolate) return attnlab_fuzz::RunOne(bytes.data(), bytes.size(), options);
#if !defined(__EMSCRIPTEN__)
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(10);
#if !defined(ATTNLAB_UNDER_ASAN)
    const rlimit limit{rlim_t{16} << 30, rlim_t{16} << 30};
    setrlimit(RLIMIT_AS, &limit);
#endif
    std::string finding;
    try {
      finding = attnlab_fuzz::RunOne(bytes.data(), bytes.size(), options);
    } catch (const std::exception& e) {
      finding = std::string("exception escaped: ") + e.what();
    }
    if (!finding.empty()) std::fprintf(stderr, "%s\n", finding.c_str());
    _exit(finding.empty() ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) return "still hangs (killed after 10 s)";
  return "failed in the child process (the finding is on stderr)";
#else
  return "";
#endif
}

void ReplayDir(const std::string& dir, size_t min_files, bool isolate) {
  const std::vector<std::string> files = ListFiles(dir);
  INFO("directory " << dir);
  REQUIRE(files.size() >= min_files);
  attnlab_fuzz::Options options = attnlab_fuzz::OptionsFromEnv();
  options.use_target_byte = false;  // ForEachTarget chose the target
  attnlab_test::ForEachTarget([&](const std::string&) {
    for (const std::string& path : files) {
      INFO("input " << path);
      CHECK(Replay(path, options, isolate) == "");
    }
  });
}

// call(), and how many seconds it took.
template <class Call>
attnlab::AttentionResult TimedCall(Call&& call, double& seconds) {
  const auto start = std::chrono::steady_clock::now();
  attnlab::AttentionResult r = call();
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

// A module of embed_dim features and num_heads heads, every other setting its default.
attnlab::MultiHeadAttention HostileModule(int64_t embed_dim, int64_t num_heads) {
  attnlab::MhaConfig c;
  c.embed_dim = embed_dim;
  c.num_heads = num_heads;
  return attnlab::MultiHeadAttention(c);
}

}  // namespace

TEST_CASE("fuzz: every seed of tests/fuzz/corpus holds the invariants", "[fuzz]") {
  ReplayDir(kFuzzDir + "/corpus", 10, /*isolate=*/false);
}

TEST_CASE("fuzz: every finding kept in tests/fuzz/regressions holds the invariants", "[fuzz]") {
  ReplayDir(kFuzzDir + "/regressions", 0, /*isolate=*/true);
}

// ---- Hand-written regressions: hostile sizes (review findings; see docs/robustness.md).

// Empty tensors with a huge batch: nothing to compute, so the call must return at once (it used to loop over
// every batch item: a hang from a call whose every tensor is empty).
TEST_CASE("hostile sizes: SDPA on empty tensors with a huge batch returns quickly", "[fuzz][hostile]") {
  const int64_t batch = int64_t{1} << 27;
  const attnlab::TensorView q{nullptr, {batch, 0, 4}}, k{nullptr, {batch, 0, 4}}, v{nullptr, {batch, 0, 4}};
  for (const bool need_weights : {true, false}) {
    attnlab::SdpaOptions o;
    o.need_weights = need_weights;
    double seconds = 0;
    const attnlab::AttentionResult r =
        TimedCall([&] { return attnlab::ScaledDotProductAttention(q, k, v, o); }, seconds);
    CHECK(r.output.data.empty());
    CHECK(r.output.shape == attnlab::Shape{batch, 0, 4});
    INFO("need_weights " << need_weights);
    CHECK(seconds < 0.5);
  }
}

// Queries present but no values to produce (dk = dv = 0, no weights): nothing to compute either.
TEST_CASE("hostile sizes: SDPA with dk = dv = 0 and no weights returns quickly", "[fuzz][hostile]") {
  const int64_t n = int64_t{1} << 16;  // Lq * Lk = 2^32 logits nobody asked for
  const attnlab::TensorView q{nullptr, {n, 0}}, k{nullptr, {n, 0}}, v{nullptr, {n, 0}};
  attnlab::SdpaOptions o;
  o.need_weights = false;
  double seconds = 0;
  const attnlab::AttentionResult r = TimedCall([&] { return attnlab::ScaledDotProductAttention(q, k, v, o); }, seconds);
  CHECK(r.output.shape == attnlab::Shape{n, 0});
  CHECK(seconds < 0.5);
}

TEST_CASE("hostile sizes: MHA forward on empty tensors with a huge batch returns quickly", "[fuzz][hostile]") {
  attnlab::MultiHeadAttention mha = HostileModule(4, 2);
  const int64_t n = int64_t{1} << 27;
  const attnlab::TensorView q{nullptr, {0, n, 4}}, k{nullptr, {0, n, 4}}, v{nullptr, {0, n, 4}};
  double seconds = 0;
  const attnlab::AttentionResult r = TimedCall([&] { return mha.Forward(q, k, v); }, seconds);
  CHECK(r.output.shape == attnlab::Shape{0, n, 4});
  CHECK(r.weights.shape == attnlab::Shape{n, 0, 0});
  CHECK(seconds < 0.5);
}

// N * num_heads must not overflow int64 while checking a 3-D attn_mask (signed overflow: UB, caught by UBSan in
// the ATTNLAB_FUZZ build). The call is invalid (the mask's first dimension is not N * num_heads) and must say so.
TEST_CASE("hostile sizes: MHA 3-D attn_mask check with N * num_heads beyond int64", "[fuzz][hostile]") {
  attnlab::MultiHeadAttention mha = HostileModule(8, 8);
  const int64_t n = (int64_t{1} << 61) - 1;  // the largest dimension an empty tensor may have
  const attnlab::TensorView q{nullptr, {0, n, 8}}, k{nullptr, {0, n, 8}}, v{nullptr, {0, n, 8}};
  attnlab::MhaForwardOptions o;
  o.attn_mask = attnlab::Mask::Bool(nullptr, {8, 0, 0});
  CHECK_THROWS_AS(mha.Forward(q, k, v, o), std::invalid_argument);
}
