// Looking past the weights (attnlab/transformer.h, docs/api.md): head importance by the head mask's gradient (one
// backward, Transformer::LossAndGradient's head_mask_gradient) or by ablation (a forward per head, zeroed by the
// head mask or replaced by its mean output through head_values), and attribution of one logit to block 0's inputs
// by the input gradient or by occlusion (forwards with one position's input zeroed).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "attnlab/transformer.h"
#include "cpp/src/checks.h"
#include "cpp/src/model/transformer_impl.h"

namespace attnlab {
namespace {

// Rows (of B) with at least one target.
size_t RowsWithTargets(const TokensView& targets, size_t batch, size_t t_len) {
  size_t rows = 0;
  for (size_t b = 0; b < batch; ++b) {
    rows += std::any_of(targets.data + b * t_len, targets.data + (b + 1) * t_len, [](int32_t t) { return t != -100; });
  }
  return rows;
}

// The mean over rows with a target of each row's mean cross-entropy of logits (B, T, V), in double.
double RowMeanLoss(const Tensor& logits, const TokensView& targets, size_t batch, size_t t_len) {
  const size_t v = static_cast<size_t>(logits.shape[2]);
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

// Each head's output averaged over all B·T positions, repeated at every position: L·H buffers (B, T, hd).
std::vector<std::vector<float>> MeanHeadOutputs(const TransformerOutput& out, size_t rows, size_t heads, size_t hd) {
  std::vector<std::vector<float>> means;
  for (const Tensor& layer : out.head_outputs) {
    for (size_t h = 0; h < heads; ++h) {
      std::vector<double> mean(hd, 0.0);
      for (size_t r = 0; r < rows; ++r) {
        for (size_t d = 0; d < hd; ++d) mean[d] += layer.data[(r * heads + h) * hd + d];
      }
      std::vector<float>& m = means.emplace_back(rows * hd);
      for (size_t i = 0; i < m.size(); ++i) m[i] = static_cast<float>(mean[i % hd] / static_cast<double>(rows));
    }
  }
  return means;
}

}  // namespace

Transformer::HeadImportanceResult Transformer::HeadImportance(const TokensView& tokens, const TokensView& targets,
                                                              ImportanceMethod method, Ablation ablation) {
  const TransformerConfig& c = impl_->config;
  if (c.task != Task::kCausalLm) Fail("task", "'causal-lm' for head importance (a decoder)", "an encoder");
  const auto [batch, t_len] = CheckTokens(tokens, c.vocab_size);
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
    result.loss = static_cast<float>(ComputeGradients(tokens, targets, o, &g));
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
  const std::vector<std::vector<float>> means = ablation == Ablation::kMean
                                                    ? MeanHeadOutputs(clean, batch * t_len, heads, impl_->z.head_dim)
                                                    : std::vector<std::vector<float>>{};
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
  if (c.task != Task::kCausalLm) Fail("task", "'causal-lm' for attribution (a decoder)", "an encoder");
  const auto [batch, t_len] = CheckTokens(tokens, c.vocab_size);
  if (batch != 1) Fail("tokens", "shape [1, T]", "shape " + ShapeString(tokens.shape));
  if (position < 0 || position >= static_cast<int64_t>(t_len)) {
    Fail("position", "a position in [0, " + std::to_string(t_len) + ")", std::to_string(position));
  }
  if (target < 0 || target >= c.vocab_size) {
    Fail("target", "an id in [0, " + std::to_string(c.vocab_size) + ")", std::to_string(target));
  }
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
    ComputeGradients(TokensView{ids.data(), {1, static_cast<int64_t>(used)}}, TokensView{}, o, &g);
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

}  // namespace attnlab
