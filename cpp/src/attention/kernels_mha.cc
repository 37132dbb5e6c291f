// The MultiheadAttention kernels (forward, backward), compiled once per Highway target (foreach_target). The SDPA
// kernels are a unit of their own (kernels_sdpa.cc), so that the two compile side by side; one head's GEMMs are in
// kernels_heads.cc.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpp/src/attention/kernels_mha.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cpp/src/attention/attention-inl.h"
#include "cpp/src/attention/attention_backward-inl.h"
#include "cpp/src/attention/attention_decode-inl.h"
#include "cpp/src/attention/kernels-inl.h"
#include "cpp/src/attention/kernels.h"
#include "cpp/src/attention/layer-inl.h"
#include "cpp/src/ops/gemm-inl.h"
#include "cpp/src/ops/vector_ops-inl.h"
#include "cpp/src/parallel.h"
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
  size_t SAll() const {
    return a.cache_k ? a.cache_past + a.s : a.s + (a.biases.bias_k ? 1 : 0) + (a.add_zero_attn ? 1 : 0);
  }
  // Rows of the projected key/value buffers per item: the new tokens only when they go on into the cache.
  size_t KvRows() const { return a.cache_k ? a.s : SAll(); }
  size_t HeadDim() const { return a.e / a.heads; }
  size_t KvHeads() const { return a.kv_heads ? a.kv_heads : a.heads; }  // (0: as many as query heads)
  size_t KvDim() const { return KvHeads() * HeadDim(); }
  size_t Group() const { return a.heads / KvHeads(); }  // query heads per key/value head
};

// The forward's batch-first buffers: q (n, l, e), k and v (n, kv_rows, ekv), ctx (n, l, e) the concatenated heads
// before the out-projection; the saved ones (backward) or this thread's scratch.
struct MhaBuffers {
  float* q;
  float* k;
  float* v;
  float* ctx;
};

MhaBuffers MhaBuffersOf(const MhaArgs& a, const MhaLayout& layout, ForwardScratch& own) {
  auto buffer = [](float* saved, std::vector<float>& scratch, size_t n) {
    if (saved) return saved;
    if (scratch.size() < n) scratch.resize(n);
    return scratch.data();
  };
  const MhaSaved none;
  const MhaSaved& saved = a.saved ? *a.saved : none;
  const size_t kv = a.n * layout.KvRows() * layout.KvDim();
  return MhaBuffers{buffer(saved.q, own.q, a.n * a.l * a.e), buffer(saved.k, own.k, kv), buffer(saved.v, own.v, kv),
                    buffer(saved.ctx, own.ctx, a.n * a.l * a.e)};
}

// Decoding (a cache and a few new tokens): matrix-vector projections that stream the packed weights, and the heads
// of each key/value group attend over the cache in place (attention_decode-inl.h).
bool IsDecode(const MhaArgs& a, const MhaLayout& layout) {
  return a.cache_k && a.l <= kDecodeMaxQueries && layout.Group() <= kDecodeMaxGroup;
}

// y (rows, n_out) = x (rows, k_in) · W + bias, rows ldx and ldy apart.
void Project(bool decode, size_t rows, size_t n_out, size_t k_in, const float* x, size_t ldx, const PackedB& w,
             float* y, size_t ldy, const float* bias) {
  if (decode && rows <= kGemvMaxRows) {
    GemvPacked(rows, n_out, k_in, x, ldx, w, y, ldy, bias);
  } else {
    Gemm(rows, n_out, k_in, x, ldx, 1, w, y, ldy, bias, false);
  }
}

// q = query Wqᵀ + bq, k = key Wkᵀ + bk, v = value Wvᵀ + bv, in (item, kRowBlock-row block) pieces: Q's blocks, then
// K's and V's. Each piece writes its own rows.
void ProjectQkv(const MhaArgs& a, const MhaLayout& layout, const MhaBuffers& buf, bool decode) {
  const size_t e = a.e, pos = layout.PosStride(), ekv = layout.KvDim(), kv_rows = layout.KvRows();
  const size_t q_blocks = RowBlocks(a.l), pieces = q_blocks + RowBlocks(a.s);
  // (Decoding: a piece is a few rows, memory-bound; split only as much work as a decode step's attention.)
  const double piece_flops = 2.0 * static_cast<double>(std::min(kRowBlock, std::max(a.l, a.s))) * e *
                             static_cast<double>(std::max(e, a.kdim + a.vdim));
  ParallelFor(
      a.n * pieces, piece_flops,
      [&](size_t i) {
        const size_t b = i / pieces, piece = i % pieces, r0 = (piece < q_blocks ? piece : piece - q_blocks) * kRowBlock;
        if (piece < q_blocks) {
          const size_t rows = std::min(kRowBlock, a.l - r0);
          Project(decode, rows, e, e, a.query + (layout.FirstRow(b, a.l) + r0 * pos) * e, pos * e, a.wq_t,
                  buf.q + (b * a.l + r0) * e, e, a.biases.q);
          return;
        }
        const size_t rows = std::min(kRowBlock, a.s - r0);  // (an empty key's data may be null: no piece reads it)
        const size_t first = layout.FirstRow(b, a.s) + r0 * pos;
        Project(decode, rows, ekv, a.kdim, a.key + first * a.kdim, pos * a.kdim, a.wk_t,
                buf.k + (b * kv_rows + r0) * ekv, ekv, a.biases.k);
        Project(decode, rows, ekv, a.vdim, a.value + first * a.vdim, pos * a.vdim, a.wv_t,
                buf.v + (b * kv_rows + r0) * ekv, ekv, a.biases.v);
      },
      decode ? kMinParallelDecodeFlops : kMinParallelFlops);
}

