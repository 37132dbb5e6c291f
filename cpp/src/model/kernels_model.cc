// The Transformer forward (inference), compiled once per Highway target (foreach_target) and dispatched once per
// Transformer::Forward (an encoder–decoder's two stacks in one); its stages are in block-inl.h.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpp/src/model/kernels_model.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "cpp/src/model/block-inl.h"
#include "cpp/src/model/model_kernels.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {

void TransformerForwardImpl(const ModelArgs& a) {
  if (a.batch * a.tokens == 0) return;
  ForwardStages(a, ThreadModelScratch(), nullptr);
}

void EncoderDecoderForwardImpl(const ModelArgs* encoder, const ModelArgs& decoder) {
  if (encoder && encoder->batch * encoder->tokens > 0) ForwardStages(*encoder, ThreadModelScratch(), nullptr);
  if (decoder.batch * decoder.tokens > 0) ForwardStages(decoder, ThreadModelScratch(), nullptr);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace attnlab {

HWY_EXPORT(TransformerForwardImpl);
HWY_EXPORT(EncoderDecoderForwardImpl);

void TransformerForward(const ModelArgs& args) { HWY_DYNAMIC_DISPATCH(TransformerForwardImpl)(args); }
void EncoderDecoderForward(const ModelArgs* encoder, const ModelArgs& decoder) {
  HWY_DYNAMIC_DISPATCH(EncoderDecoderForwardImpl)(encoder, decoder);
}

}  // namespace attnlab
#endif  // HWY_ONCE
