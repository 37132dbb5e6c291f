// Embind layer: marshalling and error conversion only, no math.
//
// The raw module's contract is cpp/bindings/embind.d.ts; web/src/ wraps it (and is type-checked against it), and
// nothing else should call it. Every raw name starts with '_' so that it cannot be confused with the public JS
// API (`Module._MultiHeadAttention` is the binding, `MultiHeadAttention` the JS class). Calls take one option
// struct (an Embind value_object: a plain JS object with every field present) instead of positional arguments.
// Pointers are byte offsets into wasm memory; shapes are arrays of non-negative integers (checked in JS).
// Returned arrays are JS-owned copies. C++ exceptions come back as JS errors carrying the message:
// std::invalid_argument and std::bad_alloc → RangeError, anything else → Error. Messages use the C++
// (snake_case) argument names; the JS layer rewrites them.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <map>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/attention.h"
#include "attnlab/memory_needs.h"
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

// ---------------------------------------------------------------------------------------------------------------
// Argument structs (value_object): the JS spelling of each field is in EMSCRIPTEN_BINDINGS below.

// A float32 (or, for tokens, int32) tensor the JS layer copied into wasm memory; ptr 0 for a size query.
struct TensorArg {
  uintptr_t ptr = 0;
  val shape = val::array();
};

// A mask in wasm memory; kind kNone ignores ptr and shape.
struct MaskArg {
  uintptr_t ptr = 0;
  val shape = val::array();
  Mask::Kind kind = Mask::Kind::kNone;
};

struct SdpaArgs {
  TensorArg query, key, value;
  MaskArg attn_mask;
  bool is_causal = false;
  bool has_scale = false;
  float scale = 0;
  bool need_weights = true;
};

struct MhaArgs {
  int embed_dim = 0, num_heads = 0;
  bool bias = true, add_bias_kv = false, add_zero_attn = false;
  int kdim = 0, vdim = 0;
  bool batch_first = false;
  double seed = 0;
};

struct MhaForwardArgs {
  TensorArg query, key, value;
  MaskArg key_padding_mask, attn_mask;
  bool need_weights = true, average_attn_weights = true, requires_grad = false;
};

struct TinyTransformerArgs {
  int vocab_size = 0, embed_dim = 0, num_heads = 0;
  bool causal = false;
  double seed = 0;
};

// ---------------------------------------------------------------------------------------------------------------
// Conversions.

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

TensorView ViewOf(const TensorArg& t) { return TensorView{reinterpret_cast<const float*>(t.ptr), ToShape(t.shape)}; }

TokensView TokensOf(const TensorArg& t) {
  return TokensView{reinterpret_cast<const int32_t*>(t.ptr), ToShape(t.shape)};
}

