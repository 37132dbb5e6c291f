// The argument structs that cross Embind, each described once: a table of X(C++ type, C++ member, JS name, default,
// doc) rows. From it come the structs (below), their value_object registrations (embind.cc: ATTNLAB_ARG_STRUCTS)
// and their TypeScript interfaces (cpp/bindings/embind-args.d.ts, written by `node scripts/gen-bindings.mjs`,
// which tests/package/bindings_contract.test.mjs runs with --check). A JS-facing struct has a name of its own, never
// that of a struct of the C++ API. Doc texts become the interfaces' comments.
#ifndef ATTNLAB_BINDINGS_ARGS_H_
#define ATTNLAB_BINDINGS_ARGS_H_

#include <emscripten/val.h>

#include <cstdint>

#include "attnlab/attention.h"
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

// attnlab::TransformerConfig and the initialisation seed; 0 = derived (numKVHeads, headDim, hiddenDim) or none
// (slidingWindow). `config()` returns the normalised configuration in this form (seed 0).
#define ATTNLAB_TRANSFORMER_ARGS(X)                                           \
  X(Arch, arch, "arch", Arch::kGpt2, "")                                      \
  X(double, vocab_size, "vocabSize", 0, "")                                   \
  X(double, context_length, "contextLength", 0, "")                           \
  X(double, embed_dim, "embedDim", 0, "")                                     \
  X(double, num_layers, "numLayers", 0, "")                                   \
  X(double, num_heads, "numHeads", 0, "")                                     \
  X(double, num_kv_heads, "numKVHeads", 0, "")                                \
  X(double, head_dim, "headDim", 0, "")                                       \
  X(double, hidden_dim, "hiddenDim", 0, "")                                   \
  X(double, norm_eps, "normEps", 1e-5, "")                                    \
  X(double, rope_theta, "ropeTheta", 10000, "")                               \
  X(bool, tie_embeddings, "tieEmbeddings", true, "")                          \
  X(AttentionBias, attention_bias, "attentionBias", AttentionBias::kNone, "") \
  X(double, sliding_window, "slidingWindow", 0, "")                           \
  X(double, seed, "seed", 0, "")

// One Transformer forward (attnlab::TransformerForwardOptions and the tokens).
#define ATTNLAB_TRANSFORMER_FORWARD_ARGS(X)                                                                   \
  X(TensorArg, tokens, "tokens", {}, "Int32Array (B, T).")                                                    \
  X(TensorArg, attention_mask, "attentionMask", {},                                                           \
    "Uint8Array (B, P + T), 1 = token; ptr 0 and shape [] when absent.")                                      \
  X(TensorArg, head_mask, "headMask", {}, "Float32Array (L, H); ptr 0 and shape [] when absent.")             \
  X(val, output_attentions, "outputAttentions", val::array(), "Layers whose attention weights are returned.") \
  X(bool, output_hidden_states, "outputHiddenStates", false, "")                                              \
  X(bool, last_logits_only, "lastLogitsOnly", false,                                                          \
    "Logits (B, 1, V) of each sequence's last position only (generation).")

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
  S(TransformerArgs, ATTNLAB_TRANSFORMER_ARGS)                \
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

}  // namespace marshal
}  // namespace attnlab

#endif  // ATTNLAB_BINDINGS_ARGS_H_
