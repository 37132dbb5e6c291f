// Deterministic random numbers for PyTorch-style default parameter initialisation.
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

}  // namespace attnlab

#endif  // ATTNLAB_SRC_RNG_H_
