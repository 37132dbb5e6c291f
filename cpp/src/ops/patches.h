// Image patches as GEMM rows: a stride-p convolution with a p × p kernel (Conv2d(C, E, kernel_size = stride = p))
// is the product of these rows with its weight (E, C, p, p) read as (E, C·p·p). Plain C++ (a copy, no arithmetic).
#ifndef ATTNLAB_SRC_OPS_PATCHES_H_
#define ATTNLAB_SRC_OPS_PATCHES_H_

#include <algorithm>
#include <cstddef>

namespace attnlab {

// rows (N, C·p·p) of one image (C, size, size), N = (size / p)² patches in row-major order, each row ordered
// (channel, row, column) as the kernel flattens: rows[(i·g + j), (c·p + y)·p + x] = image[c, i·p + y, j·p + x]
// (g = size / p). Pixels past the last whole patch (size mod p trailing rows and columns) are not read.
inline void UnfoldPatches(const float* image, size_t channels, size_t size, size_t p, float* rows) {
  const size_t grid = size / p, width = channels * p * p;
  for (size_t i = 0; i < grid; ++i) {
    for (size_t j = 0; j < grid; ++j) {
      float* row = rows + (i * grid + j) * width;
      for (size_t c = 0; c < channels; ++c) {
        for (size_t y = 0; y < p; ++y) {
          const float* src = image + (c * size + i * p + y) * size + j * p;
          std::copy(src, src + p, row + (c * p + y) * p);
        }
      }
    }
  }
}

}  // namespace attnlab

#endif  // ATTNLAB_SRC_OPS_PATCHES_H_
