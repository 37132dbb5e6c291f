// Marshalling of the Embind layer (embind.cc), the way back: the C++ API's results as JS-owned copies (arguments
// come in through args.h). No math.
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

inline val FromShape(const Shape& shape) {
  val array = val::array();
  for (size_t i = 0; i < shape.size(); ++i) array.set(i, static_cast<double>(shape[i]));
  return array;
}

// A JS-owned Float32Array copy of `data`.
inline val CopyOut(const std::vector<float>& data) {
  return val::global("Float32Array").new_(emscripten::typed_memory_view(data.size(), data.data()));
}

// [Float32Array copy, shape].
inline val TensorToJs(const Tensor& tensor) {
  val pair = val::array();
  pair.set(0, CopyOut(tensor.data));
  pair.set(1, FromShape(tensor.shape));
  return pair;
}

// { logits?, lastHiddenState?, pooledOutput?, attentions: [RawTensor | null] × L (null: a layer not asked for),
// hiddenStates?: RawTensor[] }: logits unless an encoder without a head, the other two from encoders.
// A list of per-layer tensors: null for a layer not asked for (an empty tensor).
inline val LayerTensorsToJs(const std::vector<Tensor>& list) {
  val out = val::array();
  for (size_t l = 0; l < list.size(); ++l) out.set(l, list[l].shape.empty() ? val::null() : TensorToJs(list[l]));
  return out;
}

// An encoder–decoder's (marian) or a decoder's / encoder's output; the encoder's part of an encoder–decoder only
// when its stack ran (a cached decoding step after the first skips it).
inline val TransformerOutputToJs(const TransformerOutput& out, bool with_hidden_states) {
  val result = val::object();
  if (!out.logits.shape.empty()) result.set("logits", TensorToJs(out.logits));
  if (!out.last_hidden_state.shape.empty()) result.set("lastHiddenState", TensorToJs(out.last_hidden_state));
  if (!out.pooled_output.shape.empty()) result.set("pooledOutput", TensorToJs(out.pooled_output));
  result.set("attentions", LayerTensorsToJs(out.attentions));
  if (with_hidden_states) result.set("hiddenStates", LayerTensorsToJs(out.hidden_states));
  if (!out.encoder_last_hidden_state.shape.empty()) {
    result.set("encoderLastHiddenState", TensorToJs(out.encoder_last_hidden_state));
    result.set("encoderAttentions", LayerTensorsToJs(out.encoder_attentions));
    if (with_hidden_states) result.set("encoderHiddenStates", LayerTensorsToJs(out.encoder_hidden_states));
  }
  result.set("crossAttentions", LayerTensorsToJs(out.cross_attentions));
  return result;
}

// [name, Float32Array copy, shape].
inline val NamedTensorToJs(const std::string& name, const Tensor& tensor) {
  val entry = val::array();
  entry.set(0, name);
  entry.set(1, CopyOut(tensor.data));
  entry.set(2, FromShape(tensor.shape));
  return entry;
}

// [[name, Float32Array, shape], …] in map order.
inline val TensorMapToJs(const std::map<std::string, Tensor>& tensors) {
  val list = val::array();
  size_t i = 0;
  for (const auto& [name, tensor] : tensors) list.set(i++, NamedTensorToJs(name, tensor));
  return list;
}

// { loss, gradParams } of a training call.
inline val LossAndGradToJs(float loss, const std::map<std::string, Tensor>& grads) {
  val result = val::object();
  result.set("loss", loss);
  result.set("gradParams", TensorMapToJs(grads));
  return result;
}

// { loss, gradNorm } of an AdamW step.
inline val StepResultToJs(const Transformer::StepResult& r) {
  val result = val::object();
  result.set("loss", r.loss);
  result.set("gradNorm", r.grad_norm);
  return result;
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
