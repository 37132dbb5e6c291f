// Mirrors cpp/src/ops/patches.h: the unfolded patches times a Conv2d weight read as (E, C·p·p) equal the stride-p
// convolution summed from its definition in double, trailing pixels unread.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <vector>

#include "cpp/src/ops/patches.h"

namespace attnlab_test {
namespace {

TEST_CASE("patches: unfolded rows times the kernel are the stride-p convolution; trailing pixels are not read",
          "[ops][patches]") {
  const size_t channels = 2, size = 7, p = 3, grid = 2, width = channels * p * p, out = 3;  // (7 = 2·3 + 1)
  std::vector<float> image(channels * size * size), weight(out * width);
  for (size_t i = 0; i < image.size(); ++i) image[i] = std::sin(0.37f * static_cast<float>(i));
  for (size_t i = 0; i < weight.size(); ++i) weight[i] = std::cos(0.11f * static_cast<float>(i));
  std::vector<float> rows(grid * grid * width, -1.0f);
  attnlab::UnfoldPatches(image.data(), channels, size, p, rows.data());
  for (size_t i = 0; i < grid; ++i) {
    for (size_t j = 0; j < grid; ++j) {
      for (size_t e = 0; e < out; ++e) {
        double conv = 0, unfolded = 0;  // (Conv2d: Σ_c,y,x W[e, c, y, x] · image[c, i·p + y, j·p + x])
        for (size_t c = 0; c < channels; ++c) {
          for (size_t y = 0; y < p; ++y) {
            for (size_t x = 0; x < p; ++x) {
              const double w = weight[((e * channels + c) * p + y) * p + x];
              conv += w * image[(c * size + i * p + y) * size + j * p + x];
            }
          }
        }
        for (size_t k = 0; k < width; ++k) unfolded += weight[e * width + k] * rows[(i * grid + j) * width + k];
        CHECK(unfolded == Approx(conv).margin(1e-12));
      }
    }
  }
  std::vector<float> changed = image, again(rows.size());
  for (size_t c = 0; c < channels; ++c) {
    for (size_t t = 0; t < size; ++t) {
      changed[(c * size + size - 1) * size + t] = 99.0f;  // (the last row and column)
      changed[(c * size + t) * size + size - 1] = 99.0f;
    }
  }
  attnlab::UnfoldPatches(changed.data(), channels, size, p, again.data());
  CHECK(again == rows);
}

}  // namespace
}  // namespace attnlab_test
