// The private state of attnlab::Transformer and its KV cache, shared by transformer.cc (API, forward) and
// train.cc (gradients, AdamW).
#ifndef ATTNLAB_SRC_MODEL_TRANSFORMER_IMPL_H_
#define ATTNLAB_SRC_MODEL_TRANSFORMER_IMPL_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/transformer.h"
#include "cpp/src/checks.h"
#include "cpp/src/model/architectures.h"
#include "cpp/src/model/encoder_kernels.h"
#include "cpp/src/model/model_kernels.h"
#include "cpp/src/model/weights.h"
#include "cpp/src/rng.h"

namespace attnlab {

struct TransformerKVCache::Impl {
  const void* owner = nullptr;
  size_t batch = 0, max_length = 0, length = 0;
  std::vector<std::vector<float>> k, v;  // per layer (batch, kv_heads, max_length, head_dim)
  // Encoder–decoders (k, v: the decoder's layers): once the first call has run the encoder, each decoder block's
  // cross-attention keys and values (k, v of block l at 2l, 2l + 1; (batch, heads, source, head_dim) each) and the
  // source's padding as key biases (batch, source) (empty: none).
  bool encoded = false;
  size_t source = 0;
  std::vector<std::vector<float>> cross;
  std::vector<float> cross_bias;
};

// Training state, made by the first call that needs each part: the parameters' gradients (LossAndGradient,
// TrainStep; head importance and attribution need none), AdamW's moments (the first TrainStep), all in the
// parameters' layout; the forward's saved activations (per block), and the step count.
// The step's buffers stay too, reused while the shape (B, T) stays (grown, never zero-filled again: the forward
// overwrites them).
struct TrainState {
  std::unique_ptr<Weights> grads, adam_m, adam_v;  // (null: not made yet)
  int64_t step = 0;
  std::vector<float> activations;             // every block's BlockSaved buffers, then x_final and h_final
  size_t batch = 0, tokens = 0;               // the (B, T) `activations` is laid out for (0: none yet)
  size_t source = 0;                          // an encoder–decoder's: and the source's S
  std::vector<float> logits, step_k, step_v;  // (B, T, V), then their gradient; one layer's keys and values
};

struct Transformer::Impl {
  TransformerConfig config;
  ModelSizes z;
  std::vector<ParamSpec> specs;
  Weights params;
  std::unique_ptr<TrainState> train;

  Impl(const TransformerConfig& c, WeightStorage storage)
      : config(NormalisedConfig(c)),
        z(SizesOf(config)),
        specs(CheckedSpecs(config, storage)),
        params(config, true, storage != WeightStorage::kFloat32, Dtype16Of(storage)) {}

  static Dtype16 Dtype16Of(WeightStorage storage) {
    return storage == WeightStorage::kBF16 ? Dtype16::kBF16 : Dtype16::kF16;
  }

  // The parameter table, after refusing a model whose parameters cannot be addressed (before any allocation): their
  // bytes as stored (a 16-bit storage's matrices at 2 bytes an element, every other parameter at 4).
  static std::vector<ParamSpec> CheckedSpecs(const TransformerConfig& config, WeightStorage storage) {
    std::vector<ParamSpec> specs = ParameterSpecs(config);
    const double matrix_bytes = storage == WeightStorage::kFloat32 ? sizeof(float) : sizeof(uint16_t);
    double bytes = 0;
    for (const ParamSpec& s : specs) {
      double n = 1;
      for (int64_t d : s.shape) n *= static_cast<double>(d);
      bytes += n * (s.is_matrix() ? matrix_bytes : sizeof(float));
    }
    // (the bound of CheckedNumel: addressable bytes; wasm32: 2 GiB)
    const double max_bytes = static_cast<double>(std::numeric_limits<ptrdiff_t>::max());
    if (bytes > max_bytes) {
      Fail("config", "parameters that fit in memory (at most " + std::to_string(max_bytes) + " bytes)",
           std::to_string(bytes) + " bytes");
    }
    return specs;
  }

  const ParamSpec* Find(const std::string& canonical) const {
    for (const ParamSpec& s : specs) {
      if (s.name == canonical) return &s;
    }
    return nullptr;
  }

  // The parameter a canonical checkpoint name is a tied copy of (a tied lm_head, a masked-LM decoder), or null.
  const ParamSpec* TieOf(const std::string& canonical) const {
    const std::string target = TiedName(config, canonical);
    return target.empty() ? nullptr : Find(target);
  }

  // The parameter checkpoint tensor `name` (`canonical`) loads into or, a tied copy, is compared with; else a
  // failure.
  const ParamSpec& LoadSpec(const std::string& name, const std::string& canonical) const {
    const ParamSpec* tie = TieOf(canonical);
    const ParamSpec* spec = tie ? tie : Find(canonical);
    if (!spec) Fail(name, "a parameter of this model (e.g. '" + specs.front().name + "')", "an unknown name");
    return *spec;
  }