Mask MaskOf(const MaskArg& m) {
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

SdpaOptions OptionsOf(const SdpaArgs& a) {
  SdpaOptions options;
  options.attn_mask = MaskOf(a.attn_mask);
  options.is_causal = a.is_causal;
  options.has_scale = a.has_scale;
  options.scale = a.scale;
  options.need_weights = a.need_weights;
  return options;
}

MhaForwardOptions OptionsOf(const MhaForwardArgs& a) {
  MhaForwardOptions options;
  options.key_padding_mask = MaskOf(a.key_padding_mask);
  options.attn_mask = MaskOf(a.attn_mask);
  options.need_weights = a.need_weights;
  options.average_attn_weights = a.average_attn_weights;
  options.requires_grad = a.requires_grad;
  return options;
}

MhaConfig ConfigOf(const MhaArgs& a) {
  MhaConfig config;
  config.embed_dim = a.embed_dim;
  config.num_heads = a.num_heads;
  config.bias = a.bias;
  config.add_bias_kv = a.add_bias_kv;
  config.add_zero_attn = a.add_zero_attn;
  config.kdim = a.kdim;
  config.vdim = a.vdim;
  config.batch_first = a.batch_first;
  return config;
}

TinyTransformerConfig ConfigOf(const TinyTransformerArgs& a) {
  TinyTransformerConfig config;
  config.vocab_size = a.vocab_size;
  config.embed_dim = a.embed_dim;
  config.num_heads = a.num_heads;
  config.causal = a.causal;
  return config;
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

// [[what, bytes], …].
val MemoryNeedsToJs(const MemoryNeeds& needs) {
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
std::map<std::string, TensorView> StateDictFromJs(const val& entries) {
  std::map<std::string, TensorView> dict;
  const size_t n = entries["length"].as<size_t>();
  for (size_t i = 0; i < n; ++i) {
    val entry = entries[i];
    dict[entry[0].as<std::string>()] = ViewOf(TensorArg{entry[1].as<uintptr_t>(), entry[2]});
  }
  return dict;
}

val ResultToJs(const AttentionResult& result, bool with_weights) {
  val out = val::object();
  out.set("output", TensorToJs(result.output));
  if (with_weights) out.set("weights", TensorToJs(result.weights));
  return out;
}

val GradientsToJs(const Tensor& grad_query, const Tensor& grad_key, const Tensor& grad_value) {
  val out = val::object();
  out.set("gradQuery", TensorToJs(grad_query));
  out.set("gradKey", TensorToJs(grad_key));
  out.set("gradValue", TensorToJs(grad_value));
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Free functions.

val Sdpa(const SdpaArgs& a) {
  return Guard([&] {
    return ResultToJs(ScaledDotProductAttention(ViewOf(a.query), ViewOf(a.key), ViewOf(a.value), OptionsOf(a)),
                      a.need_weights);
  });
}

val SdpaMemory(const SdpaArgs& a) {
  return Guard([&] {
    return MemoryNeedsToJs(
        SdpaMemoryNeeds(ToShape(a.query.shape), ToShape(a.key.shape), ToShape(a.value.shape), a.need_weights));
  });
}

val SdpaBackward(const SdpaArgs& a, const TensorArg& grad_output) {
  return Guard([&] {
    const SdpaGradients g = ScaledDotProductAttentionBackward(ViewOf(a.query), ViewOf(a.key), ViewOf(a.value),
                                                              ViewOf(grad_output), OptionsOf(a));
    return GradientsToJs(g.grad_query, g.grad_key, g.grad_value);
  });
}

val SdpaBackwardMemory(const SdpaArgs& a) {
  return Guard([&] {
    return MemoryNeedsToJs(
        SdpaBackwardMemoryNeeds(ToShape(a.query.shape), ToShape(a.key.shape), ToShape(a.value.shape)));
  });
}

val MhaMemory(const MhaArgs& a) {
  return Guard([&] { return MemoryNeedsToJs(MhaParameterMemoryNeeds(ConfigOf(a))); });
}

val TinyTransformerMemory(const TinyTransformerArgs& a) {
  return Guard([&] { return MemoryNeedsToJs(TinyTransformerParameterMemoryNeeds(ConfigOf(a))); });
}

std::string TargetName() { return ActiveTargetName(); }

// The cap on this module's wasm memory (-sMAXIMUM_MEMORY, one constant in CMakeLists.txt).
double MaxMemoryBytes() { return static_cast<double>(ATTNLAB_WASM_MAXIMUM_MEMORY); }

// ---------------------------------------------------------------------------------------------------------------
// Classes.

// Owns one model for JS and binds what every model offers: its state dict.
template <typename Model>
class ModelBinding {
 public:
  explicit ModelBinding(Model model) : model_(std::move(model)) {}

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

 protected:
  Model model_;
};

// Registers Binding (a ModelBinding<…>) under `name` with the state-dict trio; the caller adds the rest.
template <typename Binding, typename Base>
emscripten::class_<Binding> BindModel(const char* name) {
  return emscripten::class_<Binding>(name)
      .function("parameterShapes", static_cast<val (Binding::*)() const>(&Base::ParameterShapes))
      .function("loadStateDict", static_cast<void (Binding::*)(val)>(&Base::LoadStateDict))
      .function("stateDict", static_cast<val (Binding::*)() const>(&Base::StateDict));
}

class MhaBinding : public ModelBinding<MultiHeadAttention> {
 public:
  using ModelBinding::ModelBinding;

  // Factory: MultiHeadAttention's constructor validates before anything is allocated for JS, so a throw leaks
  // nothing.
  static MhaBinding* Make(const MhaArgs& a) {
    return Guard([&] { return new MhaBinding(MultiHeadAttention(ConfigOf(a), static_cast<uint64_t>(a.seed))); });
  }

  val Forward(const MhaForwardArgs& a) {
    return Guard([&] {
      return ResultToJs(model_.Forward(ViewOf(a.query), ViewOf(a.key), ViewOf(a.value), OptionsOf(a)), a.need_weights);
    });
  }

  val ForwardMemory(const MhaForwardArgs& a) const {
    return Guard([&] {
      return MemoryNeedsToJs(MhaForwardMemoryNeeds(model_.config(), ToShape(a.query.shape), ToShape(a.key.shape),
                                                   ToShape(a.value.shape), a.need_weights, a.requires_grad));
    });
  }

  val Backward(const TensorArg& grad_output) {
    return Guard([&] {
      const MhaGradients g = model_.Backward(ViewOf(grad_output));
      val out = GradientsToJs(g.grad_query, g.grad_key, g.grad_value);
      out.set("gradParams", TensorMapToJs(g.grad_params));
      return out;
    });
  }
};

class TinyTransformerBinding : public ModelBinding<TinyTransformer> {
 public:
  TinyTransformerBinding(TinyTransformer model, const TinyTransformerConfig& config)
      : ModelBinding(std::move(model)), config_(config) {}

  static TinyTransformerBinding* Make(const TinyTransformerArgs& a) {
    return Guard([&] {
      const TinyTransformerConfig config = ConfigOf(a);
      return new TinyTransformerBinding(TinyTransformer(config, static_cast<uint64_t>(a.seed)), config);
    });
  }

  val Forward(const TensorArg& tokens) {
    return Guard([&] {
      const TinyTransformer::Output out = model_.Forward(TokensOf(tokens));
      val result = val::object();
      result.set("logits", TensorToJs(out.logits));
      result.set("weights", TensorToJs(out.weights));
      return result;
    });
  }
  val LossAndGrad(const TensorArg& tokens, const TensorArg& targets) {
    return Guard([&] {
      const TinyTransformer::LossAndGrad lg = model_.LossAndGradient(TokensOf(tokens), TokensOf(targets));
      val result = val::object();
      result.set("loss", lg.loss);
      result.set("gradParams", TensorMapToJs(lg.grad_params));
      return result;
    });
  }
  double TrainStep(const TensorArg& tokens, const TensorArg& targets, float lr) {
    return Guard([&] { return static_cast<double>(model_.TrainStep(TokensOf(tokens), TokensOf(targets), lr)); });
  }
  val StepMemory(const TensorArg& tokens, bool with_gradient) const {
    return Guard(
        [&] { return MemoryNeedsToJs(TinyTransformerStepMemoryNeeds(config_, ToShape(tokens.shape), with_gradient)); });
  }

 private:
  TinyTransformerConfig config_;
};

}  // namespace
}  // namespace attnlab

EMSCRIPTEN_BINDINGS(attnlab) {
  using namespace attnlab;
  using emscripten::value_object;

  emscripten::enum_<Mask::Kind>("_MaskKind")
      .value("None", Mask::Kind::kNone)
      .value("Bool", Mask::Kind::kBool)
      .value("Float", Mask::Kind::kFloat);
  value_object<TensorArg>("_TensorArg").field("ptr", &TensorArg::ptr).field("shape", &TensorArg::shape);
  value_object<MaskArg>("_MaskArg")
      .field("ptr", &MaskArg::ptr)
      .field("shape", &MaskArg::shape)
      .field("kind", &MaskArg::kind);
  value_object<SdpaArgs>("_SdpaArgs")
      .field("query", &SdpaArgs::query)
      .field("key", &SdpaArgs::key)
      .field("value", &SdpaArgs::value)
      .field("attnMask", &SdpaArgs::attn_mask)
      .field("isCausal", &SdpaArgs::is_causal)
      .field("hasScale", &SdpaArgs::has_scale)
      .field("scale", &SdpaArgs::scale)
      .field("needWeights", &SdpaArgs::need_weights);
  value_object<MhaArgs>("_MhaArgs")
      .field("embedDim", &MhaArgs::embed_dim)
      .field("numHeads", &MhaArgs::num_heads)
      .field("bias", &MhaArgs::bias)
      .field("addBiasKV", &MhaArgs::add_bias_kv)
      .field("addZeroAttn", &MhaArgs::add_zero_attn)
      .field("kdim", &MhaArgs::kdim)
      .field("vdim", &MhaArgs::vdim)
      .field("batchFirst", &MhaArgs::batch_first)
      .field("seed", &MhaArgs::seed);
  value_object<MhaForwardArgs>("_MhaForwardArgs")
      .field("query", &MhaForwardArgs::query)
      .field("key", &MhaForwardArgs::key)
      .field("value", &MhaForwardArgs::value)
      .field("keyPaddingMask", &MhaForwardArgs::key_padding_mask)
      .field("attnMask", &MhaForwardArgs::attn_mask)
      .field("needWeights", &MhaForwardArgs::need_weights)
      .field("averageAttnWeights", &MhaForwardArgs::average_attn_weights)
      .field("requiresGrad", &MhaForwardArgs::requires_grad);
  value_object<TinyTransformerArgs>("_TinyTransformerArgs")
      .field("vocabSize", &TinyTransformerArgs::vocab_size)
      .field("embedDim", &TinyTransformerArgs::embed_dim)
      .field("numHeads", &TinyTransformerArgs::num_heads)
      .field("causal", &TinyTransformerArgs::causal)
      .field("seed", &TinyTransformerArgs::seed);

  emscripten::function("_targetName", &TargetName);
  emscripten::function("_maxMemoryBytes", &MaxMemoryBytes);
  emscripten::function("_sdpa", &Sdpa);
  emscripten::function("_sdpaMemory", &SdpaMemory);
  emscripten::function("_sdpaBackward", &SdpaBackward);
  emscripten::function("_sdpaBackwardMemory", &SdpaBackwardMemory);
  emscripten::function("_multiHeadAttentionMemory", &MhaMemory);
  emscripten::function("_tinyTransformerMemory", &TinyTransformerMemory);

  BindModel<MhaBinding, ModelBinding<MultiHeadAttention>>("_MultiHeadAttention")
      .constructor(&MhaBinding::Make, emscripten::allow_raw_pointers())
      .function("forward", &MhaBinding::Forward)
      .function("forwardMemory", &MhaBinding::ForwardMemory)
      .function("backward", &MhaBinding::Backward);
  BindModel<TinyTransformerBinding, ModelBinding<TinyTransformer>>("_TinyTransformer")
      .constructor(&TinyTransformerBinding::Make, emscripten::allow_raw_pointers())
      .function("forward", &TinyTransformerBinding::Forward)
      .function("lossAndGrad", &TinyTransformerBinding::LossAndGrad)
      .function("trainStep", &TinyTransformerBinding::TrainStep)
      .function("stepMemory", &TinyTransformerBinding::StepMemory);
}
