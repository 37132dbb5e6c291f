// The library's deterministic random numbers, the one C++ home of them: splitmix64 (Rng) for PyTorch-style default
// parameter initialisation, and xoshiro256** seeded through it (Xoshiro256) for the tools' data order
// (cpp/tools/common/token_data.h). Both streams are reproducibility contracts (a model's seeded weights, the poem
// model's batches): change neither.
#ifndef ATTNLAB_SRC_RNG_H_
#define ATTNLAB_SRC_RNG_H_

#include <cmath>
#include <cstdint>

namespace attnlab {

// splitmix64: a small deterministic generator for PyTorch-style default initialisation.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double Uniform01() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  float Uniform(double bound) { return static_cast<float>((2.0 * Uniform01() - 1.0) * bound); }
  float Normal(double stddev) {
    const double u1 = 1.0 - Uniform01(), u2 = Uniform01();
    return static_cast<float>(stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
  }

 private:
  uint64_t state_;
};

// xoshiro256** (Blackman and Vigna), its four state words the first four outputs of Rng(seed).
class Xoshiro256 {
 public:
  explicit Xoshiro256(uint64_t seed) {
    Rng seeder(seed);
    for (uint64_t& x : s_) x = seeder.Next();
  }
  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9, t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, n) for n >= 1, unbiased (by rejection).
  uint64_t Below(uint64_t n) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do x = Next();
    while (x >= limit);
    return x % n;
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace attnlab

#endif  // ATTNLAB_SRC_RNG_H_
