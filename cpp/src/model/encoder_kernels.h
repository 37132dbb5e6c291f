// What an encoder (TransformerConfig's task other than causal-lm) adds to the dispatched forward's ModelArgs:
// token types, position ids, the embeddings' LayerNorm or a vision model's patch embedding, post-norm blocks, and
// the heads after the last block.
// Pointers and sizes only; cpp/src/model/encoder.cc validates and fills them.
#ifndef ATTNLAB_SRC_MODEL_ENCODER_KERNELS_H_
#define ATTNLAB_SRC_MODEL_ENCODER_KERNELS_H_

#include <cstdint>

#include "attnlab/transformer.h"
#include "cpp/src/model/model_kernels.h"
#include "cpp/src/ops/linear.h"

namespace attnlab {

struct EncoderArgs {
  Task task = Task::kBase;
  bool post_norm = false;                 // x = norm₁(x + attention(x)), x = norm₂(x + mlp(x))
  const int32_t* token_types = nullptr;   // (B, T) in [0, types), or null: type 0
  const float* type_embed = nullptr;      // (types, E), or null: no token types
  const int32_t* position_ids = nullptr;  // (B, T) rows of ModelArgs::positions, or null: P + t
  NormArgs embed_norm;                    // of the embeddings' sum (weight null: none)
  LinearArgs pooler;                      // (E, E), out 0: none; pooled = tanh(pooler(h[:, 0]))
  LinearArgs cls_dense;                   // (E, E), out 0: none; the classifier's input = tanh(cls_dense(h[:, 0]))
  LinearArgs head_dense;                  // masked-LM: logits = head(norm(act(head_dense(h))))
  NormArgs head_norm;
  MlpKind head_act = MlpKind::kGeluErf;
  // A vision model's embeddings (pixels non-null; ModelArgs::ids unused): x[b, 0] = cls_token + positions[0],
  // x[b, 1 + n] = patch_embed(patch n of image b) + positions[1 + n] (ops/patches.h), T = 1 + (image / patch)².
  const float* pixels = nullptr;              // (B, C, image, image)
  size_t channels = 0, image = 0, patch = 0;  // C, image, patch
  LinearArgs patch_embed;                     // (C·patch², E) and its bias
  const float* cls_token = nullptr;           // (E)
  float* last_hidden = nullptr;               // (B, T, E) out
  bool normed_states = false;                 // the hidden states' last entry is after the final norm (T5Stack)
  float head_scale = 1.0f;                    // an encoder–decoder's LM head reads h × head_scale (T5's tied head)
  float* pooled = nullptr;                    // (B, E) out, or null (no pooler)
};

}  // namespace attnlab

#endif  // ATTNLAB_SRC_MODEL_ENCODER_KERNELS_H_
