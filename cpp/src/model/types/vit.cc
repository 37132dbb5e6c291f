// ViT (Hugging Face model_type "vit": ViTModel, ViTForImageClassification): pixels (B, C, imageSize, imageSize) cut
// into (imageSize / patchSize)² patches by a stride-p convolution (embeddings.patch_embeddings.projection, trailing
// pixels dropped), [CLS] (embeddings.cls_token) first, learned positions (embeddings.position_embeddings,
// (1, 1 + N, E)); pre-LayerNorm blocks (layernorm_before, layernorm_after) without a causal mask, an MLP with biases
// whose activation is hidden_act, q/k/v biases when qkv_bias; the final layernorm, then the pooler
// tanh(dense(h[:, 0])) when the checkpoint has one and the classifier on token 0 (ViTForImageClassification).
// contextLength is derived: 1 + (imageSize / patchSize)². Interpolated positions and masked-image modelling
// (embeddings.mask_token) are not supported.
#include <string>
#include <vector>

#include "cpp/src/checks.h"
#include "cpp/src/model/types/model_type.h"

namespace attnlab {
namespace {

// Every parameter in ViTForImageClassification's state-dict order, without the vit. prefix.
void Parameters(const TransformerConfig& c, const ModelSizes& /*z*/, std::vector<ParamSpec>& out) {
  const int64_t e = c.embed_dim, f = c.hidden_dim, p = c.patch_size;
  out.push_back({"embeddings.cls_token", {1, 1, e}, Slot::kClsToken, -1, 0, false});
  out.push_back({"embeddings.position_embeddings", {1, c.context_length, e}, Slot::kPositions, -1, 0, false});
  out.push_back(
      {"embeddings.patch_embeddings.projection.weight", {e, c.num_channels, p, p}, Slot::kPatch, -1, 0, true});
  out.push_back({"embeddings.patch_embeddings.projection.bias", {e}, Slot::kPatchBias, -1, 0, false});
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const std::string b = "encoder.layer." + std::to_string(l) + ".";
    AddEncoderAttentionParameters(b, "attention.attention.", c.attention_bias == AttentionBias::kAll, e, l, out);
    AddEncoderMlpParameters(b, e, f, l, out);
    out.push_back({b + "layernorm_before.weight", {e}, Slot::kNorm1Weight, l, 0, false});
    out.push_back({b + "layernorm_before.bias", {e}, Slot::kNorm1Bias, l, 0, false});
    out.push_back({b + "layernorm_after.weight", {e}, Slot::kNorm2Weight, l, 0, false});
    out.push_back({b + "layernorm_after.bias", {e}, Slot::kNorm2Bias, l, 0, false});
  }
  out.push_back({"layernorm.weight", {e}, Slot::kNormFWeight, -1, 0, false});
  out.push_back({"layernorm.bias", {e}, Slot::kNormFBias, -1, 0, false});
  if (c.pooler) {
    out.push_back({"pooler.dense.weight", {e, e}, Slot::kPooler, -1, 0, true});
    out.push_back({"pooler.dense.bias", {e}, Slot::kPoolerBias, -1, 0, false});
  }
  if (c.task == Task::kImageClassification) {
    out.push_back({"classifier.weight", {c.num_labels, e}, Slot::kHead, -1, 0, true});
    out.push_back({"classifier.bias", {c.num_labels}, Slot::kHeadBias, -1, 0, false});
  }
}

std::string CanonicalName(const std::string& name) {
  const std::string prefix = "vit.";
  return name.compare(0, prefix.size(), prefix) == 0 ? name.substr(prefix.size()) : name;
}

void Heads(TransformerConfig& c, const std::vector<std::string>& names) {
  c.pooler = HasName(names, "pooler.dense.weight");
  c.task = HasName(names, "classifier.weight") ? Task::kImageClassification : Task::kBase;
}

// The image's fields, and contextLength from them (a value given must be that one).
void NormaliseImage(TransformerConfig& c) {
  if (c.image_size < 1 || c.image_size > 65536)
    Fail("imageSize", "an integer in [1, 65536]", std::to_string(c.image_size));
  if (c.patch_size < 1 || c.patch_size > c.image_size) {
    Fail("patchSize", "an integer in [1, imageSize " + std::to_string(c.image_size) + "]",
         std::to_string(c.patch_size));
  }
  if (c.num_channels < 1 || c.num_channels > 4096) {
    Fail("numChannels", "an integer in [1, 4096]", std::to_string(c.num_channels));
  }
  const int64_t grid = c.image_size / c.patch_size, tokens = 1 + grid * grid;
  if (c.context_length != 0 && c.context_length != tokens) {
    Fail("contextLength", std::to_string(tokens) + " = 1 + (imageSize / patchSize)² (derived), or absent",
         std::to_string(c.context_length));
  }
  c.context_length = tokens;
}

void Normalise(TransformerConfig& c) {
  if (c.embed_dim % c.num_heads != 0) {
    Fail("numHeads", "a divisor of embedDim " + std::to_string(c.embed_dim), std::to_string(c.num_heads));
  }
  if (c.task != Task::kBase && c.task != Task::kImageClassification) {
    Fail("task", "'base' or 'image-classification' for arch 'vit'", "a text task");
  }
  NormaliseEncoder(c, Task::kImageClassification, /*post_norm=*/false);
  if (c.attention_bias != AttentionBias::kAll) c.attention_bias = AttentionBias::kOut;  // (qkvBias false)
  NormaliseImage(c);
  c.vocab_size = 0;
  c.type_vocab_size = 0;
  c.embed_norm = false;
  c.classifier_dense = false;
  c.tie_embeddings = false;
  c.head_bias = c.task == Task::kImageClassification;
}

// ViTConfig's keys and defaults; the task and pooler come from the checkpoint's names (until then ViTModel's: a
// pooler, no head). encoder_stride (masked-image modelling's decoder) is not read.
void Read(const ConfigReader& hf, TransformerConfig& c) {
  ReadEncoderKeys(hf, c);
  hf.Only("pooler_act", {"tanh"}, "'tanh' (the pooler's activation)");
  c.image_size = hf.Int("image_size", 224);
  c.patch_size = hf.Int("patch_size", 16);
  c.num_channels = hf.Int("num_channels", 3);
  c.attention_bias = hf.Bool("qkv_bias", true) ? AttentionBias::kAll : AttentionBias::kOut;
  if (hf.Int("pooler_output_size", c.embed_dim) != c.embed_dim) {
    Fail("config.pooler_output_size", "hidden_size " + std::to_string(c.embed_dim) + " (or absent)",
         std::to_string(hf.Int("pooler_output_size", 0)));
  }
  c.task = Task::kBase;
  c.pooler = true;
}

bool Write(const TransformerConfig& c, nlohmann::json& hf) {
  hf["architectures"] = {c.task == Task::kImageClassification ? "ViTForImageClassification" : "ViTModel"};
  WriteEncoderKeys(c, hf);
  hf["image_size"] = c.image_size;
  hf["patch_size"] = c.patch_size;
  hf["num_channels"] = c.num_channels;
  hf["qkv_bias"] = c.attention_bias == AttentionBias::kAll;
  return true;
}

}  // namespace

const ArchType kVitArch = {"vit",
                           Normalise,
                           {"embedDim", "numLayers", "numHeads", "hiddenDim", "normEps", "hiddenAct", "imageSize",
                            "patchSize", "numChannels", "qkvBias", "contextLength", "task", "pooler", "numLabels"},
                           R"({"hiddenDim": 0, "normEps": 1e-12, "hiddenAct": "gelu", "numChannels": 3, "qkvBias": true,
        "contextLength": 0, "task": "base", "pooler": true, "numLabels": 2})",
                           {},
                           Parameters,
                           CanonicalName,
                           Heads,
                           nullptr};
const ModelType kVitType = {"vit", &kVitArch, Read, Write, "ViTModel"};

}  // namespace attnlab
