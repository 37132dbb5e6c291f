// The fuzz target's session (fuzz_target.h): decodes one input into calls of the library, runs them and checks the
// invariants listed in fuzz_target.h. Its methods are defined in session.cc (driver, classification of
// exceptions), sdpa_session.cc, sdpa_backward_session.cc, mha_session.cc, mha_check.cc, model_session.cc and
// seq2seq_session.cc.
#ifndef ATTNLAB_TESTS_FUZZ_SESSION_H_
#define ATTNLAB_TESTS_FUZZ_SESSION_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "attnlab/attention.h"
#include "attnlab/transformer.h"
#include "tests/fuzz/fuzz_target.h"
#include "tests/fuzz/input.h"
#include "tests/fuzz/sdpa_options.h"

namespace attnlab_fuzz {

constexpr double kMaxWork = 1e6;  // multiply-adds per call above which a valid call is skipped

class Session {
 public:
  Session(const uint8_t* data, size_t size, const Options& opts) : r_(data, size), opts_(opts) {}

  std::string Run();

 private:
  void Finding(const std::string& what);
  bool Failed() const { return !finding_.empty(); }
  static bool TooBigToAllocate(std::initializer_list<const TensorBuf*> tensors);
  // Bit i of `nulls` makes input i (the tensors, then the masks) pass a null data pointer; then fills them in
  // that order from the input.
  void FillInputs(uint8_t nulls, std::initializer_list<TensorBuf*> tensors, std::initializer_list<MaskBuf*> masks);

  // Runs `call`, which calls the library. Returns true when it returned; classifies exceptions.
  template <class Call>
  bool Invoke(const char* what, bool model_valid, Call&& call) {
    if (opts_.verbose)
      std::fprintf(stderr, "calling %s (model: %s): %s\n", what, model_valid ? "valid" : "invalid", case_.c_str());
    try {
      call();
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      for (const std::string& prefix : tolerated_) {
        if (model_valid && msg.rfind(prefix, 0) == 0) return false;  // an option whose kernel has not landed
      }
      if (model_valid) {
        Finding(std::string(what) + ": a valid call was rejected: std::invalid_argument(\"" + msg + "\")");
      } else if (msg.find(": expected ") == std::string::npos || msg.find(", got ") == std::string::npos) {
        Finding(std::string(what) + ": error message not in the form \"<argument>: expected …, got …\": " + msg);
      }
      return false;
    } catch (const std::exception& e) {
      Finding(std::string(what) + ": threw an exception other than std::invalid_argument: " + typeid(e).name() + "(\"" +
              e.what() + "\")");
      return false;
    } catch (...) {
      Finding(std::string(what) + ": threw a non-std::exception");
      return false;
    }
    if (!model_valid) Finding(std::string(what) + ": an invalid call was accepted (expected std::invalid_argument)");
    return model_valid;
  }

  // SDPA (sdpa_session.cc, sdpa_check.cc, sdpa_backward_session.cc; the call: sdpa_options.h).
  void RunSdpa();
  void CheckSdpaPresent(const SdpaCase& c, const SdpaGeom& g, const attnlab::AttentionResult& res);
  void CheckSdpaRows(const SdpaCase& c, const SdpaGeom& g, const attnlab::AttentionResult& res);
  void CheckSdpaScores(const SdpaCase& c, const SdpaGeom& g, const attnlab::AttentionResult& res);
  void CheckSdpaGqa(const SdpaCase& c, const SdpaGeom& g, const attnlab::AttentionResult& res);
  // ScaledDotProductAttentionBackward on the same arguments (3/4 of valid calls): the model (grad_output must have
  // the output's shape), shapes, determinism, and on batch rows whose every input is finite and tame: finite
  // gradients that agree with a float64 reference (tolerance from an abs-value bound of every product).
  void RunSdpaBackward(const SdpaCase& c, const SdpaGeom& g, const Shape& out_shape);

  // MultiHeadAttention (mha_session.cc, mha_check.cc).
  struct Params {
    // PyTorch layouts, float64: wq (E, E), wk (Ekv, kdim), wv (Ekv, vdim), wo (E, E), bq, bo (E), bk, bv,
    // bias_k, bias_v (Ekv) (zeros when absent); Ekv = num_kv_heads · head_dim.
    std::vector<double> wq, wk, wv, wo, bq, bk, bv, bo, bias_k, bias_v;
    bool finite = true;
  };
  static Params ReadParams(const attnlab::MultiHeadAttention& mha);
  // ext (kind byte 7 mod 8): num_kv_heads follows the configuration, and an operation may be a decoding session
  // through a KV cache (mha_cache_session.cc).
  void RunMha(bool ext);
  void MhaCache(attnlab::MultiHeadAttention& mha, const attnlab::MhaConfig& c, int64_t kdim, int64_t vdim);
  void MhaLoad(attnlab::MultiHeadAttention& mha, const std::vector<std::pair<std::string, Shape>>& shapes);
  void MhaForward(attnlab::MultiHeadAttention& mha, const attnlab::MhaConfig& c, int64_t kdim, int64_t vdim);
  void CheckMhaRows(const attnlab::MultiHeadAttention& mha, const attnlab::MhaConfig& c, int64_t kdim_, int64_t vdim_,
                    const TensorBuf& q, const TensorBuf& k, const TensorBuf& v, const MaskBuf& kpm, const MaskBuf& am,
                    const attnlab::MhaForwardOptions& o, const attnlab::AttentionResult& res, int64_t N_, int64_t L_,
                    int64_t S_, bool batched);

  // Whole models (model_session.cc): a configuration, its checkpoint in 16 bits and in float32, one forward.
  void RunModel();
  bool ModelLoad(attnlab::Transformer& narrow, attnlab::Transformer& wide, bool bf16);
  void ModelForward(attnlab::Transformer& narrow, attnlab::Transformer& wide);
  // Encoder–decoder training (seq2seq_session.cc): a small T5 or Marian, one batch, LossAndGradient and TrainStep.
  void RunSeq2SeqTrain();
  void Seq2SeqTrainChecks(attnlab::Transformer& model, const attnlab::Transformer::TrainBatch& b, bool valid);
  // Encoder training (encoder_train_session.cc): a small BERT or ViT, one batch, LossAndGradient and TrainStep.
  void RunEncoderTrain();

  // Rejections a valid call may still meet: options whose kernels have not landed (sdpa_options.h,
  // PendingSdpaOptions), each rejected by name.
  std::vector<std::string> tolerated_;
  Reader r_;
  Options opts_;
  std::string finding_;
  std::string case_;
  std::string target_name_;
};

}  // namespace attnlab_fuzz

#endif  // ATTNLAB_TESTS_FUZZ_SESSION_H_
