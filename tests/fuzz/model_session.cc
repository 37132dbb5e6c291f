// The whole-model session (kind byte 21 mod 32, session.h): a small GPT-2 or Llama-family configuration from the
// input, sometimes with one field made invalid; its checkpoint loaded tensor by tensor (the names of
// ParameterShapes, sometimes one wrong shape, one unknown or one missing name) as F16/BF16 bits (LoadTensor16) into a
// model of that 16-bit storage and as their float32 values (LoadTensor) into a float32 model; then a Forward of
// 0-3 tokens per row (ids sometimes out of range), every attention and hidden state returned. Checked: each call
// against its model (rejections are std::invalid_argument naming the argument), and the two storages' results
// equal bit for bit (NaN for NaN), as the 16-bit GEMM promises.
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

// F16 or BF16 bits to float32, exactly.
float FromBits(uint16_t h, bool bf16) {
  if (bf16) {
    const uint32_t x = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
  }
  const int e = (h >> 10) & 31, m = h & 1023;
  const float mag = e == 31 ? (m ? NAN : INFINITY) : e ? std::ldexp(1024.0f + m, e - 25) : std::ldexp(float(m), -24);
  return (h & 0x8000) ? -mag : mag;
}

// A small valid configuration (E = H·hd ≤ 24, V ≤ 16, context ≤ 8).
attnlab::TransformerConfig SmallConfig(Reader& r) {
  attnlab::TransformerConfig c;
  const uint8_t a = r.U8(), b = r.U8();
  c.arch = (a & 1) ? "llama" : "gpt2";
  c.vocab_size = 1 + (a >> 1) % 16;
  c.context_length = 1 + (a >> 5) % 8;
  c.num_heads = 1 + b % 3;
  c.head_dim = 2 * (1 + (b >> 2) % 2);
  c.embed_dim = c.num_heads * c.head_dim;
  c.num_layers = 1 + (b >> 3) % 2;
  if (c.arch == "gpt2") {
    c.head_dim = 0;
    return c;
  }
  c.num_kv_heads = (b & 32) ? 1 : c.num_heads;
  c.hidden_dim = 1 + (b >> 6) % 4;
  const uint8_t d = r.U8();
  c.tie_embeddings = d & 1;
  c.attention_bias = static_cast<attnlab::AttentionBias>((d >> 1) % 3);
  c.sliding_window = (d >> 3) % 4;
  if ((d & 32) && c.attention_bias != attnlab::AttentionBias::kQkv && c.sliding_window == 0) c.arch = "qwen3";
  return c;
}

}  // namespace

void Session::RunModel() {
  attnlab::TransformerConfig config = SmallConfig(r_);
  const uint8_t how = r_.U8();
  const bool bf16 = how & 1, bad_config = (how & 14) == 14;
  if (bad_config) config.num_heads = config.embed_dim + 1;  // does not divide embedDim
  case_ = "model: " + config.arch + " V " + std::to_string(config.vocab_size) + ", E " +
          std::to_string(config.embed_dim) + ", H " + std::to_string(config.num_heads) + ", L " +
          std::to_string(config.num_layers) + (bf16 ? ", BF16" : ", F16") +
          (bad_config ? ", numHeads not dividing embedDim" : "");
  const attnlab::WeightStorage storage = bf16 ? attnlab::WeightStorage::kBF16 : attnlab::WeightStorage::kF16;
  std::vector<Transformer> models;
  if (!Invoke("Transformer", !bad_config, [&] {
        models.emplace_back(config, 0, false, storage);
        models.emplace_back(config, 0, false);
      })) {
    return;
  }
  if (!ModelLoad(models[0], models[1], bf16)) return;
  ModelForward(models[0], models[1]);
}

