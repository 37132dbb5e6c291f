// Model types as data. Each Hugging Face model_type is one file of this folder (gpt2.cc, llama.cc, mistral.cc,
// qwen2.cc, qwen3.cc; the encoders bert.cc, roberta.cc, vit.cc; the encoder–decoders marian.cc, t5.cc) and one row of
// model_types.cc's table; tiny.cc is an arch of attnlab's own (the demo's TinyTransformer), with no config.json. A type
// reads its config.json into the normalised configuration and writes it back. A type that owns an `arch` (the
// normalised config's family of names: 'gpt2', 'llama', 'qwen3', 'bert', 'roberta', 'vit', 'marian') also says what
// its blocks are made of (features), createModel's fields and defaults, its parameters (Hugging Face names, checkpoint
// shapes, storage slots) and its checkpoint prefixes and buffers; an encoder's also its head from a checkpoint's names
// and its tied copies.
#ifndef ATTNLAB_SRC_MODEL_TYPES_MODEL_TYPE_H_
#define ATTNLAB_SRC_MODEL_TYPES_MODEL_TYPE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/transformer.h"
#include "cpp/src/model/architectures.h"
#include "nlohmann/json.hpp"

namespace attnlab {

// One JSON object's fields, read by name; errors name the field as prefix + key ("config.n_embd" for config.json,
// "vocabSize" for createModel's options): a wrong JSON type is a ConfigTypeError, a wrong value invalid_argument.
class ConfigReader {
 public:
  ConfigReader(const nlohmann::json& object, std::string prefix, const nlohmann::json* defaults = nullptr)
      : object_(object), prefix_(std::move(prefix)), defaults_(defaults) {}
  // The same fields over `defaults` (a key absent or null here is read there).
  ConfigReader WithDefaults(const nlohmann::json& defaults) const { return ConfigReader(object_, prefix_, &defaults); }
  // A nested object's reader ("config.rope_parameters."), or null when the key is absent or null.
  std::unique_ptr<ConfigReader> Object(const char* key) const;
  bool Has(const char* key) const;     // present and not null
  bool IsNull(const char* key) const;  // present and null (here, not in the defaults)
  const nlohmann::json* Value(const char* key) const { return Get(key); }  // any JSON value, or null when absent
  size_t Size() const { return object_.size(); }                           // the object's number of keys
  int64_t Int(const char* key) const;                                      // required
  int64_t Int(const char* key, int64_t fallback) const;
  double Number(const char* key, double fallback) const;
  bool Bool(const char* key, bool fallback) const;
  std::string String(const char* key, const std::string& fallback) const;
  // A key whose other values attnlab does not compute: absent, null, or one of `allowed`.
  void Only(const char* key, const std::vector<nlohmann::json>& allowed, const std::string& why) const;
  // Every key is one of `known` (ConfigTypeError naming the first other one).
  void KnownOnly(const std::vector<std::string>& known, const std::string& owner) const;

