// TinyTransformer: embedding + positional encoding around attnlab's MultiHeadAttention, cross-entropy and Adam.
// The attention (forward and backward) runs in the dispatched SIMD kernels; the embedding, residual and the
// (V × E) readout are small loops here.
#include "attnlab/tiny_transformer.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "cpp/src/checks.h"
#include "cpp/src/rng.h"

namespace attnlab {
namespace {

constexpr const char* kEmbedding = "embedding.weight";
constexpr const char* kInProj = "attn.in_proj_weight";
constexpr const char* kOutProj = "attn.out_proj.weight";
constexpr const char* kReadout = "readout.weight";
constexpr const char* kReadoutBias = "readout.bias";

}  // namespace

struct TinyTransformer::Impl {
  TinyTransformerConfig config;
  size_t v = 0, e = 0, h = 0;
  MultiHeadAttention attn;
  std::vector<float> embedding, readout, readout_bias;  // (V, E), (V, E), (V)

  // Adam state per parameter name: first and second moments; `step` counts updates.
  std::map<std::string, std::vector<float>> adam_m, adam_v;
  int64_t step = 0;

  // The last forward's activations, batch-first: x = embedding + pe and h = x + attention, (B, T, E).
  std::vector<float> x, hidden;

  explicit Impl(const TinyTransformerConfig& c, MultiHeadAttention mha) : config(c), attn(std::move(mha)) {}

  // (T, T) bool mask, true above the diagonal (masked out in nn.MultiheadAttention's convention).
  static std::vector<uint8_t> CausalMask(size_t t) {
    std::vector<uint8_t> mask(t * t, 0);
    for (size_t i = 0; i < t; ++i) {
      for (size_t j = i + 1; j < t; ++j) mask[i * t + j] = 1;
    }
    return mask;
  }

  // pe[t, 2i] = sin(t / 10000^(2i/E)), pe[t, 2i+1] = cos(…), evaluated in double like PyTorch's reference.
  std::vector<float> PositionalEncoding(size_t t_len) const {
    std::vector<float> pe(t_len * e);
    for (size_t t = 0; t < t_len; ++t) {
      for (size_t i = 0; 2 * i < e; ++i) {
        const double angle = static_cast<double>(t) / std::pow(10000.0, 2.0 * i / static_cast<double>(e));
        pe[t * e + 2 * i] = static_cast<float>(std::sin(angle));
        if (2 * i + 1 < e) pe[t * e + 2 * i + 1] = static_cast<float>(std::cos(angle));
      }
    }
    return pe;
  }

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

  // Forward to logits (B, T, V); keeps x and hidden; weights (B, H, T, T) when non-null.
  std::vector<float> Logits(const TokensView& tokens, bool requires_grad, Tensor* weights) {
    const size_t b = static_cast<size_t>(tokens.shape[0]), t_len = static_cast<size_t>(tokens.shape[1]);
    const std::vector<float> pe = PositionalEncoding(t_len);
    x.assign(b * t_len * e, 0.0f);
    for (size_t r = 0; r < b * t_len; ++r) {
      const float* emb = embedding.data() + static_cast<size_t>(tokens.data[r]) * e;
      for (size_t j = 0; j < e; ++j) x[r * e + j] = emb[j] + pe[(r % t_len) * e + j];
    }
    const std::vector<uint8_t> mask = CausalMask(t_len);
    MhaForwardOptions options;
    if (config.causal) options.attn_mask = Mask::Bool(mask.data(), {tokens.shape[1], tokens.shape[1]});
    options.need_weights = weights != nullptr;
    options.average_attn_weights = false;
    options.requires_grad = requires_grad;
    const TensorView xv{x.data(), {tokens.shape[0], tokens.shape[1], static_cast<int64_t>(e)}};
    AttentionResult a = attn.Forward(xv, xv, xv, options);
    hidden.resize(x.size());
    for (size_t i = 0; i < x.size(); ++i) hidden[i] = x[i] + a.output.data[i];
    std::vector<float> logits(b * t_len * v);
    for (size_t r = 0; r < b * t_len; ++r) {
      for (size_t k = 0; k < v; ++k) {
        float acc = readout_bias[k];
        for (size_t j = 0; j < e; ++j) acc += hidden[r * e + j] * readout[k * e + j];
        logits[r * v + k] = acc;
      }
    }
    if (weights) *weights = std::move(a.weights);
    return logits;
  }

