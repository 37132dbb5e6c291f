// Training an encoder: the forward keeping its activations (block-inl.h, the encoder's stages), the cross-entropy of
// its head, and the backward through the head (a classifier on token 0, or the masked-LM transform and tied
// decoder), the final norm, every block (pre- or post-norm; block_backward-inl.h: bidirectional heads from the saved
// weights, padded keys passing nothing) and the embeddings (a vision model's patches, or a text encoder's word,
// position and type embeddings through their LayerNorm), compiled once per Highway target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpp/src/model/kernels_encoder_train.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <algorithm>
#include <cstddef>
#include <vector>

#include "cpp/src/model/block-inl.h"
#include "cpp/src/model/block_backward-inl.h"
#include "cpp/src/model/encoder_train_kernels.h"
#include "cpp/src/model/model_kernels.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {

// Buffers of an encoder's backward beyond GradScratch's: the masked-LM transform and the embeddings' sum recomputed
// (pre-activation, activation, normed) and their gradients.
struct EncoderScratch {
  std::vector<float> d_sum, pre, act, normed, d_act;
};

// Classification of token 0 (rows T·E apart in h and d_h; d_h's other rows get 0): an image's logits read h₀ itself,
// a sequence's tanh(dense(h₀)) (BERT's pooler, RoBERTa's classifier dense: the forward left h₀ in m.first and the
// tanh in m.pooled). a.logits become their gradient; returns the loss.
inline double ClassifierBackward(const ModelArgs& a, const TrainArgs& t, const EncoderGrads& d, const ModelScratch& m,
                                 float* d_h, GradScratch& g) {
  const EncoderArgs& enc = *a.encoder;
  const size_t labels = a.head.out, item = a.tokens * a.e;
  const double loss = ObjectiveRowsInPlace(a.logits, t, a.batch, 1, labels);
  if (enc.task == Task::kImageClassification) {
    LinearBackward(a.batch, t.h_final, item, a.head, a.logits, labels, t.head, t.head_bias, d_h, item, false, g);
    return loss;
  }
  const size_t n = a.batch * a.e;
  float* d_pooled = Sized(g.d_ctx, n);
  LinearBackward(a.batch, m.pooled.data(), a.e, a.head, a.logits, labels, t.head, t.head_bias, d_pooled, a.e, false, g);
  for (size_t i = 0; i < n; ++i) d_pooled[i] *= 1.0f - m.pooled[i] * m.pooled[i];  // (through tanh)
  const LinearArgs& dense = enc.cls_dense.out ? enc.cls_dense : enc.pooler;
  LinearBackward(a.batch, m.first.data(), a.e, dense, d_pooled, a.e, d.first_dense, d.first_dense_bias, d_h, item,
                 false, g);
  return loss;
}

// The masked-LM head, logits = head(norm(act(dense(h)))) with the tied decoder (t.embed) and its bias: the transform
// recomputed from h, then back through it into d_h. a.logits become their gradient; returns the loss.
inline double MaskedLmBackward(const ModelArgs& a, const TrainArgs& t, const EncoderGrads& d, float* d_h,
                               GradScratch& g, EncoderScratch& x) {
  const EncoderArgs& enc = *a.encoder;
  const size_t rows = a.batch * a.tokens, n = rows * a.e;
  const double loss = ObjectiveRowsInPlace(a.logits, t, a.batch, a.tokens, a.vocab);
  float* pre = Sized(x.pre, n);
  float* act = Sized(x.act, n);
  float* normed = Sized(x.normed, n);
  Linear(rows, t.h_final, a.e, enc.head_dense, pre, a.e);
  ActivateRow(enc.head_act, pre, n, act);
  NormRows(a, rows, act, enc.head_norm, normed);
  float* d_normed = Sized(g.d_ctx, n);
  LinearBackward(rows, normed, a.e, a.head, a.logits, a.vocab, t.head ? t.head : t.embed, t.head_bias, d_normed, a.e,
                 false, g);
  float* d_act = Sized(x.d_act, n);
  std::fill(d_act, d_act + n, 0.0f);
  NormBackward(a, rows, act, enc.head_norm, d_normed, d_act, d.head_norm_weight, d.head_norm_bias);
  float* d_pre = normed;  // (no longer read)
  ActivationGradRow(enc.head_act, pre, d_act, n, d_pre);
  LinearBackward(rows, t.h_final, a.e, enc.head_dense, d_pre, a.e, d.head_dense, d.head_dense_bias, d_h, a.e, false, g);
  return loss;
}

// Block l backward: pre-norm as decoders'; post-norm (x = norm₂(x_mid + mlp(x_mid)), x_mid = norm₁(x_in +
// attention(x_in))) through the sums the forward kept in h2 and h1, then the stages without their norms.
inline void EncoderBlockBackward(const ModelArgs& a, size_t l, const TrainArgs& t, GradScratch& g) {
  const BlockArgs& blk = a.blocks[l];
  BlockGrads& d = t.grads[l];
  float* d_mask = t.head_mask_grad ? t.head_mask_grad + l * a.heads : nullptr;
  const size_t stride = a.num_blocks * a.heads;
  if (!a.encoder->post_norm) {
    MlpBackward(a, blk, t.saved[l], d, g);
    return AttentionBackward(a, blk, t.saved[l], d, g, d_mask, stride);
  }
  BlockSaved s = t.saved[l];
  BlockArgs bare = blk;
  bare.norm1 = bare.norm2 = NormArgs{};
  PostNormBackward(a, s.h2, blk.norm2, d.norm2_weight, d.norm2_bias, g);
  s.h2 = s.x_mid;  // (the MLP reads the stream itself)
  MlpBackward(a, bare, s, d, g);
  PostNormBackward(a, s.h1, blk.norm1, d.norm1_weight, d.norm1_bias, g);
  s.h1 = s.x_in;
  AttentionBackward(a, bare, s, d, g, d_mask, stride);
}

