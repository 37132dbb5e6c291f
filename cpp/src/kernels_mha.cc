// The MultiheadAttention kernels (forward, backward), compiled once per Highway target (foreach_target). The SDPA
// kernels are a unit of their own (kernels_sdpa.cc), so that the two compile side by side; one head's GEMMs are in
// kernels_heads.cc.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpp/src/kernels_mha.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cpp/src/attention-inl.h"
#include "cpp/src/attention_backward-inl.h"
#include "cpp/src/attention_decode-inl.h"
#include "cpp/src/gemm-inl.h"
#include "cpp/src/kernels-inl.h"
#include "cpp/src/kernels.h"
#include "cpp/src/parallel.h"
#include "cpp/src/vector_ops-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {

// Token (item b, position 0) of a sequence of length len is row first_row; positions are pos_stride rows apart.
struct MhaLayout {
  const MhaArgs& a;
  size_t FirstRow(size_t b, size_t len) const { return a.batch_first ? b * len : b; }
  size_t PosStride() const { return a.batch_first ? 1 : a.n; }
  // Keys each head attends: the cached ones, or the new ones and the appended bias_k / zero-attention rows.
  size_t SAll() const { return a.cache_k ? a.cache_past + a.s : a.s + (a.bias_k ? 1 : 0) + (a.add_zero_attn ? 1 : 0); }
  // Rows of the projected key/value buffers per item: the new tokens only when they go on into the cache.
  size_t KvRows() const { return a.cache_k ? a.s : SAll(); }
  size_t HeadDim() const { return a.e / a.heads; }
  size_t KvHeads() const { return a.kv_heads ? a.kv_heads : a.heads; }  // (0: as many as query heads)
  size_t KvDim() const { return KvHeads() * HeadDim(); }
  size_t Group() const { return a.heads / KvHeads(); }  // query heads per key/value head
};

// Key/value head g of item b: its first key row and value row and their row stride, in the projected buffers
// k, v (n, kv_rows, ekv) or in the cache (n, kv_heads, cache_max, hd).
struct KvHead {
  const float* k;
  const float* v;
  size_t stride;
};
KvHead KvHeadOf(const MhaArgs& a, const MhaLayout& layout, const float* k, const float* v, size_t b, size_t g) {
  const size_t hd = layout.HeadDim();
  if (a.cache_k) {
    const size_t off = (b * layout.KvHeads() + g) * a.cache_max * hd;
    return KvHead{a.cache_k + off, a.cache_v + off, hd};
  }
  const size_t ekv = layout.KvDim(), off = b * layout.KvRows() * ekv + g * hd;
  return KvHead{k + off, v + off, ekv};
}

