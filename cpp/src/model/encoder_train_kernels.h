// Arguments of the dispatched encoder training (cpp/src/model/kernels_encoder_train.cc): the gradients of the
// parameters only encoders have, in the parameters' own layouts (packed matrices), beside TrainArgs' (blocks, final
// norm, head, positions). Pointers only; cpp/src/model/encoder_train.cc zero-fills them and checks the batch.
#ifndef ATTNLAB_SRC_MODEL_ENCODER_TRAIN_KERNELS_H_
#define ATTNLAB_SRC_MODEL_ENCODER_TRAIN_KERNELS_H_

#include "cpp/src/model/model_kernels.h"

namespace attnlab {

// Null: the model has no such parameter (or it is off the loss path).
struct EncoderGrads {
  float* patch = nullptr;       // packed (C·p², E): a vision model's patch projection
  float* patch_bias = nullptr;  // (E)
  float* cls_token = nullptr;   // (E)
  // A text encoder's: token types (types, E), the embeddings' LayerNorm; the head on token 0 (BERT's pooler or
  // RoBERTa's classifier dense, packed (E, E), the one the classifier reads) or the masked-LM transform.
  float* token_types = nullptr;
  float* embed_norm_weight = nullptr;
  float* embed_norm_bias = nullptr;
  float* first_dense = nullptr;
  float* first_dense_bias = nullptr;
  float* head_dense = nullptr;
  float* head_dense_bias = nullptr;
  float* head_norm_weight = nullptr;
  float* head_norm_bias = nullptr;
  // nn.Embedding's padding_idx (Hugging Face's BERT and RoBERTa): the word row of pad_id, and with pad_position
  // RoBERTa's position row pad_id, get no gradient; −1: none.
  int64_t pad_id = -1;
  bool pad_position = false;
};

// An encoder's forward (ModelArgs::encoder non-null, a head) keeping its activations, the mean cross-entropy of its
// logits against train.targets (classification: (B) class ids; masked-LM: (B, T) token ids; −100 ignored, at least
// one counted), and every parameter's gradient (train's, then `grads`); the loss into train.loss.
void EncoderLossAndGrad(const ModelArgs& args, TrainArgs& train, const EncoderGrads& grads);

}  // namespace attnlab

#endif  // ATTNLAB_SRC_MODEL_ENCODER_TRAIN_KERNELS_H_
