// The checks every configuration passes, sizes, and the parameter table by model type (architectures.h).
#include "cpp/src/model/architectures.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "cpp/src/checks.h"
#include "cpp/src/model/types/model_type.h"

namespace attnlab {
namespace {

void CheckPositive(const char* field, int64_t value, int64_t max = std::numeric_limits<int32_t>::max()) {
  if (value < 1 || value > max) {
    Fail(field, "an integer in [1, " + std::to_string(max) + "]", std::to_string(value));
  }
}

}  // namespace

TransformerConfig NormalisedConfig(const TransformerConfig& config) {
  TransformerConfig c = config;
  const ArchType& arch = ArchOf(c.arch);
  // (a family without the field derives it: a vision model has no vocabulary, its length is its patches')
  const auto has = [&](const char* field) { return std::count(arch.fields.begin(), arch.fields.end(), field) > 0; };
  if (has("vocabSize")) CheckPositive("vocabSize", c.vocab_size);
  CheckPositive("embedDim", c.embed_dim, int64_t{1} << 16);
  CheckPositive("numLayers", c.num_layers, 1024);
  CheckPositive("numHeads", c.num_heads, c.embed_dim);
  if (c.num_kv_heads < 0) CheckPositive("numKVHeads", c.num_kv_heads, c.num_heads);
  if (c.head_dim < 0) CheckPositive("headDim", c.head_dim, int64_t{1} << 12);
  if (c.hidden_dim < 0) CheckPositive("hiddenDim", c.hidden_dim, int64_t{1} << 20);
  if (c.head_dim == 0 && c.embed_dim % c.num_heads != 0) {
    Fail("numHeads", "a divisor of embedDim " + std::to_string(c.embed_dim), std::to_string(c.num_heads));
  }
  if (c.num_kv_heads == 0) c.num_kv_heads = c.num_heads;
  if (c.head_dim == 0) c.head_dim = c.embed_dim / c.num_heads;
  arch.normalise(c);
  CheckPositive("contextLength", c.context_length, int64_t{1} << 20);
  CheckPositive("numKVHeads", c.num_kv_heads, c.num_heads);
  if (c.num_heads % c.num_kv_heads != 0) {
    Fail("numKVHeads", "a divisor of numHeads " + std::to_string(c.num_heads), std::to_string(c.num_kv_heads));
  }
  CheckPositive("headDim", c.head_dim, int64_t{1} << 12);
  if (c.mlp != MlpKind::kNone) CheckPositive("hiddenDim", c.hidden_dim, int64_t{1} << 20);
  if (!(c.norm_eps >= 0 && c.norm_eps < 1)) Fail("normEps", "a number in [0, 1)", std::to_string(c.norm_eps));
  if (c.sliding_window < 0) Fail("slidingWindow", "null or a positive integer", std::to_string(c.sliding_window));
  return c;
}

ModelSizes SizesOf(const TransformerConfig& c) {
  ModelSizes z{};
  z.e = static_cast<size_t>(c.embed_dim);
  z.heads = static_cast<size_t>(c.num_heads);
  z.kv_heads = static_cast<size_t>(c.num_kv_heads);
  z.head_dim = static_cast<size_t>(c.head_dim);
  z.hidden = static_cast<size_t>(c.hidden_dim);
  z.vocab = static_cast<size_t>(c.vocab_size);
  z.qkv_out = (z.heads + 2 * z.kv_heads) * z.head_dim;
  const bool gated = c.mlp == MlpKind::kSwiGlu || c.mlp == MlpKind::kGeluTanhGlu;
  z.up_out = gated ? 2 * z.hidden : c.mlp == MlpKind::kNone ? 0 : z.hidden;
  z.down_in = c.mlp == MlpKind::kNone ? 0 : z.hidden;
  z.position_rows = static_cast<size_t>(c.context_length + (c.pad_offset_positions ? c.pad_token_id + 1 : 0));
  const bool classifier = c.task == Task::kSequenceClassification || c.task == Task::kImageClassification;
  z.head_out = classifier ? static_cast<size_t>(c.num_labels) : c.task == Task::kBase ? 0 : z.vocab;
  z.patch_in = static_cast<size_t>(c.num_channels * c.patch_size * c.patch_size);
  return z;
}

std::vector<ParamSpec> ParameterSpecs(const TransformerConfig& c) {
  std::vector<ParamSpec> out;
  ArchOf(c.arch).parameters(c, SizesOf(c), out);
  return out;
}

std::string CanonicalName(const TransformerConfig& c, const std::string& name) {
  return ArchOf(c.arch).canonical_name(name);
}

std::string TiedName(const TransformerConfig& c, const std::string& canonical) {
  const ArchType& arch = ArchOf(c.arch);
  if (arch.tied_to) return arch.tied_to(c, canonical);
  return c.tie_embeddings && canonical == "lm_head.weight" ? ParameterSpecs(c).front().name : "";
}

}  // namespace attnlab
