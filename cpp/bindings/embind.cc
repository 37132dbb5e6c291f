// Embind layer: marshalling and error conversion only, no math.
//
// Raw module contract (web/src/ wraps it; nothing else should call it):
//   Module._malloc(bytes) / Module._free(ptr)     JS copies inputs into the heap with one HEAPF32/HEAPU8 .set().
//   Module.targetName() → 'WASM' | 'EMU128'
//   Module.sdpa(q, qShape, k, kShape, v, vShape, mask, maskShape, maskKind, isCausal, hasScale, scale,
//               needWeights) → { output: Float32Array, outputShape: number[], weights?, weightsShape? }
//   new Module.MultiHeadAttention(embedDim, numHeads, bias, addBiasKV, addZeroAttn, kdim, vdim, batchFirst, seed)
//     .parameterShapes() → [[name, shape], …]
//     .loadStateDict([[name, ptr, shape], …])
//     .stateDict() → [[name, Float32Array, shape], …]
//     .forward(q, qShape, k, kShape, v, vShape, kpm, kpmShape, kpmKind, mask, maskShape, maskKind,
//              needWeights, averageAttnWeights, requiresGrad) → { output, outputShape, weights?, weightsShape? }
//     .backward(gradOut, gradOutShape) → { gradQuery, gradKey, gradValue: [Float32Array, shape],
//                                          gradParams: [[name, Float32Array, shape], …] }
//     .delete()
//   Module.sdpaBackward(q, qShape, k, kShape, v, vShape, gradOut, gradOutShape, mask, maskShape, maskKind,
//                       isCausal, hasScale, scale) → { gradQuery, gradKey, gradValue: [Float32Array, shape] }
//   new Module.TinyTransformer(vocabSize, embedDim, numHeads, causal, seed)
//     .parameterShapes() / .loadStateDict(entries) / .stateDict()   as for MultiHeadAttention
//     .forward(tokens, shape) → { logits: [Float32Array, shape], weights: [Float32Array, shape] }
//     .lossAndGrad(tokens, shape, targets, targetsShape) → { loss, gradParams: [[name, Float32Array, shape], …] }
//     .trainStep(tokens, shape, targets, targetsShape, lr) → loss
//     .delete()
// Token pointers point at int32 data.
// Pointers are byte offsets into wasm memory; shapes are arrays of non-negative integers (checked in JS);
// mask kinds are 0 = none, 1 = bool (Uint8Array), 2 = float (Float32Array). Returned arrays are JS-owned
// copies. C++ exceptions come back as JS errors carrying the message: std::invalid_argument and
// std::bad_alloc → RangeError, anything else → Error. Messages use the C++ (snake_case) argument names.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/attention.h"
#include "attnlab/tiny_transformer.h"

