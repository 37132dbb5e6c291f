// Training an encoder: the forward keeping its activations (block-inl.h, the encoder's stages), the cross-entropy of
// its head, and the backward through the head, the final norm, every block (block_backward-inl.h: bidirectional
// heads from the saved weights, padded keys passing nothing) and the embeddings, compiled once per Highway target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpp/src/model/kernels_encoder_train.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <algorithm>
#include <cstddef>

#include "cpp/src/model/block-inl.h"
#include "cpp/src/model/block_backward-inl.h"
#include "cpp/src/model/encoder_train_kernels.h"
#include "cpp/src/model/model_kernels.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {

// The loss of the head's logits (a.logits become their gradient) and d_h (rows, E), the gradient at the final
// norm's output: classification reads token 0 of each item (rows T·E apart), its other rows get 0.
inline double HeadBackward(const ModelArgs& a, const TrainArgs& t, float* d_h, GradScratch& g) {
  const size_t rows = a.batch * a.tokens, labels = a.head.out;
  std::fill(d_h, d_h + rows * a.e, 0.0f);
  const double loss = CrossEntropyRowsInPlace(a.logits, t.targets, a.batch, labels,
                                              static_cast<double>(CountTargets(t.targets, a.batch)));
  const size_t item = a.tokens * a.e;
  LinearBackward(a.batch, t.h_final, item, a.head, a.logits, labels, t.head, t.head_bias, d_h, item, false, g);
  return loss;
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

void EncoderLossAndGradImpl(const ModelArgs& a, TrainArgs& t, const EncoderGrads& d) {
  const size_t rows = a.batch * a.tokens;
  ModelScratch& m = ThreadModelScratch();
  ForwardStages(a, m, &t);
  static thread_local GradScratch g;
  float* d_x = Sized(g.d_x, rows * a.e);
  std::fill(d_x, d_x + rows * a.e, 0.0f);
  float* d_h = Sized(g.d_h, rows * a.e);
  t.loss = HeadBackward(a, t, d_h, g);
  NormBackward(a, rows, t.x_final, a.norm_f, d_h, d_x, t.norm_f_weight, t.norm_f_bias);
  for (size_t l = a.num_blocks; l-- > 0;) {
    MlpBackward(a, a.blocks[l], t.saved[l], t.grads[l], g);
    AttentionBackward(a, a.blocks[l], t.saved[l], t.grads[l], g, nullptr, 0);
  }
  PatchEmbedBackward(a, t, d, m, g.d_x.data(), g);
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
