// Embind layer: marshalling (argument structs and their conversions: args.h; results: marshal.h) and error conversion
// only, no math.
//
// The raw module's contract is cpp/bindings/embind.d.ts; web/src/ wraps it (and is type-checked against it), and
// nothing else should call it. Every raw name starts with '_' so that it cannot be confused with the public JS
// API (`Module._MultiHeadAttention` is the binding, `MultiHeadAttention` the JS class). Calls take one option
// struct (an Embind value_object: a plain JS object with every field present) instead of positional arguments.
// Pointers are byte offsets into wasm memory; shapes are arrays of non-negative integers (checked in JS).
// Returned arrays are JS-owned copies. C++ exceptions come back as JS errors carrying the message:
// ConfigTypeError (a configuration value of the wrong JSON type) → TypeError, std::invalid_argument and
// std::bad_alloc → RangeError, anything else → Error. The attention calls' messages use the C++ (snake_case)
// argument names, which the JS layer rewrites (jsNames in web/src/validate.mjs); the model's (model types,
// architectures.cc, transformer.cc, train.cc) already use the JS names, or config.json's own keys. Who checks what:
// docs/architecture.md, "The JS ↔ C++ seam".
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
#include "attnlab/threads.h"
#include "attnlab/tiny_transformer.h"
#include "attnlab/transformer.h"
#include "cpp/bindings/marshal.h"

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
    } catch (const ConfigTypeError& e) {
      error = val::global("TypeError").new_(std::string(e.what()));
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

using namespace marshal;  // NOLINT(build/namespaces): the argument structs and their conversions

// ---------------------------------------------------------------------------------------------------------------
// Free functions.

val Sdpa(const SdpaCallArgs& a) {
  return Guard([&] {
    return SdpaResultToJs(ScaledDotProductAttention(ViewOf(a.query), ViewOf(a.key), ViewOf(a.value), OptionsOf(a)),
                          a.need_weights);
  });
}

val SdpaMemory(const SdpaCallArgs& a) {
  return Guard([&] {
    return MemoryNeedsToJs(
        SdpaMemoryNeeds(ToShape(a.query.shape), ToShape(a.key.shape), ToShape(a.value.shape), OptionsOf(a)));
  });
}

val SdpaBackward(const SdpaCallArgs& a, const TensorArg& grad_output) {
  return Guard([&] {
    const SdpaGradients g = ScaledDotProductAttentionBackward(ViewOf(a.query), ViewOf(a.key), ViewOf(a.value),
                                                              ViewOf(grad_output), OptionsOf(a));
    val out = GradientsToJs(g.grad_query, g.grad_key, g.grad_value);
    if (!g.grad_past_key.shape.empty()) out.set("gradPastKey", TensorToJs(g.grad_past_key));
    if (!g.grad_past_value.shape.empty()) out.set("gradPastValue", TensorToJs(g.grad_past_value));
    return out;
  });
}

val SdpaBackwardMemory(const SdpaCallArgs& a) {
  return Guard([&] {
    return MemoryNeedsToJs(
        SdpaBackwardMemoryNeeds(ToShape(a.query.shape), ToShape(a.key.shape), ToShape(a.value.shape), OptionsOf(a)));
  });
}

val MhaMemory(const MhaConfigArgs& a) {
  return Guard([&] { return MemoryNeedsToJs(MhaParameterMemoryNeeds(ConfigOf(a))); });
}

val TinyTransformerMemory(const TinyTransformerArgs& a) {
  return Guard([&] { return MemoryNeedsToJs(TinyTransformerParameterMemoryNeeds(ConfigOf(a))); });
}

// A model configuration crosses as JSON text: createModel's options (JS names, `arch`) or, with `huggingFace`, a
// config.json; C++ reads, checks and normalises it (transformer.h's ConfigFromOptions / ConfigFromHuggingFace).
TransformerConfig ConfigOfJson(const std::string& json, bool hugging_face) {
  return hugging_face ? ConfigFromHuggingFace(json) : ConfigFromOptions(json);
}

// loadModel: the configuration with the heads a checkpoint's tensor names hold (an encoder's task and pooler;
// ConfigWithHeads), as createModel's options JSON (what model.config gives).
std::string ConfigWithHeadsJson(const std::string& json, bool hugging_face, val names) {
  return Guard([&] {
    std::vector<std::string> list;
    const size_t n = names["length"].as<size_t>();
    for (size_t i = 0; i < n; ++i) list.push_back(names[i].as<std::string>());
    return OptionsJson(ConfigWithHeads(ConfigOfJson(json, hugging_face), list));
  });
}

val TransformerMemory(const std::string& config_json, bool hugging_face, WeightStorage storage, bool loading) {
  return Guard([&] {
    return MemoryNeedsToJs(TransformerParameterMemoryNeeds(ConfigOfJson(config_json, hugging_face), storage, loading));
  });
}

// The most bytes of a tensor that loadModel stages at once (memory_needs.h's kLoadPieceBytes).
double LoadPieceBytes() { return static_cast<double>(kLoadPieceBytes); }

std::string TargetName() { return ActiveTargetName(); }

// The cap on this module's wasm memory (-sMAXIMUM_MEMORY, one constant in CMakeLists.txt).
double MaxMemoryBytes() { return static_cast<double>(ATTNLAB_WASM_MAXIMUM_MEMORY); }

// The threads a call may use (attnlab/threads.h). The loader calls _setThreads(n) once, at init, with a pool of
// n - 1 pthread workers already started; single-thread variants keep 1.
void SetThreads(int n) {
  Guard([&] { SetThreadCount(n > 1 ? static_cast<size_t>(n) : 1); });
}
int Threads() { return static_cast<int>(ThreadCount()); }

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
  static MhaBinding* Make(const MhaConfigArgs& a) {
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

  // Decoding with a KV cache (a _KVCache made from this module).
  val ForwardCached(const MhaForwardArgs& a, KVCache& cache) {
    return Guard([&] {
      MhaForwardOptions options = OptionsOf(a);
      options.kv_cache = &cache;
      return ResultToJs(model_.Forward(ViewOf(a.query), ViewOf(a.key), ViewOf(a.value), options), a.need_weights);
    });
  }

  val ForwardCachedMemory(const MhaForwardArgs& a, const KVCache& cache) const {
    return Guard([&] {
      return MemoryNeedsToJs(MhaForwardMemoryNeeds(model_.config(), ToShape(a.query.shape), ToShape(a.key.shape),
                                                   ToShape(a.value.shape), a.need_weights, false, cache.length()));
    });
  }

  val KVCacheMemory(double batch_size, double max_length) const {
    return Guard([&] {
      return MemoryNeedsToJs(
          KVCacheMemoryNeeds(model_.config(), static_cast<int64_t>(batch_size), static_cast<int64_t>(max_length)));
    });
  }

  // Factory of _KVCache: CreateKVCache validates before it allocates, so a throw leaks nothing.
  static KVCache* MakeCache(const MhaBinding& mha, double batch_size, double max_length) {
    return Guard([&] {
      return new KVCache(mha.model_.CreateKVCache(static_cast<int64_t>(batch_size), static_cast<int64_t>(max_length)));
    });
  }
};

double CacheLength(const KVCache& cache) { return static_cast<double>(cache.length()); }
void CacheReset(KVCache& cache) { cache.Reset(); }

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
      return LossAndGradToJs(lg.loss, lg.grad_params);
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

class TransformerBinding : public ModelBinding<Transformer> {
 public:
  using ModelBinding::ModelBinding;

  // Factory: the constructor validates the configuration before it allocates, so a throw leaks nothing.
  // initialise false skips the random initialisation (loadModel replaces every parameter).
  // storage: the weight matrices' (Float32, or F16 / BF16 for a checkpoint of that dtype, initialise false).
  static TransformerBinding* Make(const std::string& config_json, bool hugging_face, double seed, bool initialise,
                                  WeightStorage storage) {
    return Guard([&] {
      return new TransformerBinding(
          Transformer(ConfigOfJson(config_json, hugging_face), static_cast<uint64_t>(seed), initialise, storage));
    });
  }

  // [[name, Float32Array, shape], …] in ParameterShapes' order, made one tensor at a time: wasm memory never holds
  // a second copy of all the weights.
  val StateDict() const {
    return Guard([&] {
      val list = val::array();
      size_t i = 0;
      for (const auto& [name, shape] : model_.ParameterShapes())
        list.set(i++, NamedTensorToJs(name, model_.Parameter(name)));
      return list;
    });
  }

  // model.config: the normalised configuration as JSON text (JS names).
  std::string Config() const { return OptionsJson(model_.config()); }

  // [[name, shape], …] of a whole checkpoint, checked before any tensor is loaded.
  void CheckStateDict(val entries) const {
    Guard([&] {
      std::vector<std::pair<std::string, Shape>> shapes;
      const size_t n = entries["length"].as<size_t>();
      for (size_t i = 0; i < n; ++i) shapes.emplace_back(entries[i][0].as<std::string>(), ToShape(entries[i][1]));
      model_.CheckStateDict(shapes);
      return 0;
    });
  }

  // One tensor at a time, so that JS never stages a second float32 copy of the weights in wasm memory.
  void LoadTensor(const std::string& name, const TensorArg& tensor) {
    Guard([&] {
      model_.LoadTensor(name, ViewOf(tensor));
      return 0;
    });
  }

  // One tensor of F16 / BF16 bits (a uint16 array in wasm memory), kept 16-bit in a matrix of that storage.
  void LoadTensor16(const std::string& name, const TensorArg& tensor, WeightStorage dtype) {
    Guard([&] {
      model_.LoadTensor16(name, reinterpret_cast<const uint16_t*>(tensor.ptr), ToShape(tensor.shape), dtype);
      return 0;
    });
  }

  // Rows [firstRow, firstRow + shape[0]) of one tensor, float32 or 16-bit: a large tensor copied in pieces.
  void LoadTensorRows(const std::string& name, const TensorArg& tensor, double first_row) {
    Guard([&] {
      model_.LoadTensorRows(name, ViewOf(tensor), static_cast<int64_t>(first_row));
      return 0;
    });
  }
  void LoadTensor16Rows(const std::string& name, const TensorArg& tensor, WeightStorage dtype, double first_row) {
    Guard([&] {
      model_.LoadTensor16Rows(name, reinterpret_cast<const uint16_t*>(tensor.ptr), ToShape(tensor.shape), dtype,
                              static_cast<int64_t>(first_row));
      return 0;
    });
  }

  WeightStorage Storage() const { return model_.storage(); }
  std::string CanonicalName(const std::string& name) const {
    return Guard([&] { return model_.CanonicalName(name); });
  }
  std::string TiedTo(const std::string& name) const {
    return Guard([&] { return model_.TiedTo(name); });
  }

  // A forward pass: of the pixels when pixelValues has a shape (vision models), else of the tokens (an
  // encoder–decoder's encoder ids, with decoderInputIds); `cache` (a _TransformerKVCache of this model) or null.
  val Forward(const TransformerForwardArgs& a, TransformerKVCache* cache) {
    return Guard([&] {
      TransformerForwardOptions options = OptionsOf(a);
      options.cache = cache;
      const PixelsView pixels = PixelsOf(a.pixel_values);
      return TransformerOutputToJs(
          pixels.shape.empty() ? model_.Forward(TokensOf(a.tokens), options) : model_.Forward(pixels, options),
          a.output_hidden_states);
    });
  }

  // A vision model's tokens shape is (B, 1 + N) (JS gives it); an encoder–decoder's counts both stacks, the
  // encoder's unless a cache has already run it (past > 0).
  val ForwardMemory(const TransformerForwardArgs& a, double past_length, bool with_cache) const {
    return Guard([&] {
      const int64_t past = static_cast<int64_t>(past_length);
      if (model_.config().decoder_layers > 0) {
        return MemoryNeedsToJs(TransformerEncoderDecoderForwardMemoryNeeds(
            model_.config(), ToShape(a.tokens.shape), ToShape(a.decoder_input_ids.shape), past,
            LayersOf(a.output_attentions), a.output_hidden_states, with_cache, !(with_cache && past > 0),
            a.last_logits_only));
      }
      return MemoryNeedsToJs(TransformerForwardMemoryNeeds(model_.config(), ToShape(a.tokens.shape), past,
                                                           LayersOf(a.output_attentions), a.output_hidden_states,
                                                           with_cache, a.last_logits_only));
    });
  }

  // Training: { loss, gradParams: [[name, Float32Array, shape], …] } (names as stateDict's).
  val LossAndGrad(const TensorArg& tokens, const TensorArg& targets) {
    return Guard([&] {
      const Transformer::LossAndGrad lg = model_.LossAndGradient(TokensOf(tokens), TokensOf(targets));
      return LossAndGradToJs(lg.loss, lg.grad_params);
    });
  }

  // One AdamW step: { loss, gradNorm }.
  val TrainStep(const TensorArg& tokens, const TensorArg& targets, const AdamWArgs& options) {
    return Guard(
        [&] { return StepResultToJs(model_.TrainStep(TokensOf(tokens), TokensOf(targets), OptionsOf(options))); });
  }

  // Training an encoder or an encoder–decoder on one batch (docs/api.md, "training, encoders and
  // encoder–decoders"): the inputs and options as a forward's (tokens, or pixelValues with a shape; attentionMask,
  // tokenTypeIds; decoderInputIds, decoderAttentionMask), labels (B) or (B, T).
  val LossAndGradBatch(const TransformerForwardArgs& a, const TensorArg& labels) {
    return Guard([&] {
      const PixelsView pixels = PixelsOf(a.pixel_values);
      const Transformer::LossAndGrad lg = model_.LossAndGradient(BatchOf(a, pixels, labels));
      return LossAndGradToJs(lg.loss, lg.grad_params);
    });
  }
  val TrainStepBatch(const TransformerForwardArgs& a, const TensorArg& labels, const AdamWArgs& options) {
    return Guard([&] {
      const PixelsView pixels = PixelsOf(a.pixel_values);
      return StepResultToJs(model_.TrainStep(BatchOf(a, pixels, labels), OptionsOf(options)));
    });
  }

  // TrainStepBatch (call 0), LossAndGradBatch (1) or a gradient analysis (2) of an encoder–decoder on a source and
  // labels (an analysis's decoder inputs) of these shapes.
  val TrainBatchMemory(const TensorArg& tokens, const TensorArg& labels, int call) const {
    return Guard([&] {
      const TrainCall what = call == 1   ? TrainCall::kLossAndGradient
                             : call == 2 ? TrainCall::kGradientAnalysis
                                         : TrainCall::kTrainStep;
      return MemoryNeedsToJs(TransformerSeq2SeqTrainMemoryNeeds(model_.config(), ToShape(tokens.shape),
                                                                ToShape(labels.shape), what, model_.storage()));
    });
  }

  // Looking past the weights (docs/api.md): method 0 gradient, 1 ablation; ablation 0 zero, 1 mean.
  // { importance: RawTensor (L, H), loss }.
  val HeadImportance(const TensorArg& tokens, const TensorArg& targets, int method, int ablation) {
    return Guard([&] {
      const Transformer::HeadImportanceResult r =
          model_.HeadImportance(TokensOf(tokens), TokensOf(targets), static_cast<Transformer::ImportanceMethod>(method),
                                static_cast<Transformer::Ablation>(ablation));
      val result = val::object();
      result.set("importance", TensorToJs(r.importance));
      result.set("loss", r.loss);
      return result;
    });
  }
  // method 0 gradient × input, 1 gradient, 2 occlusion: RawTensor (T).
  val Attribution(const TensorArg& tokens, double position, double target, int method) {
    return Guard([&] {
      return TensorToJs(model_.Attribution(TokensOf(tokens), static_cast<int64_t>(position),
                                           static_cast<int64_t>(target),
                                           static_cast<Transformer::AttributionMethod>(method)));
    });
  }

  // Activation patching: { effect: RawTensor (L, H), cleanLogit, corruptedLogit }.
  val PatchHeads(const TensorArg& clean, const TensorArg& corrupted, double position, double target) {
    return Guard([&] {
      const Transformer::PatchingResult r = model_.PatchHeads(
          TokensOf(clean), TokensOf(corrupted), static_cast<int64_t>(position), static_cast<int64_t>(target));
      val result = val::object();
      result.set("effect", TensorToJs(r.effect));
      result.set("cleanLogit", r.clean_logit);
      result.set("corruptedLogit", r.corrupted_logit);
      return result;
    });
  }

  static val ImportanceToJs(const Transformer::HeadImportanceResult& r) {
    val result = val::object();
    result.set("importance", TensorToJs(r.importance));
    result.set("loss", r.loss);
    if (!r.decoder_importance.shape.empty()) {
      result.set("decoderImportance", TensorToJs(r.decoder_importance));
      result.set("crossImportance", TensorToJs(r.cross_importance));
    }
    return result;
  }

  // Encoders and encoder–decoders: the same three on forward's arguments (tokens or pixelValues, attentionMask,
  // tokenTypeIds, decoderInputIds; ablation 0 zero, 1 mean; method 0 gradient × input, 1 gradient, 2 occlusion): {
  // importance, loss } with an encoder–decoder's decoderImportance and crossImportance; RawTensor; { effect,
  // cleanLogit, corruptedLogit } with decoderEffect and crossEffect.
  val InputHeadImportance(const TransformerForwardArgs& a, const TensorArg& labels, int ablation) {
    return Guard([&] {
      PixelsView pixels;
      return ImportanceToJs(model_.HeadImportance(InputOf(a, pixels), TokensOf(labels),
                                                  Transformer::ImportanceMethod::kAblation,
                                                  static_cast<Transformer::Ablation>(ablation)));
    });
  }
  // The same by the head masks' gradients (one backward of the training path; the caller sized it with
  // trainMemory or trainBatchMemory, call 2).
  val EncoderGradHeadImportance(const TransformerForwardArgs& a, const TensorArg& labels) {
    return Guard([&] {
      PixelsView pixels;
      return ImportanceToJs(
          model_.HeadImportance(InputOf(a, pixels), TokensOf(labels), Transformer::ImportanceMethod::kGradient));
    });
  }
  val InputAttribution(const TransformerForwardArgs& a, double position, double target, int method) {
    return Guard([&] {
      PixelsView pixels;
      return TensorToJs(model_.Attribution(InputOf(a, pixels), static_cast<int64_t>(position),
                                           static_cast<int64_t>(target),
                                           static_cast<Transformer::AttributionMethod>(method)));
    });
  }
  val InputPatchHeads(const TransformerForwardArgs& clean, const TransformerForwardArgs& corrupted, double position,
                      double target) {
    return Guard([&] {
      PixelsView a, b;
      const Transformer::PatchingResult r = model_.PatchHeads(
          InputOf(clean, a), InputOf(corrupted, b), static_cast<int64_t>(position), static_cast<int64_t>(target));
      val result = val::object();
      result.set("effect", TensorToJs(r.effect));
      result.set("cleanLogit", r.clean_logit);
      result.set("corruptedLogit", r.corrupted_logit);
      if (!r.decoder_effect.shape.empty()) {
        result.set("decoderEffect", TensorToJs(r.decoder_effect));
        result.set("crossEffect", TensorToJs(r.cross_effect));
      }
      return result;
    });
  }

  // TrainStep (call 0), LossAndGradient (1) or a gradient analysis (2: headImportance, attribution) on tokens of
  // this shape.
  val TrainMemory(const TensorArg& tokens, int call) const {
    return Guard([&] {
      const TrainCall what = call == 1   ? TrainCall::kLossAndGradient
                             : call == 2 ? TrainCall::kGradientAnalysis
                                         : TrainCall::kTrainStep;
      return MemoryNeedsToJs(
          TransformerTrainMemoryNeeds(model_.config(), ToShape(tokens.shape), what, model_.storage()));
    });
  }

  val KVCacheMemory(double batch_size, double max_length) const {
    return Guard([&] {
      return MemoryNeedsToJs(TransformerKVCacheMemoryNeeds(model_.config(), static_cast<int64_t>(batch_size),
                                                           static_cast<int64_t>(max_length)));
    });
  }

  // Factory of _TransformerKVCache: CreateKVCache validates before it allocates.
  static TransformerKVCache* MakeCache(const TransformerBinding& model, double batch_size, double max_length) {
    return Guard([&] {
      return new TransformerKVCache(
          model.model_.CreateKVCache(static_cast<int64_t>(batch_size), static_cast<int64_t>(max_length)));
    });
  }
};

double TransformerCacheLength(const TransformerKVCache& cache) { return static_cast<double>(cache.Length()); }
void TransformerCacheReset(TransformerKVCache& cache) { cache.Reset(); }

}  // namespace
}  // namespace attnlab