  // The rows of `spec` that a piece of shape `shape` starting at row `first_row` covers: same shape past the first
  // dimension, inside the tensor; else a failure naming the tensor.
  static RowRange PieceRows(const std::string& name, const ParamSpec& spec, const Shape& shape, int64_t first_row) {
    const bool fits = shape.size() == spec.shape.size() && !shape.empty() &&
                      std::equal(shape.begin() + 1, shape.end(), spec.shape.begin() + 1) && first_row >= 0 &&
                      shape[0] >= 0 && first_row <= spec.shape[0] - shape[0];
    if (!fits) {
      Fail(name, "rows of shape " + ShapeString(spec.shape),
           "shape " + ShapeString(shape) + " at row " + std::to_string(first_row));
    }
    return {static_cast<size_t>(first_row), static_cast<size_t>(shape[0])};
  }

  // New parameters: AdamW starts again (moments 0, step 0). The training buffers stay allocated, so that loading
  // between steps (the demo's resets) does not free and re-make them each time: that churn fragments a heap filled
  // to the brim (tests/js/memory.test.mjs).
  void ResetTraining() {
    if (!train) return;
    train->step = 0;
    for (Weights* w : {train->adam_m.get(), train->adam_v.get()}) {
      if (w) w->ForEachBuffer([](std::vector<float>& b, bool) { std::fill(b.begin(), b.end(), 0.0f); });
    }
  }

