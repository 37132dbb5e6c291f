// Qwen2 (Hugging Face model_type "qwen2", Qwen2ForCausalLM): the Llama family's blocks and names with q/k/v biases.
// Per-layer sliding windows (use_sliding_window) are refused; sliding_window is ignored without them.
#include "cpp/src/model/types/model_type.h"

namespace attnlab {
namespace {

void Read(const ConfigReader& hf, TransformerConfig& c) {
  hf.Only("use_sliding_window", {false}, "false (per-layer sliding windows are not supported yet)");
  ReadLlamaKeys(hf, c, 0);
  c.attention_bias = AttentionBias::kQkv;
}

bool Write(const TransformerConfig& c, nlohmann::json& hf) {
  if (c.sliding_window != 0 || c.attention_bias != AttentionBias::kQkv) return false;
  WriteLlamaKeys(c, hf);
  hf["use_sliding_window"] = false;
  return true;
}

}  // namespace

const ModelType kQwen2Type = {"qwen2", &kLlamaArch, Read, Write, "Qwen2ForCausalLM"};

}  // namespace attnlab
