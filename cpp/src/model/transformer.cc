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
#include "cpp/src/packing.h"
#include "cpp/src/rng.h"

namespace attnlab {
namespace {

// A weight matrix W (in, out), packed for the GEMM (packing.h).
struct PackedMatrix {
  std::vector<float> data;
  size_t in = 0, out = 0;

  void Resize(size_t rows, size_t cols) {
    in = rows;
    out = cols;
    data.assign(PackedSize(in, out), 0.0f);
  }
  PackedB View() const { return PackedB{data.data(), kPanel * in}; }
  float& At(size_t p, size_t j) { return data[(j / kPanel) * kPanel * in + p * kPanel + j % kPanel]; }
  float At(size_t p, size_t j) const { return data[(j / kPanel) * kPanel * in + p * kPanel + j % kPanel]; }
};

struct Block {
  std::vector<float> norm1_weight, norm1_bias, norm2_weight, norm2_bias, qkv_bias, o_bias, up_bias, down_bias;
  PackedMatrix qkv, o, up, down;
};

const float* OrNull(const std::vector<float>& v) { return v.empty() ? nullptr : v.data(); }

}  // namespace

struct TransformerKVCache::Impl {
  const void* owner = nullptr;
  size_t batch = 0, max_length = 0, length = 0;
  std::vector<std::vector<float>> k, v;  // per layer (batch, kv_heads, max_length, head_dim)
};

TransformerKVCache::TransformerKVCache(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TransformerKVCache::~TransformerKVCache() = default;
TransformerKVCache::TransformerKVCache(TransformerKVCache&&) noexcept = default;
TransformerKVCache& TransformerKVCache::operator=(TransformerKVCache&&) noexcept = default;
int64_t TransformerKVCache::Length() const { return static_cast<int64_t>(impl_->length); }
int64_t TransformerKVCache::BatchSize() const { return static_cast<int64_t>(impl_->batch); }
int64_t TransformerKVCache::MaxLength() const { return static_cast<int64_t>(impl_->max_length); }
void TransformerKVCache::Reset() { impl_->length = 0; }

struct Transformer::Impl {
  TransformerConfig config;
  ModelSizes z;
  std::vector<ParamSpec> specs;
  PackedMatrix embed, head;
  std::vector<float> positions, norm_f_weight, norm_f_bias;
  std::vector<Block> blocks;

  explicit Impl(const TransformerConfig& c) : config(NormalisedConfig(c)), z(SizesOf(config)), specs(ParameterSpecs(config)) {
    CheckSizes();
    const bool gpt2 = config.arch == Arch::kGpt2;
    embed.Resize(z.e, z.vocab);
    if (!config.tie_embeddings) head.Resize(z.e, z.vocab);
    if (gpt2) positions.assign(static_cast<size_t>(config.context_length) * z.e, 0.0f);
    norm_f_weight.assign(z.e, 1.0f);
    if (gpt2) norm_f_bias.assign(z.e, 0.0f);
    blocks.resize(static_cast<size_t>(config.num_layers));
    for (Block& b : blocks) {
      b.qkv.Resize(z.e, z.qkv_out);
      b.o.Resize(z.heads * z.head_dim, z.e);
      b.up.Resize(z.e, z.up_out);
      b.down.Resize(z.down_in, z.e);
      b.norm1_weight.assign(z.e, 1.0f);
      b.norm2_weight.assign(z.e, 1.0f);
      if (gpt2) {
        b.norm1_bias.assign(z.e, 0.0f);
        b.norm2_bias.assign(z.e, 0.0f);
        b.up_bias.assign(z.up_out, 0.0f);
        b.down_bias.assign(z.e, 0.0f);
      }
      if (config.attention_bias != AttentionBias::kNone) b.qkv_bias.assign(z.qkv_out, 0.0f);
      if (config.attention_bias == AttentionBias::kAll) b.o_bias.assign(z.e, 0.0f);
    }
  }

  // Refuses a model whose parameters cannot be addressed, before anything is allocated.
  void CheckSizes() const {
    double total = 0;
    for (const ParamSpec& s : specs) {
      double n = 1;
      for (int64_t d : s.shape) n *= static_cast<double>(d);
      total += n;
    }
    // (the bound of CheckedNumel: addressable float32 bytes; wasm32: 2^29 floats)
    const double max_floats = static_cast<double>(std::numeric_limits<ptrdiff_t>::max() / sizeof(float));
    if (total > max_floats) {
      Fail("config", "parameters that fit in memory (at most " + std::to_string(max_floats) + " floats)",
           std::to_string(total) + " floats");
    }
  }

  // The matrix or vector a spec names.
  PackedMatrix* MatrixOf(const ParamSpec& s) {
    Block* b = s.layer >= 0 ? &blocks[static_cast<size_t>(s.layer)] : nullptr;
    switch (s.slot) {
      case Slot::kEmbed: return &embed;
      case Slot::kHead: return &head;
      case Slot::kQkv: return &b->qkv;
      case Slot::kO: return &b->o;
      case Slot::kUp: return &b->up;
      case Slot::kDown: return &b->down;
      default: return nullptr;
    }
  }
  std::vector<float>* VectorOf(const ParamSpec& s) {
    Block* b = s.layer >= 0 ? &blocks[static_cast<size_t>(s.layer)] : nullptr;
    switch (s.slot) {
      case Slot::kPositions: return &positions;
      case Slot::kNormFWeight: return &norm_f_weight;
      case Slot::kNormFBias: return &norm_f_bias;
      case Slot::kNorm1Weight: return &b->norm1_weight;
      case Slot::kNorm1Bias: return &b->norm1_bias;
      case Slot::kQkvBias: return &b->qkv_bias;
      case Slot::kOBias: return &b->o_bias;
      case Slot::kNorm2Weight: return &b->norm2_weight;
      case Slot::kNorm2Bias: return &b->norm2_bias;
      case Slot::kUpBias: return &b->up_bias;
      case Slot::kDownBias: return &b->down_bias;
      default: return nullptr;
    }
  }

  // Copies a checkpoint tensor (s.shape, row-major) into its place, or (save) out of it.
  template <bool kSave>
  void Transfer(const ParamSpec& s, std::conditional_t<kSave, float*, const float*> data) {
    if (!s.is_matrix()) {
      float* v = VectorOf(s)->data() + s.offset;
      const size_t n = static_cast<size_t>(s.shape[0]) * (s.shape.size() == 2 ? static_cast<size_t>(s.shape[1]) : 1);
      if constexpr (kSave) {
        std::copy(v, v + n, data);
      } else {
        std::copy(data, data + n, v);
      }
      return;
    }
    PackedMatrix& m = *MatrixOf(s);
    const size_t rows = static_cast<size_t>(s.shape[0]), cols = static_cast<size_t>(s.shape[1]);
    for (size_t r = 0; r < rows; ++r) {
      for (size_t c = 0; c < cols; ++c) {
        // (out, in) when transposed: element (r, c) is W[c, offset + r]; else W[r, offset + c].
        float& w = s.transposed ? m.At(c, s.offset + r) : m.At(r, s.offset + c);
        if constexpr (kSave) {
          data[r * cols + c] = w;
        } else {
          w = data[r * cols + c];
        }
      }
    }
  }

  const ParamSpec* Find(const std::string& canonical) const {
    for (const ParamSpec& s : specs) {
      if (s.name == canonical) return &s;
    }
    return nullptr;
  }

  bool IsTiedHead(const std::string& canonical) const {
    return config.tie_embeddings && canonical == "lm_head.weight";
  }

  void Initialise(uint64_t seed) {
    Rng rng(seed);
    std::vector<float> values;
    for (const ParamSpec& s : specs) {
      size_t n = 1;
      for (int64_t d : s.shape) n *= static_cast<size_t>(d);
      values.resize(n);
      const bool random = s.is_matrix() || s.slot == Slot::kPositions;
      for (float& x : values) x = random ? rng.Normal(0.02) : 0.0f;
      if (!random) {
        const bool weight = s.slot == Slot::kNorm1Weight || s.slot == Slot::kNorm2Weight || s.slot == Slot::kNormFWeight;
        std::fill(values.begin(), values.end(), weight ? 1.0f : 0.0f);
      }
      Transfer<false>(s, values.data());
    }
  }

  BlockArgs BlockArgsOf(const Block& b) const {
    BlockArgs a;
    a.norm1 = NormArgs{b.norm1_weight.data(), OrNull(b.norm1_bias)};
    a.norm2 = NormArgs{b.norm2_weight.data(), OrNull(b.norm2_bias)};
    a.qkv = LinearArgs{b.qkv.View(), OrNull(b.qkv_bias), b.qkv.in, b.qkv.out};
    a.o = LinearArgs{b.o.View(), OrNull(b.o_bias), b.o.in, b.o.out};
    a.up = LinearArgs{b.up.View(), OrNull(b.up_bias), b.up.in, b.up.out};
    a.down = LinearArgs{b.down.View(), OrNull(b.down_bias), b.down.in, b.down.out};
    return a;
  }
};

Transformer::Transformer(const TransformerConfig& config, uint64_t seed) : impl_(std::make_unique<Impl>(config)) {
  impl_->Initialise(seed);
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
    const std::string canonical = CanonicalName(impl_->config, name);
    if (canonical.empty()) continue;
    const ParamSpec* spec = impl_->Find(canonical);
    const Shape expected = impl_->IsTiedHead(canonical) ? impl_->specs.front().shape : spec ? spec->shape : Shape{};
    if (!spec && !impl_->IsTiedHead(canonical)) {
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

void Transformer::LoadTensor(const std::string& name, const TensorView& tensor) {
  const std::string canonical = CanonicalName(impl_->config, name);
  if (canonical.empty()) return;
  const bool tied_head = impl_->IsTiedHead(canonical);
  const ParamSpec* spec = tied_head ? &impl_->specs.front() : impl_->Find(canonical);
  if (!spec) Fail(name, "a parameter of this model (e.g. '" + impl_->specs.front().name + "')", "an unknown name");
  if (tensor.shape != spec->shape) Fail(name, "shape " + ShapeString(spec->shape), "shape " + ShapeString(tensor.shape));
  CheckTensor(name, tensor);
  if (!tied_head) {
    impl_->Transfer<false>(*spec, tensor.data);
    return;
  }
  std::vector<float> embedding(static_cast<size_t>(spec->shape[0] * spec->shape[1]));
  impl_->Transfer<true>(*spec, embedding.data());
  if (!std::equal(embedding.begin(), embedding.end(), tensor.data)) {
    Fail(name, "equal to " + spec->name + " (tieEmbeddings)", "a different matrix");
  }
}

void Transformer::LoadStateDict(const std::map<std::string, TensorView>& state_dict) {
  std::vector<std::pair<std::string, Shape>> shapes;
  for (const auto& [name, view] : state_dict) shapes.emplace_back(name, view.shape);
  CheckStateDict(shapes);
  for (const auto& [name, view] : state_dict) {
    if (!CanonicalName(impl_->config, name).empty()) CheckTensor(name, view);
  }
  // (a tied lm_head is compared with the embedding once that is loaded)
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& [name, view] : state_dict) {
      if (impl_->IsTiedHead(CanonicalName(impl_->config, name)) == (pass == 1)) LoadTensor(name, view);
    }
  }
}

std::map<std::string, Tensor> Transformer::StateDict() const {
  std::map<std::string, Tensor> out;
  for (const ParamSpec& s : impl_->specs) {
    Tensor& t = out[s.name];
    t.shape = s.shape;
    size_t n = 1;
    for (int64_t d : s.shape) n *= static_cast<size_t>(d);
    t.data.resize(n);
    impl_->Transfer<true>(s, t.data.data());
  }
  return out;
}

namespace {

// Checks tokens (B, T) and every id; returns {B, T}.
std::pair<size_t, size_t> CheckTokens(const TokensView& tokens, int64_t vocab) {
  if (tokens.shape.size() != 2) Fail("tokens", "shape [B, T]", "shape " + ShapeString(tokens.shape));
  const size_t n = CheckedNumel("tokens", tokens.shape);
  if (n > 0 && !tokens.data) Fail("tokens", "data", "null");
  for (size_t i = 0; i < n; ++i) {
    if (tokens.data[i] < 0 || tokens.data[i] >= vocab) {
      Fail("tokens", "ids in [0, " + std::to_string(vocab) + ")", std::to_string(tokens.data[i]) + " at index " +
           std::to_string(i));
    }
  }
  return {static_cast<size_t>(tokens.shape[0]), static_cast<size_t>(tokens.shape[1])};
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

}  // namespace

TransformerOutput Transformer::Forward(const TokensView& tokens, const TransformerForwardOptions& options) {
  const TransformerConfig& c = impl_->config;
  const ModelSizes& z = impl_->z;
  const auto [batch, t_len] = CheckTokens(tokens, c.vocab_size);
  TransformerKVCache::Impl* cache = options.cache ? options.cache->impl_.get() : nullptr;
  if (cache && cache->owner != impl_.get()) Fail("kvCache", "a cache made by this model", "another model's cache");
  if (cache && cache->batch != batch) {
    Fail("tokens", "batch size " + std::to_string(cache->batch) + " (the cache's)", std::to_string(batch));
  }
  const size_t past = cache ? cache->length : 0, s = past + t_len;
  const size_t limit = cache ? cache->max_length : static_cast<size_t>(c.context_length);
  if (s > limit) {
    Fail("tokens", "at most " + std::to_string(limit) + " positions (" + (cache ? "the cache's maxLength" : "contextLength") + ")",
         std::to_string(past) + " cached + " + std::to_string(t_len) + " new");
  }
  std::vector<float> key_bias;
  if (options.attention_mask) {
    const Shape expected{static_cast<int64_t>(batch), static_cast<int64_t>(s)};
    if (options.attention_mask_shape != expected) {
      Fail("attentionMask", "shape " + ShapeString(expected) + " (B, P + T)", "shape " + ShapeString(options.attention_mask_shape));
    }
    key_bias.resize(batch * s);
    for (size_t i = 0; i < batch * s; ++i) {
      key_bias[i] = options.attention_mask[i] ? 0.0f : -std::numeric_limits<float>::infinity();
    }
  }
  if (options.head_mask && options.head_mask_shape != Shape{c.num_layers, c.num_heads}) {
    Fail("headMask", "shape " + ShapeString({c.num_layers, c.num_heads}) + " (L, H)",
         "shape " + ShapeString(options.head_mask_shape));
  }
  std::vector<bool> keep(static_cast<size_t>(c.num_layers), false);
  for (int64_t l : options.output_attentions) {
    if (l < 0 || l >= c.num_layers) {
      Fail("outputAttentions", "layers in [0, " + std::to_string(c.num_layers) + ")", std::to_string(l));
    }
    keep[static_cast<size_t>(l)] = true;
  }

  TransformerOutput out;
  out.logits.shape = {static_cast<int64_t>(batch), static_cast<int64_t>(t_len), c.vocab_size};
  out.logits.data.resize(batch * t_len * z.vocab);
  out.attentions.resize(keep.size());
  std::vector<float> scratch_k, scratch_v;  // one step's keys and values when there is no cache (every layer reuses them)
  if (!cache) {
    scratch_k.resize(batch * z.kv_heads * t_len * z.head_dim);
    scratch_v.resize(scratch_k.size());
  }
  std::vector<BlockArgs> blocks;
  for (size_t l = 0; l < impl_->blocks.size(); ++l) {
    BlockArgs b = impl_->BlockArgsOf(impl_->blocks[l]);
    b.cache_k = cache ? cache->k[l].data() : scratch_k.data();
    b.cache_v = cache ? cache->v[l].data() : scratch_v.data();
    if (keep[l]) {
      Tensor& w = out.attentions[l];
      w.shape = {static_cast<int64_t>(batch), c.num_heads, static_cast<int64_t>(t_len), static_cast<int64_t>(s)};
      w.data.resize(batch * z.heads * t_len * s);
      b.attentions = w.data.data();
    }
    b.head_mask = options.head_mask ? options.head_mask + l * z.heads : nullptr;
    blocks.push_back(b);
  }
  std::vector<float*> hidden;
  if (options.output_hidden_states) {
    out.hidden_states.resize(blocks.size() + 1);
    for (Tensor& h : out.hidden_states) {
      h.shape = {static_cast<int64_t>(batch), static_cast<int64_t>(t_len), c.embed_dim};
      h.data.resize(batch * t_len * z.e);
      hidden.push_back(h.data.data());
    }
  }
  std::vector<float> rope_cos, rope_sin;
  if (c.arch == Arch::kLlama) RopeTables(c, past, t_len, rope_cos, rope_sin);

  ModelArgs a;
  a.llama = c.arch == Arch::kLlama;
  a.batch = batch;
  a.tokens = t_len;
  a.past = past;
  a.cache_max = cache ? cache->max_length : t_len;
  a.e = z.e;
  a.heads = z.heads;
  a.kv_heads = z.kv_heads;
  a.head_dim = z.head_dim;
  a.hidden = z.hidden;
  a.vocab = z.vocab;
  a.norm_eps = static_cast<float>(c.norm_eps);
  a.ids = tokens.data;
  a.embed = impl_->embed.View();
  a.positions = impl_->positions.empty() ? nullptr : impl_->positions.data();
  a.rope_cos = rope_cos.data();
  a.rope_sin = rope_sin.data();
  a.key_bias = key_bias.empty() ? nullptr : key_bias.data();
  a.window_left = c.sliding_window > 0 ? c.sliding_window - 1 : -1;
  a.blocks = blocks.data();
  a.num_blocks = blocks.size();
  a.norm_f = NormArgs{impl_->norm_f_weight.data(), OrNull(impl_->norm_f_bias)};
  const PackedMatrix& head = c.tie_embeddings ? impl_->embed : impl_->head;
  a.head = LinearArgs{head.View(), nullptr, head.in, head.out};
  a.logits = out.logits.data.data();
  a.hidden_states = hidden.empty() ? nullptr : hidden.data();
  TransformerForward(a);
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
  auto cache = std::make_unique<TransformerKVCache::Impl>();
  cache->owner = impl_.get();
  cache->batch = static_cast<size_t>(batch_size);
  cache->max_length = static_cast<size_t>(max_length);
  const size_t n = cache->batch * impl_->z.kv_heads * cache->max_length * impl_->z.head_dim;
  cache->k.assign(impl_->blocks.size(), std::vector<float>(n));
  cache->v.assign(impl_->blocks.size(), std::vector<float>(n));
  return TransformerKVCache(std::move(cache));
}

}  // namespace attnlab
