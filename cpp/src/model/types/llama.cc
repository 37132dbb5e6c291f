// Llama (Hugging Face model_type "llama", LlamaForCausalLM): pre-RMSNorm blocks, RoPE in the rotate-half layout,
// grouped key/value heads, SwiGLU MLP, an untied LM head unless tie_word_embeddings. Also the Llama family's names
// and config.json keys, which Mistral, Qwen2 and Qwen3 share.
#include <string>
#include <vector>

#include "cpp/src/checks.h"
#include "cpp/src/model/types/model_type.h"

namespace attnlab {

void NormaliseLlama(TransformerConfig& c) {
  if (c.hidden_dim == 0) c.hidden_dim = 4 * c.embed_dim;
  if (c.head_dim % 2 != 0) Fail("headDim", "an even number (RoPE rotates pairs)", std::to_string(c.head_dim));
  if (!(c.rope_theta > 1 && c.rope_theta < 1e30)) Fail("ropeTheta", "a number > 1", std::to_string(c.rope_theta));
  c.norm = NormKind::kRmsNorm;
  c.positions = PositionKind::kRope;
  c.mlp = MlpKind::kSwiGlu;
  c.mlp_bias = false;
  c.causal = true;
  c.head_bias = false;
}

// embed_tokens, then per block (name, shape, slot, layer, offset, transposed): q/k/v into one packed matrix (queries,
// keys, values), gate and up into another (gate, then up); then the final norm and an untied head.
void AddLlamaParameters(const TransformerConfig& c, const ModelSizes& z, std::vector<ParamSpec>& out) {
  const int64_t e = c.embed_dim, dq = static_cast<int64_t>(z.heads * z.head_dim);
  const int64_t dkv = static_cast<int64_t>(z.kv_heads * z.head_dim), hid = c.hidden_dim, hd = c.head_dim;
  const size_t k0 = static_cast<size_t>(dq), v0 = k0 + static_cast<size_t>(dkv);
  const bool qkv_bias = c.attention_bias != AttentionBias::kNone, o_bias = c.attention_bias == AttentionBias::kAll;
  out.push_back({"model.embed_tokens.weight", {c.vocab_size, e}, Slot::kEmbed, -1, 0, true});
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
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
    if (c.qk_norm) {
      out.push_back({p + "self_attn.q_norm.weight", {hd}, Slot::kQNorm, l, 0, false});
      out.push_back({p + "self_attn.k_norm.weight", {hd}, Slot::kKNorm, l, 0, false});
    }
    out.push_back({p + "post_attention_layernorm.weight", {e}, Slot::kNorm2Weight, l, 0, false});
    out.push_back({p + "mlp.gate_proj.weight", {hid, e}, Slot::kUp, l, 0, true});
    out.push_back({p + "mlp.up_proj.weight", {hid, e}, Slot::kUp, l, z.hidden, true});
    out.push_back({p + "mlp.down_proj.weight", {e, hid}, Slot::kDown, l, 0, true});
  }
  out.push_back({"model.norm.weight", {e}, Slot::kNormFWeight, -1, 0, false});
  if (!c.tie_embeddings) out.push_back({"lm_head.weight", {c.vocab_size, e}, Slot::kHead, -1, 0, true});
}

// With or without "model." (a checkpoint of the bare LlamaModel has none; lm_head never has it); the RoPE buffers
// rotary_emb.inv_freq of older checkpoints are ignored.
std::string LlamaCanonicalName(const std::string& name) {
  const auto ends_with = [&](const std::string& suffix) {
    return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".rotary_emb.inv_freq")) return "";
  if (name.compare(0, 6, "model.") == 0 || name == "lm_head.weight") return name;
  return "model." + name;
}

// The family's required integers in config.json.
const std::vector<IntKey> kLlamaInts = {{"vocab_size", &TransformerConfig::vocab_size},
                                        {"max_position_embeddings", &TransformerConfig::context_length},
                                        {"hidden_size", &TransformerConfig::embed_dim},
                                        {"num_hidden_layers", &TransformerConfig::num_layers},
                                        {"num_attention_heads", &TransformerConfig::num_heads},
                                        {"intermediate_size", &TransformerConfig::hidden_dim}};

void ReadLlamaKeys(const ConfigReader& hf, TransformerConfig& c, int64_t head_dim_default) {
  hf.Only("hidden_act", {"silu", "swish"}, "'silu' (SwiGLU MLP)");
  hf.Only("rope_scaling", {}, "null (RoPE scaling is not supported yet)");
  hf.Only("mlp_bias", {false}, "false (MLP biases are not supported yet)");
  ReadInts(hf, kLlamaInts, c);
  c.num_kv_heads = hf.Int("num_key_value_heads", c.num_heads);
  c.head_dim = hf.Int("head_dim", head_dim_default);
  c.norm_eps = hf.Number("rms_norm_eps", 1e-6);
  c.rope_theta = hf.Number("rope_theta", 10000);
  if (const auto rope = hf.Object("rope_parameters")) {  // (newer config.json files)
    rope->Only("rope_type", {"default"}, "'default' (RoPE scaling is not supported yet)");
    c.rope_theta = rope->Number("rope_theta", c.rope_theta);
  }
  c.tie_embeddings = hf.Bool("tie_word_embeddings", false);
}

void WriteLlamaKeys(const TransformerConfig& c, nlohmann::json& hf) {
  WriteInts(c, kLlamaInts, hf);
  hf["num_key_value_heads"] = c.num_kv_heads;
  hf["head_dim"] = c.head_dim;
  hf["max_position_embeddings"] = c.context_length;
  hf["rms_norm_eps"] = c.norm_eps;
  hf["rope_theta"] = c.rope_theta;
  hf["rope_scaling"] = nullptr;
  hf["hidden_act"] = "silu";
  hf["mlp_bias"] = false;
  hf["tie_word_embeddings"] = c.tie_embeddings;
}

namespace {

void Read(const ConfigReader& hf, TransformerConfig& c) {
  ReadLlamaKeys(hf, c, 0);
  if (hf.Bool("attention_bias", false)) c.attention_bias = AttentionBias::kAll;
}

// Plain Llama: no window, no q/k/v-only biases (those are Mistral's and Qwen2's).
bool Write(const TransformerConfig& c, nlohmann::json& hf) {
  if (c.sliding_window != 0 || c.attention_bias == AttentionBias::kQkv) return false;
  WriteLlamaKeys(c, hf);
  hf["attention_bias"] = c.attention_bias == AttentionBias::kAll;
  return true;
}

}  // namespace

const ArchType kLlamaArch = {
    "llama",
    NormaliseLlama,
    {"vocabSize", "contextLength", "embedDim", "numLayers", "numHeads", "numKVHeads", "headDim", "hiddenDim", "normEps",
     "ropeTheta", "tieEmbeddings", "attentionBias", "slidingWindow"},
    R"({"numKVHeads": 0, "headDim": 0, "hiddenDim": 0, "normEps": 1e-6, "ropeTheta": 10000,
                                 "tieEmbeddings": false, "attentionBias": "none", "slidingWindow": null})",
    {"none", "qkv", "all"},
    AddLlamaParameters,
    LlamaCanonicalName};
const ModelType kLlamaType = {"llama", &kLlamaArch, Read, Write, "LlamaForCausalLM"};

}  // namespace attnlab
