// Marian (Hugging Face model_type "marian": MarianMTModel, MarianModel; Helsinki-NLP's opus-mt): an encoder–decoder
// of post-LayerNorm blocks (eps 1e-5) with biases everywhere, fixed sinusoidal positions in Marian's layout (sin in
// the first half of the features, cos in the second; a checkpoint's `…embed_positions.weight` is ignored), token
// embeddings × √d_model with scale_embedding, the MLP's activation_function. The decoder's blocks add a
// cross-attention stage (encoder_attn, encoder_attn_layer_norm) after self-attention. One embedding `shared` serves
// both stacks (their embed_tokens are tied copies) and the LM head (lm_head tied unless tie_word_embeddings is
// false), whose logits add the final_logits_bias buffer (1, V). The task is the checkpoint's: 'seq2seq-lm' with
// lm_head / final_logits_bias (MarianMTModel), else 'base' (MarianModel: the decoder's last hidden state).
#include <string>
#include <vector>

#include "cpp/src/checks.h"
#include "cpp/src/model/types/model_type.h"

namespace attnlab {
namespace {

bool StartsWith(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// q_proj, k_proj, v_proj and out_proj of one attention (`b` + name + "."), into the q, k/v and o slots at block l:
// self-attention packs q, k, v into one matrix (offsets 0, E, 2E); cross-attention has q alone and k, v together.
struct AttentionSlots {
  Slot q, q_bias, kv, kv_bias, o, o_bias;
  size_t q_offset, k_offset, v_offset;
};

void AddAttention(const std::string& b, int64_t l, int64_t e, const AttentionSlots& s, std::vector<ParamSpec>& out) {
  const std::vector<ParamSpec> attention = {
      {b + "k_proj.weight", {e, e}, s.kv, l, s.k_offset, true},
      {b + "k_proj.bias", {e}, s.kv_bias, l, s.k_offset, false},
      {b + "v_proj.weight", {e, e}, s.kv, l, s.v_offset, true},
      {b + "v_proj.bias", {e}, s.kv_bias, l, s.v_offset, false},
      {b + "q_proj.weight", {e, e}, s.q, l, s.q_offset, true},
      {b + "q_proj.bias", {e}, s.q_bias, l, s.q_offset, false},
      {b + "out_proj.weight", {e, e}, s.o, l, 0, true},
      {b + "out_proj.bias", {e}, s.o_bias, l, 0, false},
  };
  out.insert(out.end(), attention.begin(), attention.end());
}

void AddNorm(const std::string& name, int64_t l, int64_t e, Slot weight, Slot bias, std::vector<ParamSpec>& out) {
  out.push_back({name + ".weight", {e}, weight, l, 0, false});
  out.push_back({name + ".bias", {e}, bias, l, 0, false});
}

// One layer of either stack (`b` = "encoder.layers.{i}." or "decoder.layers.{i}."), stored as block l.
void AddLayer(const TransformerConfig& c, const std::string& b, int64_t l, bool decoder, std::vector<ParamSpec>& out) {
  const int64_t e = c.embed_dim, f = c.hidden_dim;
  const size_t ue = static_cast<size_t>(e);
  AddAttention(b + "self_attn.", l, e,
               {Slot::kQkv, Slot::kQkvBias, Slot::kQkv, Slot::kQkvBias, Slot::kO, Slot::kOBias, 0, ue, 2 * ue}, out);
  AddNorm(b + "self_attn_layer_norm", l, e, Slot::kNorm1Weight, Slot::kNorm1Bias, out);
  if (decoder) {
    AddAttention(b + "encoder_attn.", l, e,
                 {Slot::kCrossQ, Slot::kCrossQBias, Slot::kCrossKv, Slot::kCrossKvBias, Slot::kCrossO,
                  Slot::kCrossOBias, 0, 0, ue},
                 out);
    AddNorm(b + "encoder_attn_layer_norm", l, e, Slot::kNorm3Weight, Slot::kNorm3Bias, out);
  }
  out.push_back({b + "fc1.weight", {f, e}, Slot::kUp, l, 0, true});
  out.push_back({b + "fc1.bias", {f}, Slot::kUpBias, l, 0, false});
  out.push_back({b + "fc2.weight", {e, f}, Slot::kDown, l, 0, true});
  out.push_back({b + "fc2.bias", {e}, Slot::kDownBias, l, 0, false});
  AddNorm(b + "final_layer_norm", l, e, Slot::kNorm2Weight, Slot::kNorm2Bias, out);
}

// shared, the encoder's layers (blocks 0 … L − 1), the decoder's (blocks L …), then the head's.
void Parameters(const TransformerConfig& c, const ModelSizes&, std::vector<ParamSpec>& out) {
  out.push_back({"shared.weight", {c.vocab_size, c.embed_dim}, Slot::kEmbed, -1, 0, true});
  for (int64_t l = 0; l < c.num_layers; ++l) AddLayer(c, "encoder.layers." + std::to_string(l) + ".", l, false, out);
  for (int64_t l = 0; l < c.decoder_layers; ++l) {
    AddLayer(c, "decoder.layers." + std::to_string(l) + ".", c.num_layers + l, true, out);
  }
  if (c.task != Task::kSeq2SeqLm) return;
  if (!c.tie_embeddings) out.push_back({"lm_head.weight", {c.vocab_size, c.embed_dim}, Slot::kHead, -1, 0, true});
  out.push_back({"final_logits_bias", {1, c.vocab_size}, Slot::kHeadBias, -1, 0, false});
}

// Without `model.`; both stacks' sinusoid tables (older checkpoints hold them) are ignored.
std::string CanonicalName(const std::string& name) {
  const std::string bare = StartsWith(name, "model.") ? name.substr(6) : name;
  return bare == "encoder.embed_positions.weight" || bare == "decoder.embed_positions.weight" ? "" : bare;
}

void Heads(TransformerConfig& c, const std::vector<std::string>& names) {
  const bool lm = HasName(names, "final_logits_bias") || HasName(names, "lm_head.weight");
  c.task = lm ? Task::kSeq2SeqLm : Task::kBase;
}

// Both stacks' embed_tokens are `shared`; so is a tied lm_head.
std::string TiedTo(const TransformerConfig& c, const std::string& canonical) {
  if (canonical == "encoder.embed_tokens.weight" || canonical == "decoder.embed_tokens.weight") return "shared.weight";
  return canonical == "lm_head.weight" && c.tie_embeddings ? "shared.weight" : "";
}

void CheckTokenId(const char* field, int64_t id, int64_t vocab) {
  if (id < 0 || id >= vocab) Fail(field, "an integer in [0, vocabSize)", std::to_string(id));
}

void Normalise(TransformerConfig& c) {
  if (c.task != Task::kSeq2SeqLm && c.task != Task::kBase) {
    Fail("task", "'seq2seq-lm' or 'base' for arch 'marian'", "another task");
  }
  if (c.decoder_layers < 1 || c.decoder_layers > 1024) {
    Fail("decoderLayers", "an integer in [1, 1024]", std::to_string(c.decoder_layers));
  }
  if (c.embed_dim % c.num_heads != 0) {
    Fail("numHeads", "a divisor of embedDim " + std::to_string(c.embed_dim), std::to_string(c.num_heads));
  }
  CheckTokenId("padTokenId", c.pad_token_id, c.vocab_size);
  CheckTokenId("decoderStartTokenId", c.decoder_start_token_id, c.vocab_size);
  CheckTokenId("eosTokenId", c.eos_token_id, c.vocab_size);
  if (c.forced_eos_token_id != -1) CheckTokenId("forcedEosTokenId", c.forced_eos_token_id, c.vocab_size);
  c.mlp = ActivationOf(c.hidden_act);
  if (c.hidden_dim == 0) c.hidden_dim = 4 * c.embed_dim;
  c.num_kv_heads = c.num_heads;
  c.head_dim = c.embed_dim / c.num_heads;
  c.norm_eps = 1e-5;  // (nn.LayerNorm's default: MarianConfig has no key for it)
  c.attention_bias = AttentionBias::kAll;
  c.norm = NormKind::kLayerNorm;
  c.positions = PositionKind::kSinusoidalSplit;
  c.mlp_bias = true;
  c.qk_norm = false;
  c.causal = true;  // (the decoder's self-attention; the encoder's sees every key)
  c.sliding_window = 0;
  c.post_norm = true;
  c.embed_norm = false;
  c.pad_offset_positions = false;
  c.pad_embedding = true;  // (MarianModel.shared: nn.Embedding(vocab_size, d_model, padding_idx))
  c.type_vocab_size = 0;
  c.pooler = false;
  c.classifier_dense = false;
  c.head_bias = c.task == Task::kSeq2SeqLm;
}

const char kOneDecoderOf[] = " (a decoder of its own shape: not supported)";

// MarianConfig's integer keys and defaults (configuration_marian.py).
const std::vector<IntKey> kMarianInts = {{"vocab_size", &TransformerConfig::vocab_size, 58101},
                                         {"d_model", &TransformerConfig::embed_dim, 1024},
                                         {"encoder_layers", &TransformerConfig::num_layers, 12},
                                         {"decoder_layers", &TransformerConfig::decoder_layers, 12},
                                         {"encoder_attention_heads", &TransformerConfig::num_heads, 16},
                                         {"encoder_ffn_dim", &TransformerConfig::hidden_dim, 4096},
                                         {"max_position_embeddings", &TransformerConfig::context_length, 1024},
                                         {"pad_token_id", &TransformerConfig::pad_token_id, 58100},
                                         {"decoder_start_token_id", &TransformerConfig::decoder_start_token_id, 58100},
                                         {"eos_token_id", &TransformerConfig::eos_token_id, 0}};

// MarianConfig's keys and defaults (configuration_marian.py); the task from the checkpoint's names (ConfigWithHeads;
// until then MarianMTModel's).
void Read(const ConfigReader& hf, TransformerConfig& c) {
  hf.Only("activation_function", {"gelu", "gelu_new", "gelu_pytorch_tanh", "relu", "silu", "swish"},
          kHiddenActivations);
  hf.Only("share_encoder_decoder_embeddings", {true}, "true (separate decoder embeddings: not supported)");
  ReadInts(hf, kMarianInts, c);
  hf.Only("decoder_vocab_size", {c.vocab_size}, "null or vocab_size" + std::string(kOneDecoderOf));
  hf.Only("decoder_attention_heads", {c.num_heads}, "encoder_attention_heads" + std::string(kOneDecoderOf));
  hf.Only("decoder_ffn_dim", {c.hidden_dim}, "encoder_ffn_dim" + std::string(kOneDecoderOf));
  c.hidden_act = hf.String("activation_function", "gelu");
  // (MarianConfig's default 0; null: none)
  c.forced_eos_token_id = hf.IsNull("forced_eos_token_id") ? -1 : hf.Int("forced_eos_token_id", 0);
  c.scale_embedding = hf.Bool("scale_embedding", false);
  c.tie_embeddings = hf.Bool("tie_word_embeddings", true);
  c.task = Task::kSeq2SeqLm;
}

bool Write(const TransformerConfig& c, nlohmann::json& hf) {
  hf["architectures"] = {c.task == Task::kBase ? "MarianModel" : "MarianMTModel"};
  WriteInts(c, kMarianInts, hf);
  hf["decoder_attention_heads"] = c.num_heads;
  hf["decoder_ffn_dim"] = c.hidden_dim;
  hf["activation_function"] = c.hidden_act;
  hf["forced_eos_token_id"] = c.forced_eos_token_id >= 0 ? nlohmann::json(c.forced_eos_token_id) : nlohmann::json();
  hf["scale_embedding"] = c.scale_embedding;
  hf["tie_word_embeddings"] = c.tie_embeddings;
  hf["share_encoder_decoder_embeddings"] = true;
  hf["is_encoder_decoder"] = true;
  return true;
}

}  // namespace

const ArchType kMarianArch = {
    "marian",
    Normalise,
    {"vocabSize", "contextLength", "embedDim", "numLayers", "decoderLayers", "numHeads", "hiddenDim", "hiddenAct",
     "padTokenId", "decoderStartTokenId", "eosTokenId", "forcedEosTokenId", "scaleEmbedding", "tieEmbeddings", "task"},
    R"({"hiddenDim": 0, "hiddenAct": "gelu", "padTokenId": 0, "decoderStartTokenId": 0, "eosTokenId": 0,
        "forcedEosTokenId": null, "scaleEmbedding": false, "tieEmbeddings": true, "task": "seq2seq-lm"})",
    {},
    Parameters,
    CanonicalName,
    Heads,
    TiedTo};
const ModelType kMarianType = {"marian", &kMarianArch, Read, Write, "MarianMTModel"};

}  // namespace attnlab
