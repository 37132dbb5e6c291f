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
  Tensor weights;        // empty data and shape when weights were not requested
  Tensor scores;         // SDPA with return_scores: pre-softmax scores (*batch, Lq, Lk_total); else empty
  Tensor present_key;    // SDPA with a past: past_key ‖ key along Lk (*batchKV, Lpast + Lk, dk); else empty
  Tensor present_value;  // likewise (*batchKV, Lpast + Lk, dv)
};

// Which keys query i of an SDPA problem sees (ONNX Attention, opsets 23–25; PyTorch 2.5 SDPA). Lk_total is the
// number of keys attended (Lpast + Lk with a past, else Lk). Every condition below is an additional mask:
//   valid length  Lv = kv_lengths[item] (item = index of the first batch dim), else Lk_total: keys j >= Lv are
//                 masked (ONNX nonpad_kv_seqlen; the per-item padding of a static cache).
//   aligned position of query i:  p = i + offset, where
//                 offset = Lpast          with CausalAlign::kUpperLeft (0 without a past: PyTorch's default; with
//                                         a past, query 0 sits at the first new key, as ONNX aligns causal with
//                                         past_key);
//                 offset = Lv - Lq        with CausalAlign::kLowerRight (the last query at the last valid key:
//                                         PyTorch's causal_lower_right, ONNX's alignment with nonpad_kv_seqlen).
//                 The offset may be negative: rows with p < 0 see no key under is_causal (zero output).
//   is_causal:    keys j > p masked.
//   window:       keys j < p - window_left masked when window_left >= 0, keys j > p + window_right masked when
//                 window_right >= 0. causal_align aligns the window whether or not is_causal is set (ONNX
//                 aligns windows like causal: by past length, or by nonpad_kv_seqlen - Lq).
// attn_mask, the range above and kv_lengths are combined (a key is attended only when all allow it); a row
// left with no key gets zero weights and a zero output row.
enum class CausalAlign { kUpperLeft, kLowerRight };

// Stages of the pre-softmax scores that SdpaOptions::return_scores returns (ONNX qk_matmul_output_mode 0/1/2):
//   kScaled:     s = (q · k) · scale, for every (i, j), masked or not;
//   kSoftcapped: c · tanh(s / c) with softcap c > 0, else s (as ONNX mode 1 without softcap);
//   kMasked:     softcapped + float attn_mask, and -inf wherever a key is masked (a bool or -inf attn_mask,
//                causal, window, kv_lengths); -inf wins over any logit (also +inf or NaN), NaN in a float mask
//                gives NaN. Fully masked rows stay -inf (not zeroed like the weights).
enum class ScoresStage { kNone, kScaled, kSoftcapped, kMasked };

struct SdpaOptions {
  // Any shape that broadcasts to (*batch, Lq, Lk_total) by NumPy rules (right-aligned; rank may be lower; size-1
  // dimensions broadcast; leading size-1 dimensions beyond that rank are allowed). bool: true = may attend.
  Mask attn_mask;
  bool is_causal = false;  // see CausalAlign: upper-left j <= i (+ Lpast); lower-right j <= i + Lv - Lq
  CausalAlign causal_align = CausalAlign::kUpperLeft;  // aligns is_causal and the window
  bool has_scale = false;                              // when false, scale = 1 / sqrt(dk)
  float scale = 0.0f;
  bool need_weights = true;  // when false, a tiled online-softmax path keeps extra memory O(Lq * dv)
  // Grouped-query attention (PyTorch enable_gqa): key/value's last batch dimension (heads, Hkv) may divide
  // query's (Hq); query head h reads key/value head h / (Hq / Hkv). Other batch dimensions must be equal.
  bool enable_gqa = false;
  // One valid key length per item of the first batch dimension (exactly 1 when query has no batch dimension),
  // each in 0 .. Lk_total; null: every key is valid. See CausalAlign.
  const int32_t* kv_lengths = nullptr;
  size_t num_kv_lengths = 0;
  int64_t window_left = -1, window_right = -1;     // >= 0, or -1 = unbounded; see CausalAlign
  float softcap = 0.0f;                            // > 0: scores = c · tanh(scores / c) after scaling, before masks
  ScoresStage return_scores = ScoresStage::kNone;  // also return AttentionResult::scores at that stage
  // Functional KV cache (ONNX past_key / past_value): attend over past ‖ new, return the concatenations as
  // AttentionResult::present_key / present_value. A past is given when its data is non-null or its shape is
  // non-empty (so a (*batchKV, 0, dk) past with null data is an empty past, and present = key). Shapes
  // (*batchKV, Lpast, dk) and (*batchKV, Lpast, dv), *batchKV those of key; both or neither.
  TensorView past_key, past_value;
};

