// The MLP activations of a Transformer block and their gradients, elementwise over a row:
//   GeluTanh: y = ½ x (1 + tanh(√(2/π) (x + 0.044715 x³)))  (GPT-2's gelu_new, PyTorch's approximate='tanh');
//   SwiGlu:   y = silu(gate) · up, silu(g) = g / (1 + e^(−g))  (Llama's MLP);
//   GeluErf:  y = ½ x (1 + erf(x / √2))  (BERT's gelu, PyTorch's default GELU); Relu; Silu; Tanh (a pooler's).
// NaN stays NaN; the transcendental functions see clamped arguments (Highway's Exp/Tanh convert their argument to
// int: undefined beyond int range on EMU128). Per-target code: include after hwy/highway.h, inside the
// foreach_target unit.

#if defined(ATTNLAB_SRC_OPS_ACTIVATION_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ATTNLAB_SRC_OPS_ACTIVATION_INL_H_
#undef ATTNLAB_SRC_OPS_ACTIVATION_INL_H_
#else
#define ATTNLAB_SRC_OPS_ACTIVATION_INL_H_
#endif

#include <cmath>
#include <cstddef>

#include "cpp/src/ops/vector_ops-inl.h"
#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// v clamped to [-bound, bound], NaN as 0 (the caller's arithmetic brings NaN back).
template <class D, class V = hn::Vec<D>>
HWY_INLINE V ClampForMath(D d, V v, float bound) {
  const V finite = hn::IfThenZeroElse(hn::IsNaN(v), v);
  return hn::Min(hn::Max(finite, hn::Set(d, -bound)), hn::Set(d, bound));
}

// y[j] = GeluTanh(x[j]) for j in [0, n) (y may be x).
HWY_INLINE void GeluTanhRow(const float* x, size_t n, float* y) {
  ForEachLane(0, n, [&](auto dd, size_t j) HWY_ATTR {
    const auto v = hn::LoadU(dd, x + j);
    const auto inner =
        hn::Mul(hn::Set(dd, 0.7978845608028654f), hn::MulAdd(hn::Mul(hn::Set(dd, 0.044715f), hn::Mul(v, v)), v, v));
    const auto t = hn::Tanh(dd, ClampForMath(dd, inner, 20.0f));  // tanh(±20) is ±1 in float
    hn::StoreU(hn::Mul(hn::Mul(hn::Set(dd, 0.5f), v), hn::Add(hn::Set(dd, 1.0f), t)), dd, y + j);
  });
}

// dx[j] = dy[j] · GeluTanh'(x[j]) = dy · (½ (1 + t) + ½ x (1 − t²) √(2/π) (1 + 3 · 0.044715 x²)), t = tanh(inner).
HWY_INLINE void GeluTanhGradRow(const float* HWY_RESTRICT x, const float* HWY_RESTRICT dy, size_t n,
                                float* HWY_RESTRICT dx) {
  ForEachLane(0, n, [&](auto dd, size_t j) HWY_ATTR {
    const auto v = hn::LoadU(dd, x + j), v2 = hn::Mul(v, v), half = hn::Set(dd, 0.5f), one = hn::Set(dd, 1.0f);
    const auto c = hn::Set(dd, 0.7978845608028654f);
    const auto inner = hn::Mul(c, hn::MulAdd(hn::Mul(hn::Set(dd, 0.044715f), v2), v, v));
    const auto t = hn::Tanh(dd, ClampForMath(dd, inner, 20.0f));
    const auto d_inner = hn::Mul(c, hn::MulAdd(hn::Set(dd, 3.0f * 0.044715f), v2, one));
    const auto grad =
        hn::MulAdd(hn::Mul(half, v), hn::Mul(hn::NegMulAdd(t, t, one), d_inner), hn::Mul(half, hn::Add(one, t)));
    hn::StoreU(hn::Mul(grad, hn::LoadU(dd, dy + j)), dd, dx + j);
  });
}

// y[j] = silu(gate[j]) · up[j] for j in [0, n) (y may be gate).
HWY_INLINE void SwiGluRow(const float* gate, const float* HWY_RESTRICT up, size_t n, float* y) {
  ForEachLane(0, n, [&](auto dd, size_t j) HWY_ATTR {
    const auto g = hn::LoadU(dd, gate + j);
    const auto e = hn::Exp(dd, hn::Neg(ClampForMath(dd, g, 80.0f)));  // e^80 ≈ 5.5e34: silu(-80) ≈ -1.5e-33
    hn::StoreU(hn::Mul(hn::Div(g, hn::Add(hn::Set(dd, 1.0f), e)), hn::LoadU(dd, up + j)), dd, y + j);
  });
}

// y[j] = gelu_tanh(gate[j]) · up[j] (T5's gated-gelu, GEGLU; y may be gate).
HWY_INLINE void GeluTanhGluRow(const float* gate, const float* HWY_RESTRICT up, size_t n, float* y) {
  GeluTanhRow(gate, n, y);
  ForEachLane(0, n, [&](auto dd, size_t j) HWY_ATTR {
    hn::StoreU(hn::Mul(hn::LoadU(dd, y + j), hn::LoadU(dd, up + j)), dd, y + j);
  });
}

// y[j] = GeluErf(x[j]) for j in [0, n) (y may be x): std::erf per element (Highway has no erf).
HWY_INLINE void GeluErfRow(const float* x, size_t n, float* y) {
  for (size_t j = 0; j < n; ++j) y[j] = 0.5f * x[j] * (1.0f + std::erf(x[j] * 0.70710678118654752f));
}

