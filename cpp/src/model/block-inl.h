// The stages of a Transformer forward, shared by the inference unit (kernels_model.cc) and the training unit
// (kernels_model_train.cc): embed, then per block norm → Q/K/V → RoPE → cache → heads (attention/layer-inl.h, as
// MHA's) → out-projection → residual → norm → MLP → residual, then the final norm and the LM head. Buffers are
// batch-first, (B·T, width) rows. Training passes a BlockSaved per block: the stages then write their activations
// there instead of into scratch.
// Per-target code: include after hwy/highway.h, inside the foreach_target unit.

#if defined(ATTNLAB_SRC_MODEL_BLOCK_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ATTNLAB_SRC_MODEL_BLOCK_INL_H_
#undef ATTNLAB_SRC_MODEL_BLOCK_INL_H_
#else
#define ATTNLAB_SRC_MODEL_BLOCK_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include "cpp/src/attention/attention-inl.h"
#include "cpp/src/attention/attention_decode-inl.h"
#include "cpp/src/attention/kernels-inl.h"
#include "cpp/src/attention/layer-inl.h"
#include "cpp/src/attention/relative_bias.h"
#include "cpp/src/model/encoder_kernels.h"
#include "cpp/src/model/model_kernels.h"
#include "cpp/src/ops/activation-inl.h"
#include "cpp/src/ops/linear-inl.h"
#include "cpp/src/ops/norm-inl.h"
#include "cpp/src/ops/patches.h"
#include "cpp/src/ops/rope-inl.h"
#include "cpp/src/ops/vector_ops-inl.h"
#include "cpp/src/parallel.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Grow-only activations of one forward: x the residual stream (rows, E), h a normed copy, qkv (rows, H·hd +
// 2·KV·hd), qk_raw the query and key heads before the q/k norm, ctx the heads' outputs (rows, H·hd), up the MLP's
// hidden (rows, up.out), proj a projection's output; an encoder's heads: first (B, E) each item's token 0, pooled
// (B, E); cross an encoder–decoder's cross-attention keys and values as projected (B·S, 2·H·hd); relative each
// (item, head)'s diagonal of relative position biases (B·H, T + P + T − 1).
struct ModelScratch {
  std::vector<float> x, h, qkv, qk_raw, ctx, up, proj, first, pooled, patches, cross, relative;
};

inline ModelScratch& ThreadModelScratch() {
  static thread_local ModelScratch scratch;
  return scratch;
}

inline float* Sized(std::vector<float>& buffer, size_t n) {
  if (buffer.size() < n) buffer.resize(n);
  return buffer.data();
}

HWY_INLINE void NormRows(const ModelArgs& a, size_t rows, const float* x, const NormArgs& norm, float* y) {
  if (!norm.weight) {  // (no norm: y = x)
    std::copy(x, x + rows * a.e, y);
    return;
  }
  ParallelFor(rows, 8.0 * a.e, [&](size_t r) {
    if (norm.bias) {
      LayerNormRow(x + r * a.e, a.e, norm.weight, norm.bias, a.norm_eps, y + r * a.e);
    } else {
      RmsNormRow(x + r * a.e, a.e, norm.weight, a.norm_eps, y + r * a.e);
    }
  });
}

// x (rows, E) = embedding column ids[r] × embed_scale (+ positions[P + t]: learned wpe, or the fixed sinusoidal
// table; an encoder's position ids pick the row instead).
HWY_INLINE void Embed(const ModelArgs& a, float* x) {
  for (size_t r = 0; r < a.batch * a.tokens; ++r) {
    const size_t id = static_cast<size_t>(a.ids[r]);
    float* row = x + r * a.e;
    if (a.embed16.data) {
      for (size_t c = 0; c < a.e; ++c) row[c] = a.embed16.Get(c, id);
    } else {
      const float* column = a.embed.data + (id / kPanel) * a.embed.panel_stride + id % kPanel;
      for (size_t c = 0; c < a.e; ++c) row[c] = column[c * kPanel];
    }
    if (a.embed_scale != 1.0f) ScaleRow(row, a.e, a.embed_scale);
    const bool ids = a.encoder && a.encoder->position_ids;
    const size_t p = ids ? static_cast<size_t>(a.encoder->position_ids[r]) : a.past + r % a.tokens;
    if (a.positions) AddRows(row, a.positions + p * a.e, a.e);
  }
}

