// RoBERTa (Hugging Face model_type "roberta": RobertaModel, RobertaForMaskedLM, RobertaForSequenceClassification):
// BERT's blocks and embeddings (bert.cc) with positions counted from the ids, padTokenId + 1 + the number of
// non-pad tokens so far (padTokenId at a pad), so contextLength = max_position_embeddings − padTokenId − 1. Heads:
// lm_head (dense, erf GELU whatever hidden_act says, layer_norm; decoder tied to the word embeddings, lm_head.bias)
// and the classifier's own dense + tanh on token 0, then out_proj (no pooler in between).
#include <string>
#include <vector>

#include "cpp/src/checks.h"
#include "cpp/src/model/types/model_type.h"

namespace attnlab {
namespace {

void Parameters(const TransformerConfig& c, const ModelSizes& z, std::vector<ParamSpec>& out) {
  AddBertBodyParameters(c, z, out);
  const int64_t e = c.embed_dim;
  if (c.task == Task::kMaskedLm) {
    const std::vector<ParamSpec> head = {
        {"lm_head.bias", {c.vocab_size}, Slot::kHeadBias, -1, 0, false},
        {"lm_head.dense.weight", {e, e}, Slot::kHeadDense, -1, 0, true},
        {"lm_head.dense.bias", {e}, Slot::kHeadDenseBias, -1, 0, false},
        {"lm_head.layer_norm.weight", {e}, Slot::kHeadNormWeight, -1, 0, false},
        {"lm_head.layer_norm.bias", {e}, Slot::kHeadNormBias, -1, 0, false},
    };
    out.insert(out.end(), head.begin(), head.end());
  }
  if (c.task == Task::kSequenceClassification) {
    const std::vector<ParamSpec> head = {
        {"classifier.dense.weight", {e, e}, Slot::kClsDense, -1, 0, true},
        {"classifier.dense.bias", {e}, Slot::kClsDenseBias, -1, 0, false},
        {"classifier.out_proj.weight", {c.num_labels, e}, Slot::kHead, -1, 0, true},
        {"classifier.out_proj.bias", {c.num_labels}, Slot::kHeadBias, -1, 0, false},
    };
    out.insert(out.end(), head.begin(), head.end());
  }
}

std::string CanonicalName(const std::string& name) { return BertFamilyCanonicalName(name, "roberta."); }

void Heads(TransformerConfig& c, const std::vector<std::string>& names) {
  c.pooler = HasName(names, "pooler.dense.weight");
  const bool mlm = HasName(names, "lm_head.bias") || HasName(names, "lm_head.dense.weight");
  c.task = HasName(names, "classifier.out_proj.weight") ? Task::kSequenceClassification
           : mlm                                        ? Task::kMaskedLm
                                                        : Task::kBase;
}

std::string TiedTo(const TransformerConfig& c, const std::string& canonical) {
  if (c.task != Task::kMaskedLm) return "";
  if (canonical == "lm_head.decoder.weight") return "embeddings.word_embeddings.weight";
  return canonical == "lm_head.decoder.bias" ? "lm_head.bias" : "";
}

void Normalise(TransformerConfig& c) {
  NormaliseBertFamily(c, "roberta");
  c.pad_offset_positions = true;
  c.head_act = MlpKind::kGeluErf;  // (RobertaLMHead calls the erf gelu itself)
  c.classifier_dense = c.task == Task::kSequenceClassification;
}

void Read(const ConfigReader& hf, TransformerConfig& c) {
  ReadBertKeys(hf, c);
  c.pad_token_id = hf.Int("pad_token_id", 1);
  const int64_t positions = c.context_length;
  c.context_length = positions - c.pad_token_id - 1;
  if (c.context_length < 1) {
    Fail("config.max_position_embeddings", "more than pad_token_id + 1 (positions start at pad_token_id + 1)",
         std::to_string(positions));
  }
}

const char* const kRobertaClasses[] = {"RobertaModel", "RobertaModel", "RobertaForMaskedLM",
                                       "RobertaForSequenceClassification"};

bool Write(const TransformerConfig& c, nlohmann::json& hf) {
  WriteBertKeys(c, hf);
  hf["architectures"] = {kRobertaClasses[static_cast<size_t>(c.task)]};
  return true;
}

}  // namespace

const ArchType kRobertaArch = {
    "roberta",
    Normalise,
    {"vocabSize", "contextLength", "embedDim", "numLayers", "numHeads", "hiddenDim", "normEps", "hiddenAct",
     "typeVocabSize", "padTokenId", "task", "pooler", "numLabels"},
    R"({"hiddenDim": 0, "normEps": 1e-5, "hiddenAct": "gelu", "typeVocabSize": 1, "padTokenId": 1,
        "task": "base", "pooler": true, "numLabels": 2})",
    {},
    Parameters,
    CanonicalName,
    Heads,
    TiedTo};
const ModelType kRobertaType = {"roberta", &kRobertaArch, Read, Write, "RobertaModel"};

}  // namespace attnlab
