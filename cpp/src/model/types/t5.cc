// T5 (Hugging Face model_type "t5": T5ForConditionalGeneration, T5Model; v1.0, v1.1, flan-t5): an encoder–decoder of
// pre-norm blocks with RMSNorm without mean or bias (T5LayerNorm, layer_norm_epsilon), no absolute positions but a
// bucketed relative position bias in each stack's self-attention (relative_attention_num_buckets,
// relative_attention_max_distance; bidirectional in the encoder, causal in the decoder; held by block 0 of the stack
// and shared by all its blocks), logits without 1/√d_kv, projections without biases (q, k, v, o of width
// num_heads × d_kv, which may differ from d_model), the feed-forward `feed_forward_proj` 'relu' (wi, wo) or
// 'gated-gelu' (wo(gelu_tanh(wi_0 h) · wi_1 h)), a final norm per stack. One embedding `shared` serves both stacks
// (their embed_tokens are tied copies) and, with tie_word_embeddings, the LM head, which then reads the decoder's
// output × d_model^−0.5. The task: 'seq2seq-lm' with lm_head.weight or config.json's T5ForConditionalGeneration, else
// 'base' (T5Model: the decoder's last hidden state).
#include <string>
#include <vector>

#include "cpp/src/checks.h"
#include "cpp/src/model/types/model_type.h"

