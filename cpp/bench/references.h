// The native benchmark's reference implementations (native_bench.cc): Eigen (eigen_reference.cc, compiled with
// AVX2+FMA through a GCC target pragma) and textbook loops (naive_reference.cc).
#ifndef ATTNLAB_CPP_BENCH_REFERENCES_H_
#define ATTNLAB_CPP_BENCH_REFERENCES_H_

#include <string>

namespace eigen_ref {

// Whether this CPU runs the Eigen code (AVX2 and FMA when it was compiled for them).
bool CpuSupported();
// The SIMD instruction set Eigen was compiled for.
const char* SimdInUse();
// Eigen's version, "3.4.0".
std::string Version();
// q, k, v (heads, L, d) → out (heads, L, d).
void Sdpa(const float* q, const float* k, const float* v, float* out, int heads, int L, int d);
// nn.MultiheadAttention forward, batch 1, batch_first, self-attention: x (L, E) → out (L, E).
void Mha(const float* x, const float* w_in, const float* b_in, const float* w_out, const float* b_out, float* out,
         int L, int E, int heads);

}  // namespace eigen_ref

namespace naive {

void Sdpa(const float* q, const float* k, const float* v, float* out, int heads, int L, int d);
void Mha(const float* x, const float* w_in, const float* b_in, const float* w_out, const float* b_out, float* out,
         int L, int E, int heads);

}  // namespace naive

#endif  // ATTNLAB_CPP_BENCH_REFERENCES_H_