// Projections x Wᵀ + b into batch-first buffers q (n, l, e), k and v (n, s', ekv) (bias_k / zero-attention rows
// appended at positions s, s+1; with a cache: (n, s, ekv), then copied into the cache per key/value head), heads
// of hd = e / heads consecutive features (query head h reads key/value head h / group), out-projection of the
// batch-first context (n, l, e) back into query's layout.
void MhaForwardImpl(const MhaArgs& a) {
  const MhaLayout layout{a};
  const size_t e = a.e, hd = layout.HeadDim(), s_all = layout.SAll(), pos = layout.PosStride();
  const size_t ekv = layout.KvDim(), kv_rows = layout.KvRows(), group = layout.Group();
  if (a.l == 0) return;  // no query: nothing to write, however large the batch

  ForwardScratch& own = ThreadScratch();
  auto buffer = [](float* saved, std::vector<float>& scratch, size_t n) {
    if (saved) return saved;
    if (scratch.size() < n) scratch.resize(n);
    return scratch.data();
  };
  MhaSaved none;
  const MhaSaved& saved = a.saved ? *a.saved : none;
  float* q = buffer(saved.q, own.q, a.n * a.l * e);
  float* k = buffer(saved.k, own.k, a.n * kv_rows * ekv);
  float* v = buffer(saved.v, own.v, a.n * kv_rows * ekv);
  float* ctx = buffer(saved.ctx, own.ctx, a.n * a.l * e);
  // Decoding (a cache and a few new tokens): matrix-vector projections that stream the packed weights, and the
  // heads of each key/value group attend over the cache in place (attention_decode-inl.h).
  const bool decode = a.cache_k && a.l <= kDecodeMaxQueries && group <= kDecodeMaxGroup;
  auto project = [&](size_t rows, size_t n_out, size_t k_in, const float* x, size_t ldx, const PackedB& w, float* y,
                     size_t ldy, const float* bias) {
    if (decode && rows <= kGemvMaxRows) {
      GemvPacked(rows, n_out, k_in, x, ldx, w, y, ldy, bias);
    } else {
      Gemm(rows, n_out, k_in, x, ldx, 1, w, y, ldy, bias, false);
    }
  };
  // Projections in (item, kRowBlock-row block) pieces: Q's blocks, then K's and V's. Each piece writes its own rows.
  const size_t q_blocks = RowBlocks(a.l), kv_blocks = RowBlocks(a.s), pieces = q_blocks + kv_blocks;
  // (Decoding: a piece is a few rows, memory-bound; split only as much work as a decode step's attention.)
  const double piece_flops = 2.0 * static_cast<double>(std::min(kRowBlock, std::max(a.l, a.s))) * e *
                             static_cast<double>(std::max(e, a.kdim + a.vdim));
  ParallelFor(
      a.n * pieces, piece_flops,
      [&](size_t i) {
        const size_t b = i / pieces, r0 = (i % pieces < q_blocks ? i % pieces : i % pieces - q_blocks) * kRowBlock;
        if (i % pieces < q_blocks) {
          const size_t rows = std::min(kRowBlock, a.l - r0);
          project(rows, e, e, a.query + (layout.FirstRow(b, a.l) + r0 * pos) * e, pos * e, a.wq_t,
                  q + (b * a.l + r0) * e, e, a.bq);
          return;
        }
        const size_t rows = std::min(kRowBlock, a.s - r0);  // (an empty key's data may be null: no piece reads it)
        const size_t first = layout.FirstRow(b, a.s) + r0 * pos;
        project(rows, ekv, a.kdim, a.key + first * a.kdim, pos * a.kdim, a.wk_t, k + (b * kv_rows + r0) * ekv, ekv,
                a.bk);
        project(rows, ekv, a.vdim, a.value + first * a.vdim, pos * a.vdim, a.wv_t, v + (b * kv_rows + r0) * ekv, ekv,
                a.bv);
      },
      decode ? kMinParallelDecodeFlops : kMinParallelFlops);
  for (size_t b = 0; b < a.n && !a.cache_k; ++b) {
    float* kb = k + b * s_all * ekv;
    float* vb = v + b * s_all * ekv;
    size_t row = a.s;
    if (a.bias_k) {
      std::copy(a.bias_k, a.bias_k + ekv, kb + row * ekv);
      std::copy(a.bias_v, a.bias_v + ekv, vb + row * ekv);
      ++row;
    }
    if (a.add_zero_attn) {
      std::fill(kb + row * ekv, kb + (row + 1) * ekv, 0.0f);
      std::fill(vb + row * ekv, vb + (row + 1) * ekv, 0.0f);
    }
  }
  // Cache: new token t of item b, head g → row cache_past + t of (b, g), so each head's keys stay contiguous.
  for (size_t b = 0; b < a.n && a.cache_k; ++b) {
    for (size_t g = 0; g < layout.KvHeads(); ++g) {
      float* k_dst = a.cache_k + ((b * layout.KvHeads() + g) * a.cache_max + a.cache_past) * hd;
      float* v_dst = a.cache_v + (k_dst - a.cache_k);
      for (size_t t = 0; t < a.s; ++t) {
        const size_t src = (b * a.s + t) * ekv + g * hd;
        std::copy(k + src, k + src + hd, k_dst + t * hd);
        std::copy(v + src, v + src + hd, v_dst + t * hd);
      }
    }
  }

  // The (item, head) problems are independent. Their weights go to: the saved buffer (backward needs them), the
  // caller's per-head output, or a scratch slot that is summed into the caller's average. The average is summed
  // in head order after each wave of at most ThreadCount() problems (the scratch holds one wave), so it does not
  // depend on the thread count.
  const bool average = a.weights && a.average_weights;
  const bool direct = a.weights && !average && !saved.weights;
  const size_t problems = s_all > 0 && !decode ? a.n * a.heads : 0, plane = a.l * s_all;
  const size_t wave = average ? std::max<size_t>(1, std::min(problems, ThreadCount())) : std::max<size_t>(problems, 1);
  std::vector<float>& head_weights = own.head_weights;
  if (average) {
    if (head_weights.size() < wave * plane) head_weights.resize(wave * plane);
    std::fill(a.weights, a.weights + a.n * plane, 0.0f);
  }
  const HeadDims dims{a.l, s_all, hd, hd, 1.0f / std::sqrt(static_cast<float>(hd))};
  // With a cache, causal aligned lower-right: new token i sits at position cache_past + i (s == l) and sees the
  // cached keys up to it; the kernels skip the tiles beyond (no mask).
  KeyWindow window;
  if (a.cache_k) {
    window.causal = true;
    window.offset = static_cast<int64_t>(a.cache_past);
  }
  if (s_all == 0) std::fill(ctx, ctx + a.n * a.l * e, 0.0f);  // no key: every row fully masked, no weights
  if (decode) {  // (s_all >= 1: the new tokens are cached) one problem per (item, key/value head)
    if (average && head_weights.size() < a.n * a.heads * plane) head_weights.resize(a.n * a.heads * plane);
    const size_t kv_heads = layout.KvHeads();
    ParallelFor(
        a.n * kv_heads, static_cast<double>(group) * HeadFlops(a.l, s_all, hd, hd),
        [&](size_t bg) {
          const size_t b = bg / kv_heads, g = bg % kv_heads, h0 = g * group, bh0 = b * a.heads + h0;
          const KvHead kv = KvHeadOf(a, layout, k, v, b, g);
          float* w = saved.weights ? saved.weights + bh0 * plane
                     : direct      ? a.weights + bh0 * plane
                     : average     ? head_weights.data() + bh0 * plane
                                   : nullptr;
          const float* row_bias = a.bias.row_bias ? a.bias.row_bias + bh0 * a.bias.row_bias_batch_stride : nullptr;
          const float* key_bias = a.bias.key_bias ? a.bias.key_bias + b * a.bias.key_bias_batch_stride : nullptr;
          DecodeGroup problem{group,      a.l,
                              s_all,      hd,
                              dims.scale, q + b * a.l * e + h0 * hd,
                              hd,         e,
                              kv.k,       kv.v,
                              kv.stride,  ctx + b * a.l * e + h0 * hd,
                              hd,         e,
                              w,          plane,
                              row_bias,   a.bias.row_bias_batch_stride,
                              key_bias,   a.bias.mask_cols};
          problem.causal = true;  // the cache's lower-right alignment
          AttendDecodeGroup(problem, DecodeScratch());
        },
        kMinParallelDecodeFlops);
    for (size_t bh = 0; bh < a.n * a.heads && average; ++bh) {  // the average, summed in head order
      const float* src = head_weights.data() + bh * plane;
      float* dst = a.weights + bh / a.heads * plane;
      for (size_t i = 0; i < plane; ++i) dst[i] += src[i];
    }
  }
  for (size_t first = 0; first < problems; first += wave) {
    const size_t count = std::min(wave, problems - first);
    auto weights_of = [&](size_t w) {
      const size_t bh = first + w;
      return saved.weights ? saved.weights + bh * plane
             : direct      ? a.weights + bh * plane
             : average     ? head_weights.data() + w * plane
                           : nullptr;
    };
    ParallelFor(count, HeadFlops(a.l, s_all, hd, hd), [&](size_t w) {
      const size_t bh = first + w, b = bh / a.heads, h = bh % a.heads;
      const KvHead kv = KvHeadOf(a, layout, k, v, b, h / group);
      HeadProblem p = MakeHeadProblem(dims, q + b * a.l * e + h * hd, e, kv.v, kv.stride, ctx + b * a.l * e + h * hd,
                                      weights_of(w), window, a.bias, bh, b);
      p.out_stride = e;  // (a head of the context, not of v)
      AttendHead(p, kv.k, kv.stride, ThreadScratch().head);
    });
    for (size_t w = 0; w < count && a.weights && !direct; ++w) {
      const size_t bh = first + w;
      const float* src = weights_of(w);
      float* dst = average ? a.weights + bh / a.heads * plane : a.weights + bh * plane;
      for (size_t i = 0; i < plane; ++i) dst[i] = average ? dst[i] + src[i] : src[i];
    }
  }
  if (average) ScaleRow(a.weights, a.n * plane, 1.0f / static_cast<float>(a.heads));

  // Out-projection, in (item, row block) pieces.
  ParallelFor(a.n * q_blocks, 2.0 * kRowBlock * e * e, [&](size_t i) {
    const size_t b = i / q_blocks, r0 = i % q_blocks * kRowBlock, rows = std::min(kRowBlock, a.l - r0);
    project(rows, e, e, ctx + (b * a.l + r0) * e, e, a.wo_t, a.out + (layout.FirstRow(b, a.l) + r0 * pos) * e, pos * e,
            a.bo);
  });
}

