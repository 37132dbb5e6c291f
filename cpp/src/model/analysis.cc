// Looking past the weights (attnlab/transformer.h, docs/api.md): head importance by the head mask's gradient (one
// backward, Transformer::LossAndGradient's head_mask_gradient) or by ablation (a forward per head, zeroed by the
// head mask or replaced by its mean output through head_values), and attribution of one logit to block 0's inputs
// by the input gradient or by occlusion (forwards with one position's input zeroed).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/transformer.h"
#include "cpp/src/checks.h"
#include "cpp/src/model/transformer_impl.h"

namespace attnlab {

void CheckLogitIndex(int64_t position, int64_t target, size_t t_len, int64_t vocab) {
  if (position < 0 || position >= static_cast<int64_t>(t_len)) {
    Fail("position", "a position in [0, " + std::to_string(t_len) + ")", std::to_string(position));
  }
  if (target < 0 || target >= vocab) {
    Fail("target", "an id in [0, " + std::to_string(vocab) + ")", std::to_string(target));
  }
}

// Rows (of B) with at least one target.
size_t RowsWithTargets(const TokensView& targets, size_t batch, size_t t_len) {
  size_t rows = 0;
  for (size_t b = 0; b < batch; ++b) {
    rows += std::any_of(targets.data + b * t_len, targets.data + (b + 1) * t_len, [](int32_t t) { return t != -100; });
  }
  return rows;
}

double RowMeanLoss(const Tensor& logits, const TokensView& targets, size_t batch, size_t t_len) {
  const size_t v = static_cast<size_t>(logits.shape.back());
  double total = 0;
  for (size_t b = 0; b < batch; ++b) {
    double sum = 0;
    size_t counted = 0;
    for (size_t i = b * t_len; i < (b + 1) * t_len; ++i) {
      if (targets.data[i] == -100) continue;
      const float* row = logits.data.data() + i * v;
      const double max = *std::max_element(row, row + v);
      double z = 0;
      for (size_t j = 0; j < v; ++j) z += std::exp(row[j] - max);
      sum += std::log(z) + max - row[targets.data[i]];
      ++counted;
    }
    if (counted) total += sum / static_cast<double>(counted);
  }
  return total / static_cast<double>(RowsWithTargets(targets, batch, t_len));
}

std::vector<float> HeadColumns(const Tensor& layer, size_t h) {
  const size_t heads = static_cast<size_t>(layer.shape[2]), hd = static_cast<size_t>(layer.shape[3]);
  const size_t rows = layer.data.size() / (heads * hd);
  std::vector<float> out;
  for (size_t r = 0; r < rows; ++r) {
    const float* src = layer.data.data() + (r * heads + h) * hd;
    out.insert(out.end(), src, src + hd);
  }
  return out;
}

namespace {

// A decoder's tokens (B, T), checked: {B, T} (`what` names the method in the error for an encoder).
std::pair<size_t, size_t> CheckDecoderTokens(const TransformerConfig& c, const TokensView& tokens, const char* what) {
  if (c.task != Task::kCausalLm) Fail("task", std::string("'causal-lm' for ") + what + " (a decoder)", "an encoder");
  return CheckTokens(tokens, c.vocab_size);
}

}  // namespace

std::vector<std::vector<float>> MeanHeadOutputs(const std::vector<Tensor>& head_outputs, const uint8_t* keep) {
  std::vector<std::vector<float>> means;
  for (const Tensor& layer : head_outputs) {
    const size_t heads = static_cast<size_t>(layer.shape[2]), hd = static_cast<size_t>(layer.shape[3]);
    const size_t rows = layer.data.size() / (heads * hd);
    const size_t kept = keep ? static_cast<size_t>(rows - std::count(keep, keep + rows, uint8_t{0})) : rows;
    for (size_t h = 0; h < heads; ++h) {
      const std::vector<float> values = HeadColumns(layer, h);
      std::vector<double> mean(hd, 0.0);
      for (size_t i = 0; i < values.size(); ++i) mean[i % hd] += keep && !keep[i / hd] ? 0.0 : values[i];
      std::vector<float>& m = means.emplace_back(rows * hd);
      for (size_t i = 0; i < m.size(); ++i)
        m[i] = static_cast<float>(mean[i % hd] / static_cast<double>(std::max<size_t>(kept, 1)));
    }
  }
  return means;
}

Transformer::HeadImportanceResult Transformer::HeadImportance(const TokensView& tokens, const TokensView& targets,
                                                              ImportanceMethod method, Ablation ablation) {
  const TransformerConfig& c = impl_->config;
  const auto [batch, t_len] = CheckDecoderTokens(c, tokens, "head importance");
  CheckTargets(targets, tokens.shape, c.vocab_size);
  const size_t layers = static_cast<size_t>(c.num_layers), heads = static_cast<size_t>(c.num_heads);
  HeadImportanceResult result;
  result.importance.shape = {c.num_layers, c.num_heads};
  result.importance.data.assign(layers * heads, 0.0f);
  if (method == ImportanceMethod::kGradient) {
    GradientOptions o;
    o.objective = Objective::kRowMeanCrossEntropy;
    o.head_mask_gradient = true;
    LossAndGrad g;
    result.loss = static_cast<float>(ComputeGradients(tokens, targets, o, &g, /*parameter_gradients=*/false));
    const double rows = static_cast<double>(RowsWithTargets(targets, batch, t_len));
    for (size_t i = 0; i < layers * heads; ++i) {
      double sum = 0;
      for (size_t b = 0; b < batch; ++b)
        sum += std::abs(static_cast<double>(g.head_mask_grad.data[b * layers * heads + i]));
      result.importance.data[i] = static_cast<float>(sum / rows);
    }
    return result;
  }
  TransformerForwardOptions base;
  base.output_head_outputs = ablation == Ablation::kMean;
  const TransformerOutput clean = Forward(tokens, base);
  const double loss = RowMeanLoss(clean.logits, targets, batch, t_len);
  result.loss = static_cast<float>(loss);
  const std::vector<std::vector<float>> means =
      ablation == Ablation::kMean ? MeanHeadOutputs(clean.head_outputs, nullptr) : std::vector<std::vector<float>>{};
  std::vector<float> mask(layers * heads, 1.0f);
  for (size_t i = 0; i < layers * heads; ++i) {
    TransformerForwardOptions o;
    if (ablation == Ablation::kZero) {
      mask[i] = 0.0f;
      o.head_mask = mask.data();
      o.head_mask_shape = {c.num_layers, c.num_heads};
    } else {
      o.head_values.assign(layers * heads, nullptr);
      o.head_values[i] = means[i].data();
    }
    const TransformerOutput ablated = Forward(tokens, o);
    mask[i] = 1.0f;
    result.importance.data[i] = static_cast<float>(RowMeanLoss(ablated.logits, targets, batch, t_len) - loss);
  }
  return result;
}

namespace {

// The logit of `target` at `position` of each row of a forward that occludes, per row, occlude[row].
std::vector<float> OccludedLogits(Transformer& model, const std::vector<int32_t>& ids, size_t t_len, int64_t position,
                                  int64_t target, const std::vector<int64_t>& occlude) {
  const size_t rows = occlude.size();
  std::vector<int32_t> batch_ids(rows * t_len);
  for (size_t r = 0; r < rows; ++r) std::copy(ids.begin(), ids.end(), batch_ids.begin() + r * t_len);
  TransformerForwardOptions o;
  o.occlude = occlude.data();
  o.occlude_shape = {static_cast<int64_t>(rows)};
  const int64_t v = model.config().vocab_size;
  const TokensView tokens{batch_ids.data(), {static_cast<int64_t>(rows), static_cast<int64_t>(t_len)}};
  const TransformerOutput out = model.Forward(tokens, o);
  std::vector<float> logits(rows);
  for (size_t r = 0; r < rows; ++r) {
    logits[r] = out.logits.data[(r * t_len + static_cast<size_t>(position)) * v + target];
  }
  return logits;
}

// Occlusion: the clean logit minus the logit with each position occluded, a chunk of positions per forward (each
// chunk's row 0 is the clean one).
std::vector<float> Occlusion(Transformer& model, const std::vector<int32_t>& ids, int64_t position, int64_t target) {
  constexpr size_t kChunk = 16;
  const size_t t_len = ids.size();
  std::vector<float> result(t_len, 0.0f);
  for (size_t j0 = 0; j0 < t_len; j0 += kChunk) {
    std::vector<int64_t> occlude{-1};
    for (size_t j = j0; j < std::min(t_len, j0 + kChunk); ++j) occlude.push_back(static_cast<int64_t>(j));
    const std::vector<float> logits = OccludedLogits(model, ids, t_len, position, target, occlude);
    for (size_t k = 1; k < occlude.size(); ++k) result[j0 + k - 1] = logits[0] - logits[k];
  }
  return result;
}

}  // namespace

Tensor Transformer::Attribution(const TokensView& tokens, int64_t position, int64_t target, AttributionMethod method) {
  const TransformerConfig& c = impl_->config;
  const auto [batch, t_len] = CheckDecoderTokens(c, tokens, "attribution");
  if (batch != 1) Fail("tokens", "shape [1, T]", "shape " + ShapeString(tokens.shape));
  CheckLogitIndex(position, target, t_len, c.vocab_size);
  // (causal: the logit at `position` sees positions ≤ position only; the rest get exactly 0)
  const size_t used = c.causal ? static_cast<size_t>(position) + 1 : t_len;
  const std::vector<int32_t> ids(tokens.data, tokens.data + used);
  Tensor result;
  result.shape = {static_cast<int64_t>(t_len)};
  result.data.assign(t_len, 0.0f);
  std::vector<float> values;
  if (method == AttributionMethod::kOcclusion) {
    values = Occlusion(*this, ids, position, target);
  } else {
    GradientOptions o;
    o.objective = Objective::kLogit;
    o.position = position;
    o.target = target;
    o.input_gradient = true;
    LossAndGrad g;
    ComputeGradients(TokensView{ids.data(), {1, static_cast<int64_t>(used)}}, TokensView{}, o, &g,
                     /*parameter_gradients=*/false);
    const size_t e = static_cast<size_t>(c.embed_dim);
    for (size_t j = 0; j < used; ++j) {
      double sum = 0;
      for (size_t f = j * e; f < (j + 1) * e; ++f) {
        const double d = g.input_grad.data[f];
        sum += method == AttributionMethod::kGradient ? d * d : d * g.input.data[f];
      }
      values.push_back(static_cast<float>(method == AttributionMethod::kGradient ? std::sqrt(sum) : sum));
    }
  }
  std::copy(values.begin(), values.end(), result.data.begin());
  return result;
}

Transformer::PatchingResult Transformer::PatchHeads(const TokensView& clean, const TokensView& corrupted,
                                                    int64_t position, int64_t target) {
  const TransformerConfig& c = impl_->config;
  const auto [batch, t_len] = CheckDecoderTokens(c, clean, "activation patching");
  if (batch != 1) Fail("clean", "shape [1, T]", "shape " + ShapeString(clean.shape));
  CheckTokens(corrupted, c.vocab_size);
  if (corrupted.shape != clean.shape) {
    Fail("corrupted", "the shape of clean, " + ShapeString(clean.shape), "shape " + ShapeString(corrupted.shape));
  }
  CheckLogitIndex(position, target, t_len, c.vocab_size);
  const size_t at = static_cast<size_t>(position) * static_cast<size_t>(c.vocab_size) + static_cast<size_t>(target);
  TransformerForwardOptions o;
  o.output_head_outputs = true;
  const TransformerOutput source = Forward(clean, o);
  PatchingResult result;
  result.clean_logit = source.logits.data[at];
  result.corrupted_logit = Forward(corrupted, {}).logits.data[at];
  const size_t layers = static_cast<size_t>(c.num_layers), heads = static_cast<size_t>(c.num_heads);
  result.effect.shape = {c.num_layers, c.num_heads};
  for (size_t i = 0; i < layers * heads; ++i) {
    const std::vector<float> values = HeadColumns(source.head_outputs[i / heads], i % heads);
    TransformerForwardOptions patch;
    patch.head_values.assign(layers * heads, nullptr);
    patch.head_values[i] = values.data();
    result.effect.data.push_back(Forward(corrupted, patch).logits.data[at] - result.corrupted_logit);
  }
  return result;
}

}  // namespace attnlab
