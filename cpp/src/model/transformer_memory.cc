// Memory needs of the Transformer (attnlab/memory_needs.h): its parameters, one Forward, one KV cache, one training
// step. Counted in doubles from the normalised configuration (architectures.h), as transformer.cc and train.cc
// store them: weight matrices packed in panels of kPanel columns (packing.h), vectors as they are.
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "attnlab/memory_needs.h"
#include "attnlab/transformer.h"
#include "cpp/src/model/architectures.h"
#include "cpp/src/ops/packing.h"

namespace attnlab {
namespace {

constexpr double kF32 = 4;

// Floats of a packed (in, out) matrix: out rounded up to whole panels.
double Packed(double in, double out) {
  const double panel = static_cast<double>(kPanel);
  return in * (static_cast<double>(static_cast<size_t>((out + panel - 1) / panel)) * panel);
}

double Numel(const Shape& shape) {
  double n = 1;
  for (int64_t d : shape) n *= static_cast<double>(d);
  return n;
}

// An encoder's floats beyond the blocks and the head: token types, the embeddings' LayerNorm, the pooler, the
// masked-LM head's transform and the classifier's dense layer (weights.cc's AllocateEncoder).
double EncoderFloats(const TransformerConfig& c, const ModelSizes& z, double matrix_scale) {
  const double e = static_cast<double>(z.e);
  double n = static_cast<double>(c.type_vocab_size) * e + (c.embed_norm ? 2 * e : 0);
  if (c.pooler) n += matrix_scale * Packed(e, e) + e;
  if (c.task == Task::kMaskedLm) n += matrix_scale * Packed(e, e) + 3 * e;
  if (c.classifier_dense) n += matrix_scale * Packed(e, e) + e;
  return n;
}

// The parameter storage's parts (weights.h's Weights: packed matrices, vectors), in elements; gradients and
// AdamW's moments have the same layout. The matrices' count is scaled by matrix_scale (16-bit storage: 0.5).
MemoryNeeds ParameterParts(const TransformerConfig& c, double matrix_scale = 1) {
  const ModelSizes z = SizesOf(c);
  const double e = static_cast<double>(z.e), v = static_cast<double>(z.vocab);
  const bool layer_norm = c.norm == NormKind::kLayerNorm, learned = c.positions == PositionKind::kLearned;
  double block =
      matrix_scale * (Packed(e, static_cast<double>(z.qkv_out)) + Packed(static_cast<double>(z.heads * z.head_dim), e) +
                      Packed(e, static_cast<double>(z.up_out)) + Packed(static_cast<double>(z.down_in), e));
  const double norm = c.norm == NormKind::kNone ? 0 : layer_norm ? 2 : 1;  // floats of a norm per feature
  block += 2 * norm * e;                                                   // norm weights (and LayerNorm's biases)
  if (c.qk_norm) block += 2 * static_cast<double>(z.head_dim);
  const AttentionBias bias = c.attention_bias;
  if (bias == AttentionBias::kQkv || bias == AttentionBias::kAll) block += static_cast<double>(z.qkv_out);
  if (bias == AttentionBias::kAll || bias == AttentionBias::kOut) block += e;
  if (c.mlp_bias) block += static_cast<double>(z.up_out) + e;
  MemoryNeeds parts;
  parts.push_back({"token embedding (vocabSize, embedDim)", matrix_scale * Packed(e, v)});
  const double out = static_cast<double>(z.head_out);  // (V; numLabels for a classifier)
  if (!c.tie_embeddings) parts.push_back({"head (outputs, embedDim)", matrix_scale * Packed(e, out)});
  if (c.head_bias) parts.push_back({"head bias (outputs)", out});
  if (learned) {  // (RoBERTa's table has padTokenId + 1 rows more than contextLength)
    parts.push_back({"positions (position rows, embedDim)", static_cast<double>(z.position_rows) * e});
  }
  if (c.task != Task::kCausalLm) parts.push_back({"encoder embeddings and heads", EncoderFloats(c, z, matrix_scale)});
  if (z.patch_in > 0) {  // (a vision model: the patch projection, its bias and [CLS])
    parts.push_back({"patch projection (numChannels x patchSize², embedDim)",
                     matrix_scale * Packed(static_cast<double>(z.patch_in), e) + 2 * e});
  }
  parts.push_back({"blocks (numLayers x " + std::to_string(static_cast<long long>(block * 4)) + " bytes)",
                   static_cast<double>(c.num_layers) * block});
  if (c.decoder_layers > 0) {  // (an encoder–decoder's: a block and its cross-attention, norm₃ and biases)
    const double dq = static_cast<double>(z.heads * z.head_dim);
    const double decoder = block + matrix_scale * (Packed(e, dq) + Packed(e, 2 * dq) + Packed(dq, e)) + 3 * dq + 3 * e;
    parts.push_back(
        {"decoder blocks (decoderLayers x " + std::to_string(static_cast<long long>(decoder * 4)) + " bytes)",
         static_cast<double>(c.decoder_layers) * decoder});
  }
  if (norm > 0 && !c.post_norm) parts.push_back({"final norm", norm * e});
  if (c.relative_buckets > 0) {  // (T5: each stack's relative position bias and the encoder's final norm)
    const double stacks = c.decoder_layers > 0 ? 2 : 1;
    parts.push_back({"relative position bias (relativeBuckets, numHeads) per stack",
                     stacks * static_cast<double>(c.relative_buckets) * static_cast<double>(z.heads)});
  }
  if (c.decoder_layers > 0 && c.norm == NormKind::kRmsNorm) parts.push_back({"the encoder's final norm", e});
  return parts;
}

}  // namespace

MemoryNeeds TransformerParameterMemoryNeeds(const TransformerConfig& config, WeightStorage storage, bool loading) {
  const TransformerConfig c = NormalisedConfig(config);
  MemoryNeeds needs = ParameterParts(c, storage == WeightStorage::kFloat32 ? 1.0 : 0.5);
  for (MemoryPart& part : needs) part.bytes *= kF32;
  // Initialising holds one whole tensor beside its packed copy: the embedding is the largest. Loading stages one
  // piece, and at most two float32 copies of it (16-bit values widened; a tied lm_head's piece compared with the
  // embedding's rows): 2 bytes an element at the least, so 5 pieces' bytes.
  double largest = static_cast<double>(c.vocab_size) * static_cast<double>(c.embed_dim);
  for (const ParamSpec& s : ParameterSpecs(c)) largest = std::max(largest, Numel(s.shape));
  if (loading) {
    needs.push_back({"one piece while loading", std::min(largest * kF32, 5.0 * static_cast<double>(kLoadPieceBytes))});
  } else {
    needs.push_back({"one tensor while initialising", largest * kF32});
  }
  return needs;
}

MemoryNeeds TransformerForwardMemoryNeeds(const TransformerConfig& config, const Shape& tokens, int64_t past,
                                          const std::vector<int64_t>& output_attentions, bool output_hidden_states,
                                          bool with_cache, bool last_logits_only) {
  MemoryNeeds needs;
  if (tokens.size() != 2) return needs;
  const TransformerConfig c = NormalisedConfig(config);
  const ModelSizes z = SizesOf(c);
  const double b = static_cast<double>(tokens[0]), t = static_cast<double>(tokens[1]);
  const double s = static_cast<double>(std::max<int64_t>(past, 0)) + t, rows = b * t;
  const double e = static_cast<double>(z.e), hd = static_cast<double>(z.head_dim);
  if (last_logits_only) {
    needs.push_back({"logits (B, 1, vocabSize)", (t > 0 ? b : 0) * static_cast<double>(z.vocab) * kF32});
  } else if (c.task == Task::kSequenceClassification) {
    needs.push_back({"logits (B, numLabels)", b * static_cast<double>(z.head_out) * kF32});
  } else {
    needs.push_back({"logits (B, T, vocabSize)", rows * static_cast<double>(z.head_out) * kF32});
  }
  if (c.task != Task::kCausalLm) {
    needs.push_back({"lastHiddenState (B, T, E) and pooledOutput (B, E)", (rows + b) * e * kF32});
  }
  std::vector<int64_t> layers = output_attentions;
  std::sort(layers.begin(), layers.end());
  layers.erase(std::unique(layers.begin(), layers.end()), layers.end());
  if (!layers.empty()) {
    needs.push_back({"attentions (" + std::to_string(layers.size()) + " x (B, H, T, P + T))",
                     static_cast<double>(layers.size()) * b * static_cast<double>(z.heads) * t * s * kF32});
  }
  if (output_hidden_states) {
    needs.push_back(
        {"hiddenStates (numLayers + 1 x (B, T, E))", (static_cast<double>(c.num_layers) + 1) * rows * e * kF32});
  }
  if (!with_cache) {
    needs.push_back({"keys and values of one layer", 2 * rows * static_cast<double>(z.kv_heads) * hd * kF32});
  }
  const double qk_raw = c.qk_norm ? static_cast<double>((z.heads + z.kv_heads) * z.head_dim) : 0;
  const double activations = 3 * e + static_cast<double>(z.heads) * hd + static_cast<double>(z.qkv_out) + qk_raw +
                             static_cast<double>(z.up_out);
  needs.push_back({"activations (B x T rows)", rows * activations * kF32});
  if (c.positions == PositionKind::kSinusoidal) needs.push_back({"sinusoidal positions (P + T, E)", s * e * kF32});
  return needs;
}

MemoryNeeds TransformerEncoderDecoderForwardMemoryNeeds(const TransformerConfig& config, const Shape& source,
                                                        const Shape& decoder, int64_t past,
                                                        const std::vector<int64_t>& output_attentions,
                                                        bool output_hidden_states, bool with_cache, bool encode,
                                                        bool last_logits_only) {
  if (source.size() != 2 || decoder.size() != 2) return {};
  TransformerConfig dec = NormalisedConfig(config);
  dec.num_layers = dec.decoder_layers;  // (the decoder's stack: its layers' attentions and hidden states)
  MemoryNeeds needs = TransformerForwardMemoryNeeds(dec, decoder, past, output_attentions, output_hidden_states,
                                                    with_cache, last_logits_only);
  const ModelSizes z = SizesOf(dec);
  const double b = static_cast<double>(source[0]), s = static_cast<double>(source[1]),
               t = static_cast<double>(decoder[1]), e = static_cast<double>(z.e);
  std::vector<int64_t> layers = output_attentions;
  std::sort(layers.begin(), layers.end());
  layers.erase(std::unique(layers.begin(), layers.end()), layers.end());
  const double kept = static_cast<double>(layers.size());
  needs.push_back(
      {"crossAttentions (B, H, T, S) and their keys and values (decoderLayers x 2 x (B, S, E))",
       (kept * b * static_cast<double>(z.heads) * t * s + 2 * static_cast<double>(dec.decoder_layers) * b * s * e) *
           kF32});
  if (encode) {  // (the encoder's stack: its activations and outputs, as a text encoder's with (B, S) tokens)
    TransformerConfig enc = NormalisedConfig(config);
    enc.task = Task::kBase;
    for (MemoryPart& part :
         TransformerForwardMemoryNeeds(enc, source, 0, output_attentions, output_hidden_states, false, true)) {
      needs.push_back({"encoder: " + part.what, part.bytes});
    }
  }
  return needs;
}

namespace {

// What every training call makes and keeps beside its activations: the float32 copy of 16-bit weights, the
// parameters' gradients (not for a gradient analysis), AdamW's moments (TrainStep) and the gradients returned
// (LossAndGradient).
MemoryNeeds TrainStateNeeds(const TransformerConfig& c, TrainCall call, WeightStorage storage) {
  MemoryNeeds needs;
  double parameters = 0;
  for (const MemoryPart& part : ParameterParts(c)) parameters += part.bytes;
  if (storage != WeightStorage::kFloat32) {  // (float32 beside the 16 bits, matrix by matrix: at most this much)
    needs.push_back({"the 16-bit weights widened to float32 for training", parameters * kF32});
  }
  if (call != TrainCall::kGradientAnalysis) {
    needs.push_back({"parameter gradients (the parameters' size)", parameters * kF32});
  }
  if (call == TrainCall::kTrainStep)
    needs.push_back({"AdamW's two moments (2 x the parameters)", 2 * parameters * kF32});
  if (call == TrainCall::kLossAndGradient) {
    double numel = 0;
    for (const ParamSpec& s : ParameterSpecs(c)) numel += Numel(s.shape);
    needs.push_back({"gradients returned (every parameter's shape)", numel * kF32});
  }
  return needs;
}

// What training an encoder adds (encoder_train.cc, kernels_encoder_train.cc): a classifier's logits (B, numLabels),
// the forward's last hidden state, a vision model's unfolded patches with their output gradient, or a text
// encoder's embedding sum and the masked-LM transform recomputed with their gradients.
void EncoderTrainParts(const TransformerConfig& c, double b, double t, MemoryNeeds& needs) {
  const double e = static_cast<double>(c.embed_dim), rows = b * t;
  if (c.task != Task::kMaskedLm) {
    needs.push_back({"logits and their gradient (B, numLabels)", b * static_cast<double>(c.num_labels) * kF32});
  }
  needs.push_back({"the encoder's last hidden state (B, T, E)", rows * e * kF32});
  if (c.image_size > 0) {
    const double patch = static_cast<double>(c.num_channels * c.patch_size * c.patch_size);
    needs.push_back({"patches and their projection's gradient (B x N rows)", b * (t - 1) * (patch + e) * kF32});
    return;
  }
  const double transform = c.task == Task::kMaskedLm ? 4 : 2;  // (the embeddings' sum and a sum gradient)
  needs.push_back(
      {"recomputed embeddings and masked-LM transform, with gradients (B x T rows)", transform * rows * e * kF32});
}

}  // namespace

MemoryNeeds TransformerTrainMemoryNeeds(const TransformerConfig& config, const Shape& tokens, TrainCall call,
                                        WeightStorage storage) {
  if (tokens.size() != 2) return MemoryNeeds();
  const TransformerConfig c = NormalisedConfig(config);
  MemoryNeeds needs = TrainStateNeeds(c, call, storage);
  const ModelSizes z = SizesOf(c);
  const double b = static_cast<double>(tokens[0]), t = static_cast<double>(tokens[1]), rows = b * t;
  const double e = static_cast<double>(z.e), v = static_cast<double>(z.vocab),
               dq = static_cast<double>(z.heads * z.head_dim);
  const double qkv = static_cast<double>(z.qkv_out), up = static_cast<double>(z.up_out),
               hidden = static_cast<double>(z.down_in), heads = static_cast<double>(z.heads);
  // (train.cc's LayOutActivations: BlockSaved per block, then the last block's output and the final norm's)
  const double qk_raw = c.qk_norm ? rows * static_cast<double>((z.heads + z.kv_heads) * z.head_dim) : 0;
  const double per_block =
      4 * rows * e + rows * qkv + qk_raw + b * heads * t * t + rows * dq + rows * up + rows * hidden;
  needs.push_back({"saved activations (numLayers x (B x T rows, attention weights (B, H, T, T)))",
                   (static_cast<double>(c.num_layers) * per_block + 2 * rows * e) * kF32});
  if (c.task == Task::kCausalLm || c.task == Task::kMaskedLm) {
    needs.push_back({"logits and their gradient (B, T, vocabSize)", rows * v * kF32});
  }
  if (c.task != Task::kCausalLm) EncoderTrainParts(c, b, t, needs);
  needs.push_back({"keys and values of one layer",
                   2 * rows * static_cast<double>(z.kv_heads) * static_cast<double>(z.head_dim) * kF32});
  needs.push_back({"forward activations (B x T rows)", rows * (3 * e + dq + qkv + up) * kF32});
  if (c.qk_norm) needs.push_back({"q/k norm gradient (one head)", static_cast<double>(z.head_dim) * kF32});
  if (c.positions == PositionKind::kSinusoidal) needs.push_back({"sinusoidal positions (T, E)", t * e * kF32});
  // The backward's gradients through a block, and the operands of the largest linear layer's weight gradient (the
  // LM head's (embedDim, vocabSize): a dense copy and a packed transpose, and the output gradient packed).
  const double largest = std::max({e * v, e * qkv, dq * e, e * up, hidden * e});
  const double packed_dy = call == TrainCall::kGradientAnalysis ? 0 : Packed(rows, v);
  needs.push_back({"backward scratch", (rows * (2 * e + qkv + dq + up + hidden) + 2 * largest + packed_dy) * kF32});
  if (call == TrainCall::kGradientAnalysis) {  // (the head mask's (B, L, H); the input's and the input (B, T, E))
    const double heads_mask = b * static_cast<double>(c.num_layers) * heads;
    needs.push_back({"head mask or input gradients", std::max(heads_mask, 2 * rows * e) * kF32});
  }
  return needs;
}

MemoryNeeds TransformerSeq2SeqTrainMemoryNeeds(const TransformerConfig& config, const Shape& tokens,
                                               const Shape& labels, TrainCall call, WeightStorage storage) {
  if (tokens.size() != 2 || labels.size() != 2) return MemoryNeeds();
  const TransformerConfig c = NormalisedConfig(config);
  MemoryNeeds needs = TrainStateNeeds(c, call, storage);
  const ModelSizes z = SizesOf(c);
  const double b = static_cast<double>(tokens[0]), s = static_cast<double>(tokens[1]),
               t = static_cast<double>(labels[1]), enc_rows = b * s, rows = b * t, most = std::max(enc_rows, rows);
  const double e = static_cast<double>(z.e), v = static_cast<double>(z.vocab), hd = static_cast<double>(z.head_dim),
               heads = static_cast<double>(z.heads), dq = heads * hd;
  const double qkv = static_cast<double>(z.qkv_out), up = static_cast<double>(z.up_out),
               hidden = static_cast<double>(z.down_in);
  // (seq2seq_train.cc's LayOutStack: BlockSaved per block, a decoder block's with its cross-attention's and its
  // keys and values; each stack's last block output and final norm)
  auto block = [&](double r, double keys) {
    return 4 * r * e + r * qkv + b * heads * keys * keys + r * (dq + up + hidden);
  };
  const double cross = 2 * rows * e + 2 * rows * dq + b * heads * t * s + 2 * b * heads * s * hd;
  needs.push_back({"saved activations of both stacks (attention weights (B, H, S, S), (B, H, T, T), (B, H, T, S))",
                   (static_cast<double>(c.num_layers) * block(enc_rows, s) +
                    static_cast<double>(c.decoder_layers) * (block(rows, t) + cross) + 2 * (enc_rows + rows) * e) *
                       kF32});
  needs.push_back({"logits and their gradient (B, T, vocabSize)", rows * v * kF32});
  needs.push_back({"keys and values of one layer", 2 * b * heads * std::max(s, t) * hd * kF32});
  needs.push_back({"forward activations (B x max(S, T) rows, relative bias diagonals, cross keys and values)",
                   (most * (3 * e + dq + qkv + up) + b * heads * 2 * std::max(s, t) + 2 * b * s * dq) * kF32});
  const double largest = std::max({e * v, e * qkv, dq * e, e * up, hidden * e, 2 * e * dq});
  needs.push_back({"backward scratch (and the encoder output's, the cross keys' and values' gradients)",
                   (most * (2 * e + qkv + dq + up + hidden) + 2 * largest + Packed(std::max(rows, b * s), v) +
                    enc_rows * e + 2 * b * s * dq + b * heads * 2 * std::max(s, t)) *
                       kF32});
  if (call == TrainCall::kGradientAnalysis) {  // (every kind's head mask's (B, L, H); the source's input and its own)
    const double masks = b * heads * static_cast<double>(c.num_layers + 2 * c.decoder_layers);
    needs.push_back({"head mask or input gradients", std::max(masks, 2 * enc_rows * e) * kF32});
  }
  return needs;
}

MemoryNeeds TransformerKVCacheMemoryNeeds(const TransformerConfig& config, int64_t batch_size, int64_t max_length) {
  const TransformerConfig c = NormalisedConfig(config);
  const ModelSizes z = SizesOf(c);
  const double per_layer = static_cast<double>(batch_size) * static_cast<double>(z.kv_heads) *
                           static_cast<double>(max_length) * static_cast<double>(z.head_dim);
  // (an encoder–decoder's cache holds its decoder's layers; their cross-attention keys and values come with the
  // forward that starts it: TransformerEncoderDecoderForwardMemoryNeeds)
  const double layers = static_cast<double>(c.decoder_layers > 0 ? c.decoder_layers : c.num_layers);
  return {
      {"keys and values (numLayers x 2 x (batchSize, numKVHeads, maxLength, headDim))", 2 * layers * per_layer * kF32}};
}

}  // namespace attnlab
