// The Transformer forward, compiled once per Highway target (foreach_target) and dispatched once per
// Transformer::Forward. A model is its stages: embed, then per block norm → Q/K/V → RoPE → cache → heads →
// out-projection → residual → norm → MLP → residual, then the final norm and the LM head. Every buffer is
// batch-first, (B·T, width) rows.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpp/src/model/kernels_model.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "cpp/src/attention-inl.h"
#include "cpp/src/gemm-inl.h"
#include "cpp/src/kernels-inl.h"
#include "cpp/src/model/model_kernels.h"
#include "cpp/src/ops/activation-inl.h"
#include "cpp/src/ops/norm-inl.h"
#include "cpp/src/ops/rope-inl.h"
#include "cpp/src/parallel.h"
#include "cpp/src/vector_ops-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Grow-only activations of one forward: x the residual stream (rows, E), h a normed copy, qkv (rows, H·hd +
// 2·KV·hd), ctx the heads' outputs (rows, H·hd), up the MLP's hidden (rows, up.out), proj a projection's output.
struct ModelScratch {
  std::vector<float> x, h, qkv, ctx, up, proj;
};

float* Sized(std::vector<float>& buffer, size_t n) {
  if (buffer.size() < n) buffer.resize(n);
  return buffer.data();
}

// Output columns per piece when a projection has too few rows to split by rows (decoding).
constexpr size_t kGemvColumns = 8 * kPanel;

// y (rows, w.out) with row stride ldy = x (rows, w.in) with row stride ldx · W + bias. Many rows: row blocks of
// Gemm; a few (decoding): matrix-vector products over column slices, which stream the weights once.
void Linear(size_t rows, const float* x, size_t ldx, const LinearArgs& w, float* y, size_t ldy) {
  if (rows <= kGemvMaxRows) {
    const size_t pieces = (w.out + kGemvColumns - 1) / kGemvColumns;
    ParallelFor(pieces, 2.0 * rows * w.in * kGemvColumns, [&](size_t i) {
      const size_t j0 = i * kGemvColumns, cols = std::min(kGemvColumns, w.out - j0);
      GemvPacked(rows, cols, w.in, x, ldx, w.w.At(0, j0), y + j0, ldy, w.bias ? w.bias + j0 : nullptr);
    });
    return;
  }
  ParallelFor(RowBlocks(rows), 2.0 * kRowBlock * w.in * w.out, [&](size_t i) {
    const size_t r0 = i * kRowBlock, n = std::min(kRowBlock, rows - r0);
    Gemm(n, w.out, w.in, x + r0 * ldx, ldx, 1, w.w, y + r0 * ldy, ldy, w.bias, false);
  });
}

// x (rows, e) += y (rows, e).
void AddRows(float* HWY_RESTRICT x, const float* HWY_RESTRICT y, size_t n) {
  ForEachLane(0, n, [&](auto dd, size_t j) HWY_ATTR {
    hn::StoreU(hn::Add(hn::LoadU(dd, x + j), hn::LoadU(dd, y + j)), dd, x + j);
  });
}

void NormRows(const ModelArgs& a, size_t rows, const float* x, const NormArgs& norm, float* y) {
  ParallelFor(rows, 8.0 * a.e, [&](size_t r) {
    if (norm.bias) {
      LayerNormRow(x + r * a.e, a.e, norm.weight, norm.bias, a.norm_eps, y + r * a.e);
    } else {
      RmsNormRow(x + r * a.e, a.e, norm.weight, a.norm_eps, y + r * a.e);
    }
  });
}

// x (rows, E) = embedding column ids[r] (+ wpe[P + t] for GPT-2).
void Embed(const ModelArgs& a, float* x) {
  for (size_t r = 0; r < a.batch * a.tokens; ++r) {
    const size_t id = static_cast<size_t>(a.ids[r]);
    const float* column = a.embed.data + (id / kPanel) * a.embed.panel_stride + id % kPanel;
    float* row = x + r * a.e;
    for (size_t c = 0; c < a.e; ++c) row[c] = column[c * kPanel];
    if (a.positions) AddRows(row, a.positions + (a.past + r % a.tokens) * a.e, a.e);
  }
}

// RoPE on every query and key head of the qkv rows (row r = b·T + t at position P + t).
void RopeRows(const ModelArgs& a, float* qkv, size_t width) {
  const size_t half = a.head_dim / 2;
  for (size_t r = 0; r < a.batch * a.tokens; ++r) {
    const size_t t = r % a.tokens;
    RopeHeads(qkv + r * width, a.heads + a.kv_heads, a.head_dim, a.rope_cos + t * half, a.rope_sin + t * half);
  }
}

// The new tokens' key and value heads into the cache: token t of item b, head g → row P + t of (b, g).
void WriteCache(const ModelArgs& a, const BlockArgs& blk, const float* qkv, size_t width) {
  const size_t hd = a.head_dim, k0 = a.heads * hd, v0 = k0 + a.kv_heads * hd;
  for (size_t b = 0; b < a.batch; ++b) {
    for (size_t g = 0; g < a.kv_heads; ++g) {
      const size_t dst = ((b * a.kv_heads + g) * a.cache_max + a.past) * hd;
      for (size_t t = 0; t < a.tokens; ++t) {
        const float* row = qkv + (b * a.tokens + t) * width;
        std::copy(row + k0 + g * hd, row + k0 + (g + 1) * hd, blk.cache_k + dst + t * hd);
        std::copy(row + v0 + g * hd, row + v0 + (g + 1) * hd, blk.cache_v + dst + t * hd);
      }
    }
  }
}

