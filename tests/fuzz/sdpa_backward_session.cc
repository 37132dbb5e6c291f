// The SDPA backward session (after most valid SDPA calls): ScaledDotProductAttentionBackward on the same
// arguments against the model, shapes, determinism and a float64 reference of the gradients (all options: the
// keys a row sees, softcap's chain factor 1 - tanh²(s / c), K/V gradients summed over a grouped-query group and
// split into past and new keys); with enable_gqa also the sum over the group of the same call on repeated K/V heads.
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
#include "tests/fuzz/sdpa_options.h"
#include "tests/fuzz/session.h"

namespace attnlab_fuzz {

namespace {

bool Finite(const float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) return false;
  }
  return true;
}

// Reference gradients with abs-value bounds: per query batch row (grad_query) and per K/V batch row over the
// Lkt = Lpast + Lk keys (grad_key / grad_value; past keys first).
struct RefGrads {
  std::vector<double> gq, gq_bound, gk, gk_bound, gv, gv_bound;
  std::vector<char> row_ok, kv_ok;  // compared: batch row b / K/V batch row (every query row of its group ok)
  std::vector<double> row_rel, kv_rel;
};

}  // namespace

void Session::RunSdpaBackward(const SdpaCase& c, const SdpaGeom& geo, const Shape& out_shape) {
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
  const attnlab::SdpaOptions oo = c.Options();
  attnlab::SdpaGradients grads;
  if (!Invoke("ScaledDotProductAttentionBackward", valid, [&] {
        grads = attnlab::ScaledDotProductAttentionBackward(c.q.View(), c.k.View(), c.v.View(), g.View(), oo);
      })) {
    return;
  }
  auto same_shape = [](const attnlab::Tensor& t, const TensorBuf& like, bool wanted) {
    return wanted ? t.shape == like.shape && t.data.size() == like.n() : t.shape.empty() && t.data.empty();
  };
  if (!same_shape(grads.grad_query, c.q, true) || !same_shape(grads.grad_key, c.k, true) ||
      !same_shape(grads.grad_value, c.v, true) || !same_shape(grads.grad_past_key, c.past_key, c.key_past) ||
      !same_shape(grads.grad_past_value, c.past_value, c.value_past)) {
    return Finding("backward: gradient shapes differ from query/key/value (and past_key/past_value)");
  }
  {
    const attnlab::SdpaGradients again =
        attnlab::ScaledDotProductAttentionBackward(c.q.View(), c.k.View(), c.v.View(), g.View(), oo);
    if (!BitsEqual(again.grad_query.data, grads.grad_query.data) ||
        !BitsEqual(again.grad_key.data, grads.grad_key.data) ||
        !BitsEqual(again.grad_value.data, grads.grad_value.data) ||
        !BitsEqual(again.grad_past_key.data, grads.grad_past_key.data) ||
        !BitsEqual(again.grad_past_value.data, grads.grad_past_value.data)) {
      return Finding("backward: a repeated call is not bit-identical");
    }
  }
  const size_t lq = geo.lq, lk = geo.lkt, dk = geo.dk, dv = geo.dv;
  const double scale = geo.scale, cap = c.o.softcap > 0 ? c.o.softcap : 0.0;
  const size_t nkv = static_cast<size_t>(ModelNumel(Shape(c.k.shape.begin(), c.k.shape.end() - 2)).n);
  RefGrads ref;
  ref.gq.assign(geo.nbatch * lq * dk, 0.0);
  ref.gq_bound = ref.gq;
  ref.gk.assign(nkv * lk * dk, 0.0);
  ref.gk_bound = ref.gk;
  ref.gv.assign(nkv * lk * dv, 0.0);
  ref.gv_bound = ref.gv;
  ref.row_ok.assign(geo.nbatch, 0);
  ref.row_rel.assign(geo.nbatch, 0.0);
  ref.kv_ok.assign(nkv, 1);
  ref.kv_rel.assign(nkv, 0.0);
  for (size_t b = 0; b < geo.nbatch; ++b) {
    const size_t kb = geo.KvIndex(b);
    const float* Q = c.q.data.get() + b * lq * dk;
    const float* G = g.data.get() + b * lq * dv;
    bool ok = Finite(Q, lq * dk) && Finite(G, lq * dv);
    for (size_t j = 0; j < lk && ok; ++j) ok = Finite(geo.Key(c, b, j), dk) && Finite(geo.Value(c, b, j), dv);
    std::vector<double> P(lq * lk, 0.0), dS(lq * lk, 0.0), mdS(lq * lk, 0.0);
    double delta = 0;
    for (size_t i = 0; i < lq && ok; ++i) {
      const RowInput in = SdpaRow(c, geo, b, i);
      for (size_t j = 0; j < lk; ++j) ok = ok && !(in.visible[j] && (std::isnan(in.m[j]) || in.m[j] == kInfD));
      const RowRef rr = AttendRow(in);
      ok = ok && rr.tame_visible;
      delta = std::max(delta, rr.delta);
      // dP_ij = Σ_d dO_id V_jd; dZ_ij = P_ij (dP_ij - Σ_j P_ij dP_ij); dS_ij = dZ_ij (1 - tanh²(s_ij / c)).
      std::vector<double> dP(lk, 0.0), mdP(lk, 0.0);
      double dot = 0, mdot = 0;
      for (size_t j = 0; j < lk; ++j) {
        P[i * lk + j] = rr.w[j];
        const float* V = geo.Value(c, b, j);
        for (size_t d = 0; d < dv; ++d) {
          dP[j] += static_cast<double>(G[i * dv + d]) * V[d];
          mdP[j] += std::fabs(static_cast<double>(G[i * dv + d]) * V[d]);
        }
        dot += rr.w[j] * dP[j];
        mdot += rr.w[j] * mdP[j];
      }
      for (size_t j = 0; j < lk; ++j) {
        const double t = cap > 0 ? std::tanh(scale * in.dot[j] / cap) : 0.0;
        dS[i * lk + j] = rr.w[j] * (dP[j] - dot) * (1 - t * t);
        mdS[i * lk + j] = (rr.w[j] + 1e-6) * (mdP[j] + mdot);
        ok = ok && mdP[j] <= kTame && mdS[i * lk + j] <= kTame;  // finite inputs can still overflow
      }
    }
    ok = ok && delta <= 1e-3;
    const double rel = 1e-4 + 8 * delta + kEps * static_cast<double>(lq + lk + dk + dv + 8 + geo.group);
    ref.row_ok[b] = ok;
    ref.row_rel[b] = rel;
    ref.kv_ok[kb] = ref.kv_ok[kb] && ok;
    ref.kv_rel[kb] = std::max(ref.kv_rel[kb], rel);
    if (!ok) continue;
    for (size_t i = 0; i < lq; ++i) {
      for (size_t j = 0; j < lk; ++j) {
        const double ds = dS[i * lk + j], mds = mdS[i * lk + j], p = P[i * lk + j];
        const float *K = geo.Key(c, b, j), *V = geo.Value(c, b, j);
        (void)V;
        for (size_t x = 0; x < dk; ++x) {
          ref.gq[(b * lq + i) * dk + x] += scale * ds * K[x];
          ref.gq_bound[(b * lq + i) * dk + x] += std::fabs(scale) * mds * std::fabs(static_cast<double>(K[x]));
          ref.gk[(kb * lk + j) * dk + x] += scale * ds * Q[i * dk + x];
          ref.gk_bound[(kb * lk + j) * dk + x] +=
              std::fabs(scale) * mds * std::fabs(static_cast<double>(Q[i * dk + x]));
        }
        for (size_t d = 0; d < dv; ++d) {
          ref.gv[(kb * lk + j) * dv + d] += p * G[i * dv + d];
          ref.gv_bound[(kb * lk + j) * dv + d] += (p + 1e-6) * std::fabs(static_cast<double>(G[i * dv + d]));
        }
      }
    }
  }
  // got(row, col) of a gradient against the reference; "" or the finding.
  auto compare = [&](const char* what, size_t item, double rel, double got, double want, double bound) -> bool {
    if (!(bound * std::max(1.0, 1.0 / std::fabs(scale)) <= kTame)) return true;  // float32 may overflow here
    if (std::isfinite(got) && std::fabs(got - want) <= rel * bound + 1e-30) return true;
    std::ostringstream os;
    os << "backward: batch row " << item << ": " << what << " = " << got << ", reference " << want << " (tolerance "
       << rel * bound << ")";
    Finding(os.str());
    return false;
  };
  // K/V gradient j of K/V batch row kb: past rows first.
  auto kv_grad = [&](const attnlab::SdpaGradients& gr, bool key, size_t kb, size_t j, size_t x) -> double {
    const size_t w = key ? dk : dv;
    if (j < geo.lpast) return (key ? gr.grad_past_key : gr.grad_past_value).data[(kb * geo.lpast + j) * w + x];
    return (key ? gr.grad_key : gr.grad_value).data[(kb * geo.lk + j - geo.lpast) * w + x];
  };
  for (size_t b = 0; b < geo.nbatch; ++b) {
    if (!ref.row_ok[b]) continue;
    for (size_t x = 0; x < lq * dk; ++x) {
      const size_t at = b * lq * dk + x;
      if (!compare("grad_query", b, ref.row_rel[b], grads.grad_query.data[at], ref.gq[at], ref.gq_bound[at])) return;
    }
  }
  for (size_t kb = 0; kb < nkv; ++kb) {
    if (!ref.kv_ok[kb]) continue;
    for (size_t j = 0; j < lk; ++j) {
      for (size_t x = 0; x < dk; ++x) {
        const size_t at = (kb * lk + j) * dk + x;
        if (!compare(j < geo.lpast ? "grad_past_key" : "grad_key", kb, ref.kv_rel[kb], kv_grad(grads, true, kb, j, x),
                     ref.gk[at], ref.gk_bound[at]))
          return;
      }
      for (size_t d = 0; d < dv; ++d) {
        const size_t at = (kb * lk + j) * dv + d;
        if (!compare(j < geo.lpast ? "grad_past_value" : "grad_value", kb, ref.kv_rel[kb],
                     kv_grad(grads, false, kb, j, d), ref.gv[at], ref.gv_bound[at]))
          return;
      }
    }
  }
  // Grouped-query attention: the K/V gradients are the sums over each group of those of the repeated heads.
  if (geo.rank < 3 || geo.hkv == geo.hq || geo.hkv == 0 || geo.nbatch == 0) return;
  const SdpaCase e = RepeatKvHeads(c, geo);
  attnlab::SdpaOptions eo = e.Options();
  eo.attn_mask = c.mask.View();
  const attnlab::SdpaGradients rg =
      attnlab::ScaledDotProductAttentionBackward(c.q.View(), e.k.View(), e.v.View(), g.View(), eo);
  std::vector<double> sk(nkv * lk * dk, 0.0), sv(nkv * lk * dv, 0.0);
  for (size_t b = 0; b < geo.nbatch; ++b) {
    const size_t kb = geo.KvIndex(b);
    for (size_t j = 0; j < lk; ++j) {
      for (size_t x = 0; x < dk; ++x) sk[(kb * lk + j) * dk + x] += kv_grad(rg, true, b, j, x);
      for (size_t d = 0; d < dv; ++d) sv[(kb * lk + j) * dv + d] += kv_grad(rg, false, b, j, d);
    }
  }
  for (size_t kb = 0; kb < nkv; ++kb) {
    if (!ref.kv_ok[kb]) continue;
    for (size_t j = 0; j < lk; ++j) {
      for (size_t x = 0; x < dk; ++x) {
        const size_t at = (kb * lk + j) * dk + x;
        if (!compare("grad_key (enable_gqa) vs the group sum of repeated heads", kb, ref.kv_rel[kb],
                     kv_grad(grads, true, kb, j, x), sk[at], ref.gk_bound[at]))
          return;
      }
      for (size_t d = 0; d < dv; ++d) {
        const size_t at = (kb * lk + j) * dv + d;
        if (!compare("grad_value (enable_gqa) vs the group sum of repeated heads", kb, ref.kv_rel[kb],
                     kv_grad(grads, false, kb, j, d), sv[at], ref.gv_bound[at]))
          return;
      }
    }
  }
  if (!BitsEqual(rg.grad_query.data, grads.grad_query.data)) {
    Finding("backward: enable_gqa grad_query differs from the same call on K/V heads repeated explicitly");
  }
}

}  // namespace attnlab_fuzz