// An encoder's embeddings: x += type_embed[token type], then x = embed_norm(x) (through m.h).
HWY_INLINE void EncoderEmbed(const ModelArgs& a, const EncoderArgs& enc, ModelScratch& m) {
  const size_t rows = a.batch * a.tokens;
  for (size_t r = 0; r < rows && enc.type_embed; ++r) {
    const size_t type = enc.token_types ? static_cast<size_t>(enc.token_types[r]) : 0;
    AddRows(m.x.data() + r * a.e, enc.type_embed + type * a.e, a.e);
  }
  if (!enc.embed_norm.weight) return;
  NormRows(a, rows, m.x.data(), enc.embed_norm, m.h.data());
  std::swap(m.x, m.h);
}

// A vision model's embeddings (EncoderArgs: [CLS], then each patch through the patch projection, + positions).
HWY_INLINE void PatchEmbed(const ModelArgs& a, const EncoderArgs& enc, ModelScratch& m) {
  const size_t n = a.tokens - 1, in = enc.patch_embed.in, image = enc.channels * enc.image * enc.image;
  float* patches = Sized(m.patches, a.batch * n * in);
  for (size_t b = 0; b < a.batch; ++b) {
    UnfoldPatches(enc.pixels + b * image, enc.channels, enc.image, enc.patch, patches + b * n * in);
  }
  Linear(a.batch * n, patches, in, enc.patch_embed, m.proj.data(), a.e);
  for (size_t b = 0; b < a.batch; ++b) {
    float* x = m.x.data() + b * a.tokens * a.e;
    std::copy(enc.cls_token, enc.cls_token + a.e, x);
    std::copy(m.proj.data() + b * n * a.e, m.proj.data() + (b + 1) * n * a.e, x + a.e);
    AddRows(x, a.positions, a.tokens * a.e);
  }
}

// Post-norm blocks: x = norm(x) after a residual add (through m.h).
HWY_INLINE void PostNorm(const ModelArgs& a, const NormArgs& norm, ModelScratch& m) {
  NormRows(a, a.batch * a.tokens, m.x.data(), norm, m.h.data());
  std::swap(m.x, m.h);
}

// y = act(x) over n elements (y may be x) for the elementwise MLP kinds (not SwiGLU, whose rows hold two halves).
HWY_INLINE void ActivateRow(MlpKind kind, const float* x, size_t n, float* y) {
  if (kind == MlpKind::kGeluErf) return GeluErfRow(x, n, y);
  if (kind == MlpKind::kRelu) return ReluRow(x, n, y);
  if (kind == MlpKind::kSilu) return SiluRow(x, n, y);
  GeluTanhRow(x, n, y);
}

// The q/k norm (qk_norm): each query head (weight q_norm) and key head (k_norm) of the qkv rows RMS-normalised
// over its hd features; raw (rows, (H + KV)·hd) receives the heads as they were.
HWY_INLINE void QkNormRows(const ModelArgs& a, const BlockArgs& blk, float* qkv, size_t width, float* raw) {
  const size_t hd = a.head_dim, n = (a.heads + a.kv_heads) * hd;
  ParallelFor(a.batch * a.tokens, 8.0 * n, [&](size_t r) {
    float* row = qkv + r * width;
    float* before = raw + r * n;
    std::copy(row, row + n, before);
    for (size_t h = 0; h < a.heads + a.kv_heads; ++h) {
      RmsNormRow(before + h * hd, hd, h < a.heads ? blk.q_norm : blk.k_norm, a.norm_eps, row + h * hd);
    }
  });
}

// RoPE on every query and key head of the qkv rows (row r = b·T + t at position P + t), by the angles of `sin`
// (the backward rotates back with −sin).
HWY_INLINE void RopeRows(const ModelArgs& a, float* qkv, size_t width, const float* sin) {
  const size_t half = a.head_dim / 2;
  for (size_t r = 0; r < a.batch * a.tokens; ++r) {
    const size_t t = r % a.tokens;
    RopeHeads(qkv + r * width, a.heads + a.kv_heads, a.head_dim, a.rope_cos + t * half, sin + t * half);
  }
}

