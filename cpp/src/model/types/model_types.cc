// The one table of model types (model_type.h), config.json and createModel's options in and out, ConfigReader.
#include <cmath>
#include <string>
#include <vector>

#include "attnlab/transformer.h"
#include "cpp/src/checks.h"
#include "cpp/src/model/architectures.h"
#include "cpp/src/model/types/model_type.h"
#include "nlohmann/json.hpp"

namespace attnlab {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

// The table: every Hugging Face model_type attnlab reads, and every arch (family of names). A new type is one file
// and one row here.
const ModelType* const kTypes[] = {&kGpt2Type, &kLlamaType,   &kMistralType, &kQwen2Type,  &kQwen3Type,
                                   &kBertType, &kRobertaType, &kVitType,     &kMarianType, &kT5Type};
const ArchType* const kArchs[] = {&kGpt2Arch,    &kLlamaArch, &kQwen3Arch,  &kBertArch,
                                  &kRobertaArch, &kVitArch,   &kMarianArch, &kT5Arch};
// Archs of attnlab's own models, which createModel does not offer (the tiny model is createTinyTransformer's).
const ArchType* const kOwnArchs[] = {&kTinyArch};

[[noreturn]] void FailType(const std::string& name, const std::string& expected, const Json& got) {
  throw ConfigTypeError(name + ": expected " + expected + ", got " + (got.is_null() ? "null" : got.dump()));
}

template <class List, class NameOf>
std::string Listed(const List& list, NameOf name_of) {
  std::string s;
  for (const auto* item : list) s += std::string(s.empty() ? "" : ", ") + name_of(item);
  return s;
}

Json ParseObject(const std::string& text, const std::string& what) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) Fail(what, "a JSON object", "text that is not JSON");
  if (!j.is_object()) FailType(what, "an object", j);
  return j;
}

const std::vector<const char*> kAttentionBiasNames = {"none", "qkv", "all", "out"};
const std::vector<const char*> kTaskNames = {
    "causal-lm", "base", "masked-lm", "sequence-classification", "image-classification", "seq2seq-lm"};

Task TaskOf(const std::string& name) {
  for (size_t i = 0; i < kTaskNames.size(); ++i) {
    if (name == kTaskNames[i]) return static_cast<Task>(i);
  }
  Fail("task", "one of " + Listed(kTaskNames, [](const char* s) { return "'" + std::string(s) + "'"; }),
       Json(name).dump());
}

AttentionBias AttentionBiasOf(const ArchType& arch, const std::string& name) {
  for (const char* allowed : arch.attention_biases) {
    if (name == allowed) {
      for (size_t i = 0; i < kAttentionBiasNames.size(); ++i) {
        if (name == kAttentionBiasNames[i]) return static_cast<AttentionBias>(i);
      }
    }
  }
  Fail("attentionBias",
       "one of " + Listed(arch.attention_biases, [](const char* s) { return "'" + std::string(s) + "'"; }) +
           " for arch '" + arch.arch + "'",
       Json(name).dump());
}

// The integer fields of createModel's options (0 = derived where NormalisedConfig derives it).
struct IntField {
  const char* name;
  int64_t TransformerConfig::*member;
};
const IntField kIntFields[] = {{"vocabSize", &TransformerConfig::vocab_size},
                               {"contextLength", &TransformerConfig::context_length},
                               {"embedDim", &TransformerConfig::embed_dim},
                               {"numLayers", &TransformerConfig::num_layers},
                               {"numHeads", &TransformerConfig::num_heads},
                               {"numKVHeads", &TransformerConfig::num_kv_heads},
                               {"headDim", &TransformerConfig::head_dim},
                               {"hiddenDim", &TransformerConfig::hidden_dim},
                               {"typeVocabSize", &TransformerConfig::type_vocab_size},
                               {"padTokenId", &TransformerConfig::pad_token_id},
                               {"numLabels", &TransformerConfig::num_labels},
                               {"imageSize", &TransformerConfig::image_size},
                               {"patchSize", &TransformerConfig::patch_size},
                               {"numChannels", &TransformerConfig::num_channels},
                               {"decoderLayers", &TransformerConfig::decoder_layers},
                               {"decoderStartTokenId", &TransformerConfig::decoder_start_token_id},
                               {"eosTokenId", &TransformerConfig::eos_token_id},
                               {"relativeBuckets", &TransformerConfig::relative_buckets},
                               {"relativeMaxDistance", &TransformerConfig::relative_max_distance}};

