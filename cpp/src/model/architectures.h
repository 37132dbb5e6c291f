// A model's parameters as a table: Hugging Face names, checkpoint shapes, and where each tensor goes in attnlab's
// storage (which packed matrix and at which column, or which vector); the checks every configuration passes. What is
// particular to a model type (its names, prefixes, buffers, features) is in its file of cpp/src/model/types/.
#ifndef ATTNLAB_SRC_MODEL_ARCHITECTURES_H_
#define ATTNLAB_SRC_MODEL_ARCHITECTURES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attnlab/transformer.h"

namespace attnlab {

// Storage of one model: global tensors, then per block.
enum class Slot {
  kEmbed,      // packed (E, V): token embedding, and the tied LM head
  kPositions,  // (contextLength, E): GPT-2's wpe
  kNormFWeight,
  kNormFBias,
  kHead,      // packed (E, V): an untied LM head
  kHeadBias,  // (V): the LM head's bias (head_bias)
  kNorm1Weight,
  kNorm1Bias,
  kQkv,  // packed (E, H·hd + 2·KV·hd)
  kQkvBias,
  kO,  // packed (H·hd, E)
  kOBias,
  kQNorm,  // (head_dim): RMSNorm weight of every query head (qk_norm)
  kKNorm,  // (head_dim): of every key head
  kNorm2Weight,
  kNorm2Bias,
  kUp,  // packed (E, hidden) (GELU), or (E, 2·hidden): gate, then up (SwiGLU)
  kUpBias,
  kDown,  // packed (hidden, E)
  kDownBias,
  // Encoders:
  kTokenTypes,  // (typeVocabSize, E): token-type embeddings
  kEmbedNormWeight,
  kEmbedNormBias,
  kPooler,  // packed (E, E): the pooler's dense
  kPoolerBias,
  kHeadDense,  // packed (E, E): the masked-LM head's transform dense
  kHeadDenseBias,
  kHeadNormWeight,
  kHeadNormBias,
  kClsDense,  // packed (E, E): a classifier's own dense (RoBERTa's classifier.dense)
  kClsDenseBias,
  // Vision models:
  kPatch,  // packed (C·p·p, E): the patch projection, a Conv2d weight (E, C, p, p) read as (E, C·p·p)
  kPatchBias,
  kClsToken,  // (E): the [CLS] embedding
  // Encoder–decoders, a decoder block's cross-attention: q (E, H·hd), k and v packed (E, 2·H·hd), o (H·hd, E), its
  // norm (norm₃):
  kCrossQ,
  kCrossQBias,
  kCrossKv,
  kCrossKvBias,
  kCrossO,
  kCrossOBias,
  kNorm3Weight,
  kNorm3Bias,
  // T5: a stack's relative position bias (buckets, H), at the stack's first block; the encoder's final norm (E)
  // (the decoder's is kNormFWeight).
  kRelativeBias,
  kEncoderNormFWeight,
};

struct ParamSpec {
  std::string name;  // Hugging Face's, without prefix
  Shape shape;       // as stored in a checkpoint
  Slot slot;
  int64_t layer;            // -1: not per block
  size_t offset;            // first output column of a packed matrix, or first element of a vector
  bool transposed;          // a matrix stored (out, in) (nn.Linear, nn.Embedding); false: (in, out) (GPT-2's Conv1D)
  bool is_matrix() const {  // (Marian's final_logits_bias (1, V) is a vector)
    return (shape.size() == 2 || slot == Slot::kPatch) && slot != Slot::kPositions && slot != Slot::kTokenTypes &&
           slot != Slot::kHeadBias && slot != Slot::kRelativeBias;
  }
  // Elements per row of the first dimension (a matrix's columns; 1 for a vector).
  size_t row_size() const {
    size_t n = 1;
    for (size_t d = 1; d < shape.size(); ++d) n *= static_cast<size_t>(shape[d]);
    return n;
  }
  bool is_norm_weight() const {
    return slot == Slot::kNorm1Weight || slot == Slot::kNorm2Weight || slot == Slot::kNormFWeight ||
           slot == Slot::kQNorm || slot == Slot::kKNorm || slot == Slot::kEmbedNormWeight ||
           slot == Slot::kHeadNormWeight || slot == Slot::kNorm3Weight || slot == Slot::kEncoderNormFWeight;
  }
};

// Checks every field (std::invalid_argument naming it, in JS spelling), fills in the defaults (0 = derived) and sets
// the features from the model type.
TransformerConfig NormalisedConfig(const TransformerConfig& config);

// Every parameter of the (normalised) config, in state-dict order.
std::vector<ParamSpec> ParameterSpecs(const TransformerConfig& config);

// A checkpoint name without the prefix its type allows, or "" for a buffer that loading ignores.
std::string CanonicalName(const TransformerConfig& config, const std::string& name);

// The parameter a canonical checkpoint name is a tied copy of (a tied lm_head: the embedding; a masked-LM
// decoder: the word embeddings or the head's bias), or "".
std::string TiedName(const TransformerConfig& config, const std::string& canonical);

// Sizes derived from a normalised config.
struct ModelSizes {
  size_t e = 0, heads = 0, kv_heads = 0, head_dim = 0, hidden = 0, vocab = 0, qkv_out = 0, up_out = 0, down_in = 0;
  size_t position_rows = 0;  // rows of the learned position table (RoBERTa: contextLength + padTokenId + 1)
  size_t head_out = 0;       // the head's outputs: V, numLabels (classification) or 0 (base)
  size_t patch_in = 0;       // a vision model's patch: C·p·p pixels (0: a text model)
};
ModelSizes SizesOf(const TransformerConfig& config);

}  // namespace attnlab

#endif  // ATTNLAB_SRC_MODEL_ARCHITECTURES_H_
