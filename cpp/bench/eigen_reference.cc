// Eigen reference of the native benchmark (references.h): MatrixXf-style products, single thread. Eigen gets
// AVX2+FMA code through a GCC target pragma (the project builds without -march, which would leave Eigen at SSE2);
// native_bench.cc runs it only after CpuSupported().
#include <cmath>
#include <cstddef>
#include <string>

#include "cpp/bench/references.h"

#if defined(__GNUC__) && !defined(__clang__) && (defined(__x86_64__) || defined(__i386__))
#define BENCH_EIGEN_AVX2 1
#pragma GCC push_options
#pragma GCC target("avx,avx2,fma")
// g++ does not update the ISA macros after a target pragma in C++, so Eigen would not see the ISA: say it.
#if !defined(__AVX2__)
#define BENCH_DEFINED_ISA_MACROS 1
#define __AVX__ 1
#define __AVX2__ 1
#define __FMA__ 1
#endif
#else
#define BENCH_EIGEN_AVX2 0
#endif
#define EIGEN_DONT_PARALLELIZE
#include <Eigen/Dense>
#ifdef BENCH_DEFINED_ISA_MACROS
#undef __AVX__
#undef __AVX2__
#undef __FMA__
#endif

namespace eigen_ref {

bool CpuSupported() {
#if BENCH_EIGEN_AVX2
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return true;
#endif
}

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMat>;

const char* SimdInUse() {
#if defined(EIGEN_VECTORIZE_AVX512)
  return "AVX-512";
#elif defined(EIGEN_VECTORIZE_AVX2) && defined(EIGEN_VECTORIZE_FMA)
  return "AVX2+FMA";
#elif defined(EIGEN_VECTORIZE_AVX)
  return "AVX";
#else
  return Eigen::SimdInstructionSetsInUse();
#endif
}

std::string Version() {
  return std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
         std::to_string(EIGEN_MINOR_VERSION);
}

// Row softmax of s in place.
void SoftmaxRows(RowMat& s) {
  const Eigen::VectorXf max = s.rowwise().maxCoeff();
  s = (s.colwise() - max).array().exp().matrix();
  const Eigen::VectorXf inv = s.rowwise().sum().cwiseInverse();
  s = inv.asDiagonal() * s;
}

// q, k, v (heads, L, d) → out (heads, L, d).
void Sdpa(const float* q, const float* k, const float* v, float* out, int heads, int L, int d) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  RowMat s(L, L), qs(L, d);
  for (int h = 0; h < heads; ++h) {
    const size_t off = static_cast<size_t>(h) * L * d;
    ConstMap Q(q + off, L, d), K(k + off, L, d), V(v + off, L, d);
    // Scale the small Q, not the (L, L) product: `(Q * Kᵀ) * scale` is several times slower in Eigen 3.4.
    qs.noalias() = Q * scale;
    s.noalias() = qs * K.transpose();
    SoftmaxRows(s);
    Eigen::Map<RowMat>(out + off, L, d).noalias() = s * V;
  }
}

// nn.MultiheadAttention forward, batch 1, batch_first, self-attention: x (L, E) → out (L, E).
void Mha(const float* x, const float* w_in, const float* b_in, const float* w_out, const float* b_out, float* out,
         int L, int E, int heads) {
  const int d = E / heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  ConstMap X(x, L, E), Win(w_in, 3 * E, E), Wout(w_out, E, E);
  Eigen::Map<const Eigen::RowVectorXf> bin(b_in, 3 * E), bout(b_out, E);
  RowMat qkv(L, 3 * E);
  qkv.noalias() = X * Win.transpose();
  qkv.rowwise() += bin;
  qkv.leftCols(E) *= scale;  // scale q once (see Sdpa)
  RowMat ctx(L, E), s(L, L);
  for (int h = 0; h < heads; ++h) {
    s.noalias() = qkv.middleCols(h * d, d) * qkv.middleCols(E + h * d, d).transpose();
    SoftmaxRows(s);
    ctx.middleCols(h * d, d).noalias() = s * qkv.middleCols(2 * E + h * d, d);
  }
  Eigen::Map<RowMat> O(out, L, E);
  O.noalias() = ctx * Wout.transpose();
  O.rowwise() += bout;
}

}  // namespace eigen_ref

#if BENCH_EIGEN_AVX2
#pragma GCC pop_options
#endif
