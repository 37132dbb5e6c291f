// Marshalling of the Embind layer (embind.cc): the value-object argument structs of args.h as JS hands them over,
// converted to the C++ API's views, options and configurations, and results back to JS-owned copies. No math.
#ifndef ATTNLAB_BINDINGS_MARSHAL_H_
#define ATTNLAB_BINDINGS_MARSHAL_H_

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/attention.h"
#include "attnlab/memory_needs.h"
#include "attnlab/tiny_transformer.h"
#include "attnlab/transformer.h"
#include "cpp/bindings/args.h"

namespace attnlab {
namespace marshal {

using emscripten::val;

// ---------------------------------------------------------------------------------------------------------------
// Conversions.

inline Shape ToShape(const val& array) {
  const size_t rank = array["length"].as<size_t>();
  Shape shape(rank);
  for (size_t i = 0; i < rank; ++i) shape[i] = static_cast<int64_t>(array[i].as<double>());
  return shape;
}

inline val FromShape(const Shape& shape) {
  val array = val::array();
  for (size_t i = 0; i < shape.size(); ++i) array.set(i, static_cast<double>(shape[i]));
  return array;
}

// A JS-owned Float32Array copy of `data`.
inline val CopyOut(const std::vector<float>& data) {
  return val::global("Float32Array").new_(emscripten::typed_memory_view(data.size(), data.data()));
}

inline TensorView ViewOf(const TensorArg& t) {
  return TensorView{reinterpret_cast<const float*>(t.ptr), ToShape(t.shape)};
}

inline TokensView TokensOf(const TensorArg& t) {
  return TokensView{reinterpret_cast<const int32_t*>(t.ptr), ToShape(t.shape)};
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

inline TransformerConfig ConfigOf(const TransformerArgs& a) {
  TransformerConfig c;
  c.arch = a.arch;
  c.vocab_size = static_cast<int64_t>(a.vocab_size);
  c.context_length = static_cast<int64_t>(a.context_length);
  c.embed_dim = static_cast<int64_t>(a.embed_dim);
  c.num_layers = static_cast<int64_t>(a.num_layers);
  c.num_heads = static_cast<int64_t>(a.num_heads);
  c.num_kv_heads = static_cast<int64_t>(a.num_kv_heads);
  c.head_dim = static_cast<int64_t>(a.head_dim);
  c.hidden_dim = static_cast<int64_t>(a.hidden_dim);
  c.norm_eps = a.norm_eps;
  c.rope_theta = a.rope_theta;
  c.tie_embeddings = a.tie_embeddings;
  c.attention_bias = a.attention_bias;
  c.sliding_window = static_cast<int64_t>(a.sliding_window);
  return c;
}

// The normalised configuration back as the argument struct (seed 0).
inline TransformerArgs ArgsOf(const TransformerConfig& c) {
  TransformerArgs a;
  a.arch = c.arch;
  a.vocab_size = static_cast<double>(c.vocab_size);
  a.context_length = static_cast<double>(c.context_length);
  a.embed_dim = static_cast<double>(c.embed_dim);
  a.num_layers = static_cast<double>(c.num_layers);
  a.num_heads = static_cast<double>(c.num_heads);
  a.num_kv_heads = static_cast<double>(c.num_kv_heads);
  a.head_dim = static_cast<double>(c.head_dim);
  a.hidden_dim = static_cast<double>(c.hidden_dim);
  a.norm_eps = c.norm_eps;
  a.rope_theta = c.rope_theta;
  a.tie_embeddings = c.tie_embeddings;
  a.attention_bias = c.attention_bias;
  a.sliding_window = static_cast<double>(c.sliding_window);
  return a;
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
  return o;
}

inline Transformer::AdamWOptions OptionsOf(const AdamWArgs& a) {
  Transformer::AdamWOptions o;
  o.lr = a.lr;
  o.weight_decay = a.weight_decay;
  o.beta1 = a.beta1;
  o.beta2 = a.beta2;
  o.eps = a.eps;
  o.clip_grad_norm = a.clip_grad_norm;
  return o;
}

// [Float32Array copy, shape].
inline val TensorToJs(const Tensor& tensor) {
  val pair = val::array();
  pair.set(0, CopyOut(tensor.data));
  pair.set(1, FromShape(tensor.shape));
  return pair;
}

// { logits, attentions: [RawTensor | null] × L (null: a layer not asked for), hiddenStates?: RawTensor[] }.
inline val TransformerOutputToJs(const TransformerOutput& out, bool with_hidden_states) {
  val result = val::object();
  result.set("logits", TensorToJs(out.logits));
  val attentions = val::array();
  for (size_t l = 0; l < out.attentions.size(); ++l) {
    const Tensor& w = out.attentions[l];
    attentions.set(l, w.shape.empty() ? val::null() : TensorToJs(w));
  }
  result.set("attentions", attentions);
  if (with_hidden_states) {
    val hidden = val::array();
    for (size_t i = 0; i < out.hidden_states.size(); ++i) hidden.set(i, TensorToJs(out.hidden_states[i]));
    result.set("hiddenStates", hidden);
  }
  return result;
}

// [[name, Float32Array, shape], …] in map order.
inline val TensorMapToJs(const std::map<std::string, Tensor>& tensors) {
  val list = val::array();
  size_t i = 0;
  for (const auto& [name, tensor] : tensors) {
    val entry = val::array();
    entry.set(0, name);
    entry.set(1, CopyOut(tensor.data));
    entry.set(2, FromShape(tensor.shape));
    list.set(i++, entry);
  }
  return list;
}

// [[name, shape], …].
inline val ShapesToJs(const std::vector<std::pair<std::string, Shape>>& shapes) {
  val list = val::array();
  size_t i = 0;
  for (const auto& [name, shape] : shapes) {
    val entry = val::array();
    entry.set(0, name);
    entry.set(1, FromShape(shape));
    list.set(i++, entry);
  }
  return list;
}

// [[what, bytes], …].
inline val MemoryNeedsToJs(const MemoryNeeds& needs) {
  val list = val::array();
  for (size_t i = 0; i < needs.size(); ++i) {
    val entry = val::array();
    entry.set(0, needs[i].what);
    entry.set(1, needs[i].bytes);
    list.set(i, entry);
  }
  return list;
}

// [[name, ptr, shape], …] → views into wasm memory.
inline std::map<std::string, TensorView> StateDictFromJs(const val& entries) {
  std::map<std::string, TensorView> dict;
  const size_t n = entries["length"].as<size_t>();
  for (size_t i = 0; i < n; ++i) {
    val entry = entries[i];
    dict[entry[0].as<std::string>()] = ViewOf(TensorArg{entry[1].as<uintptr_t>(), entry[2]});
  }
  return dict;
}

inline val ResultToJs(const AttentionResult& result, bool with_weights) {
  val out = val::object();
  out.set("output", TensorToJs(result.output));
  if (with_weights) out.set("weights", TensorToJs(result.weights));
  return out;
}

// SDPA's result: output, weights when asked for, and scores / presentKey / presentValue when the call made them
// (a tensor the call did not make has an empty shape).
inline val SdpaResultToJs(const AttentionResult& result, bool with_weights) {
  val out = ResultToJs(result, with_weights);
  if (!result.scores.shape.empty()) out.set("scores", TensorToJs(result.scores));
  if (!result.present_key.shape.empty()) out.set("presentKey", TensorToJs(result.present_key));
  if (!result.present_value.shape.empty()) out.set("presentValue", TensorToJs(result.present_value));
  return out;
}

inline val GradientsToJs(const Tensor& grad_query, const Tensor& grad_key, const Tensor& grad_value) {
  val out = val::object();
  out.set("gradQuery", TensorToJs(grad_query));
  out.set("gradKey", TensorToJs(grad_key));
  out.set("gradValue", TensorToJs(grad_value));
  return out;
}

}  // namespace marshal
}  // namespace attnlab

#endif  // ATTNLAB_BINDINGS_MARSHAL_H_