  void Initialise(uint64_t seed) {
    Rng rng(seed);
    std::vector<float> values;
    for (const ParamSpec& s : specs) {
      if (!(s.is_matrix() || s.slot == Slot::kPositions || s.slot == Slot::kTokenTypes || s.slot == Slot::kClsToken))
        continue;  // (norms 1, biases 0)
      size_t n = 1;
      for (int64_t d : s.shape) n *= static_cast<size_t>(d);
      values.resize(n);
      for (float& x : values) x = rng.Normal(0.02);
      params.Load(s, values.data());
    }
  }
};

// The kernels' arguments common to every call: sizes, token ids, the global parameters, RoPE at positions
// P … P + T − 1, and the window. Blocks, outputs and caches are the caller's.
struct Transformer::CallArgs {
  ModelArgs a;
  std::vector<float> rope_cos, rope_sin, sinusoids;  // (sinusoids: (P + T, E), sinusoidal positions)
  std::vector<BlockArgs> blocks;
};

// An encoder's part of a forward call (encoder.cc): its kernel arguments and RoBERTa's position ids.
struct EncoderCall {
  EncoderArgs args;
  std::vector<int32_t> position_ids;
};
// Checks the options only encoders take (tokenTypeIds; no lastLogitsOnly) and, for an encoder, fills `call` from the
// weights (and a vision model's `pixels`, checked) and allocates out's lastHiddenState and pooledOutput; null for a
// decoder.
const EncoderArgs* PrepareEncoder(const TransformerConfig& c, const Weights& w, const TokensView& tokens,
                                  const PixelsView* pixels, const TransformerForwardOptions& options, EncoderCall& call,
                                  TransformerOutput& out);
// Checks a vision model's pixels (B, numChannels, imageSize, imageSize); returns its tokens' shape (B, 1 + N).
Shape CheckPixels(const TransformerConfig& c, const PixelsView& pixels);
// A tensor of zeros (its size checked: std::invalid_argument naming 'output').
Tensor ZeroTensor(Shape shape);
// The logits' shape: (B, T, V), (B, 1, V) with last_only, (B, numLabels) for classification (of a sequence or an
// image), {} for a base encoder.
Shape LogitsShape(const TransformerConfig& c, size_t batch, size_t t_len, bool last_only);

// Checks tokens (B, T) and every id (in [0, vocab)), errors naming `name`; returns {B, T}.
std::pair<size_t, size_t> CheckTokens(const TokensView& tokens, int64_t vocab, const char* name = "tokens");
// Training targets (B, T) like the tokens: ids in [0, vocab) or −100 (ignored), at least one counted (train.cc);
// errors name `name`.
void CheckTargets(const TokensView& targets, const Shape& tokens_shape, int64_t vocab, const char* name = "targets");
// What each stack of an encoder–decoder reads beyond its blocks (seq2seq.cc): T5's relative position bias tables
// and the encoder's final norm.
void SetUpStackWeights(const TransformerConfig& c, const Weights& w, ModelArgs& enc, ModelArgs& dec);
// buffer[0, n), grown when shorter (never shrunk, never zero-filled again) (train.cc).
float* Grown(std::vector<float>& buffer, size_t n);
// Every block's keys and values in the state's one-layer buffers of kv floats each; returns its logits' buffer of
// `logits` floats.
float* StepBuffers(TrainState& state, std::vector<BlockArgs>& blocks, size_t kv, size_t logits);
// Carves every block's saved activations, then x_final and h_final, out of the state's buffer for a's (B, T).
void LayOutActivations(const ModelArgs& a, TrainState& state, std::vector<BlockSaved>& saved, TrainArgs& t);
// Points t (and `blocks`, one per block) at the gradient buffers, zero-filled; null gradients: every pointer null.
void PointAtGradients(Weights* gradients, std::vector<BlockGrads>& blocks, TrainArgs& t);

// What the analyses' backward differentiates and returns (Transformer::GradientOptions), by shape: B rows, the
// logits' positions and width (the kLogit index checked against them), the input's positions (input_grad (B,
// input_rows, embed)), and the stack's layers and heads (head_mask_grad (B, layers, heads)).
struct GradientShape {
  size_t batch, logit_rows, logit_width, input_rows;
  int64_t layers, heads, embed;
};
// The objective of `o` on t, and the buffers of the extra outputs asked for (in `extra`, shaped and zero-filled;
// extra null: none).
void SetObjective(const Transformer::GradientOptions& o, const GradientShape& s, TrainArgs& t,
                  Transformer::LossAndGrad* extra);
// extra.input: block 0's input, `first`'s x_in, in input_grad's shape.
void SaveInput(const BlockSaved& first, Transformer::LossAndGrad& extra);
struct CrossGrads;
struct Seq2SeqTrainArgs;
// An encoder–decoder's analysis (seq2seq_train.cc with `extra`): null parameter gradients for both stacks and the
// cross-attention (`blocks`, `cross` sized here), the objective of `o` on the decoder, the encoder's input gradient,
// every kind of head mask gradient (encoder, decoder, cross) into extra when asked.
void PrepareSeq2SeqAnalysis(const Transformer::GradientOptions& o, const TransformerConfig& c, size_t batch,
                            size_t s_len, size_t t_len, std::vector<BlockGrads>& blocks, std::vector<CrossGrads>& cross,
                            Seq2SeqTrainArgs& t, Transformer::LossAndGrad& extra);
// The parameters that are off the loss path of c's head (a pooler under a masked-LM or image head, or under
// RoBERTa's classifier) and an encoder–decoder's LM head bias (Hugging Face's final_logits_bias, a buffer): no
// gradient, no AdamW update.
std::vector<const std::vector<float>*> OffLossPath(const TransformerConfig& c, const Weights& w);
// Clipping and one torch.optim.AdamW step on the state's gradients (made by the first step: moments 0).
Transformer::StepResult AdamWStep(const TransformerConfig& c, Weights& params, TrainState& state, double loss,
                                  const Transformer::AdamWOptions& options);
// A logit's position in [0, t_len) and token id in [0, vocab) (std::invalid_argument naming them; analysis.cc).
void CheckLogitIndex(int64_t position, int64_t target, size_t t_len, int64_t vocab);
// Analysis helpers shared by the decoders' methods (analysis.cc) and the encoders' (analysis_encoders.cc):
// rows (of B) with a target that is not −100;
size_t RowsWithTargets(const TokensView& targets, size_t batch, size_t t_len);
// the mean over rows with a target of each row's mean cross-entropy of logits (B, T, V) (or (B, C) with t_len 1)
// against targets (B, T), in double;
double RowMeanLoss(const Tensor& logits, const TokensView& targets, size_t batch, size_t t_len);
// head h's output in a (B, T, H, hd) head_outputs tensor, as (B, T, hd);
std::vector<float> HeadColumns(const Tensor& layer, size_t h);
// each head's output averaged over the B·T positions (those with keep[row] = 1 when keep is non-null), repeated at
// every position: L·H buffers (B, T, hd) of layers (B, T, H, hd).
std::vector<std::vector<float>> MeanHeadOutputs(const std::vector<Tensor>& head_outputs, const uint8_t* keep);
// A padding mask `name` (B, s) (1 token, 0 padding; `dims` describes s in messages) as additive key biases 0 / −inf
// (empty without a mask).
std::vector<float> KeyBiasOf(const char* name, const uint8_t* mask, const Shape& shape, size_t batch, size_t s,
                             const char* dims);
// A head mask `name` of shape (layers, heads), or null.
void CheckHeadMask(const char* name, const float* mask, const Shape& shape, int64_t layers, int64_t heads);
// Which of num_layers layers' attention weights are kept, for outputAttentions `layers`, each in [0, limit).
std::vector<bool> KeptLayers(const std::vector<int64_t>& layers, int64_t num_layers, int64_t limit);

}  // namespace attnlab

#endif  // ATTNLAB_SRC_MODEL_TRANSFORMER_IMPL_H_
