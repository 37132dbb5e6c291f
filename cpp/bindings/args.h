// The argument structs that cross Embind, each described once, and their conversion to the C++ API (results go
// back to JS in marshal.h). A struct is a table of X(C++ type, C++ member, JS name, default, doc) rows: from it come
// the struct (below), its value_object registration (embind.cc: ATTNLAB_ARG_STRUCTS) and its TypeScript interface
// (cpp/bindings/embind-args.d.ts, written by `node scripts/gen-bindings.mjs`; tests/package/bindings_contract.test.mjs
// checks it). A JS-facing struct has a name of its own, never that of a struct of the C++ API. Doc texts become the
// interfaces' comments.
#ifndef ATTNLAB_BINDINGS_ARGS_H_
#define ATTNLAB_BINDINGS_ARGS_H_

#include <emscripten/val.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attnlab/attention.h"
#include "attnlab/tiny_transformer.h"
#include "attnlab/transformer.h"

namespace attnlab {
namespace marshal {

using emscripten::val;

// A tensor in wasm memory: float32, or int32 for tokens; ptr 0 for a size query.
#define ATTNLAB_TENSOR_ARG(X)     \
  X(uintptr_t, ptr, "ptr", 0, "") \
  X(val, shape, "shape", val::array(), "")

// A mask in wasm memory; kind None ignores ptr and shape.
#define ATTNLAB_MASK_ARG(X)                \
  X(uintptr_t, ptr, "ptr", 0, "")          \
  X(val, shape, "shape", val::array(), "") \
  X(Mask::Kind, kind, "kind", Mask::Kind::kNone, "")

// One ScaledDotProductAttention call (attnlab::SdpaOptions and its tensors).
#define ATTNLAB_SDPA_CALL_ARGS(X)                                                            \
  X(TensorArg, query, "query", {}, "")                                                       \
  X(TensorArg, key, "key", {}, "")                                                           \
  X(TensorArg, value, "value", {}, "")                                                       \
  X(MaskArg, attn_mask, "attnMask", {}, "")                                                  \
  X(bool, is_causal, "isCausal", false, "")                                                  \
  X(CausalAlign, causal_align, "causalAlign", CausalAlign::kUpperLeft,                       \
    "Aligns isCausal and the window (attnlab::SdpaOptions::causal_align).")                  \
  X(bool, has_scale, "hasScale", false, "When false, scale = 1/√dk and `scale` is ignored.") \
  X(float, scale, "scale", 0, "")                                                            \
  X(bool, need_weights, "needWeights", true, "")                                             \
  X(bool, enable_gqa, "enableGQA", false, "")                                                \
  X(TensorArg, kv_lengths, "kvLengths", {},                                                  \
    "An Int32Array in wasm memory, shape [count]; ptr 0 and shape [] when absent.")          \
  X(int, window_left, "windowLeft", -1, "-1 = unbounded.")                                   \
  X(int, window_right, "windowRight", -1, "")                                                \
  X(float, softcap, "softcap", 0, "0 = none.")                                               \
  X(ScoresStage, return_scores, "returnScores", ScoresStage::kNone, "")                      \
  X(TensorArg, past_key, "pastKey", {}, "ptr 0 and shape [] when absent (both or neither).") \
  X(TensorArg, past_value, "pastValue", {}, "")

// A MultiHeadAttention's configuration (attnlab::MhaConfig) and seed.
#define ATTNLAB_MHA_CONFIG_ARGS(X)                 \
  X(int, embed_dim, "embedDim", 0, "")             \
  X(int, num_heads, "numHeads", 0, "")             \
  X(bool, bias, "bias", true, "")                  \
  X(bool, add_bias_kv, "addBiasKV", false, "")     \
  X(bool, add_zero_attn, "addZeroAttn", false, "") \
  X(int, kdim, "kdim", 0, "")                      \
  X(int, vdim, "vdim", 0, "")                      \
  X(bool, batch_first, "batchFirst", false, "")    \
  X(double, seed, "seed", 0, "")                   \
  X(int, num_kv_heads, "numKVHeads", -1, "-1: numHeads.")

// One MultiHeadAttention forward (attnlab::MhaForwardOptions and its tensors).
#define ATTNLAB_MHA_FORWARD_ARGS(X)                             \
  X(TensorArg, query, "query", {}, "")                          \
  X(TensorArg, key, "key", {}, "")                              \
  X(TensorArg, value, "value", {}, "")                          \
  X(MaskArg, key_padding_mask, "keyPaddingMask", {}, "")        \
  X(MaskArg, attn_mask, "attnMask", {}, "")                     \
  X(bool, need_weights, "needWeights", true, "")                \
  X(bool, average_attn_weights, "averageAttnWeights", true, "") \
  X(bool, requires_grad, "requiresGrad", false, "")

// A TinyTransformer's configuration and seed.
#define ATTNLAB_TINY_TRANSFORMER_ARGS(X) \
  X(int, vocab_size, "vocabSize", 0, "") \
  X(int, embed_dim, "embedDim", 0, "")   \
  X(int, num_heads, "numHeads", 0, "")   \
  X(bool, causal, "causal", false, "")   \
  X(double, seed, "seed", 0, "")

// One Transformer forward (attnlab::TransformerForwardOptions and the tokens).
#define ATTNLAB_TRANSFORMER_FORWARD_ARGS(X)                                                                         \
  X(TensorArg, tokens, "tokens", {}, "Int32Array (B, T).")                                                          \
  X(TensorArg, attention_mask, "attentionMask", {},                                                                 \
    "Uint8Array (B, P + T), 1 = token; ptr 0 and shape [] when absent.")                                            \
  X(TensorArg, head_mask, "headMask", {}, "Float32Array (L, H); ptr 0 and shape [] when absent.")                   \
  X(val, output_attentions, "outputAttentions", val::array(), "Layers whose attention weights are returned.")       \
  X(bool, output_hidden_states, "outputHiddenStates", false, "")                                                    \
  X(bool, last_logits_only, "lastLogitsOnly", false,                                                                \
    "Logits (B, 1, V) of each sequence's last position only (generation).")                                         \
  X(TensorArg, token_type_ids, "tokenTypeIds", {}, "Int32Array (B, T) (encoders); ptr 0 and shape [] when absent.") \
  X(TensorArg, pixel_values, "pixelValues", {},                                                                     \
    "Float32Array (B, C, H, W) (vision models: then tokens is unused); ptr 0 and shape [] when absent.")            \
  X(TensorArg, decoder_input_ids, "decoderInputIds", {},                                                            \
    "Int32Array (B, T) (encoder–decoders: tokens are the encoder's (B, S)); ptr 0 and shape [] otherwise.")         \
  X(TensorArg, decoder_attention_mask, "decoderAttentionMask", {},                                                  \
    "Uint8Array (B, P + T); ptr 0 and shape [] when absent.")                                                       \
  X(TensorArg, decoder_head_mask, "decoderHeadMask", {}, "Float32Array (Ld, H); ptr 0 and shape [] when absent.")   \
  X(TensorArg, cross_attn_head_mask, "crossAttnHeadMask", {}, "Float32Array (Ld, H); ptr 0 and shape [] when absent.")

// Transformer::AdamWOptions: one torch.optim.AdamW step (clipGradNorm 0: no clipping). Values become float32.
#define ATTNLAB_ADAMW_ARGS(X)                      \
  X(float, lr, "lr", 0, "")                        \
  X(float, weight_decay, "weightDecay", 0.01f, "") \
  X(float, beta1, "beta1", 0.9f, "")               \
  X(float, beta2, "beta2", 0.999f, "")             \
  X(float, eps, "eps", 1e-8f, "")                  \
  X(float, clip_grad_norm, "clipGradNorm", 0, "")

// Every struct and its table, in dependency order; its JS name is the struct's with a leading '_'.
#define ATTNLAB_ARG_STRUCTS(S)                                \
  S(TensorArg, ATTNLAB_TENSOR_ARG)                            \
  S(MaskArg, ATTNLAB_MASK_ARG)                                \
  S(SdpaCallArgs, ATTNLAB_SDPA_CALL_ARGS)                     \
  S(MhaConfigArgs, ATTNLAB_MHA_CONFIG_ARGS)                   \
  S(MhaForwardArgs, ATTNLAB_MHA_FORWARD_ARGS)                 \
  S(TinyTransformerArgs, ATTNLAB_TINY_TRANSFORMER_ARGS)       \
  S(TransformerForwardArgs, ATTNLAB_TRANSFORMER_FORWARD_ARGS) \
  S(AdamWArgs, ATTNLAB_ADAMW_ARGS)

#define ATTNLAB_ARG_MEMBER(type, member, js, init, doc) type member = init;
#define ATTNLAB_ARG_STRUCT(name, table) \
  struct name {                         \
    table(ATTNLAB_ARG_MEMBER)           \
  };
ATTNLAB_ARG_STRUCTS(ATTNLAB_ARG_STRUCT)
#undef ATTNLAB_ARG_STRUCT
#undef ATTNLAB_ARG_MEMBER

// ---------------------------------------------------------------------------------------------------------------
// The structs as the C++ API's views, options and configurations.

inline Shape ToShape(const val& array) {
  const size_t rank = array["length"].as<size_t>();
  Shape shape(rank);
  for (size_t i = 0; i < rank; ++i) shape[i] = static_cast<int64_t>(array[i].as<double>());
  return shape;
}

inline TensorView ViewOf(const TensorArg& t) {
  return TensorView{reinterpret_cast<const float*>(t.ptr), ToShape(t.shape)};
}

inline TokensView TokensOf(const TensorArg& t) {
  return TokensView{reinterpret_cast<const int32_t*>(t.ptr), ToShape(t.shape)};
}

// A vision model's pixels (B, C, H, W); an empty shape when none were given.
inline PixelsView PixelsOf(const TensorArg& t) {
  return PixelsView{reinterpret_cast<const float*>(t.ptr), ToShape(t.shape)};
}

inline Mask MaskOf(const MaskArg& m) {
  switch (m.kind) {
    case Mask::Kind::kBool:
      return Mask::Bool(reinterpret_cast<const uint8_t*>(m.ptr), ToShape(m.shape));
    case Mask::Kind::kFloat:
      return Mask::Float(reinterpret_cast<const float*>(m.ptr), ToShape(m.shape));
    case Mask::Kind::kNone:
      break;
  }
  return Mask::None();
}

// The C++ API's options and configurations, field for field (in their declaration order).
inline SdpaOptions OptionsOf(const SdpaCallArgs& a) {
  const Shape lengths = ToShape(a.kv_lengths.shape);
  return SdpaOptions{MaskOf(a.attn_mask),
                     a.is_causal,
                     a.causal_align,
                     a.has_scale,
                     a.scale,
                     a.need_weights,
                     a.enable_gqa,
                     reinterpret_cast<const int32_t*>(a.kv_lengths.ptr),
                     lengths.empty() ? 0 : static_cast<size_t>(lengths[0]),
                     a.window_left,
                     a.window_right,
                     a.softcap,
                     a.return_scores,
                     ViewOf(a.past_key),
                     ViewOf(a.past_value)};
}

inline MhaForwardOptions OptionsOf(const MhaForwardArgs& a) {
  return MhaForwardOptions{MaskOf(a.key_padding_mask), a.need_weights, MaskOf(a.attn_mask), a.average_attn_weights,
                           a.requires_grad};
}

inline MhaConfig ConfigOf(const MhaConfigArgs& a) {
  return MhaConfig{a.embed_dim, a.num_heads, a.bias,        a.add_bias_kv, a.add_zero_attn,
                   a.kdim,      a.vdim,      a.batch_first, a.num_kv_heads};
}

inline TinyTransformerConfig ConfigOf(const TinyTransformerArgs& a) {
  return TinyTransformerConfig{a.vocab_size, a.embed_dim, a.num_heads, a.causal};
}

inline std::vector<int64_t> LayersOf(const val& array) {
  const size_t n = array["length"].as<size_t>();
  std::vector<int64_t> layers(n);
  for (size_t i = 0; i < n; ++i) layers[i] = static_cast<int64_t>(array[i].as<double>());
  return layers;
}

// The Forward options of the struct (the cache is passed beside it).
inline TransformerForwardOptions OptionsOf(const TransformerForwardArgs& a) {
  TransformerForwardOptions o;
  o.attention_mask = reinterpret_cast<const uint8_t*>(a.attention_mask.ptr);
  o.attention_mask_shape = ToShape(a.attention_mask.shape);
  o.head_mask = reinterpret_cast<const float*>(a.head_mask.ptr);
  o.head_mask_shape = ToShape(a.head_mask.shape);
  o.output_attentions = LayersOf(a.output_attentions);
  o.output_hidden_states = a.output_hidden_states;
  o.last_logits_only = a.last_logits_only;
  o.token_type_ids = reinterpret_cast<const int32_t*>(a.token_type_ids.ptr);
  o.token_type_ids_shape = ToShape(a.token_type_ids.shape);
  o.decoder_input_ids = reinterpret_cast<const int32_t*>(a.decoder_input_ids.ptr);
  o.decoder_input_ids_shape = ToShape(a.decoder_input_ids.shape);
  o.decoder_attention_mask = reinterpret_cast<const uint8_t*>(a.decoder_attention_mask.ptr);
  o.decoder_attention_mask_shape = ToShape(a.decoder_attention_mask.shape);
  o.decoder_head_mask = reinterpret_cast<const float*>(a.decoder_head_mask.ptr);
  o.decoder_head_mask_shape = ToShape(a.decoder_head_mask.shape);
  o.cross_attn_head_mask = reinterpret_cast<const float*>(a.cross_attn_head_mask.ptr);
  o.cross_attn_head_mask_shape = ToShape(a.cross_attn_head_mask.shape);
  return o;
}

// A training batch (Transformer::TrainBatch) of the forward struct's inputs and `labels`; `pixels` holds the
// pixelValues' view while the batch is used.
inline Transformer::TrainBatch BatchOf(const TransformerForwardArgs& a, const TensorArg& labels, PixelsView& pixels) {
  Transformer::TrainBatch batch;
  batch.tokens = TokensOf(a.tokens);
  pixels = PixelsOf(a.pixel_values);
  if (!pixels.shape.empty()) batch.pixels = &pixels;
  batch.options = OptionsOf(a);
  batch.labels = TokensOf(labels);
  return batch;
}

inline Transformer::AdamWOptions OptionsOf(const AdamWArgs& a) {
  return Transformer::AdamWOptions{a.lr, a.weight_decay, a.beta1, a.beta2, a.eps, a.clip_grad_norm};
}

}  // namespace marshal
}  // namespace attnlab

#endif  // ATTNLAB_BINDINGS_ARGS_H_