// The heads' logit scale: 1/√hd, or 1 without scaling (T5).
HWY_INLINE float HeadScale(const ModelArgs& a) {
  return a.scale_attention ? 1.0f / std::sqrt(static_cast<float>(a.head_dim)) : 1.0f;
}

// A stack's relative position biases (a.relative), once per forward: each (item, head)'s diagonal for queries at
// P … P + T − 1 over keys 0 … P + T − 1 (attention/relative_bias.h), in m.relative; null without them.
HWY_INLINE const float* RelativeDiagonals(const ModelArgs& a, ModelScratch& m) {
  if (!a.relative.table) return nullptr;
  const size_t n = 2 * a.tokens + a.past - 1;
  float* out = Sized(m.relative, a.batch * a.heads * n);
  for (size_t h = 0; h < a.heads; ++h) {
    RelativeBiasDiagonal(a.relative.table, a.heads, h, a.relative.buckets, a.relative.max_distance, !a.causal, a.tokens,
                         a.past + a.tokens, a.past, out + h * n);
  }
  for (size_t b = 1; b < a.batch; ++b) std::copy(out, out + a.heads * n, out + b * a.heads * n);
  return out;
}

// The heads' logit scale and key range: causal at positions P + t (unless a.causal is false), within the window,
// without padded keys. The backward (past 0) reads its dims.
struct HeadSetup {
  HeadDims dims;
  KeyWindow window;
  BiasArgs bias;
};
HWY_INLINE HeadSetup HeadSetupOf(const ModelArgs& a) {
  const size_t hd = a.head_dim, s = a.past + a.tokens;
  HeadSetup h{HeadDims{a.tokens, s, hd, hd, HeadScale(a)}, KeyWindow(), BiasArgs()};
  h.window.causal = a.causal;
  h.window.offset = static_cast<int64_t>(a.past);
  h.window.left = a.window_left;
  h.bias.key_bias = a.key_bias;
  h.bias.key_bias_batch_stride = s;
  h.bias.mask_cols = a.key_bias ? s : 0;
  return h;
}

// The block's heads (layer-inl.h): queries in the qkv rows (rows `width` apart), keys and values in the cache
// (B, KV, cache_max, hd), outputs ctx (rows, H·hd).
// relative: the stack's diagonals (RelativeDiagonals), a Toeplitz row bias of every (item, head), or null.
HWY_INLINE LayerHeads LayerHeadsOf(const ModelArgs& a, const BlockArgs& blk, const float* qkv, size_t width, float* ctx,
                                   const float* relative = nullptr) {
  const size_t hd = a.head_dim, dq = a.heads * hd;
  const HeadSetup setup = HeadSetupOf(a);
  LayerHeads l{};
  l.batch = a.batch;
  l.heads = a.heads;
  l.kv_heads = a.kv_heads;
  l.lq = a.tokens;
  l.lk = a.past + a.tokens;
  l.hd = hd;
  l.scale = setup.dims.scale;
  l.q = qkv;
  l.q_item = a.tokens * width;
  l.q_row = width;
  l.k = blk.cache_k;
  l.v = blk.cache_v;
  l.kv_item = a.kv_heads * a.cache_max * hd;
  l.kv_head = a.cache_max * hd;
  l.kv_row = hd;
  l.ctx = ctx;
  l.ctx_item = a.tokens * dq;
  l.ctx_row = dq;
  l.window = setup.window;
  l.bias = setup.bias;
  if (relative) {  // (row i of problem bh starts at its diagonal's entry T − 1 − i: key 0 at position P + i)
    l.bias.row_bias = relative + a.tokens - 1;
    l.bias.row_bias_batch_stride = a.past + 2 * a.tokens - 1;
    l.bias.toeplitz = true;
    l.bias.mask_cols = a.past + a.tokens;
  }
  return l;
}

