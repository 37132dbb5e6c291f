// Transformer (attnlab/transformer.h): parameters in attnlab's storage (packed matrices, vectors), loading and
// saving by Hugging Face's names (architectures.h), checks, buffers, and one dispatch per Forward
// (model_kernels.h).
#include "attnlab/transformer.h"

#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "cpp/src/checks.h"
#include "cpp/src/model/architectures.h"
#include "cpp/src/model/model_kernels.h"
#include "cpp/src/model/transformer_impl.h"
#include "cpp/src/model/weights.h"
#include "cpp/src/ops/packing.h"
#include "cpp/src/rng.h"

namespace attnlab {

TransformerKVCache::TransformerKVCache(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TransformerKVCache::~TransformerKVCache() = default;
TransformerKVCache::TransformerKVCache(TransformerKVCache&&) noexcept = default;
TransformerKVCache& TransformerKVCache::operator=(TransformerKVCache&&) noexcept = default;
int64_t TransformerKVCache::Length() const { return static_cast<int64_t>(impl_->length); }
int64_t TransformerKVCache::BatchSize() const { return static_cast<int64_t>(impl_->batch); }
int64_t TransformerKVCache::MaxLength() const { return static_cast<int64_t>(impl_->max_length); }
void TransformerKVCache::Reset() {
  impl_->length = 0;
  impl_->encoded = false;  // (an encoder–decoder's next call runs the encoder again)
}

namespace {

// 16-bit storage holds a loaded checkpoint only: refused with initialise before anything is allocated.
WeightStorage CheckedStorage(WeightStorage storage, bool initialise) {
  if (initialise && storage != WeightStorage::kFloat32) {
    Fail("storage", "kFloat32 for a randomly initialised model (16-bit storage holds a loaded checkpoint)",
         "16-bit storage with initialise true");
  }
  return storage;
}

}  // namespace

Transformer::Transformer(const TransformerConfig& config, uint64_t seed, bool initialise, WeightStorage storage)
    : impl_(std::make_unique<Impl>(config, CheckedStorage(storage, initialise))) {
  if (initialise) impl_->Initialise(seed);
}

WeightStorage Transformer::storage() const {
  if (!impl_->params.Any16()) return WeightStorage::kFloat32;
  return impl_->params.embed.dtype == Dtype16::kBF16 ? WeightStorage::kBF16 : WeightStorage::kF16;
}
Transformer::~Transformer() = default;
Transformer::Transformer(Transformer&&) noexcept = default;
Transformer& Transformer::operator=(Transformer&&) noexcept = default;

const TransformerConfig& Transformer::config() const { return impl_->config; }

int64_t Transformer::ParameterCount() const {
  int64_t n = 0;
  for (const ParamSpec& s : impl_->specs) {
    int64_t numel = 1;
    for (int64_t d : s.shape) numel *= d;
    n += numel;
  }
  return n;
}

std::vector<std::pair<std::string, Shape>> Transformer::ParameterShapes() const {
  std::vector<std::pair<std::string, Shape>> out;
  for (const ParamSpec& s : impl_->specs) out.emplace_back(s.name, s.shape);
  return out;
}

void Transformer::CheckStateDict(const std::vector<std::pair<std::string, Shape>>& names_and_shapes) const {
  std::map<std::string, std::string> seen;  // canonical → as given
  for (const auto& [name, shape] : names_and_shapes) {
    const std::string canonical = attnlab::CanonicalName(impl_->config, name);
    if (canonical.empty()) continue;
    const ParamSpec* spec = impl_->Find(canonical);
    const ParamSpec* tie = impl_->TieOf(canonical);
    const Shape expected = tie ? tie->shape : spec ? spec->shape : Shape{};
    if (!spec && !tie) {
      Fail(name, "a parameter of this model (e.g. '" + impl_->specs.front().name + "')", "an unknown name");
    }
    if (shape != expected) Fail(name, "shape " + ShapeString(expected), "shape " + ShapeString(shape));
    if (!seen.emplace(canonical, name).second) {
      Fail(name, "each parameter once", "'" + seen[canonical] + "' and '" + name + "'");
    }
  }
  for (const ParamSpec& s : impl_->specs) {
    if (!seen.count(s.name)) Fail(s.name, "present in the state dict", "missing");
  }
}

std::string Transformer::CanonicalName(const std::string& name) const {
  return attnlab::CanonicalName(impl_->config, name);
}

std::string Transformer::TiedTo(const std::string& name) const {
  const ParamSpec* tie = impl_->TieOf(CanonicalName(name));
  return tie ? tie->name : "";
}

void Transformer::LoadTensor16(const std::string& name, const uint16_t* bits, const Shape& shape, WeightStorage dtype) {
  const std::string canonical = attnlab::CanonicalName(impl_->config, name);
  if (canonical.empty()) return;
  const ParamSpec& spec = impl_->LoadSpec(name, canonical);
  if (shape != spec.shape) Fail(name, "shape " + ShapeString(spec.shape), "shape " + ShapeString(shape));
  LoadTensor16Rows(name, bits, shape, dtype, 0);
}

void Transformer::LoadTensor16Rows(const std::string& name, const uint16_t* bits, const Shape& shape,
                                   WeightStorage dtype, int64_t first_row) {
  if (dtype == WeightStorage::kFloat32) Fail("dtype", "kF16 or kBF16", "kFloat32");
  const std::string canonical = attnlab::CanonicalName(impl_->config, name);
  if (canonical.empty()) return;
  const RowRange rows = Impl::PieceRows(name, impl_->LoadSpec(name, canonical), shape, first_row);
  if (!bits) return LoadTensorRows(name, TensorView{nullptr, shape}, first_row);  // (its errors)
  if (impl_->TieOf(canonical)) {  // (compared with what it is tied to as float32 values)
    std::vector<float> values(CheckedNumel(name, shape));
    for (size_t i = 0; i < values.size(); ++i) values[i] = Bits16ToFloat(bits[i], Impl::Dtype16Of(dtype));
    return LoadTensorRows(name, TensorView{values.data(), shape}, first_row);
  }
  impl_->ResetTraining();  // (new parameters: AdamW starts again)
  impl_->params.Load16(impl_->LoadSpec(name, canonical), bits, Impl::Dtype16Of(dtype), rows);
}

void Transformer::LoadTensor(const std::string& name, const TensorView& tensor) {
  const std::string canonical = attnlab::CanonicalName(impl_->config, name);
  if (canonical.empty()) return;
  const ParamSpec& spec = impl_->LoadSpec(name, canonical);
  if (tensor.shape != spec.shape) Fail(name, "shape " + ShapeString(spec.shape), "shape " + ShapeString(tensor.shape));
  LoadTensorRows(name, tensor, 0);
}

void Transformer::LoadTensorRows(const std::string& name, const TensorView& tensor, int64_t first_row) {
  const std::string canonical = attnlab::CanonicalName(impl_->config, name);
  if (canonical.empty()) return;
  const ParamSpec& spec = impl_->LoadSpec(name, canonical);
  const RowRange rows = Impl::PieceRows(name, spec, tensor.shape, first_row);
  const size_t n = CheckTensor(name, tensor);
  impl_->ResetTraining();  // (new parameters: AdamW starts again)
  if (!impl_->TieOf(canonical)) return impl_->params.Load(spec, tensor.data, rows);
  std::vector<float> tied(n);
  impl_->params.Save(spec, tied.data(), rows);
  if (!std::equal(tied.begin(), tied.end(), tensor.data)) {
    Fail(name, "equal to " + spec.name + (impl_->config.tie_embeddings ? " (tieEmbeddings)" : " (tied)"),
         spec.is_matrix() ? "a different matrix" : "a different vector");
  }
}

void Transformer::LoadStateDict(const std::map<std::string, TensorView>& state_dict) {
  std::vector<std::pair<std::string, Shape>> shapes;
  for (const auto& [name, view] : state_dict) shapes.emplace_back(name, view.shape);
  CheckStateDict(shapes);
  for (const auto& [name, view] : state_dict) {
    if (!attnlab::CanonicalName(impl_->config, name).empty()) CheckTensor(name, view);
  }
  // (a tied lm_head is compared with the embedding once that is loaded)
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& [name, view] : state_dict) {
      if ((impl_->TieOf(attnlab::CanonicalName(impl_->config, name)) != nullptr) == (pass == 1)) LoadTensor(name, view);
    }
  }
}

