// Mistral (Hugging Face model_type "mistral", MistralForCausalLM): the Llama family's blocks and names with a
// sliding window (sliding_window; null = none).
#include "cpp/src/model/types/model_type.h"

namespace attnlab {
namespace {

void Read(const ConfigReader& hf, TransformerConfig& c) {
  ReadLlamaKeys(hf, c, 0);
  c.sliding_window = hf.Int("sliding_window", 0);
}

bool Write(const TransformerConfig& c, nlohmann::json& hf) {
  if (c.attention_bias != AttentionBias::kNone) return false;
  WriteLlamaKeys(c, hf);
  hf["sliding_window"] = c.sliding_window > 0 ? nlohmann::json(c.sliding_window) : nlohmann::json(nullptr);
  return true;
}

}  // namespace

const ModelType kMistralType = {"mistral", &kLlamaArch, Read, Write, "MistralForCausalLM"};

}  // namespace attnlab
