// The stages of one attention layer that nn.MultiheadAttention (kernels_mha.cc) and the Transformer's attention
// stage (cpp/src/model/block-inl.h) share, as gemma.cpp's layers all call one attention: both project Q/K/V (Linear,
// ops/linear-inl.h), apply their position hook (the model: q/k norm, RoPE), then
//   WriteKvCache:       the new tokens' key and value heads into a (B, KV, max, hd) cache at rows P … P + T − 1;
//   AttendDecodeGroups: decoding, one problem per (item, key/value head): the group's query heads over its keys
//                       and values in place (attention_decode-inl.h);
//   AttendHeadRange:    otherwise one problem per (item, head) (attention-inl.h's AttendHead);
// and out-project. LayerHeads says where each head's queries, keys, values, outputs and weights are, so that each
// driver keeps its own buffers and semantics (MHA's extra keys, masks and averaged weights; the model's head mask).
// Per-target code: include after hwy/highway.h, inside the foreach_target unit.

#if defined(ATTNLAB_SRC_ATTENTION_LAYER_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ATTNLAB_SRC_ATTENTION_LAYER_INL_H_
#undef ATTNLAB_SRC_ATTENTION_LAYER_INL_H_
#else
#define ATTNLAB_SRC_ATTENTION_LAYER_INL_H_
#endif

#include <algorithm>
#include <cstddef>

#include "cpp/src/attention/attention-inl.h"
#include "cpp/src/attention/attention_decode-inl.h"
#include "cpp/src/attention/kernels-inl.h"
#include "cpp/src/attention/kernels.h"
#include "cpp/src/parallel.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {

// The heads of one layer: `batch` items of lq queries over lk keys, `heads` query heads of hd features sharing
// kv_heads key/value heads (query head h reads key/value head h / (heads / kv_heads)).
//   query head h of item b, row t:  q + b·q_item + t·q_row + h·hd;
//   key/value head g of item b, j:  k (v) + b·kv_item + g·kv_head + j·kv_row (a cache: kv_item = KV·max·hd,
//                                   kv_head = max·hd, kv_row = hd; projected rows: kv_row = KV·hd, kv_head = hd);
//   output head h of item b, row t: ctx + b·ctx_item + t·ctx_row + h·hd.
// window: the keys each query sees (a cache: causal at offset P); bias: additive masks (MakeHeadProblem's).
struct LayerHeads {
  size_t batch, heads, kv_heads, lq, lk, hd;
  float scale;
  const float* q;
  size_t q_item, q_row;
  const float* k;
  const float* v;
  size_t kv_item, kv_head, kv_row;
  float* ctx;
  size_t ctx_item, ctx_row;
  KeyWindow window;
  BiasArgs bias;

  size_t Group() const { return heads / kv_heads; }
};

// Key/value head g of item b: its first key row and value row and their row stride.
struct KvHead {
  const float* k;
  const float* v;
  size_t stride;
};
HWY_INLINE KvHead KvHeadOf(const LayerHeads& l, size_t b, size_t g) {
  const size_t off = b * l.kv_item + g * l.kv_head;
  return KvHead{l.k + off, l.v + off, l.kv_row};
}

// The cache (B, KV, max, hd) receives the new tokens: row b·tokens + t of k and v (rows `stride` apart, key/value
// head g at column g·hd) → row past + t of (b, g), so that each head's keys stay contiguous.
HWY_INLINE void WriteKvCache(size_t batch, size_t kv_heads, size_t tokens, size_t hd, const float* k, const float* v,
                             size_t stride, float* cache_k, float* cache_v, size_t cache_max, size_t past) {
  for (size_t b = 0; b < batch; ++b) {
    for (size_t g = 0; g < kv_heads; ++g) {
      const size_t dst = ((b * kv_heads + g) * cache_max + past) * hd;
      for (size_t t = 0; t < tokens; ++t) {
        const size_t src = (b * tokens + t) * stride + g * hd;
        std::copy(k + src, k + src + hd, cache_k + dst + t * hd);
        std::copy(v + src, v + src + hd, cache_v + dst + t * hd);
      }
    }
  }
}

// Decoding (lq <= kDecodeMaxQueries, Group() <= kDecodeMaxGroup, window: causal at the cache's offset only): one
// problem per (item, key/value head), its group's query heads at once over the keys and values in place, the
// lower-right causal alignment of a cache. weights_of(bh) → head bh = b·heads + h's weights (lq, lk), or null; its
// group's heads are consecutive. Then after(b, h) for each head of the group.
template <class WeightsOf, class After>
HWY_INLINE void AttendDecodeGroups(const LayerHeads& l, const WeightsOf& weights_of, const After& after) {
  const size_t group = l.Group(), hd = l.hd;
  ParallelFor(
      l.batch * l.kv_heads, static_cast<double>(group) * HeadFlops(l.lq, l.lk, hd, hd),
      [&](size_t bg) {
        const size_t b = bg / l.kv_heads, g = bg % l.kv_heads, h0 = g * group, bh0 = b * l.heads + h0;
        const KvHead kv = KvHeadOf(l, b, g);
        const BiasArgs& bias = l.bias;
        DecodeGroup p{group,
                      l.lq,
                      l.lk,
                      hd,
                      l.scale,
                      l.q + b * l.q_item + h0 * hd,
                      hd,
                      l.q_row,
                      kv.k,
                      kv.v,
                      kv.stride,
                      l.ctx + b * l.ctx_item + h0 * hd,
                      hd,
                      l.ctx_row,
                      weights_of(bh0),
                      l.lq * l.lk,
                      bias.row_bias ? bias.row_bias + bh0 * bias.row_bias_batch_stride : nullptr,
                      bias.row_bias_batch_stride,
                      bias.key_bias ? bias.key_bias + b * bias.key_bias_batch_stride : nullptr,
                      bias.mask_cols};
        p.causal = true;  // the cache's lower-right alignment
        AttendDecodeGroup(p, DecodeScratch());
        for (size_t h = h0; h < h0 + group; ++h) after(b, h);
      },
      kMinParallelDecodeFlops);
}

// Problems bh ∈ [first, first + count) (bh = b·heads + h), each head attending its keys (AttendHead), in parallel;
// weights_of(bh) → where its weights (lq, lk) go, or null; then after(b, h).
template <class WeightsOf, class After>
HWY_INLINE void AttendHeadRange(const LayerHeads& l, size_t first, size_t count, const WeightsOf& weights_of,
                                const After& after) {
  const size_t hd = l.hd, group = l.Group();
  const HeadDims dims{l.lq, l.lk, hd, hd, l.scale};
  ParallelFor(count, HeadFlops(l.lq, l.lk, hd, hd), [&](size_t w) {
    const size_t bh = first + w, b = bh / l.heads, h = bh % l.heads;
    const KvHead kv = KvHeadOf(l, b, h / group);
    HeadProblem p = MakeHeadProblem(dims, l.q + b * l.q_item + h * hd, l.q_row, kv.v, kv.stride,
                                    l.ctx + b * l.ctx_item + h * hd, weights_of(bh), l.window, l.bias, bh, b);
    p.out_stride = l.ctx_row;  // (a head of the context, not of v)
    AttendHead(p, kv.k, kv.stride, ThreadScratch().head);
    after(b, h);
  });
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#endif  // ATTNLAB_SRC_ATTENTION_LAYER_INL_H_ toggle