std::map<std::string, Tensor> Transformer::StateDict() const {
  std::map<std::string, Tensor> out;
  for (const ParamSpec& s : impl_->specs) out[s.name] = Parameter(s.name);
  return out;
}

Tensor Transformer::Parameter(const std::string& name) const {
  const ParamSpec* s = impl_->Find(name);
  if (!s) Fail(name, "a parameter of this model (e.g. '" + impl_->specs.front().name + "')", "an unknown name");
  Tensor t;
  t.shape = s->shape;
  size_t n = 1;
  for (int64_t d : s->shape) n *= static_cast<size_t>(d);
  t.data.resize(n);
  impl_->params.Save(*s, t.data.data());
  return t;
}

std::pair<size_t, size_t> CheckTokens(const TokensView& tokens, int64_t vocab, const char* name) {
  if (tokens.shape.size() != 2) Fail(name, "shape [B, T]", "shape " + ShapeString(tokens.shape));
  const size_t n = CheckedNumel(name, tokens.shape);
  if (n > 0 && !tokens.data) Fail(name, "data", "null");
  for (size_t i = 0; i < n; ++i) {
    if (tokens.data[i] < 0 || tokens.data[i] >= vocab) {
      Fail(name, "ids in [0, " + std::to_string(vocab) + ")",
           std::to_string(tokens.data[i]) + " at index " + std::to_string(i));
    }
  }
  return {static_cast<size_t>(tokens.shape[0]), static_cast<size_t>(tokens.shape[1])};
}

