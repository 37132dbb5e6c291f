// The poem trainer's mappings between its options, attnlab's TransformerConfig and a Hugging Face config.json
// (cpp/tools/train_poems.cc), kept in one file so that the library's own config.json writer can replace it.
#ifndef ATTNLAB_TOOLS_COMMON_HF_CONFIG_H_
#define ATTNLAB_TOOLS_COMMON_HF_CONFIG_H_

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

#include "attnlab/transformer.h"
#include "cpp/tools/common/log.h"
#include "cpp/tools/common/token_data.h"

namespace attnlab::tools {

// The model's command-line options (0: the default named in train_poems' --help).
struct ModelOptions {
  std::string arch = "llama";
  int64_t embed = 192, layers = 4, heads = 4, kv_heads = 0, hidden = 0, context = 0;
  double rope_theta = 10000, norm_eps = 1e-5;
};

inline TransformerConfig MakeConfig(const ModelOptions& o, const TokenData& d) {
  TransformerConfig c;
  c.arch = o.arch == "gpt2" ? attnlab::Arch::kGpt2 : attnlab::Arch::kLlama;
  if (o.arch != "gpt2" && o.arch != "llama") throw std::invalid_argument("--arch: llama or gpt2");
  c.vocab_size = d.vocab;
  c.context_length = o.context ? o.context : d.context;
  c.embed_dim = o.embed;
  c.num_layers = o.layers;
  c.num_heads = o.heads;
  c.norm_eps = o.norm_eps;
  if (c.arch == attnlab::Arch::kLlama) {
    c.num_kv_heads = o.kv_heads ? o.kv_heads : o.heads;
    c.hidden_dim = o.hidden ? o.hidden : (8 * o.embed / 3 + 31) / 32 * 32;
    c.rope_theta = o.rope_theta;
    c.tie_embeddings = true;
  }
  return c;
}

inline std::string HfConfigJson(const TransformerConfig& c, const TokenData& d) {
  std::ostringstream s;
  s << "{\n";
  if (c.arch == attnlab::Arch::kLlama) {
    s << "  \"architectures\": [\"LlamaForCausalLM\"],\n"
      << "  \"model_type\": \"llama\",\n"
      << "  \"vocab_size\": " << c.vocab_size << ",\n"
      << "  \"hidden_size\": " << c.embed_dim << ",\n"
      << "  \"intermediate_size\": " << c.hidden_dim << ",\n"
      << "  \"num_hidden_layers\": " << c.num_layers << ",\n"
      << "  \"num_attention_heads\": " << c.num_heads << ",\n"
      << "  \"num_key_value_heads\": " << c.num_kv_heads << ",\n"
      << "  \"head_dim\": " << c.embed_dim / c.num_heads << ",\n"
      << "  \"max_position_embeddings\": " << c.context_length << ",\n"
      << "  \"rms_norm_eps\": " << c.norm_eps << ",\n"
      << "  \"rope_theta\": " << Fmt(c.rope_theta, 1) << ",\n"
      << "  \"rope_scaling\": null,\n"
      << "  \"hidden_act\": \"silu\",\n"
      << "  \"attention_bias\": false,\n"
      << "  \"attention_dropout\": 0.0,\n"
      << "  \"mlp_bias\": false,\n"
      << "  \"initializer_range\": 0.02,\n"
      << "  \"tie_word_embeddings\": true,\n";
  } else {
    s << "  \"architectures\": [\"GPT2LMHeadModel\"],\n"
      << "  \"model_type\": \"gpt2\",\n"
      << "  \"vocab_size\": " << c.vocab_size << ",\n"
      << "  \"n_positions\": " << c.context_length << ",\n"
      << "  \"n_embd\": " << c.embed_dim << ",\n"
      << "  \"n_layer\": " << c.num_layers << ",\n"
      << "  \"n_head\": " << c.num_heads << ",\n"
      << "  \"n_inner\": null,\n"
      << "  \"activation_function\": \"gelu_new\",\n"
      << "  \"layer_norm_epsilon\": " << c.norm_eps << ",\n"
      << "  \"resid_pdrop\": 0.0, \"embd_pdrop\": 0.0, \"attn_pdrop\": 0.0,\n"
      << "  \"tie_word_embeddings\": true,\n";
  }
  s << "  \"bos_token_id\": " << d.bos << ",\n"
    << "  \"eos_token_id\": " << d.eos << ",\n"
    << "  \"pad_token_id\": " << d.pad << ",\n"
    << "  \"torch_dtype\": \"float16\",\n"
    << "  \"use_cache\": true\n"
    << "}\n";
  return s.str();
}

}  // namespace attnlab::tools

#endif  // ATTNLAB_TOOLS_COMMON_HF_CONFIG_H_
