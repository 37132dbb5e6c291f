// The poem trainer's options → attnlab's TransformerConfig, and the config.json it ships (the library's writer,
// attnlab::HuggingFaceConfigJson, plus the tokenizer's ids) (cpp/tools/train_poems.cc).
#ifndef ATTNLAB_TOOLS_COMMON_HF_CONFIG_H_
#define ATTNLAB_TOOLS_COMMON_HF_CONFIG_H_

#include <cstdint>
#include <stdexcept>
#include <string>

#include "attnlab/transformer.h"
#include "cpp/tools/common/log.h"
#include "cpp/tools/common/token_data.h"
#include "nlohmann/json.hpp"

namespace attnlab::tools {

// The model's command-line options (0: the default named in train_poems' --help).
struct ModelOptions {
  std::string arch = "llama";
  int64_t embed = 192, layers = 4, heads = 4, kv_heads = 0, hidden = 0, context = 0;
  double rope_theta = 10000, norm_eps = 1e-5;
};

inline TransformerConfig MakeConfig(const ModelOptions& o, const TokenData& d) {
  TransformerConfig c;
  c.arch = o.arch;
  if (o.arch != "gpt2" && o.arch != "llama") throw std::invalid_argument("--arch: llama or gpt2");
  c.vocab_size = d.vocab;
  c.context_length = o.context ? o.context : d.context;
  c.embed_dim = o.embed;
  c.num_layers = o.layers;
  c.num_heads = o.heads;
  c.norm_eps = o.norm_eps;
  if (c.arch != "gpt2") {  // (the trainer's defaults: a SwiGLU width of 8E/3 rounded up to 32, a tied head)
    c.num_kv_heads = o.kv_heads ? o.kv_heads : o.heads;
    c.hidden_dim = o.hidden ? o.hidden : (8 * o.embed / 3 + 31) / 32 * 32;
    c.rope_theta = o.rope_theta;
    c.tie_embeddings = true;
  }
  return c;
}

// The library's config.json of the model (attnlab::HuggingFaceConfigJson), with the tokenizer's special ids and the
// shipped dtype.
inline std::string HfConfigJson(const TransformerConfig& c, const TokenData& d) {
  nlohmann::ordered_json hf = nlohmann::ordered_json::parse(HuggingFaceConfigJson(c));
  hf["bos_token_id"] = d.bos;
  hf["eos_token_id"] = d.eos;
  hf["pad_token_id"] = d.pad;
  hf["torch_dtype"] = "float16";
  return hf.dump(2) + "\n";
}

}  // namespace attnlab::tools

#endif  // ATTNLAB_TOOLS_COMMON_HF_CONFIG_H_
