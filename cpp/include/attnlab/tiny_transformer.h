// A one-layer transformer small enough to train in a browser tab, for the "train it yourself" demo:
//   x = embedding.weight[tokens] + pe;  a = MHA(x, x, x [, causal mask]);  h = x + a;
//   logits = h readout.weightᵀ + readout.bias;  loss = mean cross-entropy over all B·T positions,
// with PyTorch's fixed sinusoidal positional encoding, nn.MultiheadAttention(E, H, bias=False, batch_first=True)
// and torch.optim.Adam (betas 0.9 / 0.999, eps 1e-8). Parameters use PyTorch's state-dict names. It is a
// configuration of attnlab::Transformer (arch 'tiny': no norms, sinusoidal positions, no MLP, a head bias).
#ifndef ATTNLAB_TINY_TRANSFORMER_H_
#define ATTNLAB_TINY_TRANSFORMER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/attention.h"

namespace attnlab {

struct TinyTransformerConfig {
  int64_t vocab_size = 0;
  int64_t embed_dim = 0;  // even (sin/cos pairs), divisible by num_heads
  int64_t num_heads = 0;
  bool causal = false;  // position t attends positions <= t
};

// Token ids, row-major (B, T).
struct TokensView {
  const int32_t* data = nullptr;
  Shape shape;
};

class TinyTransformer {
 public:
  // Validates the configuration; initialises like PyTorch (embedding N(0, 1), MHA defaults, readout
  // U(±1/√E)) from a generator seeded with `seed`.
  explicit TinyTransformer(const TinyTransformerConfig& config, uint64_t seed = 0);
  ~TinyTransformer();
  TinyTransformer(TinyTransformer&&) noexcept;
  TinyTransformer& operator=(TinyTransformer&&) noexcept;

  // embedding.weight (V, E), attn.in_proj_weight (3E, E), attn.out_proj.weight (E, E), readout.weight (V, E),
  // readout.bias (V).
  std::vector<std::pair<std::string, Shape>> ParameterShapes() const;
  void LoadStateDict(const std::map<std::string, TensorView>& state_dict);  // also resets Adam's state
  std::map<std::string, Tensor> StateDict() const;

  struct Output {
    Tensor logits;   // (B, T, V)
    Tensor weights;  // (B, H, T, T) attention weights per head
  };
  Output Forward(const TokensView& tokens);

  struct LossAndGrad {
    float loss = 0.0f;
    std::map<std::string, Tensor> grad_params;
  };
  LossAndGrad LossAndGradient(const TokensView& tokens, const TokensView& targets);

  // One Adam step on this batch (state kept in the model); returns the loss before the update.
  float TrainStep(const TokensView& tokens, const TokensView& targets, float lr = 1e-2f);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnlab

#endif  // ATTNLAB_TINY_TRANSFORMER_H_
