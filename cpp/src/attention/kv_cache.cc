// KVCache and MultiHeadAttention's decoding Forward: the new tokens' keys and values are projected once, appended
// to the cache (per key/value head, so that each head's keys stay contiguous) and every head attends over all
// cached positions, causal aligned lower-right.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnlab/attention.h"
#include "cpp/src/attention/kernels.h"
#include "cpp/src/attention/multi_head_attention_impl.h"
#include "cpp/src/checks.h"

namespace attnlab {

KVCache::KVCache() = default;
KVCache::~KVCache() = default;
KVCache::KVCache(KVCache&&) noexcept = default;
KVCache& KVCache::operator=(KVCache&&) noexcept = default;

int64_t KVCache::length() const { return state_ ? state_->length : 0; }
int64_t KVCache::batch_size() const { return state_ ? state_->batch_size : 0; }
int64_t KVCache::max_length() const { return state_ ? state_->max_length : 0; }
void KVCache::Reset() {
  if (state_) state_->length = 0;
}

KVCache MultiHeadAttention::CreateKVCache(int64_t batch_size, int64_t max_length) const {
  const Impl& m = *impl_;
  if (m.config.add_bias_kv) Fail("add_bias_kv", "false for a module with a KV cache", "true");
  if (m.config.add_zero_attn) Fail("add_zero_attn", "false for a module with a KV cache", "true");
  if (batch_size <= 0) Fail("batch_size", "a positive integer", std::to_string(batch_size));
  if (max_length <= 0) Fail("max_length", "a positive integer", std::to_string(max_length));
  const int64_t head_dim = m.config.embed_dim / m.config.num_heads, kv_heads = m.config.num_kv_heads;
  const size_t numel = CheckedNumel("max_length", {2, batch_size, kv_heads, max_length, head_dim}) / 2;
  KVCache cache;
  cache.state_ = std::make_unique<KVCache::State>();
  KVCache::State& st = *cache.state_;
  st.k.resize(numel);
  st.v.resize(numel);
  st.batch_size = batch_size;
  st.kv_heads = kv_heads;
  st.max_length = max_length;
  st.head_dim = head_dim;
  st.owner = m.id;
  st.params_version = m.params_version;
  return cache;
}

AttentionResult MultiHeadAttention::ForwardWithCache(const TensorView& query, const TensorView& key,
                                                     const TensorView& value, const MhaForwardOptions& options) {
  Impl& m = *impl_;
  KVCache::State* st = options.kv_cache->state_.get();
  if (!st) Fail("kv_cache", "a cache made by create_kv_cache", "an empty (moved-from) KVCache");
  if (st->owner != m.id) {
    Fail("kv_cache", "a cache created by this module's create_kv_cache", "a cache of another module");
  }
  if (options.requires_grad) Fail("requires_grad", "false with kv_cache (decoding is inference only)", "true");
  if (st->length > 0 && st->params_version != m.params_version) {
    throw std::logic_error(
        "kv_cache: expected keys and values projected with the current parameters, got a cache filled before the "
        "last load_state_dict (reset() it first)");
  }
  std::vector<float> kpm_storage, mask_storage;
  Shape w_shape;
  const int64_t past = st->length;
  MhaArgs args = PrepareMha(m.config, query, key, value, options, kpm_storage, mask_storage, w_shape, past);
  if (static_cast<int64_t>(args.n) != st->batch_size) {
    Fail("kv_cache", "a cache of batch_size = " + std::to_string(args.n) + " (query's batch size)",
         "batch_size " + std::to_string(st->batch_size));
  }
  if (args.s != args.l) {
    Fail("key", "the new tokens, as many as query's L = " + std::to_string(args.l) + " (with kv_cache)",
         std::to_string(args.s) + " in shape " + ShapeString(key.shape));
  }
  if (static_cast<int64_t>(args.s) > st->max_length - past) {
    throw std::invalid_argument("kv_cache: expected at most max_length = " + std::to_string(st->max_length) +
                                " cached tokens, got " + std::to_string(past) + " cached + " + std::to_string(args.s) +
                                " new (reset() it, or create one with a larger max_length)");
  }
  // Lower-right causal alignment (query i sees cached positions j <= past + i) is the kernels' own visible-key
  // range (kernels_mha.cc); a user attn_mask (l, past + s) or per head is passed as it is.
  m.SetParameters(args);
  args.cache_k = st->k.data();
  args.cache_v = st->v.data();
  args.cache_past = static_cast<size_t>(past);
  args.cache_max = static_cast<size_t>(st->max_length);

  AttentionResult result = AllocateMhaResult(query.shape, w_shape, options.need_weights, args);
  MhaForward(args);
  st->length = past + static_cast<int64_t>(args.s);
  st->params_version = m.params_version;
  return result;
}

}  // namespace attnlab
