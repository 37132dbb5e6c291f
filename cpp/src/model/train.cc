// Training a Transformer (attnlab/transformer.h): the forward with saved activations and the backward in one
// dispatch (model_kernels.h, TransformerLossAndGrad), then torch.optim.AdamW over the parameter buffers.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "attnlab/transformer.h"
#include "cpp/src/checks.h"
#include "cpp/src/model/model_kernels.h"
#include "cpp/src/model/seq2seq_train_kernels.h"
#include "cpp/src/model/transformer_impl.h"

namespace attnlab {

// Targets (B, T) like tokens: ids in [0, V) or −100 (ignored), at least one counted; errors name `name`.
void CheckTargets(const TokensView& targets, const Shape& tokens_shape, int64_t vocab, const char* name) {
  if (targets.shape != tokens_shape) {
    Fail(name, "shape " + ShapeString(tokens_shape) + " (the tokens')", "shape " + ShapeString(targets.shape));
  }
  const size_t n = CheckedNumel(name, targets.shape);
  if (n > 0 && !targets.data) Fail(name, "data", "null");
  size_t counted = 0;
  for (size_t i = 0; i < n; ++i) {
    const int32_t t = targets.data[i];
    if (t != -100 && (t < 0 || t >= vocab)) {
      Fail(name, "ids in [0, " + std::to_string(vocab) + ") or -100",
           std::to_string(t) + " at index " + std::to_string(i));
    }
    counted += t != -100;
  }
  if (counted == 0) Fail(name, "at least one target that is not -100", "none");
}

// buffer[0, n), grown when shorter (never shrunk, never zero-filled again).
float* Grown(std::vector<float>& buffer, size_t n) {
  if (buffer.size() < n) buffer.resize(n);
  return buffer.data();
}

float* StepBuffers(TrainState& state, std::vector<BlockArgs>& blocks, size_t kv, size_t logits) {
  for (BlockArgs& b : blocks) {
    b.cache_k = Grown(state.step_k, kv);
    b.cache_v = Grown(state.step_v, kv);
  }
  return Grown(state.logits, logits);
}

// Carves every block's saved activations (BlockSaved's fields, in order), then x_final and h_final, out of the
// state's buffer: zero-filled when the shape (B, T) changes (the forward writes the same elements at each shape).
void LayOutActivations(const ModelArgs& a, TrainState& state, std::vector<BlockSaved>& saved, TrainArgs& t) {
  const size_t rows = a.batch * a.tokens, plane = rows * a.e;
  const BlockArgs& b = a.blocks[0];
  const size_t qk_raw = b.q_norm ? rows * (a.heads + a.kv_heads) * a.head_dim : 0;
  const size_t sizes[10] = {
      plane, plane, rows * b.qkv.out, qk_raw,          a.batch * a.heads * a.tokens * a.tokens, rows * b.o.in,
      plane, plane, rows * b.up.out,  rows * b.down.in};
  size_t per_block = 0;
  for (size_t n : sizes) per_block += n;
  if (state.batch != a.batch || state.tokens != a.tokens) {
    state.activations.assign(per_block * a.num_blocks + 2 * plane, 0.0f);
    state.batch = a.batch;
    state.tokens = a.tokens;
  }
  float* p = state.activations.data();
  saved.resize(a.num_blocks);
  for (BlockSaved& s : saved) {
    float** fields[10] = {&s.x_in, &s.h1, &s.qkv, &s.qk_raw, &s.weights, &s.ctx, &s.x_mid, &s.h2, &s.up, &s.act};
    for (size_t i = 0; i < 10; ++i) {
      *fields[i] = sizes[i] ? p : nullptr;
      p += sizes[i];
    }
  }
  t.saved = saved.data();
  t.x_final = p;
  t.h_final = p + plane;
}

namespace {

// Σ g² over every gradient buffer, in double.
double GradNorm(Weights& grads) {
  double sum = 0;
  grads.ForEachBuffer([&](std::vector<float>& g, bool) {
    for (float x : g) sum += static_cast<double>(x) * x;
  });
  return std::sqrt(sum);
}

void CheckAdamW(const Transformer::AdamWOptions& o) {
  auto check = [](const char* name, float v, bool ok, const char* expected) {
    if (!ok || !std::isfinite(v)) Fail(name, expected, std::to_string(v));
  };
  check("lr", o.lr, o.lr > 0, "a finite number > 0");
  check("weightDecay", o.weight_decay, o.weight_decay >= 0, "a finite number >= 0");
  check("betas", o.beta1, o.beta1 >= 0 && o.beta1 < 1, "[beta1, beta2] in [0, 1)");
  check("betas", o.beta2, o.beta2 >= 0 && o.beta2 < 1, "[beta1, beta2] in [0, 1)");
  check("eps", o.eps, o.eps >= 0, "a finite number >= 0");
  check("clipGradNorm", o.clip_grad_norm, o.clip_grad_norm >= 0, "a finite number > 0, or none");
}

// One torch.optim.AdamW update (PyTorch 1.13's single-tensor rule, in float) of param from grad.
void AdamWUpdate(std::vector<float>& param, const std::vector<float>& grad, std::vector<float>& m,
                 std::vector<float>& v, bool decay, const Transformer::AdamWOptions& o, int64_t step) {
  const double bc1 = 1.0 - std::pow(static_cast<double>(o.beta1), static_cast<double>(step));
  const double bc2 = 1.0 - std::pow(static_cast<double>(o.beta2), static_cast<double>(step));
  const float keep = static_cast<float>(1.0 - static_cast<double>(o.lr) * o.weight_decay);
  const float step_size = static_cast<float>(static_cast<double>(o.lr) / bc1);
  const float bc2_sqrt = static_cast<float>(std::sqrt(bc2));
  for (size_t i = 0; i < param.size(); ++i) {
    if (decay) param[i] *= keep;
    m[i] = m[i] * o.beta1 + grad[i] * (1.0f - o.beta1);
    v[i] = v[i] * o.beta2 + (1.0f - o.beta2) * grad[i] * grad[i];
    const float denom = std::sqrt(v[i]) / bc2_sqrt + o.eps;
    param[i] += -step_size * m[i] / denom;
  }
}

// A tensor of `shape`, zero-filled; its data.
float* Shaped(Tensor& x, Shape shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  x.data.assign(n, 0.0f);
  x.shape = std::move(shape);
  return x.data.data();
}

}  // namespace

void SetObjective(const Transformer::GradientOptions& o, const GradientShape& s, TrainArgs& t,
                  Transformer::LossAndGrad* extra) {
  using Objective = Transformer::Objective;
  t.objective = o.objective == Objective::kLogit                 ? TrainObjective::kLogit
                : o.objective == Objective::kRowMeanCrossEntropy ? TrainObjective::kRowMeans
                                                                 : TrainObjective::kMean;
  if (o.objective == Objective::kLogit) {
    CheckLogitIndex(o.position, o.target, s.logit_rows, s.logit_width);
    t.logit_position = static_cast<size_t>(o.position);
    t.logit_target = static_cast<size_t>(o.target);
  }
  const int64_t b = static_cast<int64_t>(s.batch), rows = static_cast<int64_t>(s.input_rows);
  if (o.head_mask_gradient && extra) t.head_mask_grad = Shaped(extra->head_mask_grad, {b, s.layers, s.heads});
  if (o.input_gradient && extra) t.input_grad = Shaped(extra->input_grad, {b, rows, s.embed});
}

void SaveInput(const BlockSaved& first, Transformer::LossAndGrad& extra) {
  extra.input.shape = extra.input_grad.shape;
  extra.input.data.assign(first.x_in, first.x_in + extra.input_grad.data.size());
}

void PrepareSeq2SeqAnalysis(const Transformer::GradientOptions& o, const TransformerConfig& c, size_t batch,
                            size_t s_len, size_t t_len, std::vector<BlockGrads>& blocks, std::vector<CrossGrads>& cross,
                            Seq2SeqTrainArgs& t, Transformer::LossAndGrad& extra) {
  const size_t enc_layers = static_cast<size_t>(c.num_layers), dec_layers = static_cast<size_t>(c.decoder_layers);
  blocks.assign(enc_layers + dec_layers, BlockGrads{});
  cross.assign(dec_layers, CrossGrads{});
  t.enc.grads = blocks.data();
  t.dec.grads = blocks.data() + enc_layers;
  t.cross = cross.data();
  SetObjective(o, {batch, t_len, static_cast<size_t>(c.vocab_size), s_len, c.num_layers, c.num_heads, c.embed_dim},
               t.enc, &extra);
  t.dec.objective = t.enc.objective;
  t.dec.logit_position = t.enc.logit_position;
  t.dec.logit_target = t.enc.logit_target;
  if (!o.head_mask_gradient) return;
  const int64_t b = static_cast<int64_t>(batch);
  t.dec.head_mask_grad = Shaped(extra.decoder_head_mask_grad, {b, c.decoder_layers, c.num_heads});
  t.cross_head_mask_grad = Shaped(extra.cross_head_mask_grad, {b, c.decoder_layers, c.num_heads});
}

// The kernels' view of the gradient buffers g (zero-filled here: the backward adds into them), one BlockGrads per
// block; g null: none (every pointer null, the backward forms no parameter gradient).
void PointAtGradients(Weights* gradients, std::vector<BlockGrads>& blocks, TrainArgs& t) {
  t.grads = blocks.data();
  if (!gradients) return;
  Weights& g = *gradients;
  g.ForEachBuffer([](std::vector<float>& b, bool) { std::fill(b.begin(), b.end(), 0.0f); });
  for (size_t l = 0; l < blocks.size(); ++l) blocks[l] = g.GradsOf(l);
  t.embed = g.embed.data.data();
  t.positions = g.positions.empty() ? nullptr : g.positions.data();
  t.norm_f_weight = g.norm_f_weight.empty() ? nullptr : g.norm_f_weight.data();
  t.norm_f_bias = g.norm_f_bias.empty() ? nullptr : g.norm_f_bias.data();
  t.head = g.head.data.empty() ? nullptr : g.head.data.data();
  t.head_bias = g.head_bias.empty() ? nullptr : g.head_bias.data();
}

double Transformer::ComputeGradients(const TokensView& tokens, const TokensView& targets,
                                     const GradientOptions& options, LossAndGrad* extra, bool parameter_gradients) {
  if (impl_->config.task != Task::kCausalLm) {
    Fail("task", "'causal-lm' for training (encoders train in a later step)", "an encoder");
  }
  impl_->params.Widen();  // (training updates float32 weights)
  const TransformerConfig& c = impl_->config;
  const auto [batch, t_len] = CheckTokens(tokens, c.vocab_size);
  if (options.objective != Objective::kLogit) CheckTargets(targets, tokens.shape, c.vocab_size);
  if (batch * t_len == 0) Fail("tokens", "at least one token", "shape " + ShapeString(tokens.shape));
  if (t_len > static_cast<size_t>(c.context_length)) {
    Fail("tokens", "at most " + std::to_string(c.context_length) + " positions (contextLength)", std::to_string(t_len));
  }
  if (!impl_->train) impl_->train = std::make_unique<TrainState>();
  TrainState& state = *impl_->train;
  if (parameter_gradients && !state.grads) state.grads = std::make_unique<Weights>(c, false);

  CallArgs call;
  PrepareCall(tokens, 0, t_len, call);
  const size_t kv = batch * impl_->z.kv_heads * t_len * impl_->z.head_dim;
  call.a.logits = StepBuffers(state, call.blocks, kv, batch * t_len * impl_->z.vocab);
  TrainArgs t;
  std::vector<BlockSaved> saved;
  LayOutActivations(call.a, state, saved, t);
  std::vector<BlockGrads> grads(call.blocks.size());  // (all null: no parameter gradient)
  PointAtGradients(parameter_gradients ? state.grads.get() : nullptr, grads, t);
  t.targets = targets.data;
  SetObjective(options,
               {batch, t_len, static_cast<size_t>(c.vocab_size), t_len, c.num_layers, c.num_heads, c.embed_dim}, t,
               extra);
  TransformerLossAndGrad(call.a, t);
  if (extra && options.input_gradient) SaveInput(saved[0], *extra);
  return t.loss;
}

Transformer::LossAndGrad Transformer::LossAndGradient(const TokensView& tokens, const TokensView& targets) {
  return LossAndGradient(tokens, targets, GradientOptions{});
}

Transformer::LossAndGrad Transformer::LossAndGradient(const TokensView& tokens, const TokensView& targets,
                                                      const GradientOptions& options) {
  LossAndGrad out;
  out.loss = static_cast<float>(ComputeGradients(tokens, targets, options, &out, /*parameter_gradients=*/true));
  SaveGradients(out);
  return out;
}

void Transformer::SaveGradients(LossAndGrad& out) const {
  const std::vector<const std::vector<float>*> off = OffLossPath(impl_->config, impl_->params);
  auto is_off = [&](const std::vector<float>& b) { return std::find(off.begin(), off.end(), &b) != off.end(); };
  for (const ParamSpec& s : impl_->specs) {
    const bool pooler = s.slot == Slot::kPooler || s.slot == Slot::kPoolerBias;
    if ((pooler && is_off(impl_->params.pooler_bias)) ||
        (s.slot == Slot::kHeadBias && is_off(impl_->params.head_bias))) {
      continue;  // (no gradient)
    }
    Tensor& g = out.grad_params[s.name];
    g.shape = s.shape;
    size_t n = 1;
    for (int64_t d : s.shape) n *= static_cast<size_t>(d);
    g.data.resize(n);
    impl_->train->grads->Save(s, g.data.data());
  }
}

Transformer::StepResult Transformer::TrainStep(const TokensView& tokens, const TokensView& targets,
                                               const AdamWOptions& options) {
  CheckAdamW(options);
  const double loss = ComputeGradients(tokens, targets, GradientOptions{}, nullptr, true);
  return AdamWStep(impl_->config, impl_->params, *impl_->train, loss, options);
}

Transformer::StepResult AdamWStep(const TransformerConfig& c, Weights& params, TrainState& state, double loss,
                                  const Transformer::AdamWOptions& options) {
  Transformer::StepResult result;
  result.loss = static_cast<float>(loss);
  if (!state.adam_m) {  // (AdamW's moments: made by the first step, zero)
    state.adam_m = std::make_unique<Weights>(c, false);
    state.adam_v = std::make_unique<Weights>(c, false);
  }
  const double norm = GradNorm(*state.grads);
  result.grad_norm = static_cast<float>(norm);
  if (options.clip_grad_norm > 0) {  // (torch: the coefficient clamped at 1 multiplies every gradient)
    const float coef = static_cast<float>(std::min(1.0, options.clip_grad_norm / (norm + 1e-6)));
    state.grads->ForEachBuffer([&](std::vector<float>& g, bool) {
      for (float& x : g) x *= coef;
    });
  }
  ++state.step;
  // The four Weights visit their buffers in the same order; tensors off the loss path have no gradient (PyTorch's
  // None): AdamW skips them, weight decay included.
  std::vector<std::vector<float>*> all, grads, ms, vs;
  std::vector<bool> decay;
  params.ForEachBuffer([&](std::vector<float>& b, bool matrix) {
    all.push_back(&b);
    decay.push_back(matrix);
  });
  state.grads->ForEachBuffer([&](std::vector<float>& b, bool) { grads.push_back(&b); });
  state.adam_m->ForEachBuffer([&](std::vector<float>& b, bool) { ms.push_back(&b); });
  state.adam_v->ForEachBuffer([&](std::vector<float>& b, bool) { vs.push_back(&b); });
  const std::vector<const std::vector<float>*> frozen = OffLossPath(c, params);
  for (size_t i = 0; i < all.size(); ++i) {
    if (std::find(frozen.begin(), frozen.end(), all[i]) != frozen.end()) continue;
    AdamWUpdate(*all[i], *grads[i], *ms[i], *vs[i], decay[i], options, state.step);
  }
  return result;
}

std::vector<const std::vector<float>*> OffLossPath(const TransformerConfig& c, const Weights& w) {
  std::vector<const std::vector<float>*> off;
  if (c.decoder_layers > 0 && !w.head_bias.empty()) off.push_back(&w.head_bias);  // (a buffer: final_logits_bias)
  const bool pooled = c.task == Task::kSequenceClassification && !c.classifier_dense;
  if (c.pooler && !pooled) off.insert(off.end(), {&w.pooler.data, &w.pooler_bias});
  return off;
}

// A training batch's forward and backward into the state's gradients, by kind: an encoder–decoder's
// (seq2seq_train.cc) or an encoder's (encoder_train.cc); returns the loss.
double Transformer::BatchGradients(const TrainBatch& batch) {
  const GradientOptions o;
  return impl_->config.decoder_layers > 0 ? Seq2SeqGradients(batch, o, nullptr) : EncoderGradients(batch, o, nullptr);
}

Transformer::LossAndGrad Transformer::LossAndGradient(const TrainBatch& batch) {
  LossAndGrad out;
  out.loss = static_cast<float>(BatchGradients(batch));
  SaveGradients(out);
  return out;
}

Transformer::StepResult Transformer::TrainStep(const TrainBatch& batch, const AdamWOptions& options) {
  CheckAdamW(options);
  const double loss = BatchGradients(batch);
  return AdamWStep(impl_->config, impl_->params, *impl_->train, loss, options);
}

}  // namespace attnlab