 private:
  const nlohmann::json* Get(const char* key) const;
  std::string Name(const char* key) const { return prefix_ + key; }
  const nlohmann::json& object_;
  std::string prefix_;
  const nlohmann::json* defaults_;
};

// An integer key of a type's config.json, the field of the normalised config it holds, and its default (the type's
// configuration class's; none: required): one table of them serves the type's read (ReadInts, in the table's order)
// and its write (WriteInts), so that each key is named once.
struct IntKey {
  const char* key;
  int64_t TransformerConfig::*field;
  std::optional<int64_t> fallback = std::nullopt;
};

inline void ReadInts(const ConfigReader& hf, const std::vector<IntKey>& keys, TransformerConfig& c) {
  for (const IntKey& k : keys) c.*k.field = k.fallback ? hf.Int(k.key, *k.fallback) : hf.Int(k.key);
}

inline void WriteInts(const TransformerConfig& c, const std::vector<IntKey>& keys, nlohmann::json& hf) {
  for (const IntKey& k : keys) hf[k.key] = c.*k.field;
}

// A family of parameter names: the normalised config's `arch`.
struct ArchType {
  const char* arch;
  // Sets the features and the fields the family fixes (GPT-2: numKVHeads = numHeads, ...), refusing values it
  // cannot have (invalid_argument naming the field). Runs before the generic checks and derived defaults.
  void (*normalise)(TransformerConfig& c);
  // createModel's fields after `arch`, in model.config's order, with their defaults (absent: required).
  std::vector<std::string> fields;
  const char* defaults;                       // a JSON object
  std::vector<const char*> attention_biases;  // the values its attentionBias may take ({} : none)
  // Appends every parameter in state-dict order.
  void (*parameters)(const TransformerConfig& c, const ModelSizes& z, std::vector<ParamSpec>& out);
  // A checkpoint name without its prefix, or "" for a buffer that loading ignores.
  std::string (*canonical_name)(const std::string& name);
  // Encoders: the task and pooler from a checkpoint's canonical tensor names (null: a decoder, nothing to read),
  // and the parameter a canonical name is a tied copy of, or "" (null: a tied lm_head.weight is the embedding).
  void (*heads)(TransformerConfig& c, const std::vector<std::string>& canonical_names) = nullptr;
  std::string (*tied_to)(const TransformerConfig& c, const std::string& canonical) = nullptr;
};

// One Hugging Face model_type.
struct ModelType {
  const char* model_type;
  const ArchType* arch;
  // config.json → the fields (arch and features are set by the caller).
  void (*read)(const ConfigReader& hf, TransformerConfig& c);
  // The inverse, for a normalised config of `arch`: its config.json keys (after model_type and architectures), or
  // false when this type cannot express the config (the next type of the arch is tried).
  bool (*write)(const TransformerConfig& c, nlohmann::json& hf);
  const char* hf_class;  // config.json's "architectures" entry
};

// The rows of the table (each defined in its type's file).
extern const ArchType kGpt2Arch, kLlamaArch, kQwen3Arch, kTinyArch;  // (tiny: an arch without a model_type)
extern const ArchType kBertArch, kRobertaArch, kVitArch, kMarianArch, kT5Arch;
extern const ModelType kGpt2Type, kLlamaType, kMistralType, kQwen2Type, kQwen3Type, kBertType, kRobertaType, kVitType,
    kMarianType, kT5Type;

// The arch of a normalised config (invalid_argument naming `arch` for an unknown one); `own` false: only the archs
// createModel offers (not attnlab's own, such as 'tiny').
const ArchType& ArchOf(const std::string& arch, bool own = true);

// The Llama family's names (model.layers.{l}.self_attn.q_proj, ...), shared by the types that use them.
void AddLlamaParameters(const TransformerConfig& c, const ModelSizes& z, std::vector<ParamSpec>& out);
std::string LlamaCanonicalName(const std::string& name);
// The Llama family's config.json keys, read and written (hidden_size, num_attention_heads, rms_norm_eps, ...):
// `head_dim_default` 0 = hidden_size / num_attention_heads.
void ReadLlamaKeys(const ConfigReader& hf, TransformerConfig& c, int64_t head_dim_default);
void WriteLlamaKeys(const TransformerConfig& c, nlohmann::json& hf);
// RMSNorm + RoPE + SwiGLU without MLP biases, and the checks of a RoPE model (an even head dimension, θ > 1).
void NormaliseLlama(TransformerConfig& c);

// The BERT family (bert.cc; roberta.cc reuses them): the embeddings, blocks and pooler of BertModel without
// prefix (embeddings.word_embeddings, encoder.layer.{l}.attention.self.query, ...); config.json's keys read and
// written; the encoder features and checks of createModel's fields (`arch` names the family in messages).
void AddBertBodyParameters(const TransformerConfig& c, const ModelSizes& z, std::vector<ParamSpec>& out);
void ReadBertKeys(const ConfigReader& hf, TransformerConfig& c);
void WriteBertKeys(const TransformerConfig& c, nlohmann::json& hf);
void NormaliseBertFamily(TransformerConfig& c, const char* arch);
// The name without `prefix` ("bert."), or "" for the buffers every BERT-family checkpoint may hold.
std::string BertFamilyCanonicalName(const std::string& name, const std::string& prefix);
bool HasName(const std::vector<std::string>& names, const std::string& name);
// An encoder layer's (`layer`: "encoder.layer.{l}.") q, k, v under `self` ("attention.self."), with their biases when
// `qkv_bias`, then attention.output.dense; its MLP intermediate.dense, output.dense (BERT family, ViT).
void AddEncoderAttentionParameters(const std::string& layer, const std::string& self, bool qkv_bias, int64_t e,
                                   int64_t l, std::vector<ParamSpec>& out);
void AddEncoderMlpParameters(const std::string& layer, int64_t e, int64_t f, int64_t l, std::vector<ParamSpec>& out);
// The config.json keys every encoder has (BERT family, ViT; BertConfig's defaults): hidden_act (checked), hidden_size,
// num_hidden_layers, num_attention_heads, intermediate_size, layer_norm_eps, num_labels (or id2label's size); read and
// written.
void ReadEncoderKeys(const ConfigReader& hf, TransformerConfig& c);
void WriteEncoderKeys(const TransformerConfig& c, nlohmann::json& hf);
// The MLP kind of an activation as config.json names it (hidden_act, activation_function: 'gelu' = erf, 'gelu_new'
// = tanh, 'relu', 'silu' = 'swish'; invalid_argument naming hiddenAct otherwise), and the list of those names.
MlpKind ActivationOf(const std::string& name);
extern const char* const kHiddenActivations;
// The encoders' common features: the MLP by hidden_act (hiddenDim 4·embedDim when 0) with biases, multi-head
// attention without q/k norm, causal mask or window, LayerNorm, learned positions from 0, post- or pre-norm blocks;
// numLabels checked for the `classification` task.
void NormaliseEncoder(TransformerConfig& c, Task classification, bool post_norm);

}  // namespace attnlab

#endif  // ATTNLAB_SRC_MODEL_TYPES_MODEL_TYPE_H_
