// attnlab: scaled dot-product attention and torch.nn.MultiheadAttention (eval mode) on row-major float32
// buffers. Kernels are Highway SIMD code dispatched once per public call (AVX-512/AVX2/SSE4/scalar natively,
// WASM SIMD128 or EMU128 in WebAssembly). Every invalid argument throws std::invalid_argument naming it.
#ifndef ATTNLAB_ATTENTION_H_
#define ATTNLAB_ATTENTION_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace attnlab {

using Shape = std::vector<int64_t>;

// A read-only view of a row-major float32 tensor owned by the caller.
struct TensorView {
  const float* data = nullptr;
  Shape shape;
};

// A row-major float32 tensor owned by attnlab (results, state dicts).
struct Tensor {
  std::vector<float> data;
  Shape shape;
};

// A mask over attention logits. kBool reads `bool_data` (one byte per element, 0 or non-zero); kFloat reads
// `float_data`, which is added to the scaled logits (may hold -inf). What a true bool element means depends
// on the call: SDPA follows F.scaled_dot_product_attention (true = may attend), MultiHeadAttention follows
// nn.MultiheadAttention (true = masked out).
struct Mask {
  enum class Kind { kNone, kBool, kFloat };
  Kind kind = Kind::kNone;
  const uint8_t* bool_data = nullptr;
  const float* float_data = nullptr;
  Shape shape;

  static Mask None() { return Mask(); }
  static Mask Bool(const uint8_t* data, Shape shape) { return Mask{Kind::kBool, data, nullptr, std::move(shape)}; }
  static Mask Float(const float* data, Shape shape) { return Mask{Kind::kFloat, nullptr, data, std::move(shape)}; }
};

struct AttentionResult {
  Tensor output;
  Tensor weights;  // empty data and shape when weights were not requested
};

struct SdpaOptions {
  Mask attn_mask;          // (Lq, Lk) broadcast over batch, or (*batch, Lq, Lk); bool: true = may attend
  bool is_causal = false;  // query i sees keys j <= i (top-left aligned); combines with attn_mask
  bool has_scale = false;  // when false, scale = 1 / sqrt(dk)
  float scale = 0.0f;
  bool need_weights = true;  // when false, a tiled online-softmax path keeps extra memory O(Lq * dv)
};

// softmax(Q Kᵀ · scale + mask) V.
// query (*batch, Lq, dk), key (*batch, Lk, dk), value (*batch, Lk, dv) → output (*batch, Lq, dv) and,
// when need_weights, weights (*batch, Lq, Lk). A query row whose every key is masked gets zero weights and
// a zero output row.
AttentionResult ScaledDotProductAttention(const TensorView& query, const TensorView& key, const TensorView& value,
                                          const SdpaOptions& options = {});

struct SdpaGradients {
  Tensor grad_query, grad_key, grad_value;
};

// Gradients of sum(grad_output ⊙ ScaledDotProductAttention(query, key, value, options).output) with respect to
// query, key and value: grad_output (*batch, Lq, dv) → shapes of query, key, value. options.need_weights is
// ignored. Masked keys and fully masked rows pass no gradient.
SdpaGradients ScaledDotProductAttentionBackward(const TensorView& query, const TensorView& key, const TensorView& value,
                                                const TensorView& grad_output, const SdpaOptions& options = {});

// Constructor arguments of torch.nn.MultiheadAttention (dropout is always 0: eval mode).
struct MhaConfig {
  int64_t embed_dim = 0;
  int64_t num_heads = 0;
  bool bias = true;
  bool add_bias_kv = false;
  bool add_zero_attn = false;
  int64_t kdim = -1;  // -1: embed_dim
  int64_t vdim = -1;  // -1: embed_dim
  bool batch_first = false;
};

struct MhaForwardOptions {
  Mask key_padding_mask;  // (N, S) or (S) when unbatched; bool true = masked out, float is added
  bool need_weights = true;
  Mask attn_mask;  // (L, S) or (N * num_heads, L, S); bool true = masked out, float is added
  bool average_attn_weights = true;
  bool requires_grad = false;  // keep the intermediates (and a copy of the inputs) that Backward needs
};

struct MhaGradients {
  Tensor grad_query, grad_key, grad_value;
  std::map<std::string, Tensor> grad_params;  // by state-dict name, shapes of ParameterShapes()
};

class MultiHeadAttention {
 public:
  // Validates the configuration and initialises parameters like PyTorch (Xavier-uniform projections, zero
  // biases, Xavier-normal bias_k/bias_v) from a generator seeded with `seed`.
  explicit MultiHeadAttention(const MhaConfig& config, uint64_t seed = 0);
  ~MultiHeadAttention();
  MultiHeadAttention(MultiHeadAttention&&) noexcept;
  MultiHeadAttention& operator=(MultiHeadAttention&&) noexcept;

  const MhaConfig& config() const;

  // The state-dict names this configuration uses, in PyTorch's order, with their shapes.
  std::vector<std::pair<std::string, Shape>> ParameterShapes() const;

  // Replaces every parameter. Every name of ParameterShapes() must be present with that exact shape and no
  // other name may appear; otherwise nothing changes and std::invalid_argument names the entry.
  void LoadStateDict(const std::map<std::string, TensorView>& state_dict);
  std::map<std::string, Tensor> StateDict() const;

  // query (L, N, E) / (N, L, E) when batch_first / (L, E) unbatched; key (S, N, kdim) …; value (S, N, vdim) ….
  // output has query's layout; weights (N, L, S') averaged over heads or (N, H, L, S') per head, where
  // S' = S + add_bias_kv + add_zero_attn ((L, S') / (H, L, S') when unbatched).
  AttentionResult Forward(const TensorView& query, const TensorView& key, const TensorView& value,
                          const MhaForwardOptions& options = {});

  // Gradients of sum(grad_output ⊙ output) for the most recent Forward with requires_grad (parameters as they
  // were then). grad_output has the output's shape. Throws std::logic_error when no such Forward came after
  // the last LoadStateDict.
  MhaGradients Backward(const TensorView& grad_output);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Name of the Highway target the dispatcher chooses now (e.g. "AVX3", "WASM", "EMU128").
const char* ActiveTargetName();

}  // namespace attnlab

#endif  // ATTNLAB_ATTENTION_H_
