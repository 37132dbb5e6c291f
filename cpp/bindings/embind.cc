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
//              needWeights, averageAttnWeights) → { output, outputShape, weights?, weightsShape? }
//     .delete()
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

std::string TargetName() { return ActiveTargetName(); }

// Owns one attnlab::MultiHeadAttention for JS.
class MhaBinding {
 public:
  explicit MhaBinding(MultiHeadAttention mha) : mha_(std::move(mha)) {}

  val ParameterShapes() const {
    return Guard([&] {
      val list = val::array();
      size_t i = 0;
      for (const auto& [name, shape] : mha_.ParameterShapes()) {
        val entry = val::array();
        entry.set(0, name);
        entry.set(1, FromShape(shape));
        list.set(i++, entry);
      }
      return list;
    });
  }

  void LoadStateDict(val entries) {
    Guard([&] {
      std::map<std::string, TensorView> dict;
      const size_t n = entries["length"].as<size_t>();
      for (size_t i = 0; i < n; ++i) {
        val entry = entries[i];
        dict[entry[0].as<std::string>()] = ViewAt(entry[1].as<uintptr_t>(), entry[2]);
      }
      mha_.LoadStateDict(dict);
      return 0;
    });
  }

  val StateDict() const {
    return Guard([&] {
      val list = val::array();
      size_t i = 0;
      for (const auto& [name, tensor] : mha_.StateDict()) {
        val entry = val::array();
        entry.set(0, name);
        entry.set(1, CopyOut(tensor.data));
        entry.set(2, FromShape(tensor.shape));
        list.set(i++, entry);
      }
      return list;
    });
  }

  val Forward(uintptr_t q, val q_shape, uintptr_t k, val k_shape, uintptr_t v, val v_shape, uintptr_t kpm,
              val kpm_shape, int kpm_kind, uintptr_t mask, val mask_shape, int mask_kind, bool need_weights,
              bool average_attn_weights) {
    return Guard([&] {
      MhaForwardOptions options;
      options.key_padding_mask = MaskAt(kpm, kpm_shape, kpm_kind);
      options.attn_mask = MaskAt(mask, mask_shape, mask_kind);
      options.need_weights = need_weights;
      options.average_attn_weights = average_attn_weights;
      const AttentionResult result = mha_.Forward(ViewAt(q, q_shape), ViewAt(k, k_shape), ViewAt(v, v_shape), options);
      return ResultToJs(result, need_weights);
    });
  }

 private:
  MultiHeadAttention mha_;
};

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
      .function("forward", &MhaBinding::Forward);
}
