// The backward of a Transformer's stages (block-inl.h's forward, in reverse): the objective on the logits, linear
// layers, norms, the MLP, the heads (from the saved weights), the q/k norm, the head mask's gradient and the
// embeddings. Shared by every training unit (decoders: kernels_model_train.cc). Gradients land in the parameters'
// own layouts (packed matrices). Reductions over rows (weight and bias gradients, norms) run in a fixed order:
// results do not depend on the thread count.
// Per-target code: include after hwy/highway.h, inside the foreach_target unit.

#if defined(ATTNLAB_SRC_MODEL_BLOCK_BACKWARD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ATTNLAB_SRC_MODEL_BLOCK_BACKWARD_INL_H_
#undef ATTNLAB_SRC_MODEL_BLOCK_BACKWARD_INL_H_
#else
#define ATTNLAB_SRC_MODEL_BLOCK_BACKWARD_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "cpp/src/attention/attention_backward-inl.h"
#include "cpp/src/model/block-inl.h"
#include "cpp/src/model/model_kernels.h"
#include "cpp/src/ops/activation-inl.h"
#include "cpp/src/ops/cross_entropy-inl.h"
#include "cpp/src/ops/linear-inl.h"
#include "cpp/src/ops/packing.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {

// Reusable buffers of one backward: gradients flowing through a block (d_x the residual stream's, d_h a norm's
// input, d_qkv, d_ctx, d_up, d_act, d_sum a post-norm's sum), and the packing of each linear layer's operands.
struct GradScratch {
  std::vector<float> d_x, d_h, d_qkv, d_ctx, d_up, d_act, d_sum, d_head, dense, packed_dy, packed_wt, neg_sin;
};

// Cross-entropy of logits (rows, V) against targets (−100: ignored), each counted target's term divided by
// `counted` (its weight in the objective); the row's logits become d objective / d logits. Returns Σ of the terms,
// added in row order (rows run in parallel: the result does not depend on the thread count).
inline double CrossEntropyRowsInPlace(float* logits, const int32_t* targets, size_t rows, size_t v, double counted) {
  std::vector<double> terms(rows, 0.0);
  ParallelFor(rows, 8.0 * static_cast<double>(v), [&](size_t r) {
    float* row = logits + r * v;
    if (targets[r] == -100) {
      std::fill(row, row + v, 0.0f);
    } else {
      terms[r] = CrossEntropyRowInPlace(row, v, static_cast<size_t>(targets[r]), 1.0 / counted);
    }
  });
  double loss = 0;
  for (double term : terms) loss += term;
  return loss / counted;
}

inline size_t CountTargets(const int32_t* targets, size_t n) {
  size_t counted = 0;
  for (size_t r = 0; r < n; ++r) counted += targets[r] != -100;
  return counted;
}

// The objective of t on logits (batch, n, v), which become its gradient: the mean cross-entropy (kMean); each
// row's mean cross-entropy summed, the loss returned their mean over rows with a target (kRowMeans); or Σ_b of one
// logit (kLogit), returned as it is. (An encoder's classification logits: n = 1.)
inline double ObjectiveRowsInPlace(float* all_logits, const TrainArgs& t, size_t batch, size_t n, size_t v) {
  if (t.objective == TrainObjective::kMean) {
    return CrossEntropyRowsInPlace(all_logits, t.targets, batch * n, v,
                                   static_cast<double>(CountTargets(t.targets, batch * n)));
  }
  double total = 0;
  size_t counted_rows = 0;
  for (size_t b = 0; b < batch; ++b) {
    float* logits = all_logits + b * n * v;
    if (t.objective == TrainObjective::kLogit) {
      const size_t at = t.logit_position * v + t.logit_target;
      total += logits[at];
      std::fill(logits, logits + n * v, 0.0f);
      logits[at] = 1.0f;
      continue;
    }
    const size_t counted = CountTargets(t.targets + b * n, n);
    if (counted == 0) std::fill(logits, logits + n * v, 0.0f);
    if (counted == 0) continue;
    total += CrossEntropyRowsInPlace(logits, t.targets + b * n, n, v, static_cast<double>(counted));
    ++counted_rows;
  }
  return t.objective == TrainObjective::kLogit ? total : total / static_cast<double>(counted_rows);
}

// The objective of t on a.logits (B, T, V) (ObjectiveRowsInPlace).
inline double ObjectiveInPlace(const ModelArgs& a, const TrainArgs& t) {
  return ObjectiveRowsInPlace(a.logits, t, a.batch, a.tokens, a.vocab);
}

