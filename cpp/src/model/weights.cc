// Weights (weights.h).
#include "cpp/src/model/weights.h"

#include <algorithm>
#include <vector>

namespace attnlab {
namespace {

const float* OrNull(const std::vector<float>& v) { return v.empty() ? nullptr : v.data(); }
float* OrNull(std::vector<float>& v) { return v.empty() ? nullptr : v.data(); }

// The matrix or vector a spec names.
PackedMatrix* MatrixOf(Weights& w, const ParamSpec& s) {
  BlockWeights* b = s.layer >= 0 ? &w.blocks[static_cast<size_t>(s.layer)] : nullptr;
  switch (s.slot) {
    case Slot::kEmbed:
      return &w.embed;
    case Slot::kHead:
      return &w.head;
    case Slot::kPooler:
      return &w.pooler;
    case Slot::kHeadDense:
      return &w.head_dense;
    case Slot::kClsDense:
      return &w.cls_dense;
    case Slot::kPatch:
      return &w.patch;
    case Slot::kQkv:
      return &b->qkv;
    case Slot::kO:
      return &b->o;
    case Slot::kUp:
      return &b->up;
    case Slot::kDown:
      return &b->down;
    case Slot::kCrossQ:
      return &b->cross_q;
    case Slot::kCrossKv:
      return &b->cross_kv;
    case Slot::kCrossO:
      return &b->cross_o;
    default:
      return nullptr;
  }
}

std::vector<float>* VectorOf(Weights& w, const ParamSpec& s) {
  BlockWeights* b = s.layer >= 0 ? &w.blocks[static_cast<size_t>(s.layer)] : nullptr;
  switch (s.slot) {
    case Slot::kPositions:
      return &w.positions;
    case Slot::kNormFWeight:
      return &w.norm_f_weight;
    case Slot::kNormFBias:
      return &w.norm_f_bias;
    case Slot::kEncoderNormFWeight:
      return &w.encoder_norm_f_weight;
    case Slot::kRelativeBias:
      return &b->relative_bias;
    case Slot::kHeadBias:
      return &w.head_bias;
    case Slot::kTokenTypes:
      return &w.token_types;
    case Slot::kEmbedNormWeight:
      return &w.embed_norm_weight;
    case Slot::kEmbedNormBias:
      return &w.embed_norm_bias;
    case Slot::kPoolerBias:
      return &w.pooler_bias;
    case Slot::kHeadDenseBias:
      return &w.head_dense_bias;
    case Slot::kHeadNormWeight:
      return &w.head_norm_weight;
    case Slot::kHeadNormBias:
      return &w.head_norm_bias;
    case Slot::kClsDenseBias:
      return &w.cls_dense_bias;
    case Slot::kPatchBias:
      return &w.patch_bias;
    case Slot::kClsToken:
      return &w.cls_token;
    case Slot::kNorm1Weight:
      return &b->norm1_weight;
    case Slot::kNorm1Bias:
      return &b->norm1_bias;
    case Slot::kQkvBias:
      return &b->qkv_bias;
    case Slot::kOBias:
      return &b->o_bias;
    case Slot::kQNorm:
      return &b->q_norm;
    case Slot::kKNorm:
      return &b->k_norm;
    case Slot::kNorm2Weight:
      return &b->norm2_weight;
    case Slot::kNorm2Bias:
      return &b->norm2_bias;
    case Slot::kUpBias:
      return &b->up_bias;
    case Slot::kDownBias:
      return &b->down_bias;
    case Slot::kCrossQBias:
      return &b->cross_q_bias;
    case Slot::kCrossKvBias:
      return &b->cross_kv_bias;
    case Slot::kCrossOBias:
      return &b->cross_o_bias;
    case Slot::kNorm3Weight:
      return &b->norm3_weight;
    case Slot::kNorm3Bias:
      return &b->norm3_bias;
    default:
      return nullptr;
  }
}

// fn(packed index, index in `rows`' data) for every element of rows `rows` of the matrix tensor s (row-major
// (rows, cols), cols all its dimensions after the first; (out, in) when transposed: element (r, c) is
// W[c, offset + r], else W[r, offset + c]).
template <typename Fn>
void ForEachElement(const PackedMatrix& m, const ParamSpec& s, RowRange rows, const Fn& fn) {
  const size_t cols = s.row_size();
  for (size_t r = rows.first; r < rows.first + rows.count; ++r) {
    for (size_t c = 0; c < cols; ++c) {
      fn(s.transposed ? m.Index(c, s.offset + r) : m.Index(r, s.offset + c), (r - rows.first) * cols + c);
    }
  }
}

// Copies rows of a checkpoint tensor between `data` and their place (kSave: out of it).
template <bool kSave>
void Transfer(Weights& w, const ParamSpec& s, std::conditional_t<kSave, float*, const float*> data, RowRange rows) {
  if (!s.is_matrix()) {
    const size_t cols = s.row_size();
    float* v = VectorOf(w, s)->data() + s.offset + rows.first * cols;
    const size_t n = rows.count * cols;
    if constexpr (kSave) {
      std::copy(v, v + n, data);
    } else {
      std::copy(data, data + n, v);
    }
    return;
  }
  PackedMatrix& m = *MatrixOf(w, s);
  if constexpr (!kSave) m.Widen();
  ForEachElement(m, s, rows, [&](size_t index, size_t i) {
    if constexpr (kSave) {
      data[i] = m.Is16() ? Bits16ToFloat(m.bits[index], m.dtype) : m.data[index];
    } else {
      m.data[index] = data[i];
    }
  });
}

}  // namespace

void PackedMatrix::Widen() {
  if (!Is16()) return;
  data.resize(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) data[i] = Bits16ToFloat(bits[i], dtype);
  std::vector<uint16_t>().swap(bits);
}

// An encoder's tensors (none for a decoder).
template <typename Resize>
void Weights::AllocateEncoder(const TransformerConfig& c, const ModelSizes& z, float one, const Resize& resize) {
  token_types.assign(static_cast<size_t>(c.type_vocab_size) * z.e, 0.0f);
  if (c.embed_norm) {
    embed_norm_weight.assign(z.e, one);
    embed_norm_bias.assign(z.e, 0.0f);
  }
  if (c.pooler) {
    resize(pooler, z.e, z.e);
    pooler_bias.assign(z.e, 0.0f);
  }
  if (c.task == Task::kMaskedLm) {
    resize(head_dense, z.e, z.e);
    head_dense_bias.assign(z.e, 0.0f);
    head_norm_weight.assign(z.e, one);
    head_norm_bias.assign(z.e, 0.0f);
  }
  if (c.classifier_dense) {
    resize(cls_dense, z.e, z.e);
    cls_dense_bias.assign(z.e, 0.0f);
  }
  if (z.patch_in > 0) {
    resize(patch, z.patch_in, z.e);
    patch_bias.assign(z.e, 0.0f);
    cls_token.assign(z.e, 0.0f);
  }
}

// T5's: each stack's relative position bias (at its first block) and the encoder stack's final norm.
void Weights::AllocateRelative(const TransformerConfig& c, const ModelSizes& z, float one) {
  const size_t encoder = static_cast<size_t>(c.num_layers);
  if (c.relative_buckets > 0) {
    blocks[0].relative_bias.assign(static_cast<size_t>(c.relative_buckets) * z.heads, 0.0f);
    if (blocks.size() > encoder) blocks[encoder].relative_bias.assign(blocks[0].relative_bias.size(), 0.0f);
  }
  if (c.decoder_layers > 0 && c.norm == NormKind::kRmsNorm) encoder_norm_f_weight.assign(z.e, one);
}

Weights::Weights(const TransformerConfig& config, bool ones, bool sixteen, Dtype16 dtype) {
  const ModelSizes z = SizesOf(config);
  const bool layer_norm = config.norm == NormKind::kLayerNorm, norms = config.norm != NormKind::kNone;
  const float one = ones ? 1.0f : 0.0f;
  const auto resize = [&](PackedMatrix& m, size_t in, size_t out) {
    if (sixteen) {
      m.Resize16(in, out, dtype);
    } else {
      m.Resize(in, out);
    }
  };
  resize(embed, z.e, z.vocab);
  if (!config.tie_embeddings) resize(head, z.e, z.head_out);
  if (config.positions == PositionKind::kLearned) positions.assign(z.position_rows * z.e, 0.0f);
  if (config.head_bias) head_bias.assign(z.head_out, 0.0f);
  if (norms && !config.post_norm) norm_f_weight.assign(z.e, one);
  if (layer_norm && !config.post_norm) norm_f_bias.assign(z.e, 0.0f);
  AllocateEncoder(config, z, one, resize);
  blocks.resize(static_cast<size_t>(config.num_layers + config.decoder_layers));
  for (size_t l = static_cast<size_t>(config.num_layers); l < blocks.size(); ++l) {  // (a decoder's blocks)
    BlockWeights& b = blocks[l];
    const size_t dq = z.heads * z.head_dim;
    resize(b.cross_q, z.e, dq);
    resize(b.cross_kv, z.e, 2 * dq);
    resize(b.cross_o, dq, z.e);
    b.norm3_weight.assign(z.e, one);
    if (layer_norm) b.norm3_bias.assign(z.e, 0.0f);
    if (config.attention_bias == AttentionBias::kAll) {
      b.cross_q_bias.assign(dq, 0.0f);
      b.cross_kv_bias.assign(2 * dq, 0.0f);
      b.cross_o_bias.assign(z.e, 0.0f);
    }
  }
  AllocateRelative(config, z, one);
  for (BlockWeights& b : blocks) {
    resize(b.qkv, z.e, z.qkv_out);
    resize(b.o, z.heads * z.head_dim, z.e);
    resize(b.up, z.e, z.up_out);  // (no MLP: 0 columns, nothing stored)
    resize(b.down, z.down_in, z.e);
    if (norms) {
      b.norm1_weight.assign(z.e, one);
      b.norm2_weight.assign(z.e, one);
    }
    if (layer_norm) {
      b.norm1_bias.assign(z.e, 0.0f);
      b.norm2_bias.assign(z.e, 0.0f);
    }
    if (config.mlp_bias) {
      b.up_bias.assign(z.up_out, 0.0f);
      b.down_bias.assign(z.e, 0.0f);
    }
    if (config.qk_norm) {
      b.q_norm.assign(z.head_dim, one);
      b.k_norm.assign(z.head_dim, one);
    }
    const AttentionBias bias = config.attention_bias;
    if (bias == AttentionBias::kQkv || bias == AttentionBias::kAll) b.qkv_bias.assign(z.qkv_out, 0.0f);
    if (bias == AttentionBias::kAll || bias == AttentionBias::kOut) b.o_bias.assign(z.e, 0.0f);
  }
}

void Weights::Load(const ParamSpec& s, const float* data, RowRange rows) { Transfer<false>(*this, s, data, rows); }
void Weights::Save(const ParamSpec& s, float* data, RowRange rows) { Transfer<true>(*this, s, data, rows); }

void Weights::Load16(const ParamSpec& s, const uint16_t* bits, Dtype16 dtype, RowRange rows) {
  PackedMatrix* m = s.is_matrix() ? MatrixOf(*this, s) : nullptr;
  if (m && m->Is16() && m->dtype == dtype) {
    ForEachElement(*m, s, rows, [&](size_t index, size_t i) { m->bits[index] = bits[i]; });
    return;
  }
  const size_t n = rows.count * s.row_size();
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = Bits16ToFloat(bits[i], dtype);
  Load(s, values.data(), rows);
}

std::vector<PackedMatrix*> Weights::Matrices() {
  std::vector<PackedMatrix*> all{&embed, &head, &pooler, &head_dense, &cls_dense, &patch};
  for (BlockWeights& b : blocks) {
    for (PackedMatrix* m : b.Matrices()) all.push_back(m);
  }
  return all;
}

void Weights::Widen() {
  for (PackedMatrix* m : Matrices()) m->Widen();
}

bool Weights::Any16() {
  const std::vector<PackedMatrix*> all = Matrices();
  return std::any_of(all.begin(), all.end(), [](const PackedMatrix* m) { return m->Is16(); });
}

void Weights::ForEachBuffer(const std::function<void(std::vector<float>&, bool matrix)>& fn) {
  fn(embed.data, true);
  for (PackedMatrix* m : {&head, &pooler, &head_dense, &cls_dense, &patch}) {
    if (!m->data.empty()) fn(m->data, true);
  }
  if (!positions.empty()) fn(positions, true);
  if (!token_types.empty()) fn(token_types, true);
  for (std::vector<float>* v :
       {&norm_f_weight, &norm_f_bias, &encoder_norm_f_weight, &head_bias, &embed_norm_weight, &embed_norm_bias,
        &pooler_bias, &head_dense_bias, &head_norm_weight, &head_norm_bias, &cls_dense_bias, &patch_bias, &cls_token}) {
    if (!v->empty()) fn(*v, false);
  }
  for (BlockWeights& b : blocks) {
    for (PackedMatrix* m : b.Matrices()) fn(m->data, true);
    for (std::vector<float>* v : {&b.norm1_weight, &b.norm1_bias, &b.norm2_weight, &b.norm2_bias, &b.qkv_bias,
                                  &b.o_bias, &b.up_bias, &b.down_bias, &b.q_norm, &b.k_norm, &b.norm3_weight,
                                  &b.norm3_bias, &b.cross_q_bias, &b.cross_kv_bias, &b.cross_o_bias}) {
      if (!v->empty()) fn(*v, false);
    }
    if (!b.relative_bias.empty()) fn(b.relative_bias, true);  // ((buckets, H): a 2-D table, decayed as one)
  }
}

BlockArgs Weights::ArgsOf(size_t block) const {
  const BlockWeights& b = blocks[block];
  BlockArgs a;
  a.norm1 = NormArgs{OrNull(b.norm1_weight), OrNull(b.norm1_bias)};
  a.norm2 = NormArgs{OrNull(b.norm2_weight), OrNull(b.norm2_bias)};
  a.q_norm = OrNull(b.q_norm);
  a.k_norm = OrNull(b.k_norm);
  a.qkv = LinearOf(b.qkv, b.qkv_bias);
  a.o = LinearOf(b.o, b.o_bias);
  a.up = LinearOf(b.up, b.up_bias);
  a.down = LinearOf(b.down, b.down_bias);
  a.norm3 = NormArgs{OrNull(b.norm3_weight), OrNull(b.norm3_bias)};
  a.cross_q = LinearOf(b.cross_q, b.cross_q_bias);
  a.cross_kv = LinearOf(b.cross_kv, b.cross_kv_bias);
  a.cross_o = LinearOf(b.cross_o, b.cross_o_bias);
  return a;
}

BlockGrads Weights::GradsOf(size_t block) {
  BlockWeights& b = blocks[block];
  BlockGrads g;
  g.norm1_weight = OrNull(b.norm1_weight);
  g.norm1_bias = OrNull(b.norm1_bias);
  g.qkv = b.qkv.data.data();
  g.qkv_bias = OrNull(b.qkv_bias);
  g.o = b.o.data.data();
  g.o_bias = OrNull(b.o_bias);
  g.norm2_weight = OrNull(b.norm2_weight);
  g.norm2_bias = OrNull(b.norm2_bias);
  g.up = b.up.data.data();
  g.up_bias = OrNull(b.up_bias);
  g.down = b.down.data.data();
  g.down_bias = OrNull(b.down_bias);
  g.q_norm = OrNull(b.q_norm);
  g.k_norm = OrNull(b.k_norm);
  return g;
}

}  // namespace attnlab
