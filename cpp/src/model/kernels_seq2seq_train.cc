// Training an encoder–decoder (T5, Marian): both stacks' forwards keeping their activations (block-inl.h), the
// decoder's mean cross-entropy, then the backward: the decoder's blocks in reverse, each cross-attention sending its
// keys' and values' gradient into the encoder's output, then the encoder's blocks from that sum (block_backward-inl.h's
// stages), and each stack's relative position bias table from its score gradients. Compiled once per Highway
// target, dispatched once per Transformer::LossAndGradient / TrainStep of a batch.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpp/src/model/kernels_seq2seq_train.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <algorithm>
#include <cstddef>
#include <vector>

#include "cpp/src/attention/relative_bias.h"
#include "cpp/src/model/block-inl.h"
#include "cpp/src/model/block_backward-inl.h"
#include "cpp/src/model/model_kernels.h"
#include "cpp/src/model/seq2seq_train_kernels.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {

// Reusable buffers of the encoder–decoder's backward: the encoder output's gradient (B·S, E), the cross-attention
// keys' and values' (B·S, 2·H·hd), and each (item, head)'s relative bias diagonal's (B·H, 2·L − 1).
struct Seq2SeqScratch {
  std::vector<float> d_memory, d_kv, d_diag;
};

// Through a decoder block's x += cross_o(attn(cross_q(norm₃(x)), K, V)) with K, V = cross_kv(memory): g.d_x gains
// the stage's gradient, d_memory (B·S, E) the keys' and values' path, d the stage's parameter gradients,
// d_mask (if non-null) the cross head mask's gradient of each item (rows L·H apart).
void CrossBackward(const ModelArgs& a, const BlockArgs& blk, const BlockSaved& s, const CrossGrads& d, GradScratch& g,
                   Seq2SeqScratch& q2, float* d_mask) {
  const size_t rows = a.batch * a.tokens, hd = a.head_dim, dq = a.heads * hd, src = a.cross->source, t = a.tokens;
  float* d_ctx = Sized(g.d_ctx, rows * dq);
  LinearBackward(rows, s.ctx_cross, dq, blk.cross_o, g.d_x.data(), a.e, d.o, d.o_bias, d_ctx, dq, false, g);
  if (d_mask) HeadMaskGrad(a, s.ctx_cross, d_ctx, d_mask, a.num_blocks * a.heads);
  float* d_q = Sized(g.d_qkv, rows * dq);
  float* d_kv = Sized(q2.d_kv, a.batch * src * 2 * dq);
  const HeadDims dims{t, src, hd, hd, HeadScale(a)};
  ParallelFor(a.batch * a.heads, 2.0 * HeadFlops(t, src, hd, hd), [&](size_t bh) {
    const size_t b = bh / a.heads, h = bh % a.heads, kv_row = b * src * 2 * dq + h * hd;
    static thread_local std::vector<float> pack, ds;
    HeadGradProblem p =
        MakeHeadGradProblem(dims, dq, hd, s.q_cross + b * t * dq + h * hd, blk.cross_k + bh * src * hd,
                            blk.cross_v + bh * src * hd, s.cross_weights + bh * t * src, d_ctx + b * t * dq + h * hd,
                            d_q + b * t * dq + h * hd, d_kv + kv_row, d_kv + kv_row + dq);
    p.k_stride = hd;
    p.d_out_stride = dq;
    p.d_k_stride = p.d_v_stride = 2 * dq;
    AttendHeadBackward(p, pack, ds);
  });
  LinearBackward(a.batch * src, a.cross->memory, a.e, blk.cross_kv, d_kv, 2 * dq, d.kv, d.kv_bias, q2.d_memory.data(),
                 a.e, /*accumulate=*/true, g);
  float* d_h = Sized(g.d_h, rows * a.e);
  LinearBackward(rows, s.h3, a.e, blk.cross_q, d_q, dq, d.q, d.q_bias, d_h, a.e, false, g);
  NormBackward(a, rows, s.x_cross, blk.norm3, d_h, g.d_x.data(), d.norm_weight, d.norm_bias);
}

// table (buckets, H) += each (item, head)'s diagonal gradient (B·H rows of 2T − 1) by the bucket of its relative
// position k − (T − 1), in a fixed order.
void RelativeTableGrad(const ModelArgs& a, const float* d_diag, float* table) {
  const size_t n = 2 * a.tokens - 1;
  for (size_t k = 0; k < n; ++k) {
    const int64_t rel = static_cast<int64_t>(k) - static_cast<int64_t>(a.tokens - 1);
    const size_t bucket =
        static_cast<size_t>(RelativeBucket(rel, !a.causal, a.relative.buckets, a.relative.max_distance));
    for (size_t b = 0; b < a.batch; ++b) {
      for (size_t h = 0; h < a.heads; ++h) table[bucket * a.heads + h] += d_diag[(b * a.heads + h) * n + k];
    }
  }
}