// One field of createModel's options, read from the options over the arch's defaults (absent from both: required).
void ReadOption(const ArchType& arch, const ConfigReader& r, const std::string& field, TransformerConfig& c) {
  const char* f = field.c_str();
  for (const IntField& i : kIntFields) {
    if (field == i.name) c.*i.member = r.Int(f);
  }
  if (field == "normEps") c.norm_eps = r.Number(f, 0);
  if (field == "ropeTheta") c.rope_theta = r.Number(f, 0);
  if (field == "tieEmbeddings") c.tie_embeddings = r.Bool(f, false);
  if (field == "attentionBias") c.attention_bias = AttentionBiasOf(arch, r.String(f, ""));
  if (field == "slidingWindow") c.sliding_window = r.Int(f, 0);  // (null: none)
  if (field == "causal") c.causal = r.Bool(f, true);
  if (field == "hiddenAct" || field == "feedForwardProj") c.hidden_act = r.String(f, "");
  if (field == "task") c.task = TaskOf(r.String(f, ""));
  if (field == "pooler") c.pooler = r.Bool(f, false);
  if (field == "qkvBias") c.attention_bias = r.Bool(f, true) ? AttentionBias::kAll : AttentionBias::kOut;
  if (field == "scaleEmbedding") c.scale_embedding = r.Bool(f, false);
  if (field == "forcedEosTokenId") c.forced_eos_token_id = r.Int(f, -1);  // (null: none)
}

void WriteOption(const TransformerConfig& c, const std::string& field, OrderedJson& o) {
  for (const IntField& i : kIntFields) {
    if (field == i.name) o[field] = c.*i.member;
  }
  if (field == "normEps") o[field] = c.norm_eps;
  if (field == "ropeTheta") o[field] = c.rope_theta;
  if (field == "tieEmbeddings") o[field] = c.tie_embeddings;
  if (field == "attentionBias") o[field] = kAttentionBiasNames[static_cast<size_t>(c.attention_bias)];
  if (field == "slidingWindow") o[field] = c.sliding_window > 0 ? Json(c.sliding_window) : Json(nullptr);
  if (field == "causal") o[field] = c.causal;
  if (field == "hiddenAct" || field == "feedForwardProj") o[field] = c.hidden_act;
  if (field == "task") o[field] = kTaskNames[static_cast<size_t>(c.task)];
  if (field == "pooler") o[field] = c.pooler;
  if (field == "qkvBias") o[field] = c.attention_bias == AttentionBias::kAll;
  if (field == "scaleEmbedding") o[field] = c.scale_embedding;
  if (field == "forcedEosTokenId") o[field] = c.forced_eos_token_id >= 0 ? Json(c.forced_eos_token_id) : Json(nullptr);
}

}  // namespace

const nlohmann::json* ConfigReader::Get(const char* key) const {
  const auto it = object_.find(key);
  if (it != object_.end() && !it->is_null()) return &*it;
  if (!defaults_) return nullptr;
  const auto d = defaults_->find(key);
  return d == defaults_->end() || d->is_null() ? nullptr : &*d;
}

std::unique_ptr<ConfigReader> ConfigReader::Object(const char* key) const {
  const Json* v = Get(key);
  if (!v) return nullptr;
  if (!v->is_object()) FailType(Name(key), "an object", *v);
  return std::make_unique<ConfigReader>(*v, Name(key) + ".");
}

bool ConfigReader::IsNull(const char* key) const {
  const auto it = object_.find(key);
  return it != object_.end() && it->is_null();
}

bool ConfigReader::Has(const char* key) const { return Get(key) != nullptr; }

int64_t ConfigReader::Int(const char* key) const {
  if (!Has(key)) throw ConfigTypeError(Name(key) + " is required");
  return Int(key, 0);
}

int64_t ConfigReader::Int(const char* key, int64_t fallback) const {
  const Json* v = Get(key);
  if (!v) return fallback;
  if (!v->is_number()) FailType(Name(key), "an integer", *v);
  const double x = v->get<double>();
  if (v->is_number_integer() && !v->is_number_unsigned()) return v->get<int64_t>();
  if (!(std::floor(x) == x && std::fabs(x) < 9007199254740992.0)) Fail(Name(key), "an integer", v->dump());
  return static_cast<int64_t>(x);
}

double ConfigReader::Number(const char* key, double fallback) const {
  const Json* v = Get(key);
  if (!v) return fallback;
  if (!v->is_number()) FailType(Name(key), "a number", *v);
  return v->get<double>();
}

bool ConfigReader::Bool(const char* key, bool fallback) const {
  const Json* v = Get(key);
  if (!v) return fallback;
  if (!v->is_boolean()) FailType(Name(key), "a boolean", *v);
  return v->get<bool>();
}

