// A model's parameter storage (also the shape of its gradients and of AdamW's moments): weight matrices packed for
// the GEMM (packing.h), vectors as they are; and the copy of one checkpoint tensor (architectures.h's ParamSpec:
// name, shape, place) in or out of it.
#ifndef ATTNLAB_SRC_MODEL_WEIGHTS_H_
#define ATTNLAB_SRC_MODEL_WEIGHTS_H_

#include <array>
#include <cstddef>
#include <functional>
#include <vector>

#include "cpp/src/model/architectures.h"
#include "cpp/src/model/model_kernels.h"
#include "cpp/src/ops/packing.h"

namespace attnlab {

// A weight matrix W (in, out), packed: float32 in `data`, or 16-bit in `bits` (F16 or BF16: `dtype`), never both.
struct PackedMatrix {
  std::vector<float> data;
  std::vector<uint16_t> bits;
  Dtype16 dtype = Dtype16::kF16;
  size_t in = 0, out = 0;

  void Resize(size_t rows, size_t cols) {
    in = rows;
    out = cols;
    data.assign(PackedSize(in, out), 0.0f);
  }
  // Zeros in 16-bit storage.
  void Resize16(size_t rows, size_t cols, Dtype16 type) {
    in = rows;
    out = cols;
    dtype = type;
    bits.assign(PackedSize(in, out), 0);
  }
  bool Is16() const { return !bits.empty(); }
  // 16-bit storage to float32, exactly (nothing when float32 already).
  void Widen();
  PackedB View() const { return PackedB{data.data(), kPanel * in}; }
  PackedB16 View16() const { return PackedB16{bits.empty() ? nullptr : bits.data(), kPanel * in, dtype}; }
  size_t Index(size_t p, size_t j) const { return PackedIndex(kPanel * in, p, j); }
  float& At(size_t p, size_t j) { return data[Index(p, j)]; }
  float Get(size_t p, size_t j) const { return Is16() ? Bits16ToFloat(bits[Index(p, j)], dtype) : data[Index(p, j)]; }
};

// The kernels' view of a matrix and its bias (empty: none).
inline LinearArgs LinearOf(const PackedMatrix& m, const std::vector<float>& bias) {
  return LinearArgs{m.View(), m.View16(), bias.empty() ? nullptr : bias.data(), m.in, m.out};
}

struct BlockWeights {
  std::vector<float> norm1_weight, norm1_bias, norm2_weight, norm2_bias, qkv_bias, o_bias, up_bias, down_bias;
  std::vector<float> q_norm, k_norm;  // (head_dim) each, with qk_norm
  PackedMatrix qkv, o, up, down;
  // An encoder–decoder's decoder block: the cross-attention and its norm (empty elsewhere).
  std::vector<float> norm3_weight, norm3_bias, cross_q_bias, cross_kv_bias, cross_o_bias;
  PackedMatrix cross_q, cross_kv, cross_o;
  // A stack's first block (relativeBuckets > 0): its relative position bias (buckets, H), which the stack shares.
  std::vector<float> relative_bias;

  // The one list of a block's matrices.
  std::array<PackedMatrix*, 7> Matrices() { return {&qkv, &o, &up, &down, &cross_q, &cross_kv, &cross_o}; }
};

// Rows [first, first + count) of a checkpoint tensor's first dimension.
struct RowRange {
  size_t first = 0, count = 0;
};
inline RowRange AllRows(const ParamSpec& s) { return {0, static_cast<size_t>(s.shape[0])}; }

struct Weights {
  PackedMatrix embed, head;                                             // (E, V); head only when untied
  std::vector<float> positions, norm_f_weight, norm_f_bias, head_bias;  // (empty: the model has none)
  std::vector<float> encoder_norm_f_weight;  // an encoder–decoder's encoder stack's final RMSNorm (T5), or empty
  std::vector<BlockWeights> blocks;
  // Encoders (empty: none): token types (types, E), the embeddings' LayerNorm, the pooler, the masked-LM head's
  // transform (dense, LayerNorm), a classifier's own dense; a vision model's patch projection and [CLS] (E).
  std::vector<float> token_types, embed_norm_weight, embed_norm_bias, pooler_bias, head_dense_bias, head_norm_weight,
      head_norm_bias, cls_dense_bias, patch_bias, cls_token;
  PackedMatrix pooler, head_dense, cls_dense, patch;

  // Sized for the (normalised) config; norm weights 1 when `ones`, everything else 0; the matrices in 16-bit storage
  // of `dtype` when `sixteen`.
  Weights(const TransformerConfig& config, bool ones, bool sixteen = false, Dtype16 dtype = Dtype16::kF16);

  // Copies a checkpoint tensor (s.shape, row-major) into its place, or out of it. Load widens a 16-bit matrix first.
  // With `rows`: only its rows [rows.first, rows.first + rows.count) (of s.shape[0]), `data` holding just those.
  void Load(const ParamSpec& s, const float* data) { Load(s, data, AllRows(s)); }
  void Save(const ParamSpec& s, float* data) { Save(s, data, AllRows(s)); }
  void Load(const ParamSpec& s, const float* data, RowRange rows);
  void Save(const ParamSpec& s, float* data, RowRange rows);
  // Copies a tensor of 16-bit values in: its bits into a matrix of that 16-bit storage, else converted to float32.
  void Load16(const ParamSpec& s, const uint16_t* bits, Dtype16 dtype) { Load16(s, bits, dtype, AllRows(s)); }
  void Load16(const ParamSpec& s, const uint16_t* bits, Dtype16 dtype, RowRange rows);
  // Every packed matrix: the embedding, the head (empty when tied), an encoder's, each block's.
  std::vector<PackedMatrix*> Matrices();
  // Every matrix to float32 storage.
  void Widen();
  bool Any16();

  // Every buffer, with whether it is a ≥ 2-D tensor (AdamW's weight decay applies); the padding of packed matrices
  // is zero in parameters and gradients alike.
  void ForEachBuffer(const std::function<void(std::vector<float>&, bool matrix)>& fn);

  BlockArgs ArgsOf(size_t block) const;  // the kernels' view of a block's parameters (float32 or 16-bit matrices)
  BlockGrads GradsOf(size_t block);      // the kernels' view as a gradient

 private:
  template <typename Resize>
  void AllocateEncoder(const TransformerConfig& c, const ModelSizes& z, float one, const Resize& resize);
  void AllocateRelative(const TransformerConfig& c, const ModelSizes& z, float one);
};

}  // namespace attnlab

#endif  // ATTNLAB_SRC_MODEL_WEIGHTS_H_