namespace {

// P + T positions within the limit (the cache's maxLength, or contextLength).
void CheckLength(size_t s, size_t past, size_t t_len, size_t limit, bool cached) {
  if (s <= limit) return;
  Fail("tokens",
       "at most " + std::to_string(limit) + " positions (" + (cached ? "the cache's maxLength" : "contextLength") + ")",
       std::to_string(past) + " cached + " + std::to_string(t_len) + " new");
}

// cos and sin (T, hd / 2) of the angles (P + t) · θ^(−2i/hd), in double.
void RopeTables(const TransformerConfig& c, size_t past, size_t t_len, std::vector<float>& cos,
                std::vector<float>& sin) {
  const size_t half = static_cast<size_t>(c.head_dim) / 2;
  cos.resize(t_len * half);
  sin.resize(t_len * half);
  for (size_t t = 0; t < t_len; ++t) {
    for (size_t i = 0; i < half; ++i) {
      const double inv_freq = std::pow(c.rope_theta, -2.0 * static_cast<double>(i) / static_cast<double>(c.head_dim));
      const double angle = static_cast<double>(past + t) * inv_freq;
      cos[t * half + i] = static_cast<float>(std::cos(angle));
      sin[t * half + i] = static_cast<float>(std::sin(angle));
    }
  }
}

// The fixed positions (s, E) of positions 0 … s − 1, angles p / 10000^(2i/E) in double (PyTorch's tutorial and
// Marian compute them so): interleaved, pe[p, 2i] = sin, pe[p, 2i+1] = cos; split (Marian), pe[p, i] = sin for
// i < ⌈E/2⌉, pe[p, ⌈E/2⌉ + i] = cos.
void SinusoidTable(size_t s, size_t e, bool split, std::vector<float>& pe) {
  pe.resize(s * e);
  const size_t half = (e + 1) / 2;
  for (size_t p = 0; p < s; ++p) {
    for (size_t i = 0; 2 * i < e; ++i) {
      const double angle = static_cast<double>(p) / std::pow(10000.0, 2.0 * i / static_cast<double>(e));
      pe[p * e + (split ? i : 2 * i)] = static_cast<float>(std::sin(angle));
      if (2 * i + 1 < e) pe[p * e + (split ? half + i : 2 * i + 1)] = static_cast<float>(std::cos(angle));
    }
  }
}

}  // namespace