bool Session::ModelLoad(Transformer& narrow, Transformer& wide, bool bf16) {
  const uint8_t mistake = r_.U8() % 16;  // 1: a wrong shape, 2: an unknown name, 3: a missing one, else none
  std::vector<std::pair<std::string, Shape>> shapes = wide.ParameterShapes();
  if (mistake == 1) shapes.front().second.back() += 1;
  if (mistake == 2) shapes.emplace_back("h.99.unknown.weight", Shape{1});
  if (mistake == 3) shapes.pop_back();
  case_ += mistake >= 1 && mistake <= 3 ? ", a bad state dict (" + std::to_string(mistake) + ")" : "";
  if (!Invoke("CheckStateDict", mistake < 1 || mistake > 3, [&] { narrow.CheckStateDict(shapes); })) return false;
  for (const auto& entry : shapes) {
    const std::string& name = entry.first;  // (not a structured binding: lambdas capture it)
    const Shape& shape = entry.second;
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    std::vector<uint16_t> bits(n);
    std::vector<float> values(n);
    for (size_t i = 0; i < n; ++i) {
      // mostly modest values (|x| < 2), sometimes any pattern (inf, NaN, subnormal, huge)
      const uint8_t k = r_.U8();
      bits[i] = (k & 7) == 7
                    ? static_cast<uint16_t>(r_.U8() | (r_.U8() << 8))
                    : static_cast<uint16_t>((k & 0x80) << 8 | (bf16 ? 0x3C00 + (k & 0x7F) : 0x3000 + (k << 4)));
      values[i] = FromBits(bits[i], bf16);
    }
    const attnlab::WeightStorage dtype = bf16 ? attnlab::WeightStorage::kBF16 : attnlab::WeightStorage::kF16;
    if (!Invoke("LoadTensor16", true, [&] { narrow.LoadTensor16(name, bits.data(), shape, dtype); })) return false;
    if (!Invoke("LoadTensor", true, [&] { wide.LoadTensor(name, attnlab::TensorView{values.data(), shape}); })) {
      return false;
    }
  }
  return true;
}

void Session::ModelForward(Transformer& narrow, Transformer& wide) {
  const attnlab::TransformerConfig& c = wide.config();
  const uint8_t t = r_.U8();
  const int64_t batch = 1 + t % 2, tokens = (t >> 1) % 4;
  const bool bad_id = (t >> 3) % 8 == 7, too_long = tokens > c.context_length;
  std::vector<int32_t> ids(static_cast<size_t>(batch * tokens));
  for (int32_t& id : ids) id = static_cast<int32_t>(r_.U8() % c.vocab_size);
  if (bad_id && !ids.empty()) ids.back() = static_cast<int32_t>(c.vocab_size);
  case_ += ", tokens (" + std::to_string(batch) + ", " + std::to_string(tokens) + ")" + (bad_id ? ", an id = V" : "");
  attnlab::TransformerForwardOptions options;
  for (int64_t l = 0; l < c.num_layers; ++l) options.output_attentions.push_back(l);
  options.output_hidden_states = true;
  const bool valid = !(bad_id && !ids.empty()) && !too_long;
  attnlab::TransformerOutput a, b;
  if (!Invoke("Transformer::Forward", valid, [&] { a = narrow.Forward({ids.data(), {batch, tokens}}, options); })) {
    return;
  }
  if (!Invoke("Transformer::Forward", valid, [&] { b = wide.Forward({ids.data(), {batch, tokens}}, options); })) {
    return;
  }
  std::vector<const attnlab::Tensor*> xs{&a.logits}, ys{&b.logits};
  for (size_t l = 0; l < a.attentions.size(); ++l) xs.push_back(&a.attentions[l]), ys.push_back(&b.attentions[l]);
  for (size_t l = 0; l < a.hidden_states.size(); ++l) {
    xs.push_back(&a.hidden_states[l]), ys.push_back(&b.hidden_states[l]);
  }
  for (size_t i = 0; i < xs.size(); ++i) {
    const std::vector<float>&x = xs[i]->data, &y = ys[i]->data;
    bool same = x.size() == y.size();
    for (size_t j = 0; same && j < x.size(); ++j)
      same = std::memcmp(&x[j], &y[j], 4) == 0 || (x[j] != x[j] && y[j] != y[j]);
    if (!same)
      return Finding("16-bit storage differs from float32 storage of the same values (output " + std::to_string(i) +
                     ")");
  }
}

}  // namespace attnlab_fuzz
