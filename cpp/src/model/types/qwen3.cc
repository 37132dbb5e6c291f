// Qwen3 (Hugging Face model_type "qwen3", Qwen3ForCausalLM): the Llama family's blocks and names plus an RMSNorm of
// each query and key head (self_attn.q_norm, k_norm: weight (head_dim), shared by the heads) before RoPE; biases on
// q/k/v/o with attention_bias. Keys absent from config.json take Qwen3Config's defaults (head_dim 128, ...).
// Per-layer sliding windows (use_sliding_window) are refused.
#include <vector>

#include "cpp/src/model/types/model_type.h"

namespace attnlab {
namespace {

// Qwen3Config's defaults (transformers' configuration_qwen3.py).
constexpr const char* kQwen3Defaults = R"({
  "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016, "num_hidden_layers": 32,
  "num_attention_heads": 32, "num_key_value_heads": 32, "head_dim": 128, "max_position_embeddings": 32768,
  "rms_norm_eps": 1e-6, "rope_theta": 10000, "tie_word_embeddings": false, "attention_bias": false})";

void Normalise(TransformerConfig& c) {
  NormaliseLlama(c);
  c.qk_norm = true;
}

void Read(const ConfigReader& config_json, TransformerConfig& c) {
  const nlohmann::json defaults = nlohmann::json::parse(kQwen3Defaults);
  const ConfigReader hf = config_json.WithDefaults(defaults);
  hf.Only("use_sliding_window", {false}, "false (per-layer sliding windows are not supported yet)");
  ReadLlamaKeys(hf, c, 128);
  if (hf.Bool("attention_bias", false)) c.attention_bias = AttentionBias::kAll;
}

bool Write(const TransformerConfig& c, nlohmann::json& hf) {
  WriteLlamaKeys(c, hf);
  hf["attention_bias"] = c.attention_bias == AttentionBias::kAll;
  hf["use_sliding_window"] = false;
  return true;
}

}  // namespace

const ArchType kQwen3Arch = {"qwen3",
                             Normalise,
                             {"vocabSize", "contextLength", "embedDim", "numLayers", "numHeads", "numKVHeads",
                              "headDim", "hiddenDim", "normEps", "ropeTheta", "tieEmbeddings", "attentionBias"},
                             R"({"numKVHeads": 0, "headDim": 128, "hiddenDim": 0, "normEps": 1e-6, "ropeTheta": 10000,
                                 "tieEmbeddings": false, "attentionBias": "none"})",
                             {"none", "all"},
                             AddLlamaParameters,
                             LlamaCanonicalName};
const ModelType kQwen3Type = {"qwen3", &kQwen3Arch, Read, Write, "Qwen3ForCausalLM"};

}  // namespace attnlab