  LossAndGrad Gradient(const TokensView& tokens, const TokensView& targets) {
    CheckTokens("tokens", tokens, nullptr);
    CheckTokens("targets", targets, &tokens.shape);
    const size_t rows = CheckedNumel("tokens", tokens.shape);
    std::vector<float> logits = Logits(tokens, /*requires_grad=*/true, nullptr);

    // Mean cross-entropy; d logits = (softmax − onehot) / rows, in place.
    double loss = 0.0;
    for (size_t r = 0; r < rows; ++r) {
      float* row = logits.data() + r * v;
      const float max = *std::max_element(row, row + v);
      double sum = 0.0;
      for (size_t k = 0; k < v; ++k) sum += std::exp(static_cast<double>(row[k] - max));
      const size_t target = static_cast<size_t>(targets.data[r]);
      loss += std::log(sum) - (row[target] - max);
      for (size_t k = 0; k < v; ++k) {
        const double p = std::exp(static_cast<double>(row[k] - max)) / sum;
        row[k] = static_cast<float>((p - (k == target ? 1.0 : 0.0)) / static_cast<double>(rows));
      }
    }

    // Readout: dW_r = dlogitsᵀ h, db_r = Σ dlogits, dh = dlogits W_r.
    std::vector<float> g_readout(v * e, 0.0f), g_bias(v, 0.0f), d_hidden(rows * e, 0.0f);
    for (size_t r = 0; r < rows; ++r) {
      for (size_t k = 0; k < v; ++k) {
        const float g = logits[r * v + k];
        g_bias[k] += g;
        for (size_t j = 0; j < e; ++j) {
          g_readout[k * e + j] += g * hidden[r * e + j];
          d_hidden[r * e + j] += g * readout[k * e + j];
        }
      }
    }
    // Attention (query = key = value = x) plus the residual: dx = dh + dq + dk + dv.
    const MhaGradients ga =
        attn.Backward(TensorView{d_hidden.data(), {tokens.shape[0], tokens.shape[1], static_cast<int64_t>(e)}});
    std::vector<float> g_embedding(v * e, 0.0f);
    for (size_t r = 0; r < rows; ++r) {
      float* dst = g_embedding.data() + static_cast<size_t>(tokens.data[r]) * e;
      for (size_t j = 0; j < e; ++j) {
        const size_t i = r * e + j;
        dst[j] += d_hidden[i] + ga.grad_query.data[i] + ga.grad_key.data[i] + ga.grad_value.data[i];
      }
    }
    LossAndGrad result;
    result.loss = static_cast<float>(loss / static_cast<double>(rows));
    const int64_t vi = static_cast<int64_t>(v), ei = static_cast<int64_t>(e);
    result.grad_params[kEmbedding] = Tensor{std::move(g_embedding), {vi, ei}};
    result.grad_params[kInProj] = ga.grad_params.at("in_proj_weight");
    result.grad_params[kOutProj] = ga.grad_params.at("out_proj.weight");
    result.grad_params[kReadout] = Tensor{std::move(g_readout), {vi, ei}};
    result.grad_params[kReadoutBias] = Tensor{std::move(g_bias), {vi}};
    return result;
  }
};

TinyTransformer::TinyTransformer(const TinyTransformerConfig& config, uint64_t seed) {
  if (config.vocab_size <= 0) Fail("vocab_size", "a positive integer", std::to_string(config.vocab_size));
  if (config.embed_dim <= 0 || config.embed_dim % 2 != 0) {
    Fail("embed_dim", "a positive even integer (sin/cos pairs)", std::to_string(config.embed_dim));
  }
  CheckedNumel("vocab_size", {config.vocab_size, config.embed_dim});
  MhaConfig mha_config;
  mha_config.embed_dim = config.embed_dim;
  mha_config.num_heads = config.num_heads;
  mha_config.bias = false;
  mha_config.batch_first = true;
  MultiHeadAttention mha(mha_config, seed);  // validates num_heads and divisibility
  impl_ = std::make_unique<Impl>(config, std::move(mha));
  Impl& m = *impl_;
  m.v = static_cast<size_t>(config.vocab_size);
  m.e = static_cast<size_t>(config.embed_dim);
  m.h = static_cast<size_t>(config.num_heads);
  Rng rng(seed ^ 0x5EEDull);
  m.embedding.resize(m.v * m.e);
  for (float& w : m.embedding) w = rng.Normal(1.0);
  const double bound = 1.0 / std::sqrt(static_cast<double>(m.e));
  m.readout.resize(m.v * m.e);
  for (float& w : m.readout) w = rng.Uniform(bound);
  m.readout_bias.resize(m.v);
  for (float& w : m.readout_bias) w = rng.Uniform(bound);
}

TinyTransformer::~TinyTransformer() = default;
TinyTransformer::TinyTransformer(TinyTransformer&&) noexcept = default;
TinyTransformer& TinyTransformer::operator=(TinyTransformer&&) noexcept = default;

std::vector<std::pair<std::string, Shape>> TinyTransformer::ParameterShapes() const {
  const int64_t v = impl_->config.vocab_size, e = impl_->config.embed_dim;
  return {{kEmbedding, {v, e}}, {kInProj, {3 * e, e}}, {kOutProj, {e, e}}, {kReadout, {v, e}}, {kReadoutBias, {v}}};
}

void TinyTransformer::LoadStateDict(const std::map<std::string, TensorView>& state_dict) {
  CheckStateDict(ParameterShapes(), state_dict);
  Impl& m = *impl_;
  m.attn.LoadStateDict({{"in_proj_weight", state_dict.at(kInProj)}, {"out_proj.weight", state_dict.at(kOutProj)}});
  auto copy = [&](const char* name, std::vector<float>& dst) {
    const TensorView& t = state_dict.at(name);
    dst.assign(t.data, t.data + dst.size());
  };
  copy(kEmbedding, m.embedding);
  copy(kReadout, m.readout);
  copy(kReadoutBias, m.readout_bias);
  m.adam_m.clear();
  m.adam_v.clear();
  m.step = 0;
}

std::map<std::string, Tensor> TinyTransformer::StateDict() const {
  const Impl& m = *impl_;
  std::map<std::string, Tensor> attn = m.attn.StateDict();
  const int64_t v = static_cast<int64_t>(m.v), e = static_cast<int64_t>(m.e);
  return {{kEmbedding, Tensor{m.embedding, {v, e}}},
          {kInProj, std::move(attn.at("in_proj_weight"))},
          {kOutProj, std::move(attn.at("out_proj.weight"))},
          {kReadout, Tensor{m.readout, {v, e}}},
          {kReadoutBias, Tensor{m.readout_bias, {v}}}};
}

TinyTransformer::Output TinyTransformer::Forward(const TokensView& tokens) {
  impl_->CheckTokens("tokens", tokens, nullptr);
  Output out;
  const Shape& s = tokens.shape;
  out.logits =
      Tensor{impl_->Logits(tokens, /*requires_grad=*/false, &out.weights), {s[0], s[1], impl_->config.vocab_size}};
  return out;
}

TinyTransformer::LossAndGrad TinyTransformer::LossAndGradient(const TokensView& tokens, const TokensView& targets) {
  return impl_->Gradient(tokens, targets);
}

float TinyTransformer::TrainStep(const TokensView& tokens, const TokensView& targets, float lr) {
  if (!std::isfinite(lr) || lr <= 0.0f) Fail("lr", "a positive finite learning rate", std::to_string(lr));
  Impl& m = *impl_;
  LossAndGrad lg = m.Gradient(tokens, targets);
  // torch.optim.Adam: m = β1 m + (1−β1) g; v = β2 v + (1−β2) g²;
  // p −= (lr / (1 − β1^t)) · m / (√v / √(1 − β2^t) + eps).
  constexpr float kBeta1 = 0.9f, kBeta2 = 0.999f, kEps = 1e-8f;
  ++m.step;
  const double step_size = lr / (1.0 - std::pow(0.9, static_cast<double>(m.step)));
  const float bias_correction2_sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(0.999, static_cast<double>(m.step))));
  std::map<std::string, Tensor> params = StateDict();
  for (auto& [name, param] : params) {
    const std::vector<float>& g = lg.grad_params.at(name).data;
    std::vector<float>& mom = m.adam_m[name];
    std::vector<float>& vel = m.adam_v[name];
    mom.resize(g.size(), 0.0f);
    vel.resize(g.size(), 0.0f);
    for (size_t i = 0; i < g.size(); ++i) {
      mom[i] = kBeta1 * mom[i] + (1.0f - kBeta1) * g[i];
      vel[i] = kBeta2 * vel[i] + (1.0f - kBeta2) * g[i] * g[i];
      const float denom = std::sqrt(vel[i]) / bias_correction2_sqrt + kEps;
      param.data[i] -= static_cast<float>(step_size) * mom[i] / denom;
    }
  }
  // Write back without resetting Adam's state.
  m.attn.LoadStateDict({{"in_proj_weight", TensorView{params.at(kInProj).data.data(), params.at(kInProj).shape}},
                        {"out_proj.weight", TensorView{params.at(kOutProj).data.data(), params.at(kOutProj).shape}}});
  m.embedding = std::move(params.at(kEmbedding).data);
  m.readout = std::move(params.at(kReadout).data);
  m.readout_bias = std::move(params.at(kReadoutBias).data);
  return lg.loss;
}

}  // namespace attnlab