namespace attnlab {
namespace {

// One attention (`b` ends in "SelfAttention." or "EncDecAttention."): q, k, v (inner, E), o (E, inner), inner = H·hd.
void AddAttention(const std::string& b, int64_t l, int64_t e, int64_t inner, bool cross, std::vector<ParamSpec>& out) {
  const size_t ui = static_cast<size_t>(inner);
  const Slot kv = cross ? Slot::kCrossKv : Slot::kQkv;
  const size_t k0 = cross ? 0 : ui;  // (self-attention packs q, k, v in one matrix; cross-attention k, v)
  out.push_back({b + "q.weight", {inner, e}, cross ? Slot::kCrossQ : Slot::kQkv, l, 0, true});
  out.push_back({b + "k.weight", {inner, e}, kv, l, k0, true});
  out.push_back({b + "v.weight", {inner, e}, kv, l, k0 + ui, true});
  out.push_back({b + "o.weight", {e, inner}, cross ? Slot::kCrossO : Slot::kO, l, 0, true});
}

// Block i of a stack (`b` = "encoder.block.{i}." or "decoder.block.{i}."), stored as block l.
void AddBlock(const TransformerConfig& c, const std::string& b, int64_t i, int64_t l, bool decoder,
              std::vector<ParamSpec>& out) {
  const int64_t e = c.embed_dim, f = c.hidden_dim, inner = c.num_heads * c.head_dim;
  AddAttention(b + "layer.0.SelfAttention.", l, e, inner, false, out);
  if (i == 0) {
    out.push_back({b + "layer.0.SelfAttention.relative_attention_bias.weight",
                   {c.relative_buckets, c.num_heads},
                   Slot::kRelativeBias,
                   l,
                   0,
                   false});
  }
  out.push_back({b + "layer.0.layer_norm.weight", {e}, Slot::kNorm1Weight, l, 0, false});
  if (decoder) {
    AddAttention(b + "layer.1.EncDecAttention.", l, e, inner, true, out);
    out.push_back({b + "layer.1.layer_norm.weight", {e}, Slot::kNorm3Weight, l, 0, false});
  }
  const std::string ff = b + (decoder ? "layer.2." : "layer.1.");
  if (c.mlp == MlpKind::kGeluTanhGlu) {
    out.push_back({ff + "DenseReluDense.wi_0.weight", {f, e}, Slot::kUp, l, 0, true});
    out.push_back({ff + "DenseReluDense.wi_1.weight", {f, e}, Slot::kUp, l, static_cast<size_t>(f), true});
  } else {
    out.push_back({ff + "DenseReluDense.wi.weight", {f, e}, Slot::kUp, l, 0, true});
  }
  out.push_back({ff + "DenseReluDense.wo.weight", {e, f}, Slot::kDown, l, 0, true});
  out.push_back({ff + "layer_norm.weight", {e}, Slot::kNorm2Weight, l, 0, false});
}

// shared, the encoder's blocks (0 … L − 1) and final norm, the decoder's (L …) and final norm, an untied lm_head.
void Parameters(const TransformerConfig& c, const ModelSizes&, std::vector<ParamSpec>& out) {
  out.push_back({"shared.weight", {c.vocab_size, c.embed_dim}, Slot::kEmbed, -1, 0, true});
  for (int64_t i = 0; i < c.num_layers; ++i) AddBlock(c, "encoder.block." + std::to_string(i) + ".", i, i, false, out);
  out.push_back({"encoder.final_layer_norm.weight", {c.embed_dim}, Slot::kEncoderNormFWeight, -1, 0, false});
  for (int64_t i = 0; i < c.decoder_layers; ++i) {
    AddBlock(c, "decoder.block." + std::to_string(i) + ".", i, c.num_layers + i, true, out);
  }
  out.push_back({"decoder.final_layer_norm.weight", {c.embed_dim}, Slot::kNormFWeight, -1, 0, false});
  if (c.task == Task::kSeq2SeqLm && !c.tie_embeddings) {
    out.push_back({"lm_head.weight", {c.vocab_size, c.embed_dim}, Slot::kHead, -1, 0, true});
  }
}

// The original checkpoints' unused cross-attention bias of decoder block 0 is ignored (as Hugging Face does).
std::string CanonicalName(const std::string& name) {
  return name == "decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight" ? "" : name;
}

// lm_head.weight makes it T5ForConditionalGeneration; without it (a tied head is often left out) config.json's class
// decides (Read).
void Heads(TransformerConfig& c, const std::vector<std::string>& names) {
  if (HasName(names, "lm_head.weight")) c.task = Task::kSeq2SeqLm;
}

// Both stacks' embed_tokens are `shared`; so is a tied lm_head.
std::string TiedTo(const TransformerConfig& c, const std::string& canonical) {
  if (canonical == "encoder.embed_tokens.weight" || canonical == "decoder.embed_tokens.weight") return "shared.weight";
  return canonical == "lm_head.weight" && c.tie_embeddings ? "shared.weight" : "";
}

void CheckTokenId(const char* field, int64_t id, int64_t vocab) {
  if (id < 0 || id >= vocab) Fail(field, "an integer in [0, vocabSize)", std::to_string(id));
}

// The relative position bias's sizes: at least 4 buckets (2 per direction, of which 1 exact), a max distance past
// the exact ones of the causal decoder (its log scale divides by log(maxDistance / exact)).
void CheckRelative(const TransformerConfig& c) {
  if (c.relative_buckets < 4 || c.relative_buckets > 4096) {
    Fail("relativeBuckets", "an integer in [4, 4096]", std::to_string(c.relative_buckets));
  }
  const int64_t exact = c.relative_buckets / 2;
  if (c.relative_max_distance <= exact || c.relative_max_distance > (int64_t{1} << 20)) {
    Fail("relativeMaxDistance", "an integer in [" + std::to_string(exact + 1) + ", 1048576] (past relativeBuckets / 2)",
         std::to_string(c.relative_max_distance));
  }
}

void Normalise(TransformerConfig& c) {
  if (c.task != Task::kSeq2SeqLm && c.task != Task::kBase) {
    Fail("task", "'seq2seq-lm' or 'base' for arch 't5'", "another task");
  }
  if (c.decoder_layers < 1 || c.decoder_layers > 1024) {
    Fail("decoderLayers", "an integer in [1, 1024]", std::to_string(c.decoder_layers));
  }
  CheckRelative(c);
  CheckTokenId("padTokenId", c.pad_token_id, c.vocab_size);
  CheckTokenId("decoderStartTokenId", c.decoder_start_token_id, c.vocab_size);
  CheckTokenId("eosTokenId", c.eos_token_id, c.vocab_size);
  if (c.hidden_act != "relu" && c.hidden_act != "gated-gelu") {
    Fail("feedForwardProj", "'relu' or 'gated-gelu'", "'" + c.hidden_act + "'");
  }
  c.mlp = c.hidden_act == "relu" ? MlpKind::kRelu : MlpKind::kGeluTanhGlu;
  if (c.hidden_dim == 0) c.hidden_dim = 4 * c.embed_dim;
  c.num_kv_heads = c.num_heads;
  c.attention_bias = AttentionBias::kNone;
  c.norm = NormKind::kRmsNorm;
  c.positions = PositionKind::kRelative;
  c.mlp_bias = c.qk_norm = c.post_norm = c.embed_norm = c.pad_offset_positions = c.pad_embedding = false;
  c.causal = true;  // (the decoder's self-attention; the encoder's sees every key)
  c.sliding_window = c.type_vocab_size = 0;
  c.pooler = c.classifier_dense = c.head_bias = c.scale_embedding = false;
  c.scale_attention = false;
  c.scale_tied_head = true;  // (with tieEmbeddings)
}

// T5Config's integer keys and defaults (configuration_t5.py).
const std::vector<IntKey> kT5Ints = {
    {"vocab_size", &TransformerConfig::vocab_size, 32128},
    {"d_model", &TransformerConfig::embed_dim, 512},
    {"d_kv", &TransformerConfig::head_dim, 64},
    {"d_ff", &TransformerConfig::hidden_dim, 2048},
    {"num_layers", &TransformerConfig::num_layers, 6},
    {"num_heads", &TransformerConfig::num_heads, 8},
    {"relative_attention_num_buckets", &TransformerConfig::relative_buckets, 32},
    {"relative_attention_max_distance", &TransformerConfig::relative_max_distance, 128},
    {"n_positions", &TransformerConfig::context_length, 512},
    {"pad_token_id", &TransformerConfig::pad_token_id, 0},
    {"eos_token_id", &TransformerConfig::eos_token_id, 1}};

// T5Config's keys and defaults (configuration_t5.py); the task from config.json's class, then the checkpoint's names.
void Read(const ConfigReader& hf, TransformerConfig& c) {
  hf.Only("feed_forward_proj", {"relu", "gated-gelu"}, "'relu' or 'gated-gelu'");
  ReadInts(hf, kT5Ints, c);
  c.decoder_layers = hf.Int("num_decoder_layers", c.num_layers);
  c.decoder_start_token_id = hf.Int("decoder_start_token_id", c.pad_token_id);
  c.norm_eps = hf.Number("layer_norm_epsilon", 1e-6);
  c.hidden_act = hf.String("feed_forward_proj", "relu");
  c.tie_embeddings = hf.Bool("tie_word_embeddings", true);
  const nlohmann::json* classes = hf.Value("architectures");
  const bool base = classes && classes->is_array() && classes->size() == 1 && (*classes)[0] == "T5Model";
  c.task = base ? Task::kBase : Task::kSeq2SeqLm;
}

bool Write(const TransformerConfig& c, nlohmann::json& hf) {
  hf["architectures"] = {c.task == Task::kBase ? "T5Model" : "T5ForConditionalGeneration"};
  WriteInts(c, kT5Ints, hf);
  hf["num_decoder_layers"] = c.decoder_layers;
  hf["decoder_start_token_id"] = c.decoder_start_token_id;
  hf["layer_norm_epsilon"] = c.norm_eps;
  hf["feed_forward_proj"] = c.hidden_act;
  hf["tie_word_embeddings"] = c.tie_embeddings;
  hf["is_encoder_decoder"] = true;
  return true;
}

}  // namespace

const ArchType kT5Arch = {
    "t5",
    Normalise,
    {"vocabSize", "contextLength", "embedDim", "numLayers", "decoderLayers", "numHeads", "headDim", "hiddenDim",
     "feedForwardProj", "normEps", "relativeBuckets", "relativeMaxDistance", "padTokenId", "decoderStartTokenId",
     "eosTokenId", "tieEmbeddings", "task"},
    R"({"contextLength": 512, "headDim": 0, "hiddenDim": 0, "feedForwardProj": "relu", "normEps": 1e-6,
        "relativeBuckets": 32, "relativeMaxDistance": 128, "padTokenId": 0, "decoderStartTokenId": 0,
        "eosTokenId": 1, "tieEmbeddings": true, "task": "seq2seq-lm"})",
    {},
    Parameters,
    CanonicalName,
    Heads,
    TiedTo};
const ModelType kT5Type = {"t5", &kT5Arch, Read, Write, "T5ForConditionalGeneration"};

}  // namespace attnlab