// softmax(Q Kᵀ · scale + mask) V.
// query (*batch, Lq, dk), key (*batch, Lk, dk), value (*batch, Lk, dv) → output (*batch, Lq, dv) and,
// when need_weights, weights (*batch, Lq, Lk). A query row whose every key is masked gets zero weights and
// a zero output row. With options (SdpaOptions): key/value (*batchKV, Lk, ·) where *batchKV = *batch, or with
// enable_gqa a last dimension dividing query's; weights and scores (*batch, Lq, Lk_total).
AttentionResult ScaledDotProductAttention(const TensorView& query, const TensorView& key, const TensorView& value,
                                          const SdpaOptions& options = {});

struct SdpaGradients {
  Tensor grad_query, grad_key, grad_value;
  Tensor grad_past_key, grad_past_value;  // with a past: shapes of past_key, past_value; else empty
};

// Gradients of sum(grad_output ⊙ ScaledDotProductAttention(query, key, value, options).output) with respect to
// query, key and value: grad_output (*batch, Lq, dv) → shapes of query, key, value. options.need_weights is
// ignored, and so is return_scores. Masked keys and fully masked rows pass no gradient. With enable_gqa the
// gradient of a key/value head sums over the query heads that read it; with a past, grad_past_key/value hold
// the gradients of past_key/value.
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
  // Grouped-query attention: key/value heads, a divisor of num_heads (-1: num_heads, PyTorch's module). Query head
  // h reads key/value head h / (num_heads / num_kv_heads); k/v projections have num_kv_heads * head_dim outputs.
  int64_t num_kv_heads = -1;
};

class MultiHeadAttention;

// Keys and values of past tokens for decoding with MultiHeadAttention::Forward (MhaForwardOptions::kv_cache),
// after projection, (batch_size, num_kv_heads, max_length, head_dim) each, allocated once by
// MultiHeadAttention::CreateKVCache. Owns its memory; usable only with the module that created it.
class KVCache {
 public:
  KVCache();
  ~KVCache();
  KVCache(KVCache&&) noexcept;
  KVCache& operator=(KVCache&&) noexcept;

  int64_t length() const;  // tokens cached so far
  int64_t batch_size() const;
  int64_t max_length() const;
  void Reset();  // length 0 (keeps the memory)

  struct State;  // (internal: cpp/src/attention/multi_head_attention_impl.h)

 private:
  friend class MultiHeadAttention;
  std::unique_ptr<State> state_;
};

struct MhaForwardOptions {
  Mask key_padding_mask;  // (N, S) or (S) when unbatched; bool true = masked out, float is added
  bool need_weights = true;
  Mask attn_mask;  // (L, S) or (N * num_heads, L, S); bool true = masked out, float is added
  bool average_attn_weights = true;
  bool requires_grad = false;  // keep the intermediates (and a copy of the inputs) that Backward needs
  // Decoding: project only the new tokens (key and value of S new tokens, query of L), append their keys and
  // values to the cache and attend over everything cached, causal aligned lower-right: query i sees cached
  // keys j <= i + length_after - L = length_before + i (key and value hold the same L new tokens as query). Then
  // key_padding_mask is (N, length_after) ((length_after) unbatched) and attn_mask (L, length_after) or
  // (N * num_heads, L, length_after), both combined with the causal mask; requires_grad is rejected. Weights are
  // (N, L, length_after) or (N, H, L, length_after). A step that does not fit (length_after > max_length) throws
  // and appends nothing.
  KVCache* kv_cache = nullptr;
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

  // An empty cache for Forward's kv_cache: batch_size items of up to max_length tokens. Its memory
  // (2 * batch_size * num_kv_heads * max_length * head_dim floats) is allocated here, once.
  KVCache CreateKVCache(int64_t batch_size, int64_t max_length) const;

  struct Impl;  // (internal: cpp/src/attention/multi_head_attention_impl.h)

 private:
  AttentionResult ForwardWithCache(const TensorView& query, const TensorView& key, const TensorView& value,
                                   const MhaForwardOptions& options);
  std::unique_ptr<Impl> impl_;
};

// Name of the Highway target the dispatcher chooses now (e.g. "AVX3", "WASM", "EMU128").
const char* ActiveTargetName();

}  // namespace attnlab

#endif  // ATTNLAB_ATTENTION_H_