// dst (n) += Σ rows of src (rows, n) with row stride.
void AddColumnSums(const float* src, size_t rows, size_t n, size_t stride, float* dst) {
  for (size_t r = 0; r < rows; ++r) {
    for (size_t j = 0; j < n; ++j) dst[j] += src[r * stride + j];
  }
}

// Reverse of MhaForwardImpl, from its saved intermediates; every gradient is accumulated.
void MhaBackwardImpl(const MhaBackwardArgs& g) {
  const MhaArgs& a = *g.forward;
  const MhaSaved& saved = *a.saved;
  const MhaLayout layout{a};
  const size_t e = a.e, hd = layout.HeadDim(), s_all = layout.SAll(), pos = layout.PosStride();
  const size_t ekv = layout.KvDim(), group = layout.Group(), kv_heads = layout.KvHeads();
  if (a.l == 0) return;  // no output: every gradient stays 0

  // Out-projection: d ctx = dO W_o; dW_o += dOᵀ ctx; db_o += Σ dO.
  std::vector<float> d_ctx(a.n * a.l * e), d_q(a.n * a.l * e), d_k(a.n * s_all * ekv), d_v(a.n * s_all * ekv), pack;
  for (size_t b = 0; b < a.n; ++b) {
    const float* d_out = g.grad_out + layout.FirstRow(b, a.l) * e;
    GemmUnpacked(a.l, e, e, d_out, pos * e, 1, g.w_o, e, false, d_ctx.data() + b * a.l * e, e, nullptr, false, pack);
    GemmUnpacked(e, e, a.l, d_out, 1, pos * e, saved.ctx + b * a.l * e, e, false, g.grad_w_o, e, nullptr, true, pack);
    if (g.grad_b_o) AddColumnSums(d_out, a.l, e, pos * e, g.grad_b_o);
  }

  // Heads: one problem per (item, key/value head), each writing its own column slices of d_q, d_k, d_v. The
  // group's query heads run in order: the first writes d_k and d_v, the others add theirs (GQA sums over the group).
  const HeadDims dims{a.l, s_all, hd, hd, 1.0f / std::sqrt(static_cast<float>(hd))};
  ParallelFor(s_all > 0 ? a.n * kv_heads : 0, 2 * group * HeadFlops(a.l, s_all, hd, hd), [&](size_t bg) {
    const size_t b = bg / kv_heads, g = bg % kv_heads, kv_off = b * s_all * ekv + g * hd;
    std::vector<float> head_pack, ds, dk_part(group > 1 ? s_all * hd : 0), dv_part(dk_part.size());
    for (size_t h = g * group; h < (g + 1) * group; ++h) {  // (no key: d q = 0)
      const size_t q_off = b * a.l * e + h * hd, bh = b * a.heads + h;
      const bool first = h == g * group;
      HeadGradProblem p = MakeHeadGradProblem(dims, e, e, saved.q + q_off, saved.k + kv_off, saved.v + kv_off,
                                              saved.weights + bh * a.l * s_all, d_ctx.data() + q_off,
                                              d_q.data() + q_off, first ? d_k.data() + kv_off : dk_part.data(),
                                              first ? d_v.data() + kv_off : dv_part.data());
      p.k_stride = p.v_stride = ekv;  // (q, d_q and d_out keep e)
      p.d_k_stride = p.d_v_stride = first ? ekv : hd;
      AttendHeadBackward(p, head_pack, ds);
      for (size_t j = 0; j < s_all && !first; ++j) {
        for (size_t c = 0; c < hd; ++c) {
          d_k[kv_off + j * ekv + c] += dk_part[j * hd + c];
          d_v[kv_off + j * ekv + c] += dv_part[j * hd + c];
        }
      }
    }
  });

  // bias_k / bias_v: the gradient at the appended position, summed over the batch; zero-attention rows have
  // no parameters. Projections: grad_x = dY W; dW += dYᵀ x; db += Σ dY (key and value: first s positions).
  for (size_t b = 0; b < a.n; ++b) {
    if (g.grad_bias_k) {
      AddColumnSums(d_k.data() + (b * s_all + a.s) * ekv, 1, ekv, ekv, g.grad_bias_k);
      AddColumnSums(d_v.data() + (b * s_all + a.s) * ekv, 1, ekv, ekv, g.grad_bias_v);
    }
    struct Projection {
      const float* d_y;
      size_t rows, in, out;
      const float* x;
      const float* w;
      float* grad_x;
      float* grad_w;
      float* grad_b;
    };
    const Projection projections[3] = {
        {d_q.data() + b * a.l * e, a.l, e, e, a.query, g.w_q, g.grad_query, g.grad_w_q, g.grad_b_q},
        {d_k.data() + b * s_all * ekv, a.s, a.kdim, ekv, a.key, g.w_k, g.grad_key, g.grad_w_k, g.grad_b_k},
        {d_v.data() + b * s_all * ekv, a.s, a.vdim, ekv, a.value, g.w_v, g.grad_value, g.grad_w_v, g.grad_b_v}};
    for (const Projection& pr : projections) {
      if (pr.rows == 0) continue;  // (an empty input's data may be null)
      const size_t first = layout.FirstRow(b, pr.rows) * pr.in;
      GemmUnpacked(pr.rows, pr.in, pr.out, pr.d_y, pr.out, 1, pr.w, pr.in, false, pr.grad_x + first, pos * pr.in,
                   nullptr, true, pack);
      GemmUnpacked(pr.out, pr.in, pr.rows, pr.d_y, 1, pr.out, pr.x + first, pos * pr.in, false, pr.grad_w, pr.in,
                   nullptr, true, pack);
      if (pr.grad_b) AddColumnSums(pr.d_y, pr.rows, pr.out, pr.out, pr.grad_b);
    }
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace attnlab {

HWY_EXPORT(MhaForwardImpl);
HWY_EXPORT(MhaBackwardImpl);

void MhaForward(const MhaArgs& args) { HWY_DYNAMIC_DISPATCH(MhaForwardImpl)(args); }
void MhaBackward(const MhaBackwardArgs& args) { HWY_DYNAMIC_DISPATCH(MhaBackwardImpl)(args); }

}  // namespace attnlab
#endif  // HWY_ONCE