// bias_k / bias_v at key position s, then a zero key and value (add_zero_attn), per item.
void AppendExtraKeys(const MhaArgs& a, const MhaLayout& layout, const MhaBuffers& buf) {
  const size_t ekv = layout.KvDim(), s_all = layout.SAll();
  for (size_t b = 0; b < a.n; ++b) {
    float* kb = buf.k + b * s_all * ekv;
    float* vb = buf.v + b * s_all * ekv;
    size_t row = a.s;
    if (a.biases.bias_k) {
      std::copy(a.biases.bias_k, a.biases.bias_k + ekv, kb + row * ekv);
      std::copy(a.biases.bias_v, a.biases.bias_v + ekv, vb + row * ekv);
      ++row;
    }
    if (a.add_zero_attn) {
      std::fill(kb + row * ekv, kb + (row + 1) * ekv, 0.0f);
      std::fill(vb + row * ekv, vb + (row + 1) * ekv, 0.0f);
    }
  }
}

// Where each (item, head) problem's weights go: the saved buffer (backward needs them), the caller's per-head
// output, or a scratch slot that is summed into the caller's average. The average is summed in head order after each
// wave of problems (the scratch holds one wave), so it does not depend on the thread count.
struct WeightsPolicy {
  float* saved;    // (n, heads, l, s') or null
  float* out;      // the caller's weights, or null
  bool average;    // out is (n, l, s'), the mean over heads
  bool direct;     // out is (n, heads, l, s') and written in place
  float* scratch;  // average: one plane per problem of the current wave
  size_t plane;    // l · s'
  size_t heads;

  WeightsPolicy(const MhaArgs& a, size_t plane_size)
      : saved(a.saved ? a.saved->weights : nullptr),
        out(a.weights),
        average(a.weights && a.average_weights),
        direct(a.weights && !(a.weights && a.average_weights) && !saved),
        scratch(nullptr),
        plane(plane_size),
        heads(a.heads) {}

  // Problem bh (slot w of the wave starting at `first`): where its head writes its weights (null: nowhere).
  float* Of(size_t bh, size_t first) const {
    return saved ? saved + bh * plane : direct ? out + bh * plane : average ? scratch + (bh - first) * plane : nullptr;
  }
  // After a wave [first, first + count): copies or sums into the caller's weights what the heads did not write there.
  void Finish(size_t first, size_t count) const {
    for (size_t bh = first; bh < first + count && out && !direct; ++bh) {
      const float* src = Of(bh, first);
      float* dst = average ? out + bh / heads * plane : out + bh * plane;
      for (size_t i = 0; i < plane; ++i) dst[i] = average ? dst[i] + src[i] : src[i];
    }
  }
};

// The heads of this layer (layer-inl.h): queries and outputs (n, l, e); keys and values in the cache (n, KV, max,
// hd) or the projected buffers (n, kv_rows, ekv). With a cache, causal aligned lower-right: new token i sits at
// position cache_past + i (s == l) and sees the cached keys up to it; the kernels skip the tiles beyond (no mask).
LayerHeads LayerHeadsOf(const MhaArgs& a, const MhaLayout& layout, const MhaBuffers& buf) {
  const size_t e = a.e, hd = layout.HeadDim(), kv_heads = layout.KvHeads();
  LayerHeads l{};
  l.batch = a.n;
  l.heads = a.heads;
  l.kv_heads = kv_heads;
  l.lq = a.l;
  l.lk = layout.SAll();
  l.hd = hd;
  l.scale = 1.0f / std::sqrt(static_cast<float>(hd));
  l.q = buf.q;
  l.ctx = buf.ctx;
  l.q_item = l.ctx_item = a.l * e;
  l.q_row = l.ctx_row = e;
  l.bias = a.bias;
  if (a.cache_k) {
    l.k = a.cache_k;
    l.v = a.cache_v;
    l.kv_item = kv_heads * a.cache_max * hd;
    l.kv_head = a.cache_max * hd;
    l.kv_row = hd;
    l.window.causal = true;
    l.window.offset = static_cast<int64_t>(a.cache_past);
  } else {
    l.k = buf.k;
    l.v = buf.v;
    l.kv_item = layout.KvRows() * layout.KvDim();
    l.kv_head = hd;
    l.kv_row = layout.KvDim();
  }
  return l;
}

