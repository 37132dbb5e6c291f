// Arguments of the dispatched Transformer forward (cpp/src/model/kernels_model.cc). Only pointers and sizes cross
// the dispatch; cpp/src/model/transformer.cc has validated every size and allocated every buffer.
#ifndef ATTNLAB_SRC_MODEL_MODEL_KERNELS_H_
#define ATTNLAB_SRC_MODEL_MODEL_KERNELS_H_

#include <cstddef>
#include <cstdint>

#include "cpp/src/packing.h"

namespace attnlab {

// y (rows, out) = x (rows, in) · W + bias, W packed (in, out); bias (out) or null.
struct LinearArgs {
  PackedB w;
  const float* bias = nullptr;
  size_t in = 0, out = 0;
};

// LayerNorm (bias non-null) or RMSNorm (bias null) over rows of e.
struct NormArgs {
  const float* weight = nullptr;
  const float* bias = nullptr;
};

// One block. qkv's outputs are the query heads (H · hd), then the key heads and the value heads (KV · hd each);
// up's are GPT-2's 4E, or Llama's gate (hidden) then up (hidden).
struct BlockArgs {
  NormArgs norm1, norm2;
  LinearArgs qkv, o, up, down;
  float* cache_k = nullptr;     // (B, KV, cache_max, hd): positions [past, past + T) are written here
  float* cache_v = nullptr;     // likewise
  float* attentions = nullptr;  // (B, H, T, past + T) or null: this layer's weights are not kept
  const float* head_mask = nullptr;  // (H) or null
};

struct ModelArgs {
  bool llama = false;  // RMSNorm, RoPE, SwiGLU; else LayerNorm, learned positions, GELU
  size_t batch = 0, tokens = 0, past = 0, cache_max = 0;  // B, T, P; keys attended: P + T
  size_t e = 0, heads = 0, kv_heads = 0, head_dim = 0, hidden = 0, vocab = 0;
  float norm_eps = 1e-5f;
  const int32_t* ids = nullptr;          // (B, T), each in [0, vocab)
  PackedB embed;                         // the token embedding, packed as its transpose (E, V): it is the tied head
  const float* positions = nullptr;      // GPT-2: wpe (contextLength, E)
  const float* rope_cos = nullptr;       // Llama: (T, hd / 2) at positions P … P + T − 1
  const float* rope_sin = nullptr;
  const float* key_bias = nullptr;       // (B, P + T): 0 or −inf (padding), or null
  int64_t window_left = -1;              // keys j ≥ p − window_left only (−1: all)
  const BlockArgs* blocks = nullptr;
  size_t num_blocks = 0;
  NormArgs norm_f;
  LinearArgs head;                       // (E, V)
  float* logits = nullptr;               // (B, T, V)
  float* const* hidden_states = nullptr; // L + 1 buffers (B, T, E), or null
};

void TransformerForward(const ModelArgs& args);

}  // namespace attnlab

#endif  // ATTNLAB_SRC_MODEL_MODEL_KERNELS_H_
