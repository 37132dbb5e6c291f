// The TinyTransformer's configuration as the one Transformer's (arch 'tiny', cpp/src/model/types/tiny.cc), shared
// by the model (tiny_transformer.cc) and its memory needs (memory_needs.cc).
#ifndef ATTNLAB_SRC_MODEL_TINY_CONFIG_H_
#define ATTNLAB_SRC_MODEL_TINY_CONFIG_H_

#include "attnlab/tiny_transformer.h"
#include "attnlab/transformer.h"

namespace attnlab {

// Whether the TinyTransformer constructor accepts `c` (else it throws, naming the field).
inline bool TinyConfigValid(const TinyTransformerConfig& c) {
  return c.vocab_size > 0 && c.embed_dim > 0 && c.embed_dim % 2 == 0 && c.num_heads > 0 &&
         c.embed_dim % c.num_heads == 0;
}

// One block, no context limit of its own (sinusoidal positions are computed per call): contextLength the largest.
inline TransformerConfig TinyModelConfig(const TinyTransformerConfig& tiny) {
  TransformerConfig c;
  c.arch = "tiny";
  c.vocab_size = tiny.vocab_size;
  c.context_length = int64_t{1} << 20;
  c.embed_dim = tiny.embed_dim;
  c.num_layers = 1;
  c.num_heads = tiny.num_heads;
  c.causal = tiny.causal;
  return c;
}

}  // namespace attnlab

#endif  // ATTNLAB_SRC_MODEL_TINY_CONFIG_H_