void Transformer::PrepareCall(const TokensView& tokens, size_t past, size_t cache_max, CallArgs& call) const {
  const TransformerConfig& c = impl_->config;
  const ModelSizes& z = impl_->z;
  const Weights& w = impl_->params;
  ModelArgs& a = call.a;
  a.position_kind = c.positions;
  a.mlp = c.mlp;
  a.causal = c.causal;
  a.scale_attention = c.scale_attention;
  a.batch = static_cast<size_t>(tokens.shape[0]);
  a.tokens = static_cast<size_t>(tokens.shape[1]);
  a.past = past;
  a.cache_max = cache_max;
  static_cast<ModelSizes&>(a) = z;
  a.norm_eps = static_cast<float>(c.norm_eps);
  a.ids = tokens.data;
  a.embed = w.embed.View();
  a.embed16 = w.embed.View16();
  a.positions = w.positions.empty() ? nullptr : w.positions.data();
  if (c.positions == PositionKind::kSinusoidal || c.positions == PositionKind::kSinusoidalSplit) {
    SinusoidTable(past + a.tokens, z.e, c.positions == PositionKind::kSinusoidalSplit, call.sinusoids);
    a.positions = call.sinusoids.data();
  }
  a.embed_scale = c.scale_embedding ? static_cast<float>(std::sqrt(static_cast<double>(z.e))) : 1.0f;
  if (c.positions == PositionKind::kRope) RopeTables(c, past, a.tokens, call.rope_cos, call.rope_sin);
  a.rope_cos = call.rope_cos.data();
  a.rope_sin = call.rope_sin.data();
  a.window_left = c.sliding_window > 0 ? c.sliding_window - 1 : -1;
  for (size_t l = 0; l < w.blocks.size(); ++l) call.blocks.push_back(w.ArgsOf(l));
  a.blocks = call.blocks.data();
  a.num_blocks = call.blocks.size();
  a.norm_f = NormArgs{w.norm_f_weight.empty() ? nullptr : w.norm_f_weight.data(),
                      w.norm_f_bias.empty() ? nullptr : w.norm_f_bias.data()};
  const PackedMatrix& head = c.tie_embeddings ? w.embed : w.head;
  a.head =
      LinearArgs{head.View(), head.View16(), w.head_bias.empty() ? nullptr : w.head_bias.data(), head.in, head.out};
}

std::vector<float> KeyBiasOf(const char* name, const uint8_t* mask, const Shape& shape, size_t batch, size_t s,
                             const char* dims) {
  std::vector<float> key_bias;
  if (!mask) return key_bias;
  const Shape expected{static_cast<int64_t>(batch), static_cast<int64_t>(s)};
  if (shape != expected) Fail(name, "shape " + ShapeString(expected) + " " + dims, "shape " + ShapeString(shape));
  key_bias.resize(batch * s);
  for (size_t i = 0; i < batch * s; ++i) key_bias[i] = mask[i] ? 0.0f : -std::numeric_limits<float>::infinity();
  return key_bias;
}

void CheckHeadMask(const char* name, const float* mask, const Shape& shape, int64_t layers, int64_t heads) {
  if (mask && shape != Shape{layers, heads}) {
    Fail(name, "shape " + ShapeString({layers, heads}) + " (L, H)", "shape " + ShapeString(shape));
  }
}

