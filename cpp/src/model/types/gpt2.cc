// GPT-2 (Hugging Face model_type "gpt2", GPT2LMHeadModel): pre-LayerNorm blocks, learned positions, GELU (tanh
// approximation) MLP with biases, fused Conv1D q/k/v (input dimension first), LM head tied to wte.
#include <string>
#include <vector>

#include "cpp/src/checks.h"
#include "cpp/src/model/types/model_type.h"

namespace attnlab {
namespace {

bool StartsWith(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }
bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// numKVHeads, headDim and hiddenDim follow from embedDim and numHeads; the head is tied; no window.
void Normalise(TransformerConfig& c) {
  if (c.embed_dim % c.num_heads != 0) {
    Fail("numHeads", "a divisor of embedDim " + std::to_string(c.embed_dim), std::to_string(c.num_heads));
  }
  const int64_t head_dim = c.embed_dim / c.num_heads;
  if (c.num_kv_heads != 0 && c.num_kv_heads != c.num_heads) {
    Fail("numKVHeads", "unset for arch 'gpt2' (it has numHeads key/value heads of embedDim / numHeads)",
         std::to_string(c.num_kv_heads));
  }
  if (c.head_dim != 0 && c.head_dim != head_dim) {
    Fail("headDim", "unset for arch 'gpt2' (it has numHeads key/value heads of embedDim / numHeads)",
         std::to_string(c.head_dim));
  }
  if (c.hidden_dim != 0 && c.hidden_dim != 4 * c.embed_dim) {
    Fail("hiddenDim", "4 * embedDim for arch 'gpt2'", std::to_string(c.hidden_dim));
  }
  if (c.sliding_window != 0) Fail("slidingWindow", "null for arch 'gpt2'", std::to_string(c.sliding_window));
  if (!c.tie_embeddings) Fail("tieEmbeddings", "true for arch 'gpt2'", "false");
  c.num_kv_heads = c.num_heads;
  c.head_dim = head_dim;
  c.hidden_dim = 4 * c.embed_dim;
  c.attention_bias = AttentionBias::kAll;
  c.norm = NormKind::kLayerNorm;
  c.positions = PositionKind::kLearned;
  c.mlp = MlpKind::kGeluTanh;
  c.mlp_bias = true;
  c.qk_norm = false;
  c.causal = true;
  c.head_bias = false;
}

// wte, wpe, then per block (name, shape, slot, layer, offset, transposed), then ln_f.
void Parameters(const TransformerConfig& c, const ModelSizes& z, std::vector<ParamSpec>& out) {
  const int64_t e = c.embed_dim, f = static_cast<int64_t>(z.up_out);
  out.push_back({"wte.weight", {c.vocab_size, e}, Slot::kEmbed, -1, 0, true});
  out.push_back({"wpe.weight", {c.context_length, e}, Slot::kPositions, -1, 0, false});
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const std::string p = "h." + std::to_string(l) + ".";
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
  out.push_back({"ln_f.weight", {e}, Slot::kNormFWeight, -1, 0, false});
  out.push_back({"ln_f.bias", {e}, Slot::kNormFBias, -1, 0, false});
}

// GPT2LMHeadModel's names carry "transformer."; the causal-mask buffers attn.bias and attn.masked_bias are ignored.
std::string CanonicalName(const std::string& name) {
  const std::string bare = StartsWith(name, "transformer.") ? name.substr(12) : name;
  if (StartsWith(bare, "h.") && (EndsWith(bare, ".attn.bias") || EndsWith(bare, ".attn.masked_bias"))) return "";
  return bare;
}

// config.json's required integers.
const std::vector<IntKey> kInts = {{"vocab_size", &TransformerConfig::vocab_size},
                                   {"n_positions", &TransformerConfig::context_length},
                                   {"n_embd", &TransformerConfig::embed_dim},
                                   {"n_layer", &TransformerConfig::num_layers},
                                   {"n_head", &TransformerConfig::num_heads}};

void Read(const ConfigReader& hf, TransformerConfig& c) {
  hf.Only("activation_function", {"gelu_new", "gelu_pytorch_tanh"}, "'gelu_new' (GELU, tanh approximation)");
  hf.Only("tie_word_embeddings", {true}, "true (GPT-2 ties its LM head to wte)");
  hf.Only("scale_attn_weights", {true}, "true (scores scaled by 1 / sqrt(head size))");
  hf.Only("scale_attn_by_inverse_layer_idx", {false}, "false (not supported)");
  hf.Only("add_cross_attention", {false}, "false (a decoder-only model)");
  ReadInts(hf, kInts, c);
  hf.Only("n_inner", {4 * c.embed_dim}, "null or 4 * n_embd (the MLP width)");
  c.norm_eps = hf.Number("layer_norm_epsilon", 1e-5);
}

bool Write(const TransformerConfig& c, nlohmann::json& hf) {
  WriteInts(c, kInts, hf);
  hf["n_inner"] = nullptr;
  hf["activation_function"] = "gelu_new";
  hf["layer_norm_epsilon"] = c.norm_eps;
  hf["tie_word_embeddings"] = true;
  return true;
}

}  // namespace

const ArchType kGpt2Arch = {"gpt2",
                            Normalise,
                            {"vocabSize", "contextLength", "embedDim", "numLayers", "numHeads", "normEps"},
                            R"({"normEps": 1e-5})",
                            {},
                            Parameters,
                            CanonicalName};
const ModelType kGpt2Type = {"gpt2", &kGpt2Arch, Read, Write, "GPT2LMHeadModel"};

}  // namespace attnlab