// The registrations, one block per area. Argument structs come from args.h's tables: one .field(JS name, member)
// per row.
#define ATTNLAB_ARG_FIELD(type, member, js, init, doc) .field(js, &Struct::member)
#define ATTNLAB_VALUE_OBJECT(name, table)                               \
  {                                                                     \
    using Struct = name;                                                \
    emscripten::value_object<name>("_" #name) table(ATTNLAB_ARG_FIELD); \
  }

EMSCRIPTEN_BINDINGS(attnlab_arguments) {
  using namespace attnlab;
  using namespace attnlab::marshal;
  emscripten::enum_<Mask::Kind>("_MaskKind")
      .value("None", Mask::Kind::kNone)
      .value("Bool", Mask::Kind::kBool)
      .value("Float", Mask::Kind::kFloat);
  emscripten::enum_<CausalAlign>("_CausalAlign")
      .value("UpperLeft", CausalAlign::kUpperLeft)
      .value("LowerRight", CausalAlign::kLowerRight);
  emscripten::enum_<ScoresStage>("_ScoresStage")
      .value("None", ScoresStage::kNone)
      .value("Scaled", ScoresStage::kScaled)
      .value("Softcapped", ScoresStage::kSoftcapped)
      .value("Masked", ScoresStage::kMasked);
  emscripten::enum_<WeightStorage>("_WeightStorage")
      .value("Float32", WeightStorage::kFloat32)
      .value("F16", WeightStorage::kF16)
      .value("BF16", WeightStorage::kBF16);
  ATTNLAB_ARG_STRUCTS(ATTNLAB_VALUE_OBJECT)
}

EMSCRIPTEN_BINDINGS(attnlab_module) {
  using namespace attnlab;
  emscripten::function("_targetName", &TargetName);
  emscripten::function("_maxMemoryBytes", &MaxMemoryBytes);
  emscripten::function("_setThreads", &SetThreads);
  emscripten::function("_threads", &Threads);
}

EMSCRIPTEN_BINDINGS(attnlab_attention) {
  using namespace attnlab;
  emscripten::function("_sdpa", &Sdpa);
  emscripten::function("_sdpaMemory", &SdpaMemory);
  emscripten::function("_sdpaBackward", &SdpaBackward);
  emscripten::function("_sdpaBackwardMemory", &SdpaBackwardMemory);
  emscripten::function("_multiHeadAttentionMemory", &MhaMemory);
  BindModel<MhaBinding, ModelBinding<MultiHeadAttention>>("_MultiHeadAttention")
      .constructor(&MhaBinding::Make, emscripten::allow_raw_pointers())
      .function("forward", &MhaBinding::Forward)
      .function("forwardMemory", &MhaBinding::ForwardMemory)
      .function("backward", &MhaBinding::Backward)
      .function("forwardCached", &MhaBinding::ForwardCached)
      .function("forwardCachedMemory", &MhaBinding::ForwardCachedMemory)
      .function("kvCacheMemory", &MhaBinding::KVCacheMemory);
  emscripten::class_<KVCache>("_KVCache")
      .constructor(&MhaBinding::MakeCache, emscripten::allow_raw_pointers())
      .function("length", &CacheLength)
      .function("reset", &CacheReset);
}

EMSCRIPTEN_BINDINGS(attnlab_models) {
  using namespace attnlab;
  using emscripten::val;
  emscripten::function("_tinyTransformerMemory", &TinyTransformerMemory);
  emscripten::function("_transformerMemory", &TransformerMemory);
  emscripten::function("_transformerConfigWithHeads", &ConfigWithHeadsJson);
  emscripten::function("_loadPieceBytes", &LoadPieceBytes);
  BindModel<TinyTransformerBinding, ModelBinding<TinyTransformer>>("_TinyTransformer")
      .constructor(&TinyTransformerBinding::Make, emscripten::allow_raw_pointers())
      .function("forward", &TinyTransformerBinding::Forward)
      .function("lossAndGrad", &TinyTransformerBinding::LossAndGrad)
      .function("trainStep", &TinyTransformerBinding::TrainStep)
      .function("stepMemory", &TinyTransformerBinding::StepMemory);
  using TransformerModel = ModelBinding<Transformer>;
  emscripten::class_<TransformerBinding>("_Transformer")
      .constructor(&TransformerBinding::Make, emscripten::allow_raw_pointers())
      .function("parameterShapes", static_cast<val (TransformerBinding::*)() const>(&TransformerModel::ParameterShapes))
      .function("loadStateDict", static_cast<void (TransformerBinding::*)(val)>(&TransformerModel::LoadStateDict))
      .function("stateDict", &TransformerBinding::StateDict)
      .function("config", &TransformerBinding::Config)
      .function("canonicalName", &TransformerBinding::CanonicalName)
      .function("tiedTo", &TransformerBinding::TiedTo)
      .function("checkStateDict", &TransformerBinding::CheckStateDict)
      .function("loadTensor", &TransformerBinding::LoadTensor)
      .function("loadTensor16", &TransformerBinding::LoadTensor16)
      .function("loadTensorRows", &TransformerBinding::LoadTensorRows)
      .function("loadTensor16Rows", &TransformerBinding::LoadTensor16Rows)
      .function("storage", &TransformerBinding::Storage)
      .function("forward", &TransformerBinding::Forward, emscripten::allow_raw_pointers())
      .function("forwardMemory", &TransformerBinding::ForwardMemory)
      .function("kvCacheMemory", &TransformerBinding::KVCacheMemory)
      .function("lossAndGrad", &TransformerBinding::LossAndGrad)
      .function("trainStep", &TransformerBinding::TrainStep)
      .function("trainMemory", &TransformerBinding::TrainMemory)
      .function("lossAndGradBatch", &TransformerBinding::LossAndGradBatch)
      .function("trainStepBatch", &TransformerBinding::TrainStepBatch)
      .function("trainBatchMemory", &TransformerBinding::TrainBatchMemory)
      .function("headImportance", &TransformerBinding::HeadImportance)
      .function("attribution", &TransformerBinding::Attribution)
      .function("patchHeads", &TransformerBinding::PatchHeads)
      .function("inputHeadImportance", &TransformerBinding::InputHeadImportance)
      .function("encoderGradHeadImportance", &TransformerBinding::EncoderGradHeadImportance)
      .function("inputAttribution", &TransformerBinding::InputAttribution)
      .function("inputPatchHeads", &TransformerBinding::InputPatchHeads);
  emscripten::class_<TransformerKVCache>("_TransformerKVCache")
      .constructor(&TransformerBinding::MakeCache, emscripten::allow_raw_pointers())
      .function("length", &TransformerCacheLength)
      .function("reset", &TransformerCacheReset);
}
