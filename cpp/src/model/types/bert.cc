// BERT (Hugging Face model_type "bert": BertModel, BertForMaskedLM, BertForSequenceClassification): post-LayerNorm
// encoder blocks without a causal mask, learned positions, token types, the embeddings' LayerNorm, an MLP with
// biases whose activation is hidden_act (gelu = erf, gelu_new = tanh, relu, silu). The head is the one the
// checkpoint holds (ConfigWithHeads): a pooler tanh(dense(h[:, 0])), a masked-LM head (transform dense, hidden_act,
// LayerNorm; decoder tied to the word embeddings, cls.predictions.bias) or a classifier on the pooled output.
// The family's shared pieces (embeddings, blocks, pooler, config.json keys) serve roberta.cc too.
#include <string>
#include <vector>

#include "cpp/src/checks.h"
#include "cpp/src/model/types/model_type.h"

namespace attnlab {
namespace {

bool StartsWith(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

struct Activation {
  const char* name;
  MlpKind kind;
};
const Activation kActivations[] = {
    {"gelu", MlpKind::kGeluErf}, {"gelu_new", MlpKind::kGeluTanh}, {"gelu_pytorch_tanh", MlpKind::kGeluTanh},
    {"relu", MlpKind::kRelu},    {"silu", MlpKind::kSilu},         {"swish", MlpKind::kSilu}};
const char kActivationList[] = "one of 'gelu', 'gelu_new', 'gelu_pytorch_tanh', 'relu', 'silu', 'swish'";

// The heads' parameters after the body: masked-LM (cls.predictions.*) or the classifier.
void Parameters(const TransformerConfig& c, const ModelSizes& z, std::vector<ParamSpec>& out) {
  AddBertBodyParameters(c, z, out);
  const int64_t e = c.embed_dim;
  if (c.task == Task::kMaskedLm) {
    const std::vector<ParamSpec> head = {
        {"cls.predictions.bias", {c.vocab_size}, Slot::kHeadBias, -1, 0, false},
        {"cls.predictions.transform.dense.weight", {e, e}, Slot::kHeadDense, -1, 0, true},
        {"cls.predictions.transform.dense.bias", {e}, Slot::kHeadDenseBias, -1, 0, false},
        {"cls.predictions.transform.LayerNorm.weight", {e}, Slot::kHeadNormWeight, -1, 0, false},
        {"cls.predictions.transform.LayerNorm.bias", {e}, Slot::kHeadNormBias, -1, 0, false},
    };
    out.insert(out.end(), head.begin(), head.end());
  }
  if (c.task == Task::kSequenceClassification) {
    out.push_back({"classifier.weight", {c.num_labels, e}, Slot::kHead, -1, 0, true});
    out.push_back({"classifier.bias", {c.num_labels}, Slot::kHeadBias, -1, 0, false});
  }
}

// BertForPreTraining's next-sentence head (cls.seq_relationship) is ignored with the buffers.
std::string CanonicalName(const std::string& name) {
  const std::string bare = BertFamilyCanonicalName(name, "bert.");
  return StartsWith(bare, "cls.seq_relationship.") ? "" : bare;
}

void Heads(TransformerConfig& c, const std::vector<std::string>& names) {
  c.pooler = HasName(names, "pooler.dense.weight");
  const bool mlm = HasName(names, "cls.predictions.bias") || HasName(names, "cls.predictions.transform.dense.weight");
  c.task = HasName(names, "classifier.weight") ? Task::kSequenceClassification : mlm ? Task::kMaskedLm : Task::kBase;
  if (c.task == Task::kSequenceClassification) c.pooler = true;  // (its input: a missing pooler is named)
}

// Old checkpoints hold the masked-LM decoder, tied: the word embeddings and the head's bias.
std::string TiedTo(const TransformerConfig& c, const std::string& canonical) {
  if (c.task != Task::kMaskedLm) return "";
  if (canonical == "cls.predictions.decoder.weight") return "embeddings.word_embeddings.weight";
  return canonical == "cls.predictions.decoder.bias" ? "cls.predictions.bias" : "";
}

void Normalise(TransformerConfig& c) {
  NormaliseBertFamily(c, "bert");
  if (c.task == Task::kSequenceClassification && !c.pooler) {
    Fail("pooler", "true for arch 'bert' with task 'sequence-classification' (its classifier reads the pooled output)",
         "false");
  }
  c.head_act = c.mlp;  // (BertPredictionHeadTransform applies hidden_act)
  c.classifier_dense = false;
}

void Read(const ConfigReader& hf, TransformerConfig& c) { ReadBertKeys(hf, c); }

const char* const kBertClasses[] = {"BertModel", "BertModel", "BertForMaskedLM", "BertForSequenceClassification"};

bool Write(const TransformerConfig& c, nlohmann::json& hf) {
  WriteBertKeys(c, hf);
  hf["architectures"] = {kBertClasses[static_cast<size_t>(c.task)]};
  return true;
}

}  // namespace

const char* const kHiddenActivations = kActivationList;

MlpKind ActivationOf(const std::string& name) {
  for (const Activation& a : kActivations) {
    if (name == a.name) return a.kind;
  }
  Fail("hiddenAct", kActivationList, "'" + name + "'");
}

void ReadEncoderKeys(const ConfigReader& hf, TransformerConfig& c) {
  hf.Only("hidden_act", {"gelu", "gelu_new", "gelu_pytorch_tanh", "relu", "silu", "swish"}, kActivationList);
  c.hidden_act = hf.String("hidden_act", "gelu");
  c.embed_dim = hf.Int("hidden_size", 768);
  c.num_layers = hf.Int("num_hidden_layers", 12);
  c.num_heads = hf.Int("num_attention_heads", 12);
  c.hidden_dim = hf.Int("intermediate_size", 3072);
  c.norm_eps = hf.Number("layer_norm_eps", 1e-12);
  const std::unique_ptr<ConfigReader> labels = hf.Object("id2label");
  c.num_labels = labels ? static_cast<int64_t>(labels->Size()) : hf.Int("num_labels", 2);
}

void WriteEncoderKeys(const TransformerConfig& c, nlohmann::json& hf) {
  hf["hidden_size"] = c.embed_dim;
  hf["num_hidden_layers"] = c.num_layers;
  hf["num_attention_heads"] = c.num_heads;
  hf["intermediate_size"] = c.hidden_dim;
  hf["hidden_act"] = c.hidden_act;
  hf["layer_norm_eps"] = c.norm_eps;
  hf["num_labels"] = c.num_labels;
}

bool HasName(const std::vector<std::string>& names, const std::string& name) {
  for (const std::string& n : names) {
    if (n == name) return true;
  }
  return false;
}

std::string BertFamilyCanonicalName(const std::string& name, const std::string& prefix) {
  const std::string bare = StartsWith(name, prefix) ? name.substr(prefix.size()) : name;
  return bare == "embeddings.position_ids" || bare == "embeddings.token_type_ids" ? "" : bare;
}

void AddEncoderAttentionParameters(const std::string& layer, const std::string& self, bool qkv_bias, int64_t e,
                                   int64_t l, std::vector<ParamSpec>& out) {
  size_t offset = 0;
  for (const char* name : {"query", "key", "value"}) {
    const std::string proj = layer + self + name;
    out.push_back({proj + ".weight", {e, e}, Slot::kQkv, l, offset, true});
    if (qkv_bias) out.push_back({proj + ".bias", {e}, Slot::kQkvBias, l, offset, false});
    offset += static_cast<size_t>(e);
  }
  out.push_back({layer + "attention.output.dense.weight", {e, e}, Slot::kO, l, 0, true});
  out.push_back({layer + "attention.output.dense.bias", {e}, Slot::kOBias, l, 0, false});
}

void AddEncoderMlpParameters(const std::string& layer, int64_t e, int64_t f, int64_t l, std::vector<ParamSpec>& out) {
  out.push_back({layer + "intermediate.dense.weight", {f, e}, Slot::kUp, l, 0, true});
  out.push_back({layer + "intermediate.dense.bias", {f}, Slot::kUpBias, l, 0, false});
  out.push_back({layer + "output.dense.weight", {e, f}, Slot::kDown, l, 0, true});
  out.push_back({layer + "output.dense.bias", {e}, Slot::kDownBias, l, 0, false});
}

// embeddings (word, position, token type, LayerNorm), each block, the pooler.
void AddBertBodyParameters(const TransformerConfig& c, const ModelSizes& z, std::vector<ParamSpec>& out) {
  const int64_t e = c.embed_dim, f = c.hidden_dim, p = static_cast<int64_t>(z.position_rows);
  out.push_back({"embeddings.word_embeddings.weight", {c.vocab_size, e}, Slot::kEmbed, -1, 0, true});
  out.push_back({"embeddings.position_embeddings.weight", {p, e}, Slot::kPositions, -1, 0, false});
  out.push_back({"embeddings.token_type_embeddings.weight", {c.type_vocab_size, e}, Slot::kTokenTypes, -1, 0, false});
  out.push_back({"embeddings.LayerNorm.weight", {e}, Slot::kEmbedNormWeight, -1, 0, false});
  out.push_back({"embeddings.LayerNorm.bias", {e}, Slot::kEmbedNormBias, -1, 0, false});
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const std::string b = "encoder.layer." + std::to_string(l) + ".";
    AddEncoderAttentionParameters(b, "attention.self.", /*qkv_bias=*/true, e, l, out);
    out.push_back({b + "attention.output.LayerNorm.weight", {e}, Slot::kNorm1Weight, l, 0, false});
    out.push_back({b + "attention.output.LayerNorm.bias", {e}, Slot::kNorm1Bias, l, 0, false});
    AddEncoderMlpParameters(b, e, f, l, out);
    out.push_back({b + "output.LayerNorm.weight", {e}, Slot::kNorm2Weight, l, 0, false});
    out.push_back({b + "output.LayerNorm.bias", {e}, Slot::kNorm2Bias, l, 0, false});
  }
  if (!c.pooler) return;
  out.push_back({"pooler.dense.weight", {e, e}, Slot::kPooler, -1, 0, true});
  out.push_back({"pooler.dense.bias", {e}, Slot::kPoolerBias, -1, 0, false});
}

// BertConfig's keys and defaults (RobertaConfig's: pad_token_id 1); the task and pooler come from the checkpoint's
// names (ConfigWithHeads; until then BertModel's: a pooler, no head).
void ReadBertKeys(const ConfigReader& hf, TransformerConfig& c) {
  hf.Only("position_embedding_type", {"absolute"}, "'absolute' (relative_key and relative_key_query: not supported)");
  hf.Only("is_decoder", {false}, "false (an encoder; BERT as a decoder is not supported)");
  hf.Only("add_cross_attention", {false}, "false (an encoder)");
  ReadEncoderKeys(hf, c);
  c.vocab_size = hf.Int("vocab_size", 30522);
  c.context_length = hf.Int("max_position_embeddings", 512);
  c.type_vocab_size = hf.Int("type_vocab_size", 2);
  c.pad_token_id = hf.Int("pad_token_id", 0);
  c.task = Task::kBase;
  c.pooler = true;
}

void WriteBertKeys(const TransformerConfig& c, nlohmann::json& hf) {
  WriteEncoderKeys(c, hf);
  hf["vocab_size"] = c.vocab_size;
  hf["max_position_embeddings"] = c.context_length + (c.pad_offset_positions ? c.pad_token_id + 1 : 0);
  hf["type_vocab_size"] = c.type_vocab_size;
  hf["pad_token_id"] = c.pad_token_id;
  hf["position_embedding_type"] = "absolute";
}

void NormaliseEncoder(TransformerConfig& c, Task classification, bool post_norm) {
  if (c.task == classification && (c.num_labels < 1 || c.num_labels > (int64_t{1} << 20))) {
    Fail("numLabels", "an integer in [1, 1048576]", std::to_string(c.num_labels));
  }
  c.mlp = ActivationOf(c.hidden_act);
  if (c.hidden_dim == 0) c.hidden_dim = 4 * c.embed_dim;
  c.num_kv_heads = c.num_heads;
  c.head_dim = c.embed_dim / c.num_heads;
  c.norm = NormKind::kLayerNorm;
  c.positions = PositionKind::kLearned;
  c.mlp_bias = true;
  c.qk_norm = false;
  c.causal = false;
  c.sliding_window = 0;
  c.post_norm = post_norm;
  c.pad_offset_positions = false;
}

void NormaliseBertFamily(TransformerConfig& c, const char* arch) {
  const std::string of = std::string(" for arch '") + arch + "'";
  if (c.embed_dim % c.num_heads != 0) {
    Fail("numHeads", "a divisor of embedDim " + std::to_string(c.embed_dim), std::to_string(c.num_heads));
  }
  if (c.task == Task::kCausalLm || c.task == Task::kImageClassification || c.task == Task::kSeq2SeqLm) {
    Fail("task", "'base', 'masked-lm' or 'sequence-classification'" + of,
         c.task == Task::kCausalLm    ? "'causal-lm'"
         : c.task == Task::kSeq2SeqLm ? "'seq2seq-lm'"
                                      : "'image-classification'");
  }
  if (c.type_vocab_size < 1 || c.type_vocab_size > 65536) {
    Fail("typeVocabSize", "an integer in [1, 65536]", std::to_string(c.type_vocab_size));
  }
  if (c.pad_token_id < 0 || c.pad_token_id >= c.vocab_size) {
    Fail("padTokenId", "an integer in [0, vocabSize)", std::to_string(c.pad_token_id));
  }
  NormaliseEncoder(c, Task::kSequenceClassification, /*post_norm=*/true);
  c.attention_bias = AttentionBias::kAll;
  c.embed_norm = true;
  c.tie_embeddings = c.task != Task::kSequenceClassification;  // (masked-LM: the decoder is the word embeddings)
  c.head_bias = c.task == Task::kMaskedLm || c.task == Task::kSequenceClassification;
}

const ArchType kBertArch = {
    "bert",
    Normalise,
    {"vocabSize", "contextLength", "embedDim", "numLayers", "numHeads", "hiddenDim", "normEps", "hiddenAct",
     "typeVocabSize", "padTokenId", "task", "pooler", "numLabels"},
    R"({"hiddenDim": 0, "normEps": 1e-12, "hiddenAct": "gelu", "typeVocabSize": 2, "padTokenId": 0,
        "task": "base", "pooler": true, "numLabels": 2})",
    {},
    Parameters,
    CanonicalName,
    Heads,
    TiedTo};
const ModelType kBertType = {"bert", &kBertArch, Read, Write, "BertModel"};

}  // namespace attnlab
