// Naive reference of the native benchmark (references.h): textbook loops, the (L, L) scores of one head
// materialised.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "cpp/bench/references.h"

namespace naive {

void Sdpa(const float* q, const float* k, const float* v, float* out, int heads, int L, int d) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  std::vector<float> s(static_cast<size_t>(L) * L);
  for (int h = 0; h < heads; ++h) {
    const size_t off = static_cast<size_t>(h) * L * d;
    const float* Q = q + off;
    const float* K = k + off;
    const float* V = v + off;
    float* O = out + off;
    for (int i = 0; i < L; ++i) {
      for (int j = 0; j < L; ++j) {
        float acc = 0.0f;
        for (int t = 0; t < d; ++t) acc += Q[i * d + t] * K[j * d + t];
        s[static_cast<size_t>(i) * L + j] = acc * scale;
      }
    }
    for (int i = 0; i < L; ++i) {
      float* row = &s[static_cast<size_t>(i) * L];
      float m = -INFINITY;
      for (int j = 0; j < L; ++j) m = std::max(m, row[j]);
      float sum = 0.0f;
      for (int j = 0; j < L; ++j) sum += (row[j] = std::exp(row[j] - m));
      for (int j = 0; j < L; ++j) row[j] /= sum;
    }
    for (int i = 0; i < L; ++i) {
      for (int t = 0; t < d; ++t) O[i * d + t] = 0.0f;
      for (int j = 0; j < L; ++j) {
        const float p = s[static_cast<size_t>(i) * L + j];
        for (int t = 0; t < d; ++t) O[i * d + t] += p * V[j * d + t];
      }
    }
  }
}

// y (rows, n) = x (rows, k) · w[w_row0 : w_row0 + n]ᵀ + b[w_row0 : …]  (w in PyTorch's (out, in) layout)
void Linear(const float* x, int rows, int kdim, const float* w, const float* b, int n, float* y) {
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < n; ++j) {
      float acc = b[j];
      for (int t = 0; t < kdim; ++t) acc += x[static_cast<size_t>(i) * kdim + t] * w[static_cast<size_t>(j) * kdim + t];
      y[static_cast<size_t>(i) * n + j] = acc;
    }
  }
}

void Mha(const float* x, const float* w_in, const float* b_in, const float* w_out, const float* b_out, float* out,
         int L, int E, int heads) {
  const int d = E / heads;
  std::vector<float> qkv(static_cast<size_t>(L) * 3 * E);
  Linear(x, L, E, w_in, b_in, 3 * E, qkv.data());
  std::vector<float> q(static_cast<size_t>(heads) * L * d), k(q.size()), v(q.size()), o(q.size()),
      ctx(static_cast<size_t>(L) * E);
  for (int i = 0; i < L; ++i) {
    for (int h = 0; h < heads; ++h) {
      for (int t = 0; t < d; ++t) {
        const size_t dst = (static_cast<size_t>(h) * L + i) * d + t;
        const size_t src = static_cast<size_t>(i) * 3 * E + h * d + t;
        q[dst] = qkv[src];
        k[dst] = qkv[src + E];
        v[dst] = qkv[src + 2 * E];
      }
    }
  }
  Sdpa(q.data(), k.data(), v.data(), o.data(), heads, L, d);
  for (int i = 0; i < L; ++i) {
    for (int h = 0; h < heads; ++h) {
      for (int t = 0; t < d; ++t)
        ctx[static_cast<size_t>(i) * E + h * d + t] = o[(static_cast<size_t>(h) * L + i) * d + t];
    }
  }
  Linear(ctx.data(), L, E, w_out, b_out, E, out);
}

}  // namespace naive