std::string ConfigReader::String(const char* key, const std::string& fallback) const {
  const Json* v = Get(key);
  if (!v) return fallback;
  if (!v->is_string()) FailType(Name(key), "a string", *v);
  return v->get<std::string>();
}

void ConfigReader::Only(const char* key, const std::vector<nlohmann::json>& allowed, const std::string& why) const {
  const Json* v = Get(key);
  if (!v) return;
  for (const Json& a : allowed) {
    if (*v == a) return;
  }
  Fail(Name(key), why, v->dump());
}

void ConfigReader::KnownOnly(const std::vector<std::string>& known, const std::string& owner) const {
  for (const auto& [key, value] : object_.items()) {
    bool found = false;
    for (const std::string& k : known) found = found || k == key;
    if (!found) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      throw ConfigTypeError("unknown option " + Json(key).dump() + " for " + owner + "; expected one of " + list);
    }
  }
}

const ArchType& ArchOf(const std::string& arch, bool own) {
  for (const ArchType* a : kArchs) {
    if (arch == a->arch) return *a;
  }
  for (const ArchType* a : kOwnArchs) {
    if (own && arch == a->arch) return *a;
  }
  Fail("arch", "one of " + Listed(kArchs, [](const ArchType* a) { return "'" + std::string(a->arch) + "'"; }),
       Json(arch).dump());
}

TransformerConfig ConfigFromHuggingFace(const std::string& config_json) {
  const Json hf = ParseObject(config_json, "config");
  const ConfigReader r(hf, "config.");
  const auto type = hf.find("model_type");
  for (const ModelType* t : kTypes) {
    if (type != hf.end() && *type == t->model_type) {
      TransformerConfig c;
      c.arch = t->arch->arch;
      t->read(r, c);
      return NormalisedConfig(c);
    }
  }
  Fail("config.model_type", "one of " + Listed(kTypes, [](const ModelType* t) { return t->model_type; }),
       type == hf.end() ? "none" : type->dump());
}

TransformerConfig ConfigWithHeads(const TransformerConfig& config, const std::vector<std::string>& names) {
  TransformerConfig c = NormalisedConfig(config);
  const ArchType& arch = ArchOf(c.arch);
  if (!arch.heads) return c;
  std::vector<std::string> canonical;
  for (const std::string& name : names) canonical.push_back(arch.canonical_name(name));
  arch.heads(c, canonical);
  return NormalisedConfig(c);
}

TransformerConfig ConfigFromOptions(const std::string& options_json) {
  const Json o = ParseObject(options_json, "options");
  const ConfigReader r(o, "");
  const auto arch_field = o.find("arch");
  if (arch_field == o.end() || !arch_field->is_string()) {
    FailType("arch", "one of " + Listed(kArchs, [](const ArchType* a) { return "'" + std::string(a->arch) + "'"; }),
             arch_field == o.end() ? Json(nullptr) : *arch_field);
  }
  const ArchType& arch = ArchOf(arch_field->get<std::string>(), /*own=*/false);
  std::vector<std::string> known = arch.fields;
  known.insert(known.begin(), "arch");
  r.KnownOnly(known, "arch '" + std::string(arch.arch) + "'");
  Json merged = Json::parse(arch.defaults);  // (null in the options: the default, but slidingWindow null is none)
  for (const auto& [key, value] : o.items()) {
    if (!value.is_null() || key == "slidingWindow") merged[key] = value;
  }
  TransformerConfig c;
  c.arch = arch.arch;
  for (const std::string& field : arch.fields) ReadOption(arch, ConfigReader(merged, ""), field, c);
  return NormalisedConfig(c);
}

std::string OptionsJson(const TransformerConfig& config) {
  const TransformerConfig c = NormalisedConfig(config);
  OrderedJson o;
  o["arch"] = c.arch;
  for (const std::string& field : ArchOf(c.arch).fields) WriteOption(c, field, o);
  return o.dump();
}

std::string HuggingFaceConfigJson(const TransformerConfig& config) {
  const TransformerConfig c = NormalisedConfig(config);
  for (const ModelType* t : kTypes) {
    Json hf;
    if (t->arch->arch != c.arch || !t->write(c, hf)) continue;
    OrderedJson out;
    out["architectures"] = {t->hf_class};
    out["model_type"] = t->model_type;
    for (const auto& [key, value] : hf.items()) out[key] = value;
    return out.dump(2) + "\n";
  }
  Fail("config", "a configuration that a Hugging Face model_type expresses",
       "arch '" + c.arch + "' with these options");
}

}  // namespace attnlab