// A vision model's embeddings from d_x (B, T, E): the positions get Σ over items, [CLS] Σ of each item's row 0,
// the patch projection (weight and bias) the patch rows, against the unfolded patches the forward left in m.
inline void PatchEmbedBackward(const ModelArgs& a, const TrainArgs& t, const EncoderGrads& d, const ModelScratch& m,
                               const float* d_x, GradScratch& g) {
  const size_t n = a.tokens - 1, in = a.encoder->patch_embed.in;
  float* d_proj = Sized(g.d_up, a.batch * n * a.e);
  for (size_t b = 0; b < a.batch; ++b) {
    const float* item = d_x + b * a.tokens * a.e;
    if (t.positions) AddRows(t.positions, item, a.tokens * a.e);
    if (d.cls_token) AddRows(d.cls_token, item, a.e);
    std::copy(item + a.e, item + a.tokens * a.e, d_proj + b * n * a.e);
  }
  if (!d.patch) return;
  LinearBackward(a.batch * n, m.patches.data(), in, a.encoder->patch_embed, d_proj, a.e, d.patch, d.patch_bias, nullptr,
                 0, false, g);
}

inline size_t TypeOf(const EncoderArgs& enc, size_t r) {
  return enc.token_types ? static_cast<size_t>(enc.token_types[r]) : 0;
}

// A text encoder's embeddings from d_x: through the embeddings' LayerNorm (its input recomputed: word + position +
// type), then into the word embedding (packed (E, V): column id), the position row (RoBERTa's from its position
// ids) and the token type's row; the pad id's word row and RoBERTa's pad position row get nothing (padding_idx).
// Null gradients (an analysis): none.
inline void TextEmbedBackward(const ModelArgs& a, const TrainArgs& t, const EncoderGrads& d, const float* d_x,
                              EncoderScratch& x) {
  const EncoderArgs& enc = *a.encoder;
  const size_t rows = a.batch * a.tokens, n = rows * a.e;
  if (enc.embed_norm.weight) {
    float* sum = Sized(x.pre, n);
    Embed(a, sum);
    for (size_t r = 0; r < rows && enc.type_embed; ++r) {
      AddRows(sum + r * a.e, enc.type_embed + TypeOf(enc, r) * a.e, a.e);
    }
    float* d_sum = Sized(x.d_sum, n);
    std::fill(d_sum, d_sum + n, 0.0f);
    NormBackward(a, rows, sum, enc.embed_norm, d_x, d_sum, d.embed_norm_weight, d.embed_norm_bias);
    d_x = d_sum;
  }
  const size_t pad = d.pad_id < 0 ? ~size_t{0} : static_cast<size_t>(d.pad_id);
  for (size_t r = 0; r < rows; ++r) {
    const size_t id = static_cast<size_t>(a.ids[r]);
    const float* row = d_x + r * a.e;
    float* column = t.embed ? t.embed + (id / kPanel) * a.embed.panel_stride + id % kPanel : nullptr;
    for (size_t c = 0; c < a.e && id != pad && column; ++c) column[c * kPanel] += row[c];
    const size_t p = enc.position_ids ? static_cast<size_t>(enc.position_ids[r]) : r % a.tokens;
    if (t.positions && !(d.pad_position && p == pad)) AddRows(t.positions + p * a.e, row, a.e);
    if (d.token_types) AddRows(d.token_types + TypeOf(enc, r) * a.e, row, a.e);
  }
}

void EncoderLossAndGradImpl(const ModelArgs& a, TrainArgs& t, const EncoderGrads& d) {
  const size_t rows = a.batch * a.tokens;
  ModelScratch& m = ThreadModelScratch();
  ForwardStages(a, m, &t);
  static thread_local GradScratch g;
  static thread_local EncoderScratch x;
  float* d_x = Sized(g.d_x, rows * a.e);
  std::fill(d_x, d_x + rows * a.e, 0.0f);
  float* d_h = Sized(g.d_h, rows * a.e);
  std::fill(d_h, d_h + rows * a.e, 0.0f);
  t.loss = a.encoder->task == Task::kMaskedLm ? MaskedLmBackward(a, t, d, d_h, g, x)
                                              : ClassifierBackward(a, t, d, m, d_h, g);
  NormBackward(a, rows, t.x_final, a.norm_f, d_h, d_x, t.norm_f_weight, t.norm_f_bias);
  for (size_t l = a.num_blocks; l-- > 0;) EncoderBlockBackward(a, l, t, g);
  if (t.input_grad) std::copy(g.d_x.data(), g.d_x.data() + rows * a.e, t.input_grad);
  if (a.encoder->pixels) return PatchEmbedBackward(a, t, d, m, g.d_x.data(), g);
  TextEmbedBackward(a, t, d, g.d_x.data(), x);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace attnlab {

HWY_EXPORT(EncoderLossAndGradImpl);

void EncoderLossAndGrad(const ModelArgs& args, TrainArgs& train, const EncoderGrads& grads) {
  HWY_DYNAMIC_DISPATCH(EncoderLossAndGradImpl)(args, train, grads);
}

}  // namespace attnlab
#endif  // HWY_ONCE