// dx[j] = dy[j] · GeluErf'(x[j]) = dy · (Φ(x) + x φ(x)), Φ(x) = ½ (1 + erf(x/√2)), φ(x) = e^(−x²/2) / √(2π).
HWY_INLINE void GeluErfGradRow(const float* HWY_RESTRICT x, const float* HWY_RESTRICT dy, size_t n,
                               float* HWY_RESTRICT dx) {
  for (size_t j = 0; j < n; ++j) {
    const float v = x[j];
    const float cdf = 0.5f * (1.0f + std::erf(v * 0.70710678118654752f));
    dx[j] = dy[j] * (cdf + v * 0.39894228040143268f * std::exp(-0.5f * v * v));
  }
}

// dx[j] = dy[j] where x[j] > 0, else 0 (PyTorch's relu backward: 0 at x = 0).
HWY_INLINE void ReluGradRow(const float* HWY_RESTRICT x, const float* HWY_RESTRICT dy, size_t n,
                            float* HWY_RESTRICT dx) {
  for (size_t j = 0; j < n; ++j) dx[j] = x[j] > 0.0f ? dy[j] : 0.0f;
}

// y[j] = max(x[j], 0) (y may be x; NaN stays NaN).
HWY_INLINE void ReluRow(const float* x, size_t n, float* y) {
  for (size_t j = 0; j < n; ++j) y[j] = x[j] > 0.0f || x[j] != x[j] ? x[j] : 0.0f;
}

// y[j] = silu(x[j]) = x / (1 + e^(−x)) (y may be x).
HWY_INLINE void SiluRow(const float* x, size_t n, float* y) {
  ForEachLane(0, n, [&](auto dd, size_t j) HWY_ATTR {
    const auto g = hn::LoadU(dd, x + j);
    const auto e = hn::Exp(dd, hn::Neg(ClampForMath(dd, g, 80.0f)));
    hn::StoreU(hn::Div(g, hn::Add(hn::Set(dd, 1.0f), e)), dd, y + j);
  });
}

// dx[j] = dy[j] · silu'(x[j]) = dy · σ(x)(1 + x (1 − σ(x))).
HWY_INLINE void SiluGradRow(const float* HWY_RESTRICT x, const float* HWY_RESTRICT dy, size_t n,
                            float* HWY_RESTRICT dx) {
  ForEachLane(0, n, [&](auto dd, size_t j) HWY_ATTR {
    const auto g = hn::LoadU(dd, x + j), one = hn::Set(dd, 1.0f);
    const auto sigmoid = hn::Div(one, hn::Add(one, hn::Exp(dd, hn::Neg(ClampForMath(dd, g, 80.0f)))));
    const auto d_silu = hn::Mul(sigmoid, hn::MulAdd(g, hn::Sub(one, sigmoid), one));
    hn::StoreU(hn::Mul(hn::LoadU(dd, dy + j), d_silu), dd, dx + j);
  });
}

// y[j] = tanh(x[j]) (y may be x).
HWY_INLINE void TanhRow(const float* x, size_t n, float* y) {
  for (size_t j = 0; j < n; ++j) y[j] = std::tanh(x[j]);
}

// d gate[j] = dy · up · σ(g)(1 + g (1 − σ(g))), d up[j] = dy · silu(g), for y = silu(gate) · up.
HWY_INLINE void SwiGluGradRow(const float* HWY_RESTRICT gate, const float* HWY_RESTRICT up,
                              const float* HWY_RESTRICT dy, size_t n, float* HWY_RESTRICT d_gate,
                              float* HWY_RESTRICT d_up) {
  ForEachLane(0, n, [&](auto dd, size_t j) HWY_ATTR {
    const auto g = hn::LoadU(dd, gate + j), one = hn::Set(dd, 1.0f), grad = hn::LoadU(dd, dy + j);
    const auto sigmoid = hn::Div(one, hn::Add(one, hn::Exp(dd, hn::Neg(ClampForMath(dd, g, 80.0f)))));
    const auto silu = hn::Mul(g, sigmoid);
    const auto d_silu = hn::Mul(sigmoid, hn::MulAdd(g, hn::Sub(one, sigmoid), one));
    hn::StoreU(hn::Mul(hn::Mul(grad, hn::LoadU(dd, up + j)), d_silu), dd, d_gate + j);
    hn::StoreU(hn::Mul(grad, silu), dd, d_up + j);
  });
}

// d gate[j] = dy · up · GeluTanh'(gate), d up[j] = dy · GeluTanh(gate), for y = gelu_tanh(gate) · up (T5's gated-gelu).
HWY_INLINE void GeluTanhGluGradRow(const float* HWY_RESTRICT gate, const float* HWY_RESTRICT up,
                                   const float* HWY_RESTRICT dy, size_t n, float* HWY_RESTRICT d_gate,
                                   float* HWY_RESTRICT d_up) {
  GeluTanhGradRow(gate, dy, n, d_gate);
  GeluTanhRow(gate, n, d_up);
  for (size_t j = 0; j < n; ++j) {
    d_gate[j] *= up[j];
    d_up[j] *= dy[j];
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#endif  // ATTNLAB_SRC_OPS_ACTIVATION_INL_H_ toggle