// Decoding: one problem per (item, key/value head), its group's query heads over the cache in place.
void AttendDecodeHeads(const MhaArgs& a, const LayerHeads& heads, WeightsPolicy& policy,
                       std::vector<float>& head_weights) {
  if (policy.average && head_weights.size() < a.n * a.heads * policy.plane) {
    head_weights.resize(a.n * a.heads * policy.plane);
  }
  policy.scratch = head_weights.data();
  AttendDecodeGroups(
      heads, [&](size_t bh) { return policy.Of(bh, 0); }, [](size_t, size_t) {});
  policy.Finish(0, policy.average ? a.n * a.heads : 0);  // the average, summed in head order
}

// The (item, head) problems in waves of at most ThreadCount() (one wave when the weights are not averaged).
void AttendHeadWaves(const MhaArgs& a, const LayerHeads& heads, WeightsPolicy& policy,
                     std::vector<float>& head_weights) {
  const size_t problems = a.n * a.heads;
  const size_t wave =
      policy.average ? std::max<size_t>(1, std::min(problems, ThreadCount())) : std::max<size_t>(problems, 1);
  if (policy.average && head_weights.size() < wave * policy.plane) head_weights.resize(wave * policy.plane);
  policy.scratch = head_weights.data();
  for (size_t first = 0; first < problems; first += wave) {
    const size_t count = std::min(wave, problems - first);
    AttendHeadRange(
        heads, first, count, [&](size_t bh) { return policy.Of(bh, first); }, [](size_t, size_t) {});
    policy.Finish(first, count);
  }
}

// out = ctx Woᵀ + bo in query's layout, in (item, row block) pieces.
void OutProject(const MhaArgs& a, const MhaLayout& layout, const MhaBuffers& buf, bool decode) {
  const size_t e = a.e, pos = layout.PosStride(), q_blocks = RowBlocks(a.l);
  ParallelFor(a.n * q_blocks, 2.0 * kRowBlock * e * e, [&](size_t i) {
    const size_t b = i / q_blocks, r0 = i % q_blocks * kRowBlock, rows = std::min(kRowBlock, a.l - r0);
    Project(decode, rows, e, e, buf.ctx + (b * a.l + r0) * e, e, a.wo_t,
            a.out + (layout.FirstRow(b, a.l) + r0 * pos) * e, pos * e, a.biases.o);
  });
}

// torch.nn.MultiheadAttention's forward (kernels.h, MhaArgs): project Q/K/V, append the extra keys or write the
// cache, attend every (item, head) problem (decoding: grouped over the cache), out-project.
void MhaForwardImpl(const MhaArgs& a) {
  const MhaLayout layout{a};
  if (a.l == 0) return;  // no query: nothing to write, however large the batch
  ForwardScratch& own = ThreadScratch();
  const MhaBuffers buf = MhaBuffersOf(a, layout, own);
  const bool decode = IsDecode(a, layout);
  const size_t s_all = layout.SAll(), hd = layout.HeadDim();
  ProjectQkv(a, layout, buf, decode);
  if (a.cache_k) {
    WriteKvCache(a.n, layout.KvHeads(), a.s, hd, buf.k, buf.v, layout.KvDim(), a.cache_k, a.cache_v, a.cache_max,
                 a.cache_past);
  } else {
    AppendExtraKeys(a, layout, buf);
  }
  WeightsPolicy policy(a, a.l * s_all);
  if (policy.average) std::fill(a.weights, a.weights + a.n * policy.plane, 0.0f);
  const LayerHeads heads = LayerHeadsOf(a, layout, buf);
  if (s_all == 0) {
    std::fill(buf.ctx, buf.ctx + a.n * a.l * a.e, 0.0f);  // no key: every row fully masked, no weights
  } else if (decode) {
    AttendDecodeHeads(a, heads, policy, own.head_weights);
  } else {
    AttendHeadWaves(a, heads, policy, own.head_weights);
  }
  if (policy.average) ScaleRow(a.weights, a.n * policy.plane, 1.0f / static_cast<float>(a.heads));
  OutProject(a, layout, buf, decode);
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
    if (g.grad_biases.o) AddColumnSums(d_out, a.l, e, pos * e, g.grad_biases.o);
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
    if (g.grad_biases.bias_k) {
      AddColumnSums(d_k.data() + (b * s_all + a.s) * ekv, 1, ekv, ekv, g.grad_biases.bias_k);
      AddColumnSums(d_v.data() + (b * s_all + a.s) * ekv, 1, ekv, ekv, g.grad_biases.bias_v);
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
        {d_q.data() + b * a.l * e, a.l, e, e, a.query, g.w_q, g.grad_query, g.grad_w_q, g.grad_biases.q},
        {d_k.data() + b * s_all * ekv, a.s, a.kdim, ekv, a.key, g.w_k, g.grad_key, g.grad_w_k, g.grad_biases.k},
        {d_v.data() + b * s_all * ekv, a.s, a.vdim, ekv, a.value, g.w_v, g.grad_value, g.grad_w_v, g.grad_biases.v}};
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
