// A model's parameter storage (also the shape of its gradients and of AdamW's moments): weight matrices packed for
// the GEMM (packing.h), vectors as they are; and the copy of one checkpoint tensor (architectures.h's ParamSpec:
// name, shape, place) in or out of it.
#ifndef ATTNLAB_SRC_MODEL_WEIGHTS_H_
#define ATTNLAB_SRC_MODEL_WEIGHTS_H_

#include <cstddef>
#include <functional>
#include <vector>

#include "cpp/src/model/architectures.h"
#include "cpp/src/model/model_kernels.h"
#include "cpp/src/packing.h"

namespace attnlab {

// A weight matrix W (in, out), packed.
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
};

struct BlockWeights {
  std::vector<float> norm1_weight, norm1_bias, norm2_weight, norm2_bias, qkv_bias, o_bias, up_bias, down_bias;
  PackedMatrix qkv, o, up, down;
};

struct Weights {
  PackedMatrix embed, head;  // (E, V); head only when untied
  std::vector<float> positions, norm_f_weight, norm_f_bias;
  std::vector<BlockWeights> blocks;

  // Sized for the (normalised) config; norm weights 1 when `ones`, everything else 0.
  Weights(const TransformerConfig& config, bool ones);

  // Copies a checkpoint tensor (s.shape, row-major) into its place, or out of it.
  void Load(const ParamSpec& s, const float* data);
  void Save(const ParamSpec& s, float* data);

  // Every buffer, with whether it is a ≥ 2-D tensor (AdamW's weight decay applies); the padding of packed matrices
  // is zero in parameters and gradients alike.
  void ForEachBuffer(const std::function<void(std::vector<float>&, bool matrix)>& fn);

  BlockArgs ArgsOf(size_t block) const;  // the kernels' view of a block's parameters
  BlockGrads GradsOf(size_t block);      // the kernels' view as a gradient
};

}  // namespace attnlab

#endif  // ATTNLAB_SRC_MODEL_WEIGHTS_H_
