// The encoder training session (kind byte 25 mod 32, session.h): a small BERT (post-norm, token types; masked-LM or
// sequence classification, GELU erf or tanh or ReLU) or ViT (pre-norm, image classification, a pooler off the loss
// path sometimes) from a Hugging Face config.json the input picks, its parameters drawn N(0, 0.02); one batch from
// the input (ids sometimes out of range, pixels, a padding mask sometimes with a padded first key, labels sometimes
// out of range or all -100); LossAndGradient, then TrainStep (sometimes with lr 0). Checked: each call against its
// model (rejections are std::invalid_argument naming the argument), and on valid calls a finite loss, finite
// gradients and a finite gradient norm (the inputs and parameters are finite and tame).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "attnlab/transformer.h"
#include "tests/fuzz/session.h"

namespace attnlab_fuzz {
namespace {

// config.json of a small encoder, and the checkpoint names that give its head.
struct EncoderCase {
  std::string json;
  std::vector<std::string> heads;
};

EncoderCase SmallEncoder(uint8_t a, uint8_t b) {
  const int heads = 1 + a % 2, layers = 1 + (a >> 1) % 2;
  const std::string common = "\"hidden_size\": " + std::to_string(4 * heads) +
                             ", \"num_attention_heads\": " + std::to_string(heads) +
                             ", \"num_hidden_layers\": " + std::to_string(layers) + ", \"intermediate_size\": 8";
  const char* act = (b & 3) == 0 ? "gelu" : (b & 3) == 1 ? "gelu_new" : "relu";
  if (a & 4) {
    return {"{\"model_type\": \"vit\", " + common + ", \"image_size\": " + std::to_string(4 + b % 3) +
                ", \"patch_size\": 2, \"num_channels\": " + std::to_string(1 + (b >> 2) % 2) + ", \"hidden_act\": \"" +
                act + "\"}",
            (b & 32) ? std::vector<std::string>{"classifier.weight", "pooler.dense.weight"}
                     : std::vector<std::string>{"classifier.weight"}};
  }
  return {"{\"model_type\": \"bert\", " + common + ", \"vocab_size\": " + std::to_string(5 + b % 8) +
              ", \"max_position_embeddings\": 6, \"type_vocab_size\": 2, \"hidden_act\": \"" + act + "\"}",
          (b & 32) ? std::vector<std::string>{"cls.predictions.bias"} : std::vector<std::string>{"classifier.weight"}};
}

bool AllFinite(const std::vector<float>& v) {
  for (float x : v) {
    if (!std::isfinite(x)) return false;
  }
  return true;
}

}  // namespace

void Session::RunEncoderTrain() {
  const uint8_t a = r_.U8(), b = r_.U8(), k = r_.U8();
  const EncoderCase ec = SmallEncoder(a, b);
  const attnlab::TransformerConfig c = attnlab::ConfigWithHeads(attnlab::ConfigFromHuggingFace(ec.json), ec.heads);
  attnlab::Transformer model(c, /*seed=*/k, /*initialise=*/true);
  const bool vision = c.image_size > 0, mlm = c.task == attnlab::Task::kMaskedLm;
  const int64_t batch = 1 + k % 2, t_len = vision ? c.context_length : 1 + (k >> 1) % 6;
  const bool bad_id = (k >> 4) % 8 == 7, bad_label = (k >> 4) % 8 == 6, none_counted = (k >> 4) % 8 == 5;
  case_ = "encoder training: " + ec.json + (bad_id && !vision ? ", an id = V" : "") +
          (bad_label ? ", a label out of range" : "") + (none_counted ? ", every label -100" : "");
  std::vector<int32_t> ids(vision ? 0 : static_cast<size_t>(batch * t_len));
  for (int32_t& id : ids) id = static_cast<int32_t>(r_.U8() % c.vocab_size);
  if (bad_id && !ids.empty()) ids.back() = static_cast<int32_t>(c.vocab_size);
  const size_t image = static_cast<size_t>(c.num_channels * c.image_size * c.image_size);
  std::vector<float> pixels(vision ? static_cast<size_t>(batch) * image : 0);
  for (float& x : pixels) x = static_cast<float>(r_.U8()) / 128.0f - 1.0f;
  const int64_t limit = mlm ? c.vocab_size : c.num_labels;
  std::vector<int32_t> labels(static_cast<size_t>(mlm ? batch * t_len : batch));
  for (int32_t& y : labels) y = r_.U8() % 3 == 0 ? -100 : static_cast<int32_t>(r_.U8() % limit);
  labels[0] = none_counted ? -100 : bad_label ? static_cast<int32_t>(limit) : 0;
  for (size_t i = 1; none_counted && i < labels.size(); ++i) labels[i] = -100;
  std::vector<uint8_t> mask(static_cast<size_t>(batch * t_len), 1);
  mask[0] = (k & 128) ? 0 : 1;  // (a padded first key sometimes: nothing reads it)
  const attnlab::PixelsView view{pixels.data(), {batch, c.num_channels, c.image_size, c.image_size}};
  attnlab::Transformer::TrainBatch tb;
  if (vision) tb.pixels = &view;
  if (!vision) tb.tokens = attnlab::TokensView{ids.data(), {batch, t_len}};
  tb.options.attention_mask = mask.data();
  tb.options.attention_mask_shape = {batch, t_len};
  tb.labels = attnlab::TokensView{labels.data(), mlm ? attnlab::Shape{batch, t_len} : attnlab::Shape{batch}};
  const bool valid = !(bad_id && !vision) && !bad_label && !none_counted;
  attnlab::Transformer::LossAndGrad g;
  if (!Invoke("Transformer::LossAndGradient (batch)", valid, [&] { g = model.LossAndGradient(tb); })) return;
  if (!std::isfinite(g.loss)) return Finding("encoder training: a non-finite loss");
  for (const auto& entry : g.grad_params) {
    if (!AllFinite(entry.second.data)) return Finding("encoder training: a non-finite gradient of " + entry.first);
  }
  attnlab::Transformer::AdamWOptions o;
  o.lr = (k & 64) ? 0.0f : 1e-3f;
  attnlab::Transformer::StepResult step;
  if (!Invoke("Transformer::TrainStep (batch)", o.lr > 0, [&] { step = model.TrainStep(tb, o); })) return;
  if (!std::isfinite(step.grad_norm)) Finding("encoder training: a non-finite gradient norm");
}

}  // namespace attnlab_fuzz