// Adds a dense (in, out) matrix into a packed one (packing.h's layout).
inline void AddDenseToPacked(const float* dense, size_t in, size_t out, float* packed) {
  for (size_t j0 = 0; j0 < out; j0 += kPanel) {
    const size_t cols = std::min(kPanel, out - j0);
    float* panel = packed + (j0 / kPanel) * kPanel * in;
    for (size_t p = 0; p < in; ++p) {
      for (size_t c = 0; c < cols; ++c) panel[p * kPanel + c] += dense[p * out + j0 + c];
    }
  }
}

// The packed W (in, out) as a dense row-major (in, out).
inline void UnpackDense(const PackedB& w, size_t in, size_t out, float* dense) {
  for (size_t j0 = 0; j0 < out; j0 += kPanel) {
    const size_t cols = std::min(kPanel, out - j0);
    const float* panel = w.data + (j0 / kPanel) * w.panel_stride;
    for (size_t p = 0; p < in; ++p) std::copy(panel + p * kPanel, panel + p * kPanel + cols, dense + p * out + j0);
  }
}

// For y = x W + b (x (rows, in) with stride ldx, dy (rows, out) with stride ldy): dW += xᵀ dy into the packed d_w,
// db += Σ dy into d_b (if non-null), and dx = dy Wᵀ into dx (stride ldx_out), or dx += … when accumulate. A null
// d_w: no parameter gradients (d_b null too), dx only; a null dx: the parameters' gradients only.
inline void LinearBackward(size_t rows, const float* x, size_t ldx, const LinearArgs& w, const float* dy, size_t ldy,
                           float* d_w, float* d_b, float* dx, size_t ldx_out, bool accumulate, GradScratch& g) {
  float* dense = Sized(g.dense, w.in * w.out);
  if (d_w) {
    const PackedB dy_packed = PackB(dy, ldy, rows, w.out, /*transposed=*/false, g.packed_dy);
    GemmRows(w.in, w.out, rows, x, 1, ldx, dy_packed, dense, w.out, nullptr, false);
    AddDenseToPacked(dense, w.in, w.out, d_w);
  }
  for (size_t r = 0; r < rows && d_b; ++r) AddRows(d_b, dy + r * ldy, w.out);
  if (!dx) return;
  UnpackDense(w.w, w.in, w.out, dense);
  const PackedB wt = PackB(dense, w.out, w.out, w.in, /*transposed=*/true, g.packed_wt);
  GemmRows(rows, w.in, w.out, dy, ldy, 1, wt, dx, ldx_out, nullptr, accumulate);
}

// dx = dy · act'(x) over n elements for the elementwise MLP kinds that training supports (GELU tanh or erf, ReLU,
// SiLU).
inline void ActivationGradRow(MlpKind kind, const float* x, const float* dy, size_t n, float* dx) {
  if (kind == MlpKind::kGeluErf) return GeluErfGradRow(x, dy, n, dx);
  if (kind == MlpKind::kRelu) return ReluGradRow(x, dy, n, dx);
  if (kind == MlpKind::kSilu) return SiluGradRow(x, dy, n, dx);
  GeluTanhGradRow(x, dy, n, dx);
}

// d_x += the gradient through norm(x) given d_h (no norm: d_h itself); the norm's parameter gradients accumulate.
inline void NormBackward(const ModelArgs& a, size_t rows, const float* x, const NormArgs& norm, const float* d_h,
                         float* d_x, float* d_weight, float* d_bias) {
  if (!norm.weight) return AddRows(d_x, d_h, rows * a.e);
  for (size_t r = 0; r < rows; ++r) {
    const size_t o = r * a.e;
    if (norm.bias) {
      LayerNormGradRow(x + o, norm.weight, d_h + o, a.e, a.norm_eps, d_x + o, d_weight, d_bias);
    } else {
      RmsNormGradRow(x + o, norm.weight, d_h + o, a.e, a.norm_eps, d_x + o, d_weight);
    }
  }
}

// Through a post-norm stage's x_out = norm(sum): g.d_x (d x_out) becomes d sum; the norm's weights' gradients
// accumulate.
inline void PostNormBackward(const ModelArgs& a, const float* sum, const NormArgs& norm, float* d_weight, float* d_bias,
                             GradScratch& g) {
  const size_t rows = a.batch * a.tokens, n = rows * a.e;
  float* d_sum = Sized(g.d_sum, n);
  std::fill(d_sum, d_sum + n, 0.0f);
  NormBackward(a, rows, sum, norm, g.d_x.data(), d_sum, d_weight, d_bias);
  std::copy(d_sum, d_sum + n, g.d_x.data());
}

