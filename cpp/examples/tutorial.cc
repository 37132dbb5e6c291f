// The tutorial's 3×4 example: Q = K = V = [[1,0,1,0],[0,1,0,1],[1,1,0,0]], softmax(Q Kᵀ / √4) V.
#include <cstdio>

#include "attnlab/attention.h"

int main() {
  const float x[12] = {1, 0, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0};
  const attnlab::TensorView qkv{x, {3, 4}};
  const attnlab::AttentionResult r = attnlab::ScaledDotProductAttention(qkv, qkv, qkv);
  std::printf("attnlab on %s: softmax(Q K^T / sqrt(4)) V with Q = K = V =\n", attnlab::ActiveTargetName());
  for (int i = 0; i < 3; ++i) std::printf("  [%g %g %g %g]\n", x[4 * i], x[4 * i + 1], x[4 * i + 2], x[4 * i + 3]);
  std::printf("weights (3x3), each row sums to 1:\n");
  for (int i = 0; i < 3; ++i) {
    std::printf("  [%.4f %.4f %.4f]\n", r.weights.data[3 * i], r.weights.data[3 * i + 1], r.weights.data[3 * i + 2]);
  }
  std::printf("output (3x4):\n");
  for (int i = 0; i < 3; ++i) {
    std::printf("  [%.4f %.4f %.4f %.4f]\n", r.output.data[4 * i], r.output.data[4 * i + 1], r.output.data[4 * i + 2],
                r.output.data[4 * i + 3]);
  }
  return 0;
}
