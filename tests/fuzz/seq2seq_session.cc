// The encoder–decoder training session (kind byte 23 mod 32, session.h): a small T5 (relu or gated-gelu, tied or
// not) or Marian (post-norm, swish, gelu, gelu_new or relu, scaled embedding or not) configuration from the input,
// seeded weights, then one batch for Transformer::LossAndGradient and TrainStep:
// a source (B, S) with a padding mask (rows may be all padding), labels (B, T) with −100 ignored, decoder inputs
// shifted from the labels or given; S or T of 0, past contextLength, an id = V, a label = V, every label −100 or
// decoder inputs of another shape make it invalid. Checked: each call against its model (rejections are
// std::invalid_argument naming the argument); a valid batch's loss finite and ≥ 0 and every gradient finite, the
// same bits from a second call, and a TrainStep whose loss is the gradient call's.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "attnlab/transformer.h"
#include "tests/fuzz/session.h"

namespace attnlab_fuzz {
namespace {

using attnlab::Transformer;

// A small valid T5 configuration (E = H·hd ≤ 8, V ≤ 16, context ≤ 6).
attnlab::TransformerConfig SmallT5Config(Reader& r) {
  attnlab::TransformerConfig c;
  const uint8_t a = r.U8(), b = r.U8();
  c.arch = "t5";
  c.task = attnlab::Task::kSeq2SeqLm;
  c.vocab_size = 2 + a % 15;
  c.context_length = 1 + (a >> 4) % 6;
  c.num_heads = 1 + b % 2;
  c.head_dim = 2 * (1 + (b >> 1) % 2);
  c.embed_dim = c.num_heads * c.head_dim;
  c.num_layers = 1 + (b >> 2) % 2;
  c.decoder_layers = 1 + (b >> 3) % 2;
  c.hidden_dim = 1 + (b >> 4) % 4;
  c.hidden_act = (b & 64) ? "gated-gelu" : "relu";
  c.tie_embeddings = b & 128;
  c.relative_buckets = 4 + 2 * (r.U8() % 3);
  c.relative_max_distance = c.relative_buckets / 2 + 1 + r.U8() % 8;
  c.pad_token_id = c.decoder_start_token_id = 0;
  c.eos_token_id = 1;
  return c;
}

// A small valid Marian configuration of T5's sizes (E = H·hd, V, context, layers, hidden) and byte m: tied, no
// relative position bias, an activation of Marian's, the embedding scaled or not, one id the pad and start id.
attnlab::TransformerConfig SmallMarianConfig(const attnlab::TransformerConfig& t5, uint8_t m) {
  static const char* const kActivations[] = {"swish", "gelu", "relu", "gelu_new"};
  attnlab::TransformerConfig c = t5;
  c.arch = "marian";
  c.hidden_act = kActivations[m % 4];
  c.tie_embeddings = true;
  c.relative_buckets = c.relative_max_distance = 0;
  c.scale_embedding = m & 4;
  c.pad_token_id = c.decoder_start_token_id = (m >> 3) % c.vocab_size;  // (Marian starts from its pad id)
  c.eos_token_id = 0;
  return c;
}

// T5's configuration, or Marian's of its sizes (the next byte's bit 7).
attnlab::TransformerConfig SmallSeq2SeqConfig(Reader& r) {
  const attnlab::TransformerConfig t5 = SmallT5Config(r);
  const uint8_t m = r.U8();
  return (m & 128) ? SmallMarianConfig(t5, m) : t5;
}

bool AllFinite(const std::vector<float>& x) {
  for (float v : x) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

bool SameBits(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), 4 * x.size()) == 0);
}

}  // namespace

void Session::RunSeq2SeqTrain() {
  const attnlab::TransformerConfig config = SmallSeq2SeqConfig(r_);
  const uint8_t shape = r_.U8(), how = r_.U8();
  const int64_t batch = 1 + shape % 2, s = (shape >> 1) % 8, t = (shape >> 4) % 8, v = config.vocab_size;
  const bool bad_id = (how & 7) == 7, bad_label = (how & 7) == 6, ignored = (how & 7) == 5, given = how & 8,
             bad_given = given && (how & 48) == 48;
  std::vector<int32_t> ids(static_cast<size_t>(batch * s)), labels(static_cast<size_t>(batch * t));
  std::vector<uint8_t> mask(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(r_.U8() % v), mask[i] = r_.U8() % 4 != 0;
  for (int32_t& y : labels) y = r_.U8() % 5 == 0 ? -100 : static_cast<int32_t>(r_.U8() % v);
  if (bad_id && !ids.empty()) ids.back() = static_cast<int32_t>(v);
  if (bad_label && !labels.empty()) labels.front() = static_cast<int32_t>(v);
  if (ignored) labels.assign(labels.size(), -100);
  std::vector<int32_t> decoder(labels.size(), 0);
  for (int32_t& d : decoder) d = static_cast<int32_t>(r_.U8() % v);
  case_ = config.arch + " training: V " + std::to_string(v) + ", E " + std::to_string(config.embed_dim) + ", " +
          config.hidden_act + ", source (" + std::to_string(batch) + ", " + std::to_string(s) + "), labels (" +
          std::to_string(batch) + ", " + std::to_string(t) + ")" + (bad_id ? ", an id = V" : "") +
          (bad_label ? ", a label = V" : "") + (ignored ? ", every label -100" : "") +
          (given ? ", decoder inputs given" : "") + (bad_given ? " of another shape" : "");
  bool counted = false;
  for (int32_t y : labels) counted = counted || y != -100;
  const bool valid = s >= 1 && t >= 1 && s <= config.context_length && t <= config.context_length &&
                     !(bad_id && !ids.empty()) && !bad_label && counted && !bad_given;
  Transformer model(config, /*seed=*/how, /*initialise=*/true);
  Transformer::TrainBatch b;
  b.tokens = {ids.data(), {batch, s}};
  b.labels = {labels.data(), {batch, t}};
  b.options.attention_mask = mask.data();
  b.options.attention_mask_shape = {batch, s};
  if (given) {
    b.options.decoder_input_ids = decoder.data();
    b.options.decoder_input_ids_shape = {batch, bad_given ? t + 1 : t};
  }
  Seq2SeqTrainChecks(model, b, valid);
}

void Session::Seq2SeqTrainChecks(Transformer& model, const Transformer::TrainBatch& b, bool valid) {
  Transformer::LossAndGrad first, second;
  if (!Invoke("Transformer::LossAndGradient(TrainBatch)", valid, [&] { first = model.LossAndGradient(b); })) return;
  if (!std::isfinite(first.loss) || first.loss < 0)
    return Finding("encoder–decoder training: loss not finite and >= 0");
  for (const auto& entry : first.grad_params) {
    if (!AllFinite(entry.second.data))
      return Finding("encoder–decoder training: a gradient not finite: " + entry.first);
  }
  if (!Invoke("Transformer::LossAndGradient(TrainBatch)", true, [&] { second = model.LossAndGradient(b); })) return;
  for (const auto& entry : first.grad_params) {
    if (!SameBits(entry.second.data, second.grad_params[entry.first].data))
      return Finding("encoder–decoder training: a second call gave other gradient bits: " + entry.first);
  }
  Transformer::AdamWOptions options;
  options.lr = 1e-3f;
  Transformer::StepResult step;
  if (!Invoke("Transformer::TrainStep(TrainBatch)", true, [&] { step = model.TrainStep(b, options); })) return;
  if (std::memcmp(&step.loss, &first.loss, 4) != 0)
    Finding("encoder–decoder training: TrainStep's loss differs from the gradient's");
}

}  // namespace attnlab_fuzz
