// The arguments of one linear layer (ops/linear-inl.h's Linear): y (rows, out) = x (rows, in) · W + bias, the
// weight packed as W (in, out), i.e. PyTorch's weight (out, in) transposed. Plain C++: crosses the dispatch.
#ifndef ATTNLAB_SRC_OPS_LINEAR_H_
#define ATTNLAB_SRC_OPS_LINEAR_H_

#include <cstddef>

#include "cpp/src/ops/packing.h"

namespace attnlab {

// W packed (in, out): float32 `w`, or 16-bit `w16` when its data is non-null; bias (out) or null.
struct LinearArgs {
  PackedB w;
  PackedB16 w16;
  const float* bias = nullptr;
  size_t in = 0, out = 0;
};

}  // namespace attnlab

#endif  // ATTNLAB_SRC_OPS_LINEAR_H_