// Through x += MLP(norm₂(x)): d_x (the stream's gradient) gains the MLP path's.
inline void MlpBackward(const ModelArgs& a, const BlockArgs& blk, const BlockSaved& s, BlockGrads& d, GradScratch& g) {
  const size_t rows = a.batch * a.tokens, width = blk.up.out, hidden = blk.down.in;
  float* d_act = Sized(g.d_act, rows * hidden);
  LinearBackward(rows, s.act, hidden, blk.down, g.d_x.data(), a.e, d.down, d.down_bias, d_act, hidden, false, g);
  float* d_up = Sized(g.d_up, rows * width);
  for (size_t r = 0; r < rows; ++r) {
    const float* up = s.up + r * width;
    if (a.mlp == MlpKind::kSwiGlu) {
      SwiGluGradRow(up, up + a.hidden, d_act + r * hidden, a.hidden, d_up + r * width, d_up + r * width + a.hidden);
    } else if (a.mlp == MlpKind::kGeluTanhGlu) {
      GeluTanhGluGradRow(up, up + a.hidden, d_act + r * hidden, a.hidden, d_up + r * width,
                         d_up + r * width + a.hidden);
    } else {
      ActivationGradRow(a.mlp, up, d_act + r * hidden, width, d_up + r * width);
    }
  }
  float* d_h = Sized(g.d_h, rows * a.e);
  LinearBackward(rows, s.h2, a.e, blk.up, d_up, width, d.up, d.up_bias, d_h, a.e, false, g);
  NormBackward(a, rows, s.x_mid, blk.norm2, d_h, g.d_x.data(), d.norm2_weight, d.norm2_bias);
}

// d_diag (2T − 1) += the logit gradient of a (T, T) head along each diagonal: entry T − 1 − i + j gains ds[i, j] /
// scale (ds is d objective / d (scale · logits)), the gradient of a bias that depends on j − i alone.
inline void AddDiagonals(const float* ds, size_t t, float scale, float* d_diag) {
  for (size_t i = 0; i < t; ++i) {
    for (size_t j = 0; j < t; ++j) d_diag[t - 1 - i + j] += ds[i * t + j] / scale;
  }
}

// d_qkv from d_ctx: each (item, key/value head) problem runs its group's query heads in order (the first writes the
// key and value gradients, the others add theirs), from the saved weights. d_relative (B·H rows of 2T − 1), if
// non-null: each (item, head)'s relative position bias diagonal gains its gradient (AddDiagonals).
inline void HeadsBackward(const ModelArgs& a, const BlockSaved& s, size_t width, const float* d_ctx, float* d_qkv,
                          float* d_relative = nullptr) {
  const size_t hd = a.head_dim, t = a.tokens, dq = a.heads * hd, group = a.heads / a.kv_heads;
  const HeadDims dims = HeadSetupOf(a).dims;
  ParallelFor(a.batch * a.kv_heads, 2.0 * group * HeadFlops(t, t, hd, hd), [&](size_t bg) {
    const size_t b = bg / a.kv_heads, kv = bg % a.kv_heads, row0 = b * t * width;
    const size_t k_off = row0 + dq + kv * hd, v_off = row0 + dq + a.kv_heads * hd + kv * hd;
    static thread_local std::vector<float> pack, ds;  // (grown once, reused by every call on this thread)
    for (size_t h = kv * group; h < (kv + 1) * group; ++h) {
      HeadGradProblem p = MakeHeadGradProblem(dims, width, width, s.qkv + row0 + h * hd, s.qkv + k_off, s.qkv + v_off,
                                              s.weights + (b * a.heads + h) * t * t, d_ctx + b * t * dq + h * hd,
                                              d_qkv + row0 + h * hd, d_qkv + k_off, d_qkv + v_off);
      p.d_out_stride = dq;
      p.accumulate_kv = h != kv * group;
      AttendHeadBackward(p, pack, ds);
      if (d_relative) AddDiagonals(ds.data(), t, dims.scale, d_relative + (b * a.heads + h) * (2 * t - 1));
    }
  });
}

