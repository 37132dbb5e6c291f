// T5's bucketed relative position bias (Hugging Face's T5Attention._relative_position_bucket and compute_bias) as
// the attention kernels take it: a bias that depends on the key position minus the query position alone, so each
// head's biases are one diagonal vector of Lq + Lk − 1 values (BiasArgs::toeplitz), never an (Lq, Lk) matrix.
#ifndef ATTNLAB_SRC_ATTENTION_RELATIVE_BIAS_H_
#define ATTNLAB_SRC_ATTENTION_RELATIVE_BIAS_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace attnlab {

// The bucket of relative position rel = key − query among `buckets` (bidirectional: half for keys after the query,
// half for the others; causal: keys after the query share bucket 0): distances below half the buckets of a direction
// are exact, the rest logarithmic up to max_distance, the last bucket beyond. The log ratio is computed in float32
// and truncated, as Hugging Face's torch code does, so that the buckets' edges agree.
inline int64_t RelativeBucket(int64_t rel, bool bidirectional, int64_t buckets, int64_t max_distance) {
  int64_t offset = 0, n = 0;
  if (bidirectional) {
    buckets /= 2;
    offset = rel > 0 ? buckets : 0;
    n = rel < 0 ? -rel : rel;
  } else {
    n = rel < 0 ? -rel : 0;
  }
  const int64_t exact = buckets / 2;
  if (n < exact) return offset + n;
  const float ratio = std::log(static_cast<float>(n) / static_cast<float>(exact));
  const float span = static_cast<float>(std::log(static_cast<double>(max_distance) / static_cast<double>(exact)));
  const float scaled = ratio / span * static_cast<float>(buckets - exact);
  return offset + std::min(exact + static_cast<int64_t>(scaled), buckets - 1);
}

// Head h's diagonal of biases for lq queries at positions past … past + lq − 1 over keys 0 … lk − 1:
// out[k] = table[bucket(k − (lq − 1) − past) · heads + h] for k in [0, lq + lk − 1), so that query i's bias for key j
// is out[lq − 1 − i + j]. table is (buckets, heads) as a checkpoint holds relative_attention_bias.
inline void RelativeBiasDiagonal(const float* table, size_t heads, size_t h, int64_t buckets, int64_t max_distance,
                                 bool bidirectional, size_t lq, size_t lk, size_t past, float* out) {
  const int64_t first = -static_cast<int64_t>(lq - 1 + past);
  for (size_t k = 0; k + 1 < lq + lk; ++k) {
    const int64_t bucket = RelativeBucket(first + static_cast<int64_t>(k), bidirectional, buckets, max_distance);
    out[k] = table[static_cast<size_t>(bucket) * heads + h];
  }
}

}  // namespace attnlab

#endif  // ATTNLAB_SRC_ATTENTION_RELATIVE_BIAS_H_