// head_mask[h] times head h's outputs (rows of ctx) and weights (T, s), when it is not 1.
HWY_INLINE void MaskHead(const ModelArgs& a, const float* head_mask, size_t s, size_t b, size_t h, float* ctx,
                         float* weights) {
  if (!head_mask || head_mask[h] == 1.0f) return;
  const size_t dq = a.heads * a.head_dim;
  float* out = ctx + b * a.tokens * dq + h * a.head_dim;
  for (size_t t = 0; t < a.tokens; ++t) ScaleRow(out + t * dq, a.head_dim, head_mask[h]);
  if (weights) ScaleRow(weights + (b * a.heads + h) * a.tokens * s, a.tokens * s, head_mask[h]);
}

// Decoding: a few new tokens over a cache without a window. Each (item, key/value head) reads its cached keys and
// values in place for its group's query heads at once (layer-inl.h's AttendDecodeGroups, MHA's decode path too):
// nothing is packed per token.
// A relative bias decodes there one token at a time (the groups' row biases are mask_cols apart, not Toeplitz).
HWY_INLINE bool DecodesInPlace(const ModelArgs& a) {
  return a.past > 0 && a.causal && a.tokens <= kDecodeMaxQueries && a.heads / a.kv_heads <= kDecodeMaxGroup &&
         a.window_left < 0 && (!a.relative.table || a.tokens == 1);
}

// ctx (rows, H·hd): each (item, head) attends over the cached keys 0 … P + T − 1 (decoding: each group at once);
// weights kept when the layer's are asked for; then × head_mask. relative: RelativeDiagonals' or null.
HWY_INLINE void AttendHeads(const ModelArgs& a, const BlockArgs& blk, const float* qkv, size_t width, float* ctx,
                            const float* relative) {
  const LayerHeads heads = LayerHeadsOf(a, blk, qkv, width, ctx, relative);
  const size_t plane = heads.lq * heads.lk;
  auto weights_of = [&](size_t bh) { return blk.attentions ? blk.attentions + bh * plane : nullptr; };
  auto mask = [&](size_t b, size_t h) { MaskHead(a, blk.head_mask, heads.lk, b, h, ctx, blk.attentions); };
  if (DecodesInPlace(a)) return AttendDecodeGroups(heads, weights_of, mask);
  AttendHeadRange(heads, 0, a.batch * a.heads, weights_of, mask);
}

// Heads whose outputs come from outside (values: blk.head_values or cross_head_values): their columns of ctx (rows,
// H·hd) are overwritten; then ctx is copied to `kept` when non-null (head_outputs, cross_head_outputs).
HWY_INLINE void ReplaceHeads(const ModelArgs& a, const float* const* values, float* ctx, float* kept) {
  const size_t hd = a.head_dim, dq = a.heads * hd;
  for (size_t h = 0; values && h < a.heads; ++h) {
    if (!values[h]) continue;
    for (size_t r = 0; r < a.batch * a.tokens; ++r) {
      std::copy(values[h] + r * hd, values[h] + (r + 1) * hd, ctx + r * dq + h * hd);
    }
  }
  if (kept) std::copy(ctx, ctx + a.batch * a.tokens * dq, kept);
}

// x += attention(norm₁(x)); post-norm: x = norm₁(x + attention(x)).
HWY_INLINE void AttentionStage(const ModelArgs& a, BlockArgs blk, ModelScratch& m, const BlockSaved* saved) {
  const size_t rows = a.batch * a.tokens, width = blk.qkv.out;
  const bool post = a.encoder && a.encoder->post_norm;  // (training post-norm: h1 keeps the sum the norm reads)
  float* h = post ? m.x.data() : saved ? saved->h1 : m.h.data();
  float* qkv = saved ? saved->qkv : m.qkv.data();
  float* ctx = saved ? saved->ctx : m.ctx.data();
  if (saved) {
    std::copy(m.x.data(), m.x.data() + rows * a.e, saved->x_in);
    blk.attentions = saved->weights;
  }
  if (!post) NormRows(a, rows, m.x.data(), blk.norm1, h);
  Linear(rows, h, a.e, blk.qkv, qkv, width);
  if (blk.q_norm) QkNormRows(a, blk, qkv, width, saved ? saved->qk_raw : m.qk_raw.data());
  if (a.position_kind == PositionKind::kRope) RopeRows(a, qkv, width, a.rope_sin);
  const size_t k0 = a.heads * a.head_dim, v0 = k0 + a.kv_heads * a.head_dim;  // (the key and value heads' columns)
  WriteKvCache(a.batch, a.kv_heads, a.tokens, a.head_dim, qkv + k0, qkv + v0, width, blk.cache_k, blk.cache_v,
               a.cache_max, a.past);
  AttendHeads(a, blk, qkv, width, ctx, a.relative.table ? m.relative.data() : nullptr);
  ReplaceHeads(a, blk.head_values, ctx, blk.head_outputs);
  Linear(rows, ctx, blk.o.in, blk.o, m.proj.data(), a.e);
  AddRows(m.x.data(), m.proj.data(), rows * a.e);
  if (post && saved) std::copy(m.x.data(), m.x.data() + rows * a.e, saved->h1);
  if (post) PostNorm(a, blk.norm1, m);
}