// Through the q/k norm: d_qkv's query and key heads (the gradient after it) become the gradient before it, from the
// saved raw heads; the norm weights' gradients accumulate row by row in order.
inline void QkNormBackward(const ModelArgs& a, const BlockArgs& blk, const BlockSaved& s, size_t width, float* d_qkv,
                           BlockGrads& d, GradScratch& g) {
  const size_t hd = a.head_dim, heads = a.heads + a.kv_heads;
  float* d_raw = Sized(g.d_head, hd);
  for (size_t r = 0; r < a.batch * a.tokens; ++r) {
    for (size_t h = 0; h < heads; ++h) {
      float* d_head = d_qkv + r * width + h * hd;
      std::fill(d_raw, d_raw + hd, 0.0f);
      RmsNormGradRow(s.qk_raw + (r * heads + h) * hd, h < a.heads ? blk.q_norm : blk.k_norm, d_head, hd, a.norm_eps,
                     d_raw, h < a.heads ? d.q_norm : d.k_norm);
      std::copy(d_raw, d_raw + hd, d_head);
    }
  }
}

// d objective / d ξ_h of each item b at ξ = 1 (head h's output is ξ_h times its ctx columns): Σ over the item's
// rows of ⟨d_ctx, ctx⟩ in head h's columns, into d_mask[b · stride + h].
inline void HeadMaskGrad(const ModelArgs& a, const float* ctx, const float* d_ctx, float* d_mask, size_t stride) {
  const size_t hd = a.head_dim, dq = a.heads * hd;
  for (size_t b = 0; b < a.batch; ++b) {
    for (size_t h = 0; h < a.heads; ++h) {
      double sum = 0;
      for (size_t r = b * a.tokens; r < (b + 1) * a.tokens; ++r) {
        for (size_t j = r * dq + h * hd; j < r * dq + (h + 1) * hd; ++j) sum += static_cast<double>(d_ctx[j]) * ctx[j];
      }
      d_mask[b * stride + h] = static_cast<float>(sum);
    }
  }
}

// Through x += attention(norm₁(x)); d_mask (B rows `mask_stride` apart) gets the head mask's gradient, if non-null;
// d_relative the relative position bias diagonals' (HeadsBackward), if non-null.
inline void AttentionBackward(const ModelArgs& a, const BlockArgs& blk, const BlockSaved& s, BlockGrads& d,
                              GradScratch& g, float* d_mask, size_t mask_stride, float* d_relative = nullptr) {
  const size_t rows = a.batch * a.tokens, width = blk.qkv.out, dq = blk.o.in;
  float* d_ctx = Sized(g.d_ctx, rows * dq);
  LinearBackward(rows, s.ctx, dq, blk.o, g.d_x.data(), a.e, d.o, d.o_bias, d_ctx, dq, false, g);
  if (d_mask) HeadMaskGrad(a, s.ctx, d_ctx, d_mask, mask_stride);
  float* d_qkv = Sized(g.d_qkv, rows * width);
  HeadsBackward(a, s, width, d_ctx, d_qkv, d_relative);
  if (a.position_kind == PositionKind::kRope) RopeRows(a, d_qkv, width, g.neg_sin.data());  // by −θ: the transpose
  if (blk.q_norm) QkNormBackward(a, blk, s, width, d_qkv, d, g);
  float* d_h = Sized(g.d_h, rows * a.e);
  LinearBackward(rows, s.h1, a.e, blk.qkv, d_qkv, width, d.qkv, d.qkv_bias, d_h, a.e, false, g);
  NormBackward(a, rows, s.x_in, blk.norm1, d_h, g.d_x.data(), d.norm1_weight, d.norm1_bias);
}

// Token embedding (packed (E, V): column id, but not t.pad_row's; its rows were × embed_scale) and learned positions
// (t.positions; sinusoidal ones have none), from the stream's gradient at the input.
inline void EmbedBackward(const ModelArgs& a, const TrainArgs& t, const float* d_x, size_t panel_stride) {
  for (size_t r = 0; r < a.batch * a.tokens && t.embed; ++r) {
    const size_t id = static_cast<size_t>(a.ids[r]);
    float* column = t.embed + (id / kPanel) * panel_stride + id % kPanel;
    const float* row = d_x + r * a.e;
    for (size_t c = 0; c < a.e && a.ids[r] != t.pad_row; ++c) column[c * kPanel] += row[c] * a.embed_scale;
    if (t.positions) AddRows(t.positions + (r % a.tokens) * a.e, row, a.e);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#endif  // ATTNLAB_SRC_MODEL_BLOCK_BACKWARD_INL_H_
