// Result and state sizes of each call kind (attnlab/memory_needs.h). Counts are in float32 elements × 4 bytes.
#include "attnlab/memory_needs.h"

#include <cstddef>

#include "cpp/src/model/tiny_config.h"

namespace attnlab {
namespace {

constexpr double kF32 = 4;

double Product(const Shape& shape, size_t from, size_t to) {
  double p = 1;
  for (size_t i = from; i < to; ++i) p *= static_cast<double>(shape[i]);
  return p;
}

double Numel(const Shape& shape) { return Product(shape, 0, shape.size()); }

// Key/value features: num_kv_heads * head_dim (embed_dim without grouped-query heads, or for a configuration
// that the constructor rejects).
double KvDim(const MhaConfig& c) {
  if (c.num_heads <= 0 || c.num_kv_heads <= 0) return static_cast<double>(c.embed_dim);
  return static_cast<double>(c.embed_dim / c.num_heads) * static_cast<double>(c.num_kv_heads);
}

}  // namespace

MemoryNeeds SdpaMemoryNeeds(const Shape& query, const Shape& key, const Shape& value, bool need_weights) {
  MemoryNeeds needs;
  if (query.size() < 2 || key.size() < 2 || value.empty()) return needs;
  const double batch_lq = Product(query, 0, query.size() - 1);
  const double lk = static_cast<double>(key[key.size() - 2]);
  const double dv = static_cast<double>(value.back());
  needs.push_back({"output (*batch, Lq, dv)", batch_lq * dv * kF32});
  if (need_weights) needs.push_back({"weights (*batch, Lq, Lk)", batch_lq * lk * kF32});
  return needs;
}

MemoryNeeds SdpaBackwardMemoryNeeds(const Shape& query, const Shape& key, const Shape& value) {
  MemoryNeeds needs{{"gradQuery, gradKey, gradValue", (Numel(query) + Numel(key) + Numel(value)) * kF32}};
  if (query.size() >= 2 && key.size() >= 2) {
    const double batch_lq = Product(query, 0, query.size() - 1);
    needs.push_back({"weights and their gradient (*batch, Lq, Lk)", 2 * batch_lq * key[key.size() - 2] * kF32});
  }
  return needs;
}

namespace {

bool HasPast(const SdpaOptions& o) {
  return o.past_key.data || !o.past_key.shape.empty() || o.past_value.data || !o.past_value.shape.empty();
}

// key's shape with the past's keys added to its Lk (the keys attended).
Shape AllKeys(const Shape& key, const SdpaOptions& o) {
  Shape all = key;
  const Shape& past = o.past_key.shape;
  if (HasPast(o) && all.size() >= 2 && past.size() == all.size()) all[all.size() - 2] += past[past.size() - 2];
  return all;
}

}  // namespace

MemoryNeeds SdpaMemoryNeeds(const Shape& query, const Shape& key, const Shape& value, const SdpaOptions& options) {
  const Shape all_keys = AllKeys(key, options);
  MemoryNeeds needs = SdpaMemoryNeeds(query, all_keys, value, options.need_weights);
  if (query.size() < 2 || key.size() < 2) return needs;
  if (options.return_scores != ScoresStage::kNone) {
    const double batch_lq = Product(query, 0, query.size() - 1);
    needs.push_back({"scores (*batch, Lq, Lk)", batch_lq * static_cast<double>(all_keys[key.size() - 2]) * kF32});
  }
  if (HasPast(options)) {
    const double floats = Numel(options.past_key.shape) + Numel(key) + Numel(options.past_value.shape) + Numel(value);
    needs.push_back({"present key and value (past ‖ new)", floats * kF32});
  }
  return needs;
}

MemoryNeeds SdpaBackwardMemoryNeeds(const Shape& query, const Shape& key, const Shape& value,
                                    const SdpaOptions& options) {
  MemoryNeeds needs = SdpaBackwardMemoryNeeds(query, AllKeys(key, options), value);
  if (HasPast(options)) {
    needs.push_back(
        {"gradPastKey, gradPastValue", (Numel(options.past_key.shape) + Numel(options.past_value.shape)) * kF32});
  }
  return needs;
}

MemoryNeeds MhaParameterMemoryNeeds(const MhaConfig& config) {
  const double e = static_cast<double>(config.embed_dim);
  const double kdim = static_cast<double>(config.kdim < 0 ? config.embed_dim : config.kdim);
  const double vdim = static_cast<double>(config.vdim < 0 ? config.embed_dim : config.vdim);
  const double ekv = KvDim(config);
  return {{"projection weights", (e * e + ekv * kdim + ekv * vdim) * kF32},
          {"out_proj.weight", e * e * kF32},
          {"biases", (2 * e + 4 * ekv) * kF32}};  // in_proj_bias, out_proj.bias, and bias_k/bias_v if any
}

MemoryNeeds MhaForwardMemoryNeeds(const MhaConfig& config, const Shape& query, const Shape& key, const Shape& value,
                                  bool need_weights, bool requires_grad, int64_t cache_length) {
  MemoryNeeds needs;
  const int64_t e = config.embed_dim;
  const int64_t kdim = config.kdim < 0 ? e : config.kdim;
  const int64_t vdim = config.vdim < 0 ? e : config.vdim;
  const size_t rank = query.size();
  // Shapes the call rejects (it says why) need nothing here.
  if ((rank != 2 && rank != 3) || key.empty() || value.empty() || query.back() != e || key.back() != kdim ||
      value.back() != vdim) {
    return needs;
  }
  const double n = rank == 3 ? static_cast<double>(query[config.batch_first ? 0 : 1]) : 1;
  if (n <= 0) return needs;
  const double nl = Numel(query) / static_cast<double>(e);   // N · L
  const double ns = Numel(key) / static_cast<double>(kdim);  // N · S
  const double extra = (config.add_bias_kv ? 1 : 0) + (config.add_zero_attn ? 1 : 0);
  const double s_all = cache_length >= 0 ? static_cast<double>(cache_length) + ns / n : ns / n + extra;
  const double h = static_cast<double>(config.num_heads);
  needs.push_back({"projected query", nl * e * kF32});
  needs.push_back({"projected key and value", 2 * (cache_length >= 0 ? ns : n * s_all) * KvDim(config) * kF32});
  needs.push_back({"output", 2 * nl * e * kF32});
  if (need_weights || requires_grad) needs.push_back({"weights (N, H, L, S')", h * nl * s_all * kF32});
  if (requires_grad) {
    needs.push_back({"copies kept for backward", (Numel(query) + Numel(key) + Numel(value) + nl * e) * kF32});
  }
  return needs;
}

MemoryNeeds KVCacheMemoryNeeds(const MhaConfig& config, int64_t batch_size, int64_t max_length) {
  return {{"kvCache keys and values (batchSize, numKVHeads, maxLength, headDim)",
           2 * static_cast<double>(batch_size) * static_cast<double>(max_length) * KvDim(config) * kF32}};
}

// The tiny model is a configuration of the Transformer (cpp/src/model/tiny_config.h): its needs are that model's.
// A configuration the constructor refuses needs nothing here (the constructor says why).
MemoryNeeds TinyTransformerParameterMemoryNeeds(const TinyTransformerConfig& config) {
  if (!TinyConfigValid(config)) return {};
  return TransformerParameterMemoryNeeds(TinyModelConfig(config), WeightStorage::kFloat32);
}

MemoryNeeds TinyTransformerStepMemoryNeeds(const TinyTransformerConfig& config, const Shape& tokens,
                                           bool with_gradient) {
  if (!TinyConfigValid(config) || tokens.size() != 2) return {};
  const TransformerConfig c = TinyModelConfig(config);
  if (with_gradient) return TransformerTrainMemoryNeeds(c, tokens, TrainCall::kLossAndGradient);
  return TransformerForwardMemoryNeeds(c, tokens, 0, {0}, false, false, false);
}

}  // namespace attnlab
