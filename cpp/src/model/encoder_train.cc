// Training an encoder (Transformer::LossAndGradient / TrainStep with a TrainBatch; docs/api.md, "training, encoders
// and encoder–decoders"): BERT, RoBERTa and ViT with their heads (masked-LM, sequence or image classification). The
// batch checked (inputs, labels, the forward options a batch may carry), the forward and backward in one dispatch
// (kernels_encoder_train.cc) into the training state's gradients.
#include <memory>
#include <string>
#include <vector>

#include "attnlab/transformer.h"
#include "cpp/src/checks.h"
#include "cpp/src/model/encoder_train_kernels.h"
#include "cpp/src/model/model_kernels.h"
#include "cpp/src/model/transformer_impl.h"

namespace attnlab {
namespace {

// Whether an MLP kind has a backward here (GELU tanh or erf, ReLU).
bool Trainable(MlpKind kind) {
  return kind == MlpKind::kGeluErf || kind == MlpKind::kGeluTanh || kind == MlpKind::kRelu;
}

// What this unit trains: an encoder with a head (masked-LM, or classification of a sequence or an image) whose
// activations have a backward.
void CheckTrainable(const TransformerConfig& c) {
  if (c.decoder_layers > 0) Fail("task", "an encoder for this training unit", "an encoder–decoder");
  if (c.task == Task::kCausalLm) {
    Fail("task", "an encoder for the batch form (decoders train on tokens and targets)", "'causal-lm'");
  }
  if (c.task == Task::kBase) {
    Fail("task", "a head to train (masked-lm, sequence-classification or image-classification)", "'base'");
  }
  if (!Trainable(c.mlp) || (c.task == Task::kMaskedLm && !Trainable(c.head_act))) {
    Fail("hiddenAct", "'gelu', 'gelu_new' or 'relu' for training", "another activation");
  }
  const bool classify = c.task != Task::kMaskedLm;
  if (classify && c.num_labels < 2) {
    Fail("numLabels", "at least 2 for training (1 is Hugging Face's regression)", std::to_string(c.num_labels));
  }
}

// The forward options a training batch may carry: attentionMask and tokenTypeIds.
void CheckTrainOptions(const TransformerForwardOptions& o) {
  const std::pair<bool, const char*> others[] = {{o.head_mask != nullptr, "headMask"},
                                                 {!o.output_attentions.empty(), "outputAttentions"},
                                                 {o.output_hidden_states, "outputHiddenStates"},
                                                 {o.occlude != nullptr, "occlude"},
                                                 {!o.head_values.empty(), "headValues"},
                                                 {o.output_head_outputs, "outputHeadOutputs"},
                                                 {o.last_logits_only, "lastLogitsOnly"},
                                                 {o.cache != nullptr, "kvCache"},
                                                 {o.decoder_input_ids != nullptr, "decoderInputIds"},
                                                 {o.decoder_attention_mask != nullptr, "decoderAttentionMask"},
                                                 {o.decoder_head_mask != nullptr, "decoderHeadMask"},
                                                 {o.cross_attn_head_mask != nullptr, "crossAttnHeadMask"}};
  for (const auto& [given, name] : others) {
    if (given) Fail(name, "absent from an encoder's training batch", "a value");
  }
}

// The batch's inputs: pixels for a vision model (no token ids), else token ids; returns the tokens' view (B, T).
TokensView TrainInputs(const TransformerConfig& c, const Transformer::TrainBatch& batch) {
  TokensView tokens = batch.tokens;
  if (c.image_size > 0) {
    if (batch.tokens.data || !batch.tokens.shape.empty()) {
      Fail("inputIds", "pixelValues for arch '" + c.arch + "' (a vision model)", "token ids");
    }
    if (!batch.pixels) Fail("pixelValues", "pixel values for arch '" + c.arch + "' (a vision model)", "none");
    tokens = TokensView{nullptr, CheckPixels(c, *batch.pixels)};
  } else {
    if (batch.pixels) Fail("pixelValues", "inputIds for arch '" + c.arch + "' (a text model)", "pixel values");
    CheckTokens(tokens, c.vocab_size, "inputIds");
    if (tokens.shape[1] > c.context_length) {
      Fail("inputIds", "at most " + std::to_string(c.context_length) + " positions (contextLength)",
           std::to_string(tokens.shape[1]));
    }
  }
  if (tokens.shape[0] * tokens.shape[1] == 0) {
    Fail(c.image_size > 0 ? "pixelValues" : "inputIds", "at least one item", "shape " + ShapeString(tokens.shape));
  }
  return tokens;
}

// labels: (B) class ids in [0, numLabels) (classification) or (B, T) token ids in [0, vocabSize) (masked-LM), each
// or −100 (ignored), at least one counted.
void CheckLabels(const TransformerConfig& c, const TokensView& labels, const Shape& tokens) {
  const bool mlm = c.task == Task::kMaskedLm;
  const Shape shape = mlm ? tokens : Shape{tokens[0]};
  const int64_t limit = mlm ? c.vocab_size : c.num_labels;
  if (labels.shape != shape) {
    Fail("labels", "shape " + ShapeString(shape) + (mlm ? " (the inputs')" : " (B: one class id per item)"),
         "shape " + ShapeString(labels.shape));
  }
  if (!labels.data) Fail("labels", "data", "null");
  const size_t n = CheckedNumel("labels", shape);
  size_t counted = 0;
  for (size_t i = 0; i < n; ++i) {
    const int32_t id = labels.data[i];
    if (id != -100 && (id < 0 || id >= limit)) {
      Fail("labels",
           std::string(mlm ? "token ids in [0, " : "class ids in [0, ") + std::to_string(limit) +
               (mlm ? ") (vocabSize)" : ") (numLabels)") + " or -100",
           std::to_string(id) + " at index " + std::to_string(i));
    }
    counted += id != -100;
  }
  if (counted == 0) Fail("labels", "at least one label that is not -100", "none");
}

// The gradients' buffers of an encoder's own parameters (the classifier's dense: RoBERTa's cls_dense, else BERT's
// pooler; none when off the loss path).
EncoderGrads EncoderGradsOf(const TransformerConfig& c, Weights& g) {
  auto or_null = [](std::vector<float>& v) { return v.empty() ? nullptr : v.data(); };
  EncoderGrads d;
  d.patch = or_null(g.patch.data);
  d.patch_bias = or_null(g.patch_bias);
  d.cls_token = or_null(g.cls_token);
  d.token_types = or_null(g.token_types);
  d.embed_norm_weight = or_null(g.embed_norm_weight);
  d.embed_norm_bias = or_null(g.embed_norm_bias);
  const bool own_dense = c.classifier_dense;
  d.first_dense = or_null(own_dense ? g.cls_dense.data : g.pooler.data);
  d.first_dense_bias = or_null(own_dense ? g.cls_dense_bias : g.pooler_bias);
  d.head_dense = or_null(g.head_dense.data);
  d.head_dense_bias = or_null(g.head_dense_bias);
  d.head_norm_weight = or_null(g.head_norm_weight);
  d.head_norm_bias = or_null(g.head_norm_bias);
  if (c.image_size == 0) d.pad_id = c.pad_token_id;  // (BertEmbeddings' padding_idx)
  d.pad_position = c.pad_offset_positions;
  return d;
}

}  // namespace

double Transformer::EncoderGradients(const TrainBatch& batch, const GradientOptions& options, LossAndGrad* extra) {
  const TransformerConfig& c = impl_->config;
  CheckTrainable(c);
  CheckTrainOptions(batch.options);
  const TokensView tokens = TrainInputs(c, batch);
  const size_t b = static_cast<size_t>(tokens.shape[0]), t_len = static_cast<size_t>(tokens.shape[1]);
  if (options.objective != Objective::kLogit) CheckLabels(c, batch.labels, tokens.shape);
  const TransformerForwardOptions& o = batch.options;
  const std::vector<float> key_bias =
      KeyBiasOf("attentionMask", o.attention_mask, o.attention_mask_shape, b, t_len, "(B, T)");
  impl_->params.Widen();  // (training updates float32 weights)
  if (!impl_->train) impl_->train = std::make_unique<TrainState>();
  TrainState& state = *impl_->train;
  if (!extra && !state.grads) state.grads = std::make_unique<Weights>(c, false);
  TransformerOutput outputs;  // (the last hidden state and pooled output the forward writes; not returned)
  EncoderCall encoder;
  const EncoderArgs* e = PrepareEncoder(c, impl_->params, tokens, batch.pixels, o, encoder, outputs);

  CallArgs call;
  PrepareCall(tokens, 0, t_len, call);
  const size_t kv = b * impl_->z.kv_heads * t_len * impl_->z.head_dim;
  const size_t logits = c.task == Task::kMaskedLm ? b * t_len * impl_->z.vocab : b * static_cast<size_t>(c.num_labels);
  call.a.logits = StepBuffers(state, call.blocks, kv, logits);
  call.a.key_bias = key_bias.empty() ? nullptr : key_bias.data();
  call.a.encoder = e;
  TrainArgs t;
  std::vector<BlockSaved> saved;
  LayOutActivations(call.a, state, saved, t);
  std::vector<BlockGrads> grads(call.blocks.size());
  PointAtGradients(extra ? nullptr : state.grads.get(), grads, t);
  t.targets = batch.labels.data;
  const bool mlm = c.task == Task::kMaskedLm;
  SetObjective(options,
               {b, mlm ? t_len : 1, static_cast<size_t>(mlm ? c.vocab_size : c.num_labels), t_len, c.num_layers,
                c.num_heads, c.embed_dim},
               t, extra);
  EncoderLossAndGrad(call.a, t, extra ? EncoderGrads{} : EncoderGradsOf(c, *state.grads));
  if (extra && options.input_gradient) SaveInput(saved[0], *extra);
  return t.loss;
}

}  // namespace attnlab
