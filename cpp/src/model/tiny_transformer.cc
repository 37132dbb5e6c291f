// TinyTransformer: a configuration of the one Transformer (arch 'tiny': cpp/src/model/types/tiny.cc, tiny_config.h)
// behind the demo's API. Forward, the cross-entropy, the backward and Adam (AdamW with weight decay 0) are the
// Transformer's; this file keeps the API's checks and its seeded initialisation (its own draws, loaded into the
// model).
#include "attnlab/tiny_transformer.h"

#include <cmath>
#include <string>
#include <utility>

#include "attnlab/transformer.h"
#include "cpp/src/checks.h"
#include "cpp/src/model/tiny_config.h"
#include "cpp/src/rng.h"

namespace attnlab {

struct TinyTransformer::Impl {
  TinyTransformerConfig config;
  size_t v = 0;
  Transformer model;

  Impl(const TinyTransformerConfig& c, Transformer m)
      : config(c), v(static_cast<size_t>(c.vocab_size)), model(std::move(m)) {}

  void CheckTokens(const char* name, const TokensView& tokens, const Shape* like) const {
    if (tokens.shape.size() != 2 || tokens.shape[0] < 1 || tokens.shape[1] < 1) {
      Fail(name, "shape [B, T] with B, T >= 1", ShapeString(tokens.shape));
    }
    if (like && tokens.shape != *like)
      Fail(name, "shape " + ShapeString(*like) + " (that of tokens)", ShapeString(tokens.shape));
    const size_t n = CheckedNumel(name, tokens.shape);
    if (!tokens.data) Fail(name, "data for " + std::to_string(n) + " tokens", "a null data pointer");
    for (size_t i = 0; i < n; ++i) {
      if (tokens.data[i] < 0 || static_cast<size_t>(tokens.data[i]) >= v) {
        Fail(name, "token ids in [0, " + std::to_string(v) + ")",
             std::to_string(tokens.data[i]) + " at index " + std::to_string(i));
      }
    }
  }
};

namespace {

// PyTorch's initialisation, drawn as before the tiny model became a Transformer configuration (seeded results and
// the demo stay as they were): nn.MultiheadAttention's defaults (its own generator from `seed`), then the
// embedding N(0, 1), the readout's weight and bias U(±1/√E) from seed ^ 0x5EED.
std::map<std::string, Tensor> InitialParameters(const TinyTransformerConfig& config, uint64_t seed) {
  MhaConfig mha_config;
  mha_config.embed_dim = config.embed_dim;
  mha_config.num_heads = config.num_heads;
  mha_config.bias = false;
  mha_config.batch_first = true;
  std::map<std::string, Tensor> mha = MultiHeadAttention(mha_config, seed).StateDict();  // (checks num_heads)
  const int64_t v = config.vocab_size, e = config.embed_dim;
  Rng rng(seed ^ 0x5EEDull);
  Tensor embedding{std::vector<float>(static_cast<size_t>(v * e)), {v, e}};
  for (float& w : embedding.data) w = rng.Normal(1.0);
  const double bound = 1.0 / std::sqrt(static_cast<double>(e));
  Tensor readout{std::vector<float>(static_cast<size_t>(v * e)), {v, e}}, bias{std::vector<float>(v), {v}};
  for (float& w : readout.data) w = rng.Uniform(bound);
  for (float& w : bias.data) w = rng.Uniform(bound);
  return {{"embedding.weight", std::move(embedding)},
          {"attn.in_proj_weight", std::move(mha.at("in_proj_weight"))},
          {"attn.out_proj.weight", std::move(mha.at("out_proj.weight"))},
          {"readout.weight", std::move(readout)},
          {"readout.bias", std::move(bias)}};
}

std::map<std::string, TensorView> Views(const std::map<std::string, Tensor>& tensors) {
  std::map<std::string, TensorView> views;
  for (const auto& [name, t] : tensors) views[name] = TensorView{t.data.data(), t.shape};
  return views;
}

}  // namespace

TinyTransformer::TinyTransformer(const TinyTransformerConfig& config, uint64_t seed) {
  if (config.vocab_size <= 0) Fail("vocab_size", "a positive integer", std::to_string(config.vocab_size));
  if (config.embed_dim <= 0 || config.embed_dim % 2 != 0) {
    Fail("embed_dim", "a positive even integer (sin/cos pairs)", std::to_string(config.embed_dim));
  }
  CheckedNumel("vocab_size", {config.vocab_size, config.embed_dim});
  const std::map<std::string, Tensor> initial = InitialParameters(config, seed);
  impl_ = std::make_unique<Impl>(config, Transformer(TinyModelConfig(config), seed, /*initialise=*/false));
  impl_->model.LoadStateDict(Views(initial));
}

TinyTransformer::~TinyTransformer() = default;
TinyTransformer::TinyTransformer(TinyTransformer&&) noexcept = default;
TinyTransformer& TinyTransformer::operator=(TinyTransformer&&) noexcept = default;

std::vector<std::pair<std::string, Shape>> TinyTransformer::ParameterShapes() const {
  return impl_->model.ParameterShapes();
}

void TinyTransformer::LoadStateDict(const std::map<std::string, TensorView>& state_dict) {
  CheckStateDict(ParameterShapes(), state_dict);
  impl_->model.LoadStateDict(state_dict);  // (and Adam starts again)
}

std::map<std::string, Tensor> TinyTransformer::StateDict() const { return impl_->model.StateDict(); }

TinyTransformer::Output TinyTransformer::Forward(const TokensView& tokens) {
  impl_->CheckTokens("tokens", tokens, nullptr);
  TransformerForwardOptions options;
  options.output_attentions = {0};
  TransformerOutput out = impl_->model.Forward(tokens, options);
  return Output{std::move(out.logits), std::move(out.attentions[0])};
}

TinyTransformer::LossAndGrad TinyTransformer::LossAndGradient(const TokensView& tokens, const TokensView& targets) {
  impl_->CheckTokens("tokens", tokens, nullptr);
  impl_->CheckTokens("targets", targets, &tokens.shape);
  Transformer::LossAndGrad lg = impl_->model.LossAndGradient(tokens, targets);
  return LossAndGrad{lg.loss, std::move(lg.grad_params)};
}

float TinyTransformer::TrainStep(const TokensView& tokens, const TokensView& targets, float lr) {
  if (!std::isfinite(lr) || lr <= 0.0f) Fail("lr", "a positive finite learning rate", std::to_string(lr));
  impl_->CheckTokens("tokens", tokens, nullptr);
  impl_->CheckTokens("targets", targets, &tokens.shape);
  Transformer::AdamWOptions adam;  // torch.optim.Adam: AdamW without weight decay
  adam.lr = lr;
  adam.weight_decay = 0.0f;
  return impl_->model.TrainStep(tokens, targets, adam).loss;
}

}  // namespace attnlab