std::vector<bool> KeptLayers(const std::vector<int64_t>& layers, int64_t num_layers, int64_t limit) {
  std::vector<bool> keep(static_cast<size_t>(num_layers), false);
  for (int64_t l : layers) {
    if (l < 0 || l >= limit)
      Fail("outputAttentions", "layers in [0, " + std::to_string(limit) + ")", std::to_string(l));
    if (l < num_layers) keep[static_cast<size_t>(l)] = true;
  }
  return keep;
}

namespace {

// The forward's analysis options (occlude, head_values, output_head_outputs) checked and set on the call: a.occlude,
// each block's head_values and head_outputs (into out.head_outputs).
void SetAnalysisOptions(const TransformerConfig& c, const TransformerForwardOptions& options, size_t batch,
                        size_t t_len, ModelArgs& a, std::vector<BlockArgs>& blocks, TransformerOutput& out) {
  if (options.occlude) {
    if (options.occlude_shape != Shape{static_cast<int64_t>(batch)}) {
      Fail("occlude", "shape [" + std::to_string(batch) + "] (B)", "shape " + ShapeString(options.occlude_shape));
    }
    for (size_t b = 0; b < batch; ++b) {
      const int64_t p = options.occlude[b];
      if (p < -1 || p >= static_cast<int64_t>(t_len)) {
        Fail("occlude", "positions in [-1, " + std::to_string(t_len) + ")", std::to_string(p));
      }
    }
    a.occlude = options.occlude;
  }
  const size_t heads = static_cast<size_t>(c.num_heads);
  if (!options.head_values.empty() && options.head_values.size() != blocks.size() * heads) {
    Fail("headValues", std::to_string(blocks.size() * heads) + " entries (L·H)",
         std::to_string(options.head_values.size()));
  }
  for (size_t l = 0; l < blocks.size(); ++l) {
    if (!options.head_values.empty()) blocks[l].head_values = options.head_values.data() + l * heads;
    if (!options.output_head_outputs) continue;
    out.head_outputs.push_back(ZeroTensor(
        {static_cast<int64_t>(batch), static_cast<int64_t>(t_len), c.num_heads, static_cast<int64_t>(a.head_dim)}));
    blocks[l].head_outputs = out.head_outputs.back().data.data();
  }
}

// decoderInputIds, which only an encoder–decoder takes.
void CheckNoDecoderInputs(const TransformerForwardOptions& options) {
  if (options.decoder_input_ids) Fail("decoderInputIds", "null for a model that is not an encoder–decoder", "ids");
}

}  // namespace

TransformerOutput Transformer::Forward(const TokensView& tokens, const TransformerForwardOptions& options) {
  const TransformerConfig& c = impl_->config;
  if (c.image_size > 0) Fail("tokens", "pixel values for arch '" + c.arch + "' (a vision model)", "token ids");
  if (c.decoder_layers > 0) return ForwardEncoderDecoder(tokens, options);
  CheckNoDecoderInputs(options);
  CheckTokens(tokens, c.vocab_size);
  return Run(tokens, nullptr, options);
}

TransformerOutput Transformer::Forward(const PixelsView& pixels, const TransformerForwardOptions& options) {
  CheckNoDecoderInputs(options);
  return Run(TokensView{nullptr, CheckPixels(impl_->config, pixels)}, &pixels, options);
}

