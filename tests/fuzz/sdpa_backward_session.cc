// The SDPA backward session (after most valid SDPA calls): ScaledDotProductAttentionBackward on the same
// arguments against the model, shapes, determinism and a float64 reference of the gradients.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/attention.h"
#include "tests/fuzz/oracle.h"
#include "tests/fuzz/session.h"

namespace attnlab_fuzz {

// ScaledDotProductAttentionBackward on the same arguments (3/4 of valid calls): the model (grad_output must have
// the output's shape), shapes, determinism, and on batch items whose every input is finite and tame: finite
// gradients that agree with a float64 reference (tolerance from an abs-value bound of every product).
void Session::RunSdpaBackward(const TensorBuf& q, const TensorBuf& k, const TensorBuf& v, const MaskBuf& mask,
                              const attnlab::SdpaOptions& o, const Shape& out_shape, size_t nbatch) {
  const uint8_t gb = r_.U8();
  if (gb % 4 == 3) return;
  TensorBuf g;
  g.shape = out_shape;
  if (gb & 4) {
    Shape* s[1] = {&g.shape};
    PerturbShapes(r_, s, 1);
    if (!g.shape.empty() && (gb & 8)) g.shape[r_.U8() % g.shape.size()] = Dim(r_);
  }
  g.null_ptr = (gb & 0x30) == 0x30;
  g.Fill(r_);
  case_ += "; backward with " + DescribeTensor("grad_output", g);
  const bool valid = g.shape == out_shape && g.ModelValid();
  if (valid && !g.allocated) return;  // a legitimately big grad_output: the fuzzer does not allocate it
  attnlab::SdpaOptions oo = o;
  oo.attn_mask = mask.View();
  attnlab::SdpaGradients grads;
  if (!Invoke("ScaledDotProductAttentionBackward", valid, [&] {
        grads = attnlab::ScaledDotProductAttentionBackward(q.View(), k.View(), v.View(), g.View(), oo);
      })) {
    return;
  }
  if (grads.grad_query.shape != q.shape || grads.grad_key.shape != k.shape || grads.grad_value.shape != v.shape ||
      grads.grad_query.data.size() != q.n() || grads.grad_key.data.size() != k.n() ||
      grads.grad_value.data.size() != v.n()) {
    return Finding("backward: gradient shapes differ from query/key/value");
  }
  {
    const attnlab::SdpaGradients again =
        attnlab::ScaledDotProductAttentionBackward(q.View(), k.View(), v.View(), g.View(), oo);
    if (!BitsEqual(again.grad_query.data, grads.grad_query.data) ||
        !BitsEqual(again.grad_key.data, grads.grad_key.data) ||
        !BitsEqual(again.grad_value.data, grads.grad_value.data)) {
      return Finding("backward: a repeated call is not bit-identical");
    }
  }
  const size_t rank = q.shape.size();
  const size_t lq = static_cast<size_t>(q.shape[rank - 2]), dk = static_cast<size_t>(q.shape[rank - 1]);
  const size_t lk = static_cast<size_t>(k.shape[rank - 2]), dv = static_cast<size_t>(v.shape[rank - 1]);
  const double scale = o.has_scale ? o.scale : dk > 0 ? 1.0f / std::sqrt(static_cast<float>(dk)) : 1.0f;
  const bool broadcast = mask.kind != Mask::Kind::kNone && mask.shape.size() == 2 && mask.shape.size() != rank;
  auto finite = [](const float* x, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      if (!std::isfinite(x[i])) return false;
    }
    return true;
  };
  for (size_t b = 0; b < nbatch; ++b) {
    const float* Q = q.data.get() + b * lq * dk;
    const float* K = k.data.get() + b * lk * dk;
    const float* V = v.data.get() + b * lk * dv;
    const float* G = g.data.get() + b * lq * dv;
    if (!finite(Q, lq * dk) || !finite(K, lk * dk) || !finite(V, lk * dv) || !finite(G, lq * dv)) continue;
    std::vector<double> P(lq * lk, 0.0), dS(lq * lk, 0.0), mdS(lq * lk, 0.0);
    double delta = 0;
    bool tame = true;
    for (size_t i = 0; i < lq && tame; ++i) {
      RowInput in(lk, scale, static_cast<double>(dk) + 4);
      for (size_t j = 0; j < lk; ++j) {
        in.visible[j] = !o.is_causal || j <= i;
        for (size_t d = 0; d < dk; ++d) {
          in.dot[j] += static_cast<double>(Q[i * dk + d]) * K[j * dk + d];
          in.absdot[j] += std::fabs(static_cast<double>(Q[i * dk + d]) * K[j * dk + d]);
        }
        if (mask.kind != Mask::Kind::kNone) {
          in.m[j] = mask.Additive(((broadcast ? 0 : b) * lq + i) * lk + j, /*masked_when=*/false);
          if (in.visible[j] && (std::isnan(in.m[j]) || in.m[j] == kInfD)) tame = false;
        }
      }
      const RowRef ref = AttendRow(in);
      tame = tame && ref.tame_visible;
      delta = std::max(delta, ref.delta);
      // dP_ij = Σ_d dO_id V_jd; dS_ij = P_ij (dP_ij - Σ_j P_ij dP_ij), with abs bounds.
      std::vector<double> dP(lk, 0.0), mdP(lk, 0.0);
      double dot = 0, mdot = 0;
      for (size_t j = 0; j < lk; ++j) {
        P[i * lk + j] = ref.w[j];
        for (size_t d = 0; d < dv; ++d) {
          dP[j] += static_cast<double>(G[i * dv + d]) * V[j * dv + d];
          mdP[j] += std::fabs(static_cast<double>(G[i * dv + d]) * V[j * dv + d]);
        }
        dot += ref.w[j] * dP[j];
        mdot += ref.w[j] * mdP[j];
      }
      for (size_t j = 0; j < lk; ++j) {
        dS[i * lk + j] = ref.w[j] * (dP[j] - dot);
        mdS[i * lk + j] = (ref.w[j] + 1e-6) * (mdP[j] + mdot);
        tame = tame && mdP[j] <= kTame && mdS[i * lk + j] <= kTame;  // finite inputs can still overflow
      }
    }
    if (!tame || delta > 1e-3) continue;
    const double rel = 1e-4 + 8 * delta + kEps * static_cast<double>(lq + lk + dk + dv + 8);
    auto check = [&](const char* what, const std::vector<float>& got, size_t base, size_t rows, size_t cols,
                     auto&& value_and_bound) -> bool {
      for (size_t r = 0; r < rows; ++r) {
        for (size_t c = 0; c < cols; ++c) {
          const auto [ref, bound] = value_and_bound(r, c);
          if (!(bound * std::max(1.0, 1.0 / std::fabs(scale)) <= kTame)) continue;  // float32 may overflow here
          const float x = got[base + r * cols + c];
          if (!std::isfinite(x) || !(std::fabs(x - ref) <= rel * bound + 1e-30)) {
            std::ostringstream os;
            os << "backward: batch item " << b << ": " << what << "[" << r << "][" << c << "] = " << FloatStr(x)
               << ", reference " << ref << " (tolerance " << rel * bound << ")";
            Finding(os.str());
            return false;
          }
        }
      }
      return true;
    };
    const bool ok = check("grad_value", grads.grad_value.data, b * lk * dv, lk, dv,
                          [&](size_t j, size_t d) {
                            double acc = 0, m = 0;
                            for (size_t i = 0; i < lq; ++i) {
                              acc += P[i * lk + j] * G[i * dv + d];
                              m += (P[i * lk + j] + 1e-6) * std::fabs(static_cast<double>(G[i * dv + d]));
                            }
                            return std::pair<double, double>(acc, m);
                          }) &&
                    check("grad_query", grads.grad_query.data, b * lq * dk, lq, dk,
                          [&](size_t i, size_t c) {
                            double acc = 0, m = 0;
                            for (size_t j = 0; j < lk; ++j) {
                              acc += scale * dS[i * lk + j] * K[j * dk + c];
                              m += std::fabs(scale) * mdS[i * lk + j] * std::fabs(static_cast<double>(K[j * dk + c]));
                            }
                            return std::pair<double, double>(acc, m);
                          }) &&
                    check("grad_key", grads.grad_key.data, b * lk * dk, lk, dk, [&](size_t j, size_t c) {
                      double acc = 0, m = 0;
                      for (size_t i = 0; i < lq; ++i) {
                        acc += scale * dS[i * lk + j] * Q[i * dk + c];
                        m += std::fabs(scale) * mdS[i * lk + j] * std::fabs(static_cast<double>(Q[i * dk + c]));
                      }
                      return std::pair<double, double>(acc, m);
                    });
    if (!ok) return;
  }
}

}  // namespace attnlab_fuzz