namespace attnlab {
namespace {

using emscripten::val;

// Runs f; a C++ exception becomes a thrown JS error. The JS throw happens after the catch block has ended so
// that the C++ exception object is freed first (no leak per error).
template <typename F>
auto Guard(F&& f) -> decltype(f()) {
  val error = val::undefined();
  {
    try {
      return f();
    } catch (const std::invalid_argument& e) {
      error = val::global("RangeError").new_(std::string(e.what()));
    } catch (const std::bad_alloc&) {
      error = val::global("RangeError").new_(std::string("out of memory: the tensors do not fit in wasm memory"));
    } catch (const std::exception& e) {
      error = val::global("Error").new_(std::string(e.what()));
    }
  }
  error.throw_();
}

Shape ToShape(const val& array) {
  const size_t rank = array["length"].as<size_t>();
  Shape shape(rank);
  for (size_t i = 0; i < rank; ++i) shape[i] = static_cast<int64_t>(array[i].as<double>());
  return shape;
}

val FromShape(const Shape& shape) {
  val array = val::array();
  for (size_t i = 0; i < shape.size(); ++i) array.set(i, static_cast<double>(shape[i]));
  return array;
}

// A JS-owned Float32Array copy of `data`.
val CopyOut(const std::vector<float>& data) {
  return val::global("Float32Array").new_(emscripten::typed_memory_view(data.size(), data.data()));
}

TensorView ViewAt(uintptr_t ptr, const val& shape) { return TensorView{reinterpret_cast<const float*>(ptr), ToShape(shape)}; }

Mask MaskAt(uintptr_t ptr, const val& shape, int kind) {
  switch (kind) {
    case 1:
      return Mask::Bool(reinterpret_cast<const uint8_t*>(ptr), ToShape(shape));
    case 2:
      return Mask::Float(reinterpret_cast<const float*>(ptr), ToShape(shape));
    default:
      return Mask::None();
  }
}

// [Float32Array copy, shape].
val TensorToJs(const Tensor& tensor) {
  val pair = val::array();
  pair.set(0, CopyOut(tensor.data));
  pair.set(1, FromShape(tensor.shape));
  return pair;
}

// [[name, Float32Array, shape], …] in map order.
val TensorMapToJs(const std::map<std::string, Tensor>& tensors) {
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
val ShapesToJs(const std::vector<std::pair<std::string, Shape>>& shapes) {
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

// [[name, ptr, shape], …] → views into wasm memory.
std::map<std::string, TensorView> StateDictFromJs(const val& entries) {
  std::map<std::string, TensorView> dict;
  const size_t n = entries["length"].as<size_t>();
  for (size_t i = 0; i < n; ++i) {
    val entry = entries[i];
    dict[entry[0].as<std::string>()] = ViewAt(entry[1].as<uintptr_t>(), entry[2]);
  }
  return dict;
}

TokensView TokensAt(uintptr_t ptr, const val& shape) {
  return TokensView{reinterpret_cast<const int32_t*>(ptr), ToShape(shape)};
}

val ResultToJs(const AttentionResult& result, bool with_weights) {
  val out = val::object();
  out.set("output", CopyOut(result.output.data));
  out.set("outputShape", FromShape(result.output.shape));
  if (with_weights) {
    out.set("weights", CopyOut(result.weights.data));
    out.set("weightsShape", FromShape(result.weights.shape));
  }
  return out;
}

val Sdpa(uintptr_t q, val q_shape, uintptr_t k, val k_shape, uintptr_t v, val v_shape, uintptr_t mask,
         val mask_shape, int mask_kind, bool is_causal, bool has_scale, float scale, bool need_weights) {
  return Guard([&] {
    SdpaOptions options;
    options.attn_mask = MaskAt(mask, mask_shape, mask_kind);
    options.is_causal = is_causal;
    options.has_scale = has_scale;
    options.scale = scale;
    options.need_weights = need_weights;
    const AttentionResult result =
        ScaledDotProductAttention(ViewAt(q, q_shape), ViewAt(k, k_shape), ViewAt(v, v_shape), options);
    return ResultToJs(result, need_weights);
  });
}

val SdpaBackward(uintptr_t q, val q_shape, uintptr_t k, val k_shape, uintptr_t v, val v_shape, uintptr_t grad_out,
                 val grad_out_shape, uintptr_t mask, val mask_shape, int mask_kind, bool is_causal, bool has_scale,
                 float scale) {
  return Guard([&] {
    SdpaOptions options;
    options.attn_mask = MaskAt(mask, mask_shape, mask_kind);
    options.is_causal = is_causal;
    options.has_scale = has_scale;
    options.scale = scale;
    const SdpaGradients g = ScaledDotProductAttentionBackward(ViewAt(q, q_shape), ViewAt(k, k_shape),
                                                              ViewAt(v, v_shape), ViewAt(grad_out, grad_out_shape),
                                                              options);
    val out = val::object();
    out.set("gradQuery", TensorToJs(g.grad_query));
    out.set("gradKey", TensorToJs(g.grad_key));
    out.set("gradValue", TensorToJs(g.grad_value));
    return out;
  });
}

std::string TargetName() { return ActiveTargetName(); }

// Owns one attnlab::MultiHeadAttention for JS.
class MhaBinding {
 public:
  explicit MhaBinding(MultiHeadAttention mha) : mha_(std::move(mha)) {}

  val ParameterShapes() const {
    return Guard([&] { return ShapesToJs(mha_.ParameterShapes()); });
  }

  void LoadStateDict(val entries) {
    Guard([&] {
      mha_.LoadStateDict(StateDictFromJs(entries));
      return 0;
    });
  }

  val StateDict() const {
    return Guard([&] { return TensorMapToJs(mha_.StateDict()); });
  }

  val Forward(uintptr_t q, val q_shape, uintptr_t k, val k_shape, uintptr_t v, val v_shape, uintptr_t kpm,
              val kpm_shape, int kpm_kind, uintptr_t mask, val mask_shape, int mask_kind, bool need_weights,
              bool average_attn_weights, bool requires_grad) {
    return Guard([&] {
      MhaForwardOptions options;
      options.requires_grad = requires_grad;
      options.key_padding_mask = MaskAt(kpm, kpm_shape, kpm_kind);
      options.attn_mask = MaskAt(mask, mask_shape, mask_kind);
      options.need_weights = need_weights;
      options.average_attn_weights = average_attn_weights;
      const AttentionResult result = mha_.Forward(ViewAt(q, q_shape), ViewAt(k, k_shape), ViewAt(v, v_shape), options);
      return ResultToJs(result, need_weights);
    });
  }

  val Backward(uintptr_t grad_out, val grad_out_shape) {
    return Guard([&] {
      const MhaGradients g = mha_.Backward(ViewAt(grad_out, grad_out_shape));
      val out = val::object();
      out.set("gradQuery", TensorToJs(g.grad_query));
      out.set("gradKey", TensorToJs(g.grad_key));
      out.set("gradValue", TensorToJs(g.grad_value));
      out.set("gradParams", TensorMapToJs(g.grad_params));
      return out;
    });
  }

 private:
  MultiHeadAttention mha_;
};

// Owns one attnlab::TinyTransformer for JS.
class TinyTransformerBinding {
 public:
  explicit TinyTransformerBinding(TinyTransformer model) : model_(std::move(model)) {}

  val ParameterShapes() const {
    return Guard([&] { return ShapesToJs(model_.ParameterShapes()); });
  }
  void LoadStateDict(val entries) {
    Guard([&] {
      model_.LoadStateDict(StateDictFromJs(entries));
      return 0;
    });
  }
  val StateDict() const {
    return Guard([&] { return TensorMapToJs(model_.StateDict()); });
  }
  val Forward(uintptr_t tokens, val shape) {
    return Guard([&] {
      const TinyTransformer::Output out = model_.Forward(TokensAt(tokens, shape));
      val result = val::object();
      result.set("logits", TensorToJs(out.logits));
      result.set("weights", TensorToJs(out.weights));
      return result;
    });
  }
  val LossAndGrad(uintptr_t tokens, val shape, uintptr_t targets, val targets_shape) {
    return Guard([&] {
      const TinyTransformer::LossAndGrad lg =
          model_.LossAndGradient(TokensAt(tokens, shape), TokensAt(targets, targets_shape));
      val result = val::object();
      result.set("loss", lg.loss);
      result.set("gradParams", TensorMapToJs(lg.grad_params));
      return result;
    });
  }
  double TrainStep(uintptr_t tokens, val shape, uintptr_t targets, val targets_shape, float lr) {
    return Guard([&] {
      return static_cast<double>(model_.TrainStep(TokensAt(tokens, shape), TokensAt(targets, targets_shape), lr));
    });
  }

 private:
  TinyTransformer model_;
};

TinyTransformerBinding* MakeTinyTransformer(int vocab_size, int embed_dim, int num_heads, bool causal, double seed) {
  return Guard([&] {
    TinyTransformerConfig config;
    config.vocab_size = vocab_size;
    config.embed_dim = embed_dim;
    config.num_heads = num_heads;
    config.causal = causal;
    TinyTransformer model(config, static_cast<uint64_t>(seed));
    return new TinyTransformerBinding(std::move(model));
  });
}

// Factory: MultiHeadAttention's constructor validates before anything is allocated for JS, so a throw leaks
// nothing.
MhaBinding* MakeMha(int embed_dim, int num_heads, bool bias, bool add_bias_kv, bool add_zero_attn, int kdim,
                    int vdim, bool batch_first, double seed) {
  return Guard([&] {
    MhaConfig config;
    config.embed_dim = embed_dim;
    config.num_heads = num_heads;
    config.bias = bias;
    config.add_bias_kv = add_bias_kv;
    config.add_zero_attn = add_zero_attn;
    config.kdim = kdim;
    config.vdim = vdim;
    config.batch_first = batch_first;
    MultiHeadAttention mha(config, static_cast<uint64_t>(seed));
    return new MhaBinding(std::move(mha));
  });
}

}  // namespace
}  // namespace attnlab

EMSCRIPTEN_BINDINGS(attnlab) {
  using namespace attnlab;
  emscripten::function("targetName", &TargetName);
  emscripten::function("sdpa", &Sdpa);
  emscripten::class_<MhaBinding>("MultiHeadAttention")
      .constructor(&MakeMha, emscripten::allow_raw_pointers())
      .function("parameterShapes", &MhaBinding::ParameterShapes)
      .function("loadStateDict", &MhaBinding::LoadStateDict)
      .function("stateDict", &MhaBinding::StateDict)
      .function("forward", &MhaBinding::Forward)
      .function("backward", &MhaBinding::Backward);
  emscripten::function("sdpaBackward", &SdpaBackward);
  emscripten::class_<TinyTransformerBinding>("TinyTransformer")
      .constructor(&MakeTinyTransformer, emscripten::allow_raw_pointers())
      .function("parameterShapes", &TinyTransformerBinding::ParameterShapes)
      .function("loadStateDict", &TinyTransformerBinding::LoadStateDict)
      .function("stateDict", &TinyTransformerBinding::StateDict)
      .function("forward", &TinyTransformerBinding::Forward)
      .function("lossAndGrad", &TinyTransformerBinding::LossAndGrad)
      .function("trainStep", &TinyTransformerBinding::TrainStep);
}