// A post-norm block (x = norm₁(x + attention(x)), with a.cross x = norm₃(x + cross(x)), x = norm₂(x + mlp(x)))
// in reverse: each stage through its norm from the sum the forward kept (h2, h3, h1), then the stage without its
// norm, whose input is the stream itself.
void PostNormBlockBackward(const ModelArgs& a, const BlockArgs& blk, const BlockSaved& saved, BlockGrads& d,
                           const CrossGrads* cross, float* d_diag, GradScratch& g, Seq2SeqScratch& q2) {
  BlockSaved s = saved;
  BlockArgs bare = blk;
  bare.norm1 = bare.norm2 = bare.norm3 = NormArgs{};
  if (a.mlp != MlpKind::kNone) {
    PostNormBackward(a, s.h2, blk.norm2, d.norm2_weight, d.norm2_bias, g);
    s.h2 = s.x_mid;
    MlpBackward(a, bare, s, d, g);
  }
  if (a.cross) {
    PostNormBackward(a, s.h3, blk.norm3, cross->norm_weight, cross->norm_bias, g);
    s.h3 = s.x_cross;
    CrossBackward(a, bare, s, *cross, g, q2, nullptr);
  }
  PostNormBackward(a, s.h1, blk.norm1, d.norm1_weight, d.norm1_bias, g);
  s.h1 = s.x_in;
  AttentionBackward(a, bare, s, d, g, nullptr, 0, d_diag);
}

// One stack's blocks in reverse from g.d_x (the gradient at its last block's output; post-norm blocks as
// PostNormBlockBackward, without head-mask gradients): cross-attention stages when
// a.cross (cross: one per block), the relative table's gradient into `relative` (non-null with a.relative), the
// head masks' gradients (t's self-attention, cross_mask the cross-attention's (B, L, H)) and the input's when
// asked, then the token embeddings'.
void StackBackward(const ModelArgs& a, const TrainArgs& t, const CrossGrads* cross, float* relative, GradScratch& g,
                   Seq2SeqScratch& q2, float* cross_mask = nullptr) {
  float* d_diag = nullptr;
  if (relative) {
    d_diag = Sized(q2.d_diag, a.batch * a.heads * (2 * a.tokens - 1));
    std::fill(d_diag, d_diag + a.batch * a.heads * (2 * a.tokens - 1), 0.0f);
  }
  for (size_t l = a.num_blocks; l-- > 0;) {
    if (a.encoder && a.encoder->post_norm) {
      PostNormBlockBackward(a, a.blocks[l], t.saved[l], t.grads[l], a.cross ? cross + l : nullptr, d_diag, g, q2);
      continue;
    }
    if (a.mlp != MlpKind::kNone) MlpBackward(a, a.blocks[l], t.saved[l], t.grads[l], g);
    if (a.cross)
      CrossBackward(a, a.blocks[l], t.saved[l], cross[l], g, q2, cross_mask ? cross_mask + l * a.heads : nullptr);
    AttentionBackward(a, a.blocks[l], t.saved[l], t.grads[l], g,
                      t.head_mask_grad ? t.head_mask_grad + l * a.heads : nullptr, a.num_blocks * a.heads, d_diag);
  }
  if (relative) RelativeTableGrad(a, d_diag, relative);
  if (t.input_grad) std::copy(g.d_x.data(), g.d_x.data() + a.batch * a.tokens * a.e, t.input_grad);
  EmbedBackward(a, t, g.d_x.data(), a.embed.panel_stride);
}

void Seq2SeqLossAndGradImpl(const ModelArgs& enc, const ModelArgs& dec, Seq2SeqTrainArgs& t) {
  ModelScratch& m = ThreadModelScratch();
  ForwardStages(enc, m, &t.enc);
  ForwardStages(dec, m, &t.dec);
  const size_t rows = dec.batch * dec.tokens, enc_rows = enc.batch * enc.tokens;
  if (t.head_scale != 1.0f) ScaleRow(dec.logits, rows * dec.vocab, t.head_scale);  // ((h · s) W as h W · s)
  t.dec.loss = ObjectiveInPlace(dec, t.dec);  // dec.logits now holds d loss / d logits
  if (t.head_scale != 1.0f) ScaleRow(dec.logits, rows * dec.vocab, t.head_scale);  // (d loss / d (h W))
  static thread_local GradScratch g;
  static thread_local Seq2SeqScratch q2;
  float* d_memory = Sized(q2.d_memory, enc_rows * dec.e);
  std::fill(d_memory, d_memory + enc_rows * dec.e, 0.0f);
  float* d_x = Sized(g.d_x, std::max(rows, enc_rows) * dec.e);
  std::fill(d_x, d_x + rows * dec.e, 0.0f);
  float* d_h = Sized(g.d_h, rows * dec.e);
  LinearBackward(rows, t.dec.h_final, dec.e, dec.head, dec.logits, dec.vocab, t.dec.head ? t.dec.head : t.dec.embed,
                 t.dec.head_bias, d_h, dec.e, false, g);
  NormBackward(dec, rows, t.dec.x_final, dec.norm_f, d_h, d_x, t.dec.norm_f_weight, t.dec.norm_f_bias);
  StackBackward(dec, t.dec, t.cross, t.dec_relative, g, q2, t.cross_head_mask_grad);
  d_x = g.d_x.data();
  std::fill(d_x, d_x + enc_rows * enc.e, 0.0f);
  NormBackward(enc, enc_rows, t.enc.x_final, enc.norm_f, d_memory, d_x, t.enc.norm_f_weight, t.enc.norm_f_bias);
  StackBackward(enc, t.enc, nullptr, t.enc_relative, g, q2);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace attnlab {

HWY_EXPORT(Seq2SeqLossAndGradImpl);

void Seq2SeqLossAndGrad(const ModelArgs& encoder, const ModelArgs& decoder, Seq2SeqTrainArgs& train) {
  HWY_DYNAMIC_DISPATCH(Seq2SeqLossAndGradImpl)(encoder, decoder, train);
}

}  // namespace attnlab
#endif  // HWY_ONCE
