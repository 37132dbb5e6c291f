// GPT-2 and Llama-family parameter tables (architectures.h).
#include "cpp/src/model/architectures.h"

#include <limits>
#include <string>
#include <vector>

#include "cpp/src/checks.h"

namespace attnlab {
namespace {

void CheckPositive(const char* field, int64_t value, int64_t max = std::numeric_limits<int32_t>::max()) {
  if (value < 1 || value > max) {
    Fail(field, "an integer in [1, " + std::to_string(max) + "]", std::to_string(value));
  }
}

bool StartsWith(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }
bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Appends one block's parameters: a list of (name, shape, slot, offset, transposed) in Hugging Face's order.
void AddGpt2Block(const ModelSizes& z, int64_t l, std::vector<ParamSpec>& out) {
  const std::string p = "h." + std::to_string(l) + ".";
  const int64_t e = static_cast<int64_t>(z.e), f = static_cast<int64_t>(z.up_out);
  const std::vector<ParamSpec> block = {
      {p + "ln_1.weight", {e}, Slot::kNorm1Weight, l, 0, false},
      {p + "ln_1.bias", {e}, Slot::kNorm1Bias, l, 0, false},
      {p + "attn.c_attn.weight", {e, 3 * e}, Slot::kQkv, l, 0, false},
      {p + "attn.c_attn.bias", {3 * e}, Slot::kQkvBias, l, 0, false},
      {p + "attn.c_proj.weight", {e, e}, Slot::kO, l, 0, false},
      {p + "attn.c_proj.bias", {e}, Slot::kOBias, l, 0, false},
      {p + "ln_2.weight", {e}, Slot::kNorm2Weight, l, 0, false},
      {p + "ln_2.bias", {e}, Slot::kNorm2Bias, l, 0, false},
      {p + "mlp.c_fc.weight", {e, f}, Slot::kUp, l, 0, false},
      {p + "mlp.c_fc.bias", {f}, Slot::kUpBias, l, 0, false},
      {p + "mlp.c_proj.weight", {f, e}, Slot::kDown, l, 0, false},
      {p + "mlp.c_proj.bias", {e}, Slot::kDownBias, l, 0, false},
  };
  out.insert(out.end(), block.begin(), block.end());
}

void AddLlamaBlock(const TransformerConfig& c, const ModelSizes& z, int64_t l, std::vector<ParamSpec>& out) {
  const std::string p = "model.layers." + std::to_string(l) + ".";
  const int64_t e = static_cast<int64_t>(z.e), dq = static_cast<int64_t>(z.heads * z.head_dim);
  const int64_t dkv = static_cast<int64_t>(z.kv_heads * z.head_dim), hid = static_cast<int64_t>(z.hidden);
  const size_t k0 = static_cast<size_t>(dq), v0 = k0 + static_cast<size_t>(dkv);
  const bool qkv_bias = c.attention_bias != AttentionBias::kNone, o_bias = c.attention_bias == AttentionBias::kAll;
  out.push_back({p + "input_layernorm.weight", {e}, Slot::kNorm1Weight, l, 0, false});
  const struct {
    const char* name;
    int64_t rows;
    size_t offset;
  } qkv[3] = {{"q_proj", dq, 0}, {"k_proj", dkv, k0}, {"v_proj", dkv, v0}};
  for (const auto& proj : qkv) {
    out.push_back({p + "self_attn." + proj.name + ".weight", {proj.rows, e}, Slot::kQkv, l, proj.offset, true});
    if (qkv_bias)
      out.push_back({p + "self_attn." + proj.name + ".bias", {proj.rows}, Slot::kQkvBias, l, proj.offset, false});
  }
  out.push_back({p + "self_attn.o_proj.weight", {e, dq}, Slot::kO, l, 0, true});
  if (o_bias) out.push_back({p + "self_attn.o_proj.bias", {e}, Slot::kOBias, l, 0, false});
  out.push_back({p + "post_attention_layernorm.weight", {e}, Slot::kNorm2Weight, l, 0, false});
  out.push_back({p + "mlp.gate_proj.weight", {hid, e}, Slot::kUp, l, 0, true});
  out.push_back({p + "mlp.up_proj.weight", {hid, e}, Slot::kUp, l, z.hidden, true});
  out.push_back({p + "mlp.down_proj.weight", {e, hid}, Slot::kDown, l, 0, true});
}

}  // namespace

TransformerConfig NormalisedConfig(const TransformerConfig& config) {
  TransformerConfig c = config;
  CheckPositive("vocabSize", c.vocab_size);
  CheckPositive("contextLength", c.context_length, int64_t{1} << 20);
  CheckPositive("embedDim", c.embed_dim, int64_t{1} << 16);
  CheckPositive("numLayers", c.num_layers, 1024);
  CheckPositive("numHeads", c.num_heads, c.embed_dim);
  const bool gpt2 = c.arch == Arch::kGpt2;
  if (gpt2 || c.head_dim == 0) {
    if (c.embed_dim % c.num_heads != 0) {
      Fail("numHeads", "a divisor of embedDim " + std::to_string(c.embed_dim), std::to_string(c.num_heads));
    }
  }
  if (gpt2) {
    for (const auto& [field, value] :
         {std::pair<const char*, int64_t>{"numKVHeads", c.num_kv_heads}, {"headDim", c.head_dim}}) {
      if (value != 0 && value != (std::string(field) == "headDim" ? c.embed_dim / c.num_heads : c.num_heads)) {
        Fail(field, "unset for arch 'gpt2' (it has numHeads key/value heads of embedDim / numHeads)",
             std::to_string(value));
      }
    }
    if (c.hidden_dim != 0 && c.hidden_dim != 4 * c.embed_dim) {
      Fail("hiddenDim", "4 * embedDim for arch 'gpt2'", std::to_string(c.hidden_dim));
    }
    if (c.sliding_window != 0) Fail("slidingWindow", "null for arch 'gpt2'", std::to_string(c.sliding_window));
    if (!c.tie_embeddings) Fail("tieEmbeddings", "true for arch 'gpt2'", "false");
    c.hidden_dim = 4 * c.embed_dim;
    c.attention_bias = AttentionBias::kAll;
  }
  if (c.num_kv_heads == 0) c.num_kv_heads = c.num_heads;
  if (c.head_dim == 0) c.head_dim = c.embed_dim / c.num_heads;
  CheckPositive("numKVHeads", c.num_kv_heads, c.num_heads);
  if (c.num_heads % c.num_kv_heads != 0) {
    Fail("numKVHeads", "a divisor of numHeads " + std::to_string(c.num_heads), std::to_string(c.num_kv_heads));
  }
  CheckPositive("headDim", c.head_dim, int64_t{1} << 12);
  if (!gpt2 && c.head_dim % 2 != 0) Fail("headDim", "an even number (RoPE rotates pairs)", std::to_string(c.head_dim));
  CheckPositive("hiddenDim", c.hidden_dim, int64_t{1} << 20);
  if (!(c.norm_eps >= 0 && c.norm_eps < 1)) Fail("normEps", "a number in [0, 1)", std::to_string(c.norm_eps));
  if (!gpt2 && !(c.rope_theta > 1 && c.rope_theta < 1e30)) {
    Fail("ropeTheta", "a number > 1", std::to_string(c.rope_theta));
  }
  if (c.sliding_window < 0) Fail("slidingWindow", "null or a positive integer", std::to_string(c.sliding_window));
  return c;
}

ModelSizes SizesOf(const TransformerConfig& c) {
  ModelSizes z{};
  z.e = static_cast<size_t>(c.embed_dim);
  z.heads = static_cast<size_t>(c.num_heads);
  z.kv_heads = static_cast<size_t>(c.num_kv_heads);
  z.head_dim = static_cast<size_t>(c.head_dim);
  z.hidden = static_cast<size_t>(c.hidden_dim);
  z.vocab = static_cast<size_t>(c.vocab_size);
  z.qkv_out = (z.heads + 2 * z.kv_heads) * z.head_dim;
  z.up_out = c.arch == Arch::kGpt2 ? z.hidden : 2 * z.hidden;
  z.down_in = z.hidden;
  return z;
}

std::vector<ParamSpec> ParameterSpecs(const TransformerConfig& c) {
  const ModelSizes z = SizesOf(c);
  const int64_t e = c.embed_dim, v = c.vocab_size;
  std::vector<ParamSpec> out;
  if (c.arch == Arch::kGpt2) {
    out.push_back({"wte.weight", {v, e}, Slot::kEmbed, -1, 0, true});
    out.push_back({"wpe.weight", {c.context_length, e}, Slot::kPositions, -1, 0, false});
    for (int64_t l = 0; l < c.num_layers; ++l) AddGpt2Block(z, l, out);
    out.push_back({"ln_f.weight", {e}, Slot::kNormFWeight, -1, 0, false});
    out.push_back({"ln_f.bias", {e}, Slot::kNormFBias, -1, 0, false});
    return out;
  }
  out.push_back({"model.embed_tokens.weight", {v, e}, Slot::kEmbed, -1, 0, true});
  for (int64_t l = 0; l < c.num_layers; ++l) AddLlamaBlock(c, z, l, out);
  out.push_back({"model.norm.weight", {e}, Slot::kNormFWeight, -1, 0, false});
  if (!c.tie_embeddings) out.push_back({"lm_head.weight", {v, e}, Slot::kHead, -1, 0, true});
  return out;
}

std::string CanonicalName(const TransformerConfig& c, const std::string& name) {
  if (c.arch == Arch::kGpt2) {
    const std::string bare = StartsWith(name, "transformer.") ? name.substr(12) : name;
    if (StartsWith(bare, "h.") && (EndsWith(bare, ".attn.bias") || EndsWith(bare, ".attn.masked_bias"))) return "";
    return bare;
  }
  if (EndsWith(name, ".rotary_emb.inv_freq")) return "";
  if (StartsWith(name, "model.") || name == "lm_head.weight") return name;
  return "model." + name;  // (a checkpoint of the bare LlamaModel)
}

}  // namespace attnlab