TransformerOutput Transformer::Run(const TokensView& tokens, const PixelsView* pixels,
                                   const TransformerForwardOptions& options) {
  const TransformerConfig& c = impl_->config;
  const size_t batch = static_cast<size_t>(tokens.shape[0]), t_len = static_cast<size_t>(tokens.shape[1]);
  TransformerKVCache::Impl* cache = options.cache ? options.cache->impl_.get() : nullptr;
  if (cache && cache->owner != impl_.get()) Fail("kvCache", "a cache made by this model", "another model's cache");
  if (cache && cache->batch != batch) {
    Fail("tokens", "batch size " + std::to_string(cache->batch) + " (the cache's)", std::to_string(batch));
  }
  const size_t past = cache ? cache->length : 0, s = past + t_len;
  CheckLength(s, past, t_len, cache ? cache->max_length : static_cast<size_t>(c.context_length), cache != nullptr);
  const std::vector<float> key_bias =
      KeyBiasOf("attentionMask", options.attention_mask, options.attention_mask_shape, batch, s, "(B, P + T)");
  CheckHeadMask("headMask", options.head_mask, options.head_mask_shape, c.num_layers, c.num_heads);
  const std::vector<bool> keep = KeptLayers(options.output_attentions, c.num_layers, c.num_layers);
  TransformerOutput out;
  EncoderCall encoder;
  const EncoderArgs* encoder_args = PrepareEncoder(c, impl_->params, tokens, pixels, options, encoder, out);

  CallArgs call;
  PrepareCall(tokens, past, cache ? cache->max_length : t_len, call);
  if (c.task != Task::kBase) out.logits = ZeroTensor(LogitsShape(c, batch, t_len, options.last_logits_only));
  out.attentions.resize(keep.size());
  // (without a cache, one step's keys and values: every layer reuses them)
  std::vector<float> step_k(cache ? 0 : batch * impl_->z.kv_heads * t_len * impl_->z.head_dim), step_v(step_k.size());
  for (size_t l = 0; l < call.blocks.size(); ++l) {
    BlockArgs& b = call.blocks[l];
    b.cache_k = cache ? cache->k[l].data() : step_k.data();
    b.cache_v = cache ? cache->v[l].data() : step_v.data();
    if (keep[l]) {
      out.attentions[l] =
          ZeroTensor({static_cast<int64_t>(batch), c.num_heads, static_cast<int64_t>(t_len), static_cast<int64_t>(s)});
      b.attentions = out.attentions[l].data.data();
    }
    b.head_mask = options.head_mask ? options.head_mask + l * impl_->z.heads : nullptr;
  }
  std::vector<float*> hidden;
  for (size_t l = 0; options.output_hidden_states && l <= call.blocks.size(); ++l) {
    out.hidden_states.push_back(ZeroTensor({static_cast<int64_t>(batch), static_cast<int64_t>(t_len), c.embed_dim}));
    hidden.push_back(out.hidden_states.back().data.data());
  }
  call.a.key_bias = key_bias.empty() ? nullptr : key_bias.data();
  call.a.logits = out.logits.data.data();
  call.a.last_logits_only = options.last_logits_only;
  call.a.hidden_states = hidden.empty() ? nullptr : hidden.data();
  call.a.encoder = encoder_args;
  SetAnalysisOptions(c, options, batch, t_len, call.a, call.blocks, out);
  TransformerForward(call.a);
  if (cache) cache->length = s;
  return out;
}

TransformerKVCache Transformer::CreateKVCache(int64_t batch_size, int64_t max_length) const {
  if (batch_size < 1 || batch_size > (int64_t{1} << 20)) {
    Fail("batchSize", "an integer in [1, 1048576]", std::to_string(batch_size));
  }
  if (max_length < 1 || max_length > impl_->config.context_length) {
    Fail("maxLength", "an integer in [1, " + std::to_string(impl_->config.context_length) + "] (contextLength)",
         std::to_string(max_length));
  }
  if (!impl_->config.causal) Fail("causal", "true for a KV cache (decoding continues causal sequences)", "false");
  auto cache = std::make_unique<TransformerKVCache::Impl>();
  cache->owner = impl_.get();
  cache->batch = static_cast<size_t>(batch_size);
  cache->max_length = static_cast<size_t>(max_length);
  const size_t n = cache->batch * impl_->z.kv_heads * cache->max_length * impl_->z.head_dim;
  const size_t layers = impl_->config.decoder_layers > 0 ? static_cast<size_t>(impl_->config.decoder_layers)
                                                         : impl_->params.blocks.size();  // (the decoder's)
  cache->k.assign(layers, std::vector<float>(n));
  cache->v.assign(layers, std::vector<float>(n));
  return TransformerKVCache(std::move(cache));
}

}  // namespace attnlab
