// Arguments of an encoder–decoder's dispatched training (cpp/src/model/kernels_seq2seq_train.cc): both stacks'
// TrainArgs (saved activations, gradients), the decoder blocks' cross-attention gradients and the stacks' relative
// position bias tables' gradients. Pointers and sizes only; cpp/src/model/seq2seq_train.cc checks the batch and lays
// out every buffer.
#ifndef ATTNLAB_SRC_MODEL_SEQ2SEQ_TRAIN_KERNELS_H_
#define ATTNLAB_SRC_MODEL_SEQ2SEQ_TRAIN_KERNELS_H_

#include "cpp/src/model/model_kernels.h"

namespace attnlab {

// Gradients of a decoder block's cross-attention stage, in the parameters' layouts (null: the model has none).
struct CrossGrads {
  float* norm_weight = nullptr;
  float* norm_bias = nullptr;
  float* q = nullptr;
  float* q_bias = nullptr;
  float* kv = nullptr;
  float* kv_bias = nullptr;
  float* o = nullptr;
  float* o_bias = nullptr;
};

// enc: the encoder's stack (its h_final is the decoder's cross->memory; targets unused); dec: the decoder's, with
// the targets (B, T), the objective (mean cross-entropy) and the loss. Both share embed (the shared embedding's
// gradient). cross: one per decoder block. enc_relative / dec_relative: the stacks' relative bias tables'
// gradients (buckets, H), or null (no relative bias). head_scale multiplies the decoder's last hidden state before
// the LM head (T5's tied head: E^−0.5). Analyses: enc's and dec's head_mask_grad (self-attention), the
// cross-attention's cross_head_mask_grad (B, Ld, H) and enc's input_grad (B, S, E), each when non-null.
struct Seq2SeqTrainArgs {
  TrainArgs enc, dec;
  CrossGrads* cross = nullptr;
  float* cross_head_mask_grad = nullptr;
  float* enc_relative = nullptr;
  float* dec_relative = nullptr;
  float head_scale = 1.0f;
};

// The forward of both stacks keeping their activations (the decoder's cross->memory must be enc's h_final), the
// loss, then every gradient (zero-filled by the caller).
void Seq2SeqLossAndGrad(const ModelArgs& encoder, const ModelArgs& decoder, Seq2SeqTrainArgs& train);

}  // namespace attnlab

#endif  // ATTNLAB_SRC_MODEL_SEQ2SEQ_TRAIN_KERNELS_H_