// ctx (rows, H·hd): each (item, head) problem attends over the cached keys 0 … P + T − 1, causal at positions
// P + t, within the window, without padded keys; weights kept when the layer's are asked for; then × head_mask.
void AttendHeads(const ModelArgs& a, const BlockArgs& blk, const float* qkv, size_t width, float* ctx) {
  const size_t hd = a.head_dim, s = a.past + a.tokens, dq = a.heads * hd, group = a.heads / a.kv_heads;
  const HeadDims dims{a.tokens, s, hd, hd, 1.0f / std::sqrt(static_cast<float>(hd))};
  KeyWindow window;
  window.causal = true;
  window.offset = static_cast<int64_t>(a.past);
  window.left = a.window_left;
  BiasArgs bias;
  bias.key_bias = a.key_bias;
  bias.key_bias_batch_stride = s;
  bias.mask_cols = a.key_bias ? s : 0;
  ParallelFor(a.batch * a.heads, HeadFlops(a.tokens, s, hd, hd), [&](size_t bh) {
    const size_t b = bh / a.heads, h = bh % a.heads, kv = (b * a.kv_heads + h / group) * a.cache_max * hd;
    float* weights = blk.attentions ? blk.attentions + bh * a.tokens * s : nullptr;
    float* out = ctx + b * a.tokens * dq + h * hd;
    HeadProblem p = MakeHeadProblem(dims, qkv + b * a.tokens * width + h * hd, width, blk.cache_v + kv, hd, out,
                                    weights, window, bias, 0, b);
    p.out_stride = dq;
    AttendHead(p, blk.cache_k + kv, hd, ThreadScratch().head);
    if (!blk.head_mask || blk.head_mask[h] == 1.0f) return;
    for (size_t t = 0; t < a.tokens; ++t) ScaleRow(out + t * dq, hd, blk.head_mask[h]);
    if (weights) ScaleRow(weights, a.tokens * s, blk.head_mask[h]);
  });
}

// x += attention(norm₁(x)).
void AttentionStage(const ModelArgs& a, const BlockArgs& blk, ModelScratch& m) {
  const size_t rows = a.batch * a.tokens, width = blk.qkv.out;
  NormRows(a, rows, m.x.data(), blk.norm1, m.h.data());
  Linear(rows, m.h.data(), a.e, blk.qkv, m.qkv.data(), width);
  if (a.llama) RopeRows(a, m.qkv.data(), width);
  WriteCache(a, blk, m.qkv.data(), width);
  AttendHeads(a, blk, m.qkv.data(), width, m.ctx.data());
  Linear(rows, m.ctx.data(), blk.o.in, blk.o, m.proj.data(), a.e);
  AddRows(m.x.data(), m.proj.data(), rows * a.e);
}

// x += MLP(norm₂(x)): GPT-2 c_proj(gelu(c_fc(h))), Llama down(silu(gate(h)) · up(h)).
void MlpStage(const ModelArgs& a, const BlockArgs& blk, ModelScratch& m) {
  const size_t rows = a.batch * a.tokens, width = blk.up.out;
  NormRows(a, rows, m.x.data(), blk.norm2, m.h.data());
  Linear(rows, m.h.data(), a.e, blk.up, m.up.data(), width);
  ParallelFor(rows, 20.0 * width, [&](size_t r) {
    float* row = m.up.data() + r * width;
    if (a.llama) {
      SwiGluRow(row, row + a.hidden, a.hidden, row);
    } else {
      GeluTanhRow(row, width);
    }
  });
  Linear(rows, m.up.data(), width, blk.down, m.proj.data(), a.e);
  AddRows(m.x.data(), m.proj.data(), rows * a.e);
}

void TransformerForwardImpl(const ModelArgs& a) {
  const size_t rows = a.batch * a.tokens, plane = rows * a.e;
  if (rows == 0) return;
  static thread_local ModelScratch m;
  Sized(m.x, plane);
  Sized(m.h, plane);
  Sized(m.proj, plane);
  Sized(m.ctx, rows * a.heads * a.head_dim);
  for (size_t l = 0; l < a.num_blocks; ++l) {
    Sized(m.qkv, rows * a.blocks[l].qkv.out);
    Sized(m.up, rows * a.blocks[l].up.out);
  }
  Embed(a, m.x.data());
  for (size_t l = 0; l < a.num_blocks; ++l) {
    if (a.hidden_states) std::copy(m.x.data(), m.x.data() + plane, a.hidden_states[l]);
    AttentionStage(a, a.blocks[l], m);
    MlpStage(a, a.blocks[l], m);
  }
  NormRows(a, rows, m.x.data(), a.norm_f, m.h.data());
  if (a.hidden_states) std::copy(m.h.data(), m.h.data() + plane, a.hidden_states[a.num_blocks]);
  Linear(rows, m.h.data(), a.e, a.head, a.logits, a.vocab);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace attnlab {

HWY_EXPORT(TransformerForwardImpl);

void TransformerForward(const ModelArgs& args) { HWY_DYNAMIC_DISPATCH(TransformerForwardImpl)(args); }

}  // namespace attnlab
#endif  // HWY_ONCE