// The cross-attention heads' layout: queries (rows, H·hd) in m.qkv, keys and values blk.cross_k / cross_v (B, H, S,
// hd), no causal mask, the source's padding as key biases.
HWY_INLINE LayerHeads CrossHeadsOf(const ModelArgs& a, const BlockArgs& blk, const float* q, float* ctx) {
  const size_t hd = a.head_dim, dq = a.heads * hd, s = a.cross->source;
  LayerHeads l{};
  l.batch = a.batch;
  l.heads = l.kv_heads = a.heads;
  l.lq = a.tokens;
  l.lk = s;
  l.hd = hd;
  l.scale = HeadScale(a);
  l.q = q;
  l.q_item = a.tokens * dq;
  l.q_row = l.ctx_row = dq;
  l.k = blk.cross_k;
  l.v = blk.cross_v;
  l.kv_item = a.heads * s * hd;
  l.kv_head = s * hd;
  l.kv_row = hd;
  l.ctx = ctx;
  l.ctx_item = a.tokens * dq;
  l.bias.key_bias = a.cross->key_bias;
  l.bias.key_bias_batch_stride = s;
  l.bias.mask_cols = a.cross->key_bias ? s : 0;
  return l;
}

// An encoder–decoder's cross-attention: x = norm₃(x + o(attn(q(x), k(mem), v(mem)))) (post-norm; else x +=
// o(attn(q(norm₃(x)), …))), the keys and values projected from the encoder's output (B·S rows) into blk.cross_k /
// cross_v (memory null: decoding, already there); weights kept when asked for, then × the cross head mask. Training
// (saved non-null): the stage's activations go to saved's cross fields (post-norm: h3 keeps the sum norm₃ reads).
HWY_INLINE void CrossAttentionStage(const ModelArgs& a, BlockArgs blk, ModelScratch& m, const BlockSaved* saved) {
  const size_t rows = a.batch * a.tokens, dq = a.heads * a.head_dim, s = a.cross->source;
  const bool post = a.encoder && a.encoder->post_norm;
  float* h = post ? m.x.data() : saved ? saved->h3 : m.h.data();
  float* q = saved ? saved->q_cross : m.qkv.data();
  float* ctx = saved ? saved->ctx_cross : m.ctx.data();
  if (saved) {
    std::copy(m.x.data(), m.x.data() + rows * a.e, saved->x_cross);
    blk.cross_attentions = saved->cross_weights;
  }
  if (!post) NormRows(a, rows, m.x.data(), blk.norm3, h);
  Linear(rows, h, a.e, blk.cross_q, q, dq);
  if (a.cross->memory) {
    float* kv = Sized(m.cross, a.batch * s * 2 * dq);
    Linear(a.batch * s, a.cross->memory, a.e, blk.cross_kv, kv, 2 * dq);
    WriteKvCache(a.batch, a.heads, s, a.head_dim, kv, kv + dq, 2 * dq, blk.cross_k, blk.cross_v, s, 0);
  }
  const LayerHeads heads = CrossHeadsOf(a, blk, q, ctx);
  const size_t plane = a.tokens * s;
  auto weights_of = [&](size_t bh) { return blk.cross_attentions ? blk.cross_attentions + bh * plane : nullptr; };
  auto mask = [&](size_t b, size_t h) { MaskHead(a, blk.cross_head_mask, s, b, h, ctx, blk.cross_attentions); };
  AttendHeadRange(heads, 0, a.batch * a.heads, weights_of, mask);
  ReplaceHeads(a, blk.cross_head_values, ctx, blk.cross_head_outputs);
  Linear(rows, ctx, dq, blk.cross_o, m.proj.data(), a.e);
  AddRows(m.x.data(), m.proj.data(), rows * a.e);
  if (post && saved) std::copy(m.x.data(), m.x.data() + rows * a.e, saved->h3);  // (the sum norm₃ reads)
  if (post) PostNorm(a, blk.norm3, m);
}

