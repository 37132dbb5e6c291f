// The fuzz target's driver: target choice, dispatch to the SDPA, MHA or whole-model session, the finding's text.
#include "tests/fuzz/session.h"

#include <cstdlib>

#include "hwy/targets.h"

namespace attnlab_fuzz {

Options OptionsFromEnv() {
  Options o;
  const char* s = std::getenv("ATTNLAB_FUZZ_STRICT");
  o.strict_nan = s == nullptr || s[0] != '0';
  const char* v = std::getenv("ATTNLAB_FUZZ_VERBOSE");
  o.verbose = v != nullptr && v[0] == '1';
  const char* range = std::getenv("ATTNLAB_FUZZ_RANGE");
  o.check_range = range != nullptr && range[0] == '1';
  const char* portable = std::getenv("ATTNLAB_FUZZ_PORTABLE");
  o.portable_targets = portable != nullptr && portable[0] == '1';
  return o;
}

namespace {

// The targets the target byte chooses from: every supported one, or (portable) those no better than AVX2. Highway
// orders targets by bit, the best lowest; non-x86 targets are kept as they are.
std::vector<int64_t> CandidateTargets(bool portable) {
  std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  if (!portable) return targets;
  std::vector<int64_t> kept;
  for (int64_t t : targets) {
    if (!(t & (HWY_AVX3 | HWY_AVX3_DL))) kept.push_back(t);
  }
  return kept;
}

}  // namespace

std::string RunOne(const uint8_t* data, size_t size, const Options& opts) { return Session(data, size, opts).Run(); }

std::string Session::Run() {
  const uint8_t target_byte = r_.U8();
  const std::vector<int64_t> targets = CandidateTargets(opts_.portable_targets);
  int64_t target = opts_.forced_target;
  if (target == 0 && opts_.use_target_byte && targets.size() > 1) target = targets[target_byte % targets.size()];
  if (target != 0 && targets.size() > 1) hwy::SetSupportedTargetsForTest(target);
  target_name_ = attnlab::ActiveTargetName();
  const uint8_t kind = r_.U8();
  try {
    if (kind % 32 == 21) {
      RunModel();
    } else if (kind % 32 == 23) {
      RunSeq2SeqTrain();
    } else if (kind % 32 == 25) {
      RunEncoderTrain();
    } else if (kind % 2 == 0) {
      RunSdpa();
    } else {
      RunMha(/*ext=*/kind % 8 == 7);
    }
  } catch (const std::exception& e) {
    Finding(std::string("unexpected exception escaped the fuzz target: ") + e.what());
  }
  if (target != 0 && targets.size() > 1) hwy::SetSupportedTargetsForTest(0);
  if (opts_.verbose)
    std::fprintf(stderr, "[%s] %s\n  -> %s\n", target_name_.c_str(), case_.c_str(),
                 finding_.empty() ? "ok" : "FINDING");
  return finding_;
}

void Session::Finding(const std::string& what) {
  if (!finding_.empty()) return;
  finding_ = "[" + target_name_ + (opts_.strict_nan ? ", strict NaN policy" : "") + "] " + what + "\n  case: " + case_;
}

bool Session::TooBigToAllocate(std::initializer_list<const TensorBuf*> tensors) {
  for (const TensorBuf* t : tensors) {
    if (t->numel.ok && !t->allocated) return true;
  }
  return false;
}

void Session::FillInputs(uint8_t nulls, std::initializer_list<TensorBuf*> tensors,
                         std::initializer_list<MaskBuf*> masks) {
  unsigned bit = 1;
  for (TensorBuf* t : tensors) {
    t->null_ptr = nulls & bit;
    bit <<= 1;
  }
  for (MaskBuf* m : masks) {
    m->null_ptr = nulls & bit;
    bit <<= 1;
  }
  for (TensorBuf* t : tensors) t->Fill(r_);
  for (MaskBuf* m : masks) m->Fill(r_);
}

}  // namespace attnlab_fuzz
