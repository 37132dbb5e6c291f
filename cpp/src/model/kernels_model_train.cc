// Training a decoder: the forward keeping its activations (block-inl.h), the objective, and the backward through
// every stage in reverse (block_backward-inl.h), compiled once per Highway target and dispatched once per
// Transformer::LossAndGradient / TrainStep.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpp/src/model/kernels_model_train.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <algorithm>
#include <cstddef>

#include "cpp/src/model/block-inl.h"
#include "cpp/src/model/block_backward-inl.h"
#include "cpp/src/model/model_kernels.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {

void TransformerLossAndGradImpl(const ModelArgs& a, TrainArgs& t) {
  const size_t rows = a.batch * a.tokens;
  ModelScratch& m = ThreadModelScratch();
  ForwardStages(a, m, &t);
  t.loss = ObjectiveInPlace(a, t);  // a.logits now holds d objective / d logits
  static thread_local GradScratch g;
  float* d_x = Sized(g.d_x, rows * a.e);
  std::fill(d_x, d_x + rows * a.e, 0.0f);
  float* d_h = Sized(g.d_h, rows * a.e);
  LinearBackward(rows, t.h_final, a.e, a.head, a.logits, a.vocab, t.head ? t.head : t.embed, t.head_bias, d_h, a.e,
                 false, g);
  NormBackward(a, rows, t.x_final, a.norm_f, d_h, d_x, t.norm_f_weight, t.norm_f_bias);
  if (a.position_kind == PositionKind::kRope) {
    Sized(g.neg_sin, a.tokens * a.head_dim / 2);
    for (size_t i = 0; i < a.tokens * a.head_dim / 2; ++i) g.neg_sin[i] = -a.rope_sin[i];
  }
  for (size_t l = a.num_blocks; l-- > 0;) {
    if (a.mlp != MlpKind::kNone) MlpBackward(a, a.blocks[l], t.saved[l], t.grads[l], g);
    const size_t stride = a.num_blocks * a.heads;
    AttentionBackward(a, a.blocks[l], t.saved[l], t.grads[l], g,
                      t.head_mask_grad ? t.head_mask_grad + l * a.heads : nullptr, stride);
  }
  if (t.input_grad) std::copy(d_x, d_x + rows * a.e, t.input_grad);
  EmbedBackward(a, t, d_x, a.embed.panel_stride);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace attnlab {

HWY_EXPORT(TransformerLossAndGradImpl);

void TransformerLossAndGrad(const ModelArgs& args, TrainArgs& train) {
  HWY_DYNAMIC_DISPATCH(TransformerLossAndGradImpl)(args, train);
}

}  // namespace attnlab
#endif  // HWY_ONCE