// x += MLP(norm₂(x)): down(act(up(h))), down(silu(gate(h)) · up(h)) or down(gelu_tanh(gate(h)) · up(h)); post-norm: x =
// norm₂(x + MLP(x)). Without `saved` the activation overwrites the pre-activation (SwiGLU's into the gate half, so its
// rows stay up.out apart).
HWY_INLINE void MlpStage(const ModelArgs& a, const BlockArgs& blk, ModelScratch& m, const BlockSaved* saved) {
  const size_t rows = a.batch * a.tokens, width = blk.up.out, act_stride = saved ? blk.down.in : width;
  const bool post = a.encoder && a.encoder->post_norm;
  float* h = post ? m.x.data() : saved ? saved->h2 : m.h.data();
  float* up = saved ? saved->up : m.up.data();
  float* act = saved ? saved->act : m.up.data();
  if (saved) std::copy(m.x.data(), m.x.data() + rows * a.e, saved->x_mid);
  if (!post) NormRows(a, rows, m.x.data(), blk.norm2, h);
  Linear(rows, h, a.e, blk.up, up, width);
  ParallelFor(rows, 20.0 * width, [&](size_t r) {
    const float* row = up + r * width;
    if (a.mlp == MlpKind::kSwiGlu) {
      SwiGluRow(row, row + a.hidden, a.hidden, act + r * act_stride);
    } else if (a.mlp == MlpKind::kGeluTanhGlu) {
      GeluTanhGluRow(row, row + a.hidden, a.hidden, act + r * act_stride);
    } else {
      ActivateRow(a.mlp, row, width, act + r * act_stride);
    }
  });
  Linear(rows, act, act_stride, blk.down, m.proj.data(), a.e);
  AddRows(m.x.data(), m.proj.data(), rows * a.e);
  if (post && saved) std::copy(m.x.data(), m.x.data() + rows * a.e, saved->h2);  // (the sum norm₂ reads)
  if (post) PostNorm(a, blk.norm2, m);
}

// y (B, E) = tanh(dense(x)) of B rows.
HWY_INLINE void DenseTanh(const ModelArgs& a, const float* x, const LinearArgs& dense, float* y) {
  Linear(a.batch, x, a.e, dense, y, a.e);
  TanhRow(y, a.batch * a.e, y);
}

// An encoder's outputs from h (rows, E), the last hidden state (kept when last_hidden is non-null): the pooled
// output, then the head's logits (masked-LM (rows, V); classification (B, numLabels) of token 0, an image's of h₀
// itself; an encoder–decoder's LM head (rows, V); base: none). Uses m.x and m.proj.
HWY_INLINE void EncoderHeads(const ModelArgs& a, const EncoderArgs& enc, ModelScratch& m, const float* h) {
  const size_t rows = a.batch * a.tokens;
  if (enc.last_hidden) std::copy(h, h + rows * a.e, enc.last_hidden);
  if (enc.task == Task::kSeq2SeqLm && enc.head_scale != 1.0f) {  // (into m.proj: the last hidden state stays h)
    for (size_t i = 0; i < rows * a.e; ++i) m.proj[i] = h[i] * enc.head_scale;
    return Linear(rows, m.proj.data(), a.e, a.head, a.logits, a.vocab);
  }
  if (enc.task == Task::kSeq2SeqLm) return Linear(rows, h, a.e, a.head, a.logits, a.vocab);
  float* first = Sized(m.first, a.batch * a.e);
  float* pooled = Sized(m.pooled, a.batch * a.e);
  for (size_t b = 0; b < a.batch; ++b) std::copy(h + b * a.tokens * a.e, h + (b * a.tokens + 1) * a.e, first + b * a.e);
  if (enc.pooler.out) DenseTanh(a, first, enc.pooler, pooled);
  if (enc.pooled) std::copy(pooled, pooled + a.batch * a.e, enc.pooled);
  if (enc.task == Task::kImageClassification) return Linear(a.batch, first, a.e, a.head, a.logits, a.head.out);
  if (enc.task == Task::kSequenceClassification) {
    if (enc.cls_dense.out) DenseTanh(a, first, enc.cls_dense, pooled);
    return Linear(a.batch, pooled, a.e, a.head, a.logits, a.head.out);
  }
  if (enc.task != Task::kMaskedLm) return;
  Linear(rows, h, a.e, enc.head_dense, m.proj.data(), a.e);
  ParallelFor(rows, 20.0 * a.e,
              [&](size_t r) { ActivateRow(enc.head_act, m.proj.data() + r * a.e, a.e, m.proj.data() + r * a.e); });
  NormRows(a, rows, m.proj.data(), enc.head_norm, m.x.data());
  Linear(rows, m.x.data(), a.e, a.head, a.logits, a.vocab);
}

// The whole forward into a.logits; with `train`, each block's activations go to train->saved and the final
// stream and norm to train->x_final, h_final.
HWY_INLINE void ForwardStages(const ModelArgs& a, ModelScratch& m, TrainArgs* train) {
  const size_t rows = a.batch * a.tokens, plane = rows * a.e;
  Sized(m.x, plane);
  Sized(m.h, plane);
  Sized(m.proj, plane);
  Sized(m.ctx, rows * a.heads * a.head_dim);
  for (size_t l = 0; l < a.num_blocks; ++l) {
    Sized(m.qkv, rows * a.blocks[l].qkv.out);
    if (a.blocks[l].q_norm) Sized(m.qk_raw, rows * (a.heads + a.kv_heads) * a.head_dim);
    Sized(m.up, rows * a.blocks[l].up.out);
  }
  RelativeDiagonals(a, m);
  if (a.encoder && a.encoder->pixels) {
    PatchEmbed(a, *a.encoder, m);
  } else {
    Embed(a, m.x.data());
  }
  if (a.encoder) EncoderEmbed(a, *a.encoder, m);
  for (size_t b = 0; a.occlude && b < a.batch; ++b) {
    if (a.occlude[b] < 0) continue;
    float* row = m.x.data() + (b * a.tokens + static_cast<size_t>(a.occlude[b])) * a.e;
    std::fill(row, row + a.e, 0.0f);
  }
  for (size_t l = 0; l < a.num_blocks; ++l) {
    if (a.hidden_states) std::copy(m.x.data(), m.x.data() + plane, a.hidden_states[l]);
    AttentionStage(a, a.blocks[l], m, train ? &train->saved[l] : nullptr);
    if (a.cross) CrossAttentionStage(a, a.blocks[l], m, train ? &train->saved[l] : nullptr);
    if (a.mlp != MlpKind::kNone) MlpStage(a, a.blocks[l], m, train ? &train->saved[l] : nullptr);
  }
  float* h = train ? train->h_final : m.h.data();
  if (train) std::copy(m.x.data(), m.x.data() + plane, train->x_final);
  NormRows(a, rows, m.x.data(), a.norm_f, h);
  // (an encoder's last hidden state is the last block's output, before a final norm: Hugging Face's ViT; T5's stacks
  // keep the normed one)
  const float* last = a.encoder && !a.encoder->normed_states ? m.x.data() : h;
  if (a.hidden_states) std::copy(last, last + plane, a.hidden_states[a.num_blocks]);
  if (a.encoder) return EncoderHeads(a, *a.encoder, m, h);
  if (!a.last_logits_only) return Linear(rows, h, a.e, a.head, a.logits, a.vocab);
  for (size_t b = 0; b < a.batch; ++b) {  // (each item's last row, gathered)
    std::copy(h + ((b + 1) * a.tokens - 1) * a.e, h + (b + 1) * a.tokens * a.e, m.proj.data() + b * a.e);
  }
  Linear(a.batch, m.proj.data(), a.e, a.head, a.logits, a.vocab);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#endif  // ATTNLAB_SRC_MODEL_BLOCK_INL_H_ toggle
