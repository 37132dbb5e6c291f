// Checks of one valid ScaledDotProductAttention call (sdpa_session.cc runs them): every clean row against the
// float64 oracle and the NaN policy; present_key / present_value = past ‖ new; each scores stage against the
// reference and the stages against each other (softcapped = c·tanh(scaled / c), masked = softcapped + mask with
// -inf where masked, weights = softmax(masked)); grouped-query attention = the same call on explicitly repeated
// K/V heads, bit for bit.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "attnlab/attention.h"
#include "tests/fuzz/oracle.h"
#include "tests/fuzz/sdpa_options.h"
#include "tests/fuzz/session.h"

namespace attnlab_fuzz {

RowInput SdpaRow(const SdpaCase& c, const SdpaGeom& g, size_t b, size_t i) {
  RowInput in(g.lkt, g.scale, static_cast<double>(g.dk) + 4);
  in.softcap = c.o.softcap > 0 ? c.o.softcap : 0.0;
  const float* qr = c.q.data.get() + (b * g.lq + i) * g.dk;
  for (size_t j = 0; j < g.lkt; ++j) {
    in.visible[j] = g.Visible(b, i, j);
    const float* kr = g.Key(c, b, j);
    double dot = 0, ad = 0;
    for (size_t d = 0; d < g.dk; ++d) {
      const double x = qr[d], y = kr[d];
      dot += x * y;
      ad += std::fabs(x * y);
    }
    in.dot[j] = dot;
    in.absdot[j] = std::isnan(ad) ? kInfD : ad;
    if (c.mask.kind != Mask::Kind::kNone) in.m[j] = c.mask.Additive(g.MaskIndex(b, i, j), /*masked_when=*/false);
  }
  return in;
}

SdpaCase RepeatKvHeads(const SdpaCase& c, const SdpaGeom& g) {
  SdpaCase e;
  e.o = c.o;
  e.o.enable_gqa = false;
  e.mask.kind = Mask::Kind::kNone;
  e.kv_given = c.kv_given;
  e.kv_null = c.kv_null;
  e.kv_count = c.kv_count;
  e.kv_lengths = c.kv_lengths;
  e.key_past = c.key_past;
  e.value_past = c.value_past;
  auto repeat = [&](const TensorBuf& src, size_t rows, size_t cols, TensorBuf& dst) {
    dst.shape = src.shape;
    dst.shape[g.rank - 3] = static_cast<int64_t>(g.hq);
    dst.numel = ModelNumel(dst.shape);
    dst.allocated = true;
    dst.data.reset(new float[std::max<uint64_t>(dst.numel.n, 1)]);
    for (size_t b = 0; b < g.nbatch; ++b) {
      std::memcpy(dst.data.get() + b * rows * cols, src.data.get() + g.KvIndex(b) * rows * cols,
                  rows * cols * sizeof(float));
    }
  };
  repeat(c.k, g.lk, g.dk, e.k);
  repeat(c.v, g.lk, g.dv, e.v);
  if (c.key_past) repeat(c.past_key, g.lpast, g.dk, e.past_key);
  if (c.value_past) repeat(c.past_value, g.lpast, g.dv, e.past_value);
  return e;
}

void Session::CheckSdpaPresent(const SdpaCase& c, const SdpaGeom& g, const attnlab::AttentionResult& res) {
  if (!c.key_past) return;
  const size_t nkv = static_cast<size_t>(ModelNumel(Shape(c.k.shape.begin(), c.k.shape.end() - 2)).n);
  for (const bool is_key : {true, false}) {
    const size_t w = is_key ? g.dk : g.dv;
    const TensorBuf &past = is_key ? c.past_key : c.past_value, &now = is_key ? c.k : c.v;
    const attnlab::Tensor& got = is_key ? res.present_key : res.present_value;
    for (size_t kb = 0; kb < nkv; ++kb) {
      for (size_t j = 0; j < g.lkt; ++j) {
        const float* want =
            j < g.lpast ? past.data.get() + (kb * g.lpast + j) * w : now.data.get() + (kb * g.lk + j - g.lpast) * w;
        if (w > 0 && std::memcmp(got.data.data() + (kb * g.lkt + j) * w, want, w * sizeof(float)) != 0) {
          return Finding(std::string(is_key ? "present_key" : "present_value") + " row " + std::to_string(j) +
                         " of K/V batch row " + std::to_string(kb) + " is not past ‖ new (bit for bit)");
        }
      }
    }
  }
}

void Session::CheckSdpaRows(const SdpaCase& c, const SdpaGeom& g, const attnlab::AttentionResult& res) {
  const size_t lq = g.lq, lk = g.lkt, dk = g.dk, dv = g.dv;
  for (size_t b = 0; b < g.nbatch && !Failed(); ++b) {
    bool kv_all_finite = true;
    std::vector<char> k_fin(lk, 1), k_nan(lk, 0), v_fin(lk, 1);
    std::vector<double> vabs_all(dv, 0.0);
    for (size_t j = 0; j < lk; ++j) {
      const float *kr = g.Key(c, b, j), *vr = g.Value(c, b, j);
      for (size_t d = 0; d < dk; ++d) {
        if (!std::isfinite(kr[d])) k_fin[j] = 0;
        if (std::isnan(kr[d])) k_nan[j] = 1;
      }
      for (size_t d = 0; d < dv; ++d) {
        if (!std::isfinite(vr[d])) v_fin[j] = 0;
        vabs_all[d] += std::fabs(static_cast<double>(vr[d]));
      }
      kv_all_finite = kv_all_finite && k_fin[j] && v_fin[j];
    }
    for (size_t i = 0; i < lq && !Failed(); ++i) {
      const size_t row = b * lq + i;
      const float* qr = c.q.data.get() + row * dk;
      bool q_fin = true, q_nan = false;
      for (size_t d = 0; d < dk; ++d) {
        q_fin = q_fin && std::isfinite(qr[d]);
        q_nan = q_nan || std::isnan(qr[d]);
      }
      const RowInput in = SdpaRow(c, g, b, i);
      bool mask_nan = false, mask_posinf = false;
      for (size_t j = 0; j < lk; ++j) {
        if (!in.visible[j]) continue;
        mask_nan = mask_nan || std::isnan(in.m[j]);
        mask_posinf = mask_posinf || in.m[j] == kInfD;
      }
      const RowRef ref = AttendRow(in);
      const bool mask_ok = !mask_nan && !mask_posinf;
      bool unmasked_kv_finite = true, unmasked_k_finite = true;
      std::vector<double> vabs(dv, 0.0), vweighted(dv, 0.0);
      std::vector<char> v_nan_col(dv, 0);
      const double tol_w = 1e-5 + 4 * ref.delta;
      for (size_t j = 0; j < lk; ++j) {
        if (!ref.unmasked[j]) continue;
        unmasked_kv_finite = unmasked_kv_finite && k_fin[j] && v_fin[j];
        unmasked_k_finite = unmasked_k_finite && k_fin[j];
        const float* vr = g.Value(c, b, j);
        for (size_t d = 0; d < dv; ++d) {
          vabs[d] += std::fabs(static_cast<double>(vr[d]));
          vweighted[d] += (ref.w[j] + tol_w) * std::fabs(static_cast<double>(vr[d]));
          if (std::isnan(vr[d])) v_nan_col[d] = 1;
        }
      }
      bool vtame_all = true, vtame = true;
      for (size_t d = 0; d < dv; ++d) {
        vtame_all = vtame_all && vabs_all[d] <= kTame;
        vtame = vtame && vabs[d] <= kTame;
      }
      const bool lenient_clean = q_fin && kv_all_finite && mask_ok && ref.tame_visible && vtame_all;
      const bool strict_clean = q_fin && unmasked_kv_finite && mask_ok && ref.tame_unmasked && vtame;
      const float* wrow = c.o.need_weights ? res.weights.data.data() + row * lk : nullptr;
      const float* orow = res.output.data.data() + row * dv;
      const std::string where = "SDPA batch row " + std::to_string(b) + ", query row " + std::to_string(i) + ": ";
      if (lenient_clean || (opts_.strict_nan && strict_clean)) {
        const bool compare = ref.delta <= 1e-2;
        if (wrow) {
          const std::string e = CheckWeightsRow(wrow, lk, ref, tol_w, compare);
          if (!e.empty()) return Finding(where + e);
        }
        // Whatever the logits' rounding: an attended row's output is a convex combination of the value rows it
        // attends, so each column lies between their least and greatest value.
        if (!ref.fully_masked && opts_.check_range) {
          for (size_t d = 0; d < dv; ++d) {
            double lo = kInfD, hi = -kInfD, amax = 0;
            for (size_t j = 0; j < lk; ++j) {
              if (!ref.unmasked[j]) continue;
              const double x = g.Value(c, b, j)[d];
              lo = std::min(lo, x);
              hi = std::max(hi, x);
              amax = std::max(amax, std::fabs(x));
            }
            const double slack = kEps * (static_cast<double>(lk) + 4) * amax + 1e-30;
            if (!(orow[d] >= lo - slack && orow[d] <= hi + slack)) {
              std::ostringstream os;
              os << where << "output[" << d << "] = " << FloatStr(orow[d]) << " outside [" << lo << ", " << hi
                 << "], the range of the value rows it attends";
              return Finding(os.str());
            }
          }
        }
        for (size_t d = 0; d < dv; ++d) {
          double ref_o = 0;
          for (size_t j = 0; j < lk; ++j) {
            if (ref.unmasked[j]) ref_o += ref.w[j] * g.Value(c, b, j)[d];
          }
          const double x = orow[d];
          if (ref.fully_masked ? x != 0.0 : !std::isfinite(x)) {
            return Finding(where + "output[" + std::to_string(d) + "] = " + FloatStr(orow[d]) +
                           (ref.fully_masked ? ", expected 0 (fully masked row)" : ", expected a finite value"));
          }
          const double tol_o = (2e-5 + 4 * ref.delta + kEps * (static_cast<double>(lk) + 4)) * vweighted[d] + 1e-30;
          if (compare && !(std::fabs(x - ref_o) <= tol_o)) {
            std::ostringstream os;
            os << where << "output[" << d << "] = " << FloatStr(orow[d]) << ", reference " << ref_o << " (tolerance "
               << tol_o << ")";
            return Finding(os.str());
          }
        }
      }
      // A NaN in a visible value row reaches the output column (IEEE), whatever the mode.
      if (q_fin && mask_ok && unmasked_k_finite && ref.tame_unmasked && !ref.fully_masked) {
        for (size_t d = 0; d < dv; ++d) {
          if (v_nan_col[d] && !std::isnan(orow[d])) {
            return Finding(where + "value holds NaN in column " + std::to_string(d) +
                           " of a key this row attends, but output[" + std::to_string(d) + "] = " + FloatStr(orow[d]));
          }
        }
      }
      if (opts_.strict_nan) {
        bool nan_src = q_nan || mask_nan;
        for (size_t j = 0; j < lk; ++j) nan_src = nan_src || (ref.unmasked[j] && k_nan[j]);
        const bool posinf_src = mask_posinf;
        // A row that attends no key (all masked, or Lk = 0) is 0 whatever its query holds.
        if ((nan_src || posinf_src) && !ref.fully_masked) {
          const char* why = q_nan                    ? "query row holds NaN"
                            : mask_nan               ? "mask row holds NaN"
                            : posinf_src && !nan_src ? "mask row holds +inf"
                                                     : "an attended key holds NaN";
          if (wrow && !AllNaN(wrow, lk)) {
            return Finding(where + why + ", but the weight row is not all NaN (strict NaN policy)");
          }
          if (!AllNaN(orow, dv))
            return Finding(where + why + ", but the output row is not all NaN (strict NaN policy)");
        }
      }
    }
  }
}

void Session::CheckSdpaScores(const SdpaCase& c, const SdpaGeom& g, const attnlab::AttentionResult& res) {
  using attnlab::ScoresStage;
  if (c.o.return_scores == ScoresStage::kNone) return;
  // Every stage (and the weights) from one call each.
  attnlab::AttentionResult st[3];
  for (int s = 0; s < 3; ++s) {
    attnlab::SdpaOptions oo = c.Options();
    oo.return_scores = static_cast<ScoresStage>(s + 1);
    oo.need_weights = true;
    st[s] = attnlab::ScaledDotProductAttention(c.q.View(), c.k.View(), c.v.View(), oo);
  }
  const int mine = static_cast<int>(c.o.return_scores) - 1;
  if (c.o.need_weights && !BitsEqual(st[mine].scores.data, res.scores.data)) {
    return Finding("scores of the same call with another return_scores differ");
  }
  const double cap = c.o.softcap > 0 ? c.o.softcap : 0.0;
  const size_t lk = g.lkt;
  for (size_t b = 0; b < g.nbatch; ++b) {
    for (size_t i = 0; i < g.lq; ++i) {
      const size_t row = b * g.lq + i;
      const RowInput in = SdpaRow(c, g, b, i);
      const float* qr = c.q.data.get() + row * g.dk;
      bool q_fin = true;
      for (size_t d = 0; d < g.dk; ++d) q_fin = q_fin && std::isfinite(qr[d]);
      const float *s1 = st[0].scores.data.data() + row * lk, *s2 = st[1].scores.data.data() + row * lk,
                  *s3 = st[2].scores.data.data() + row * lk, *w = st[2].weights.data.data() + row * lk;
      const std::string where =
          "scores, batch row " + std::to_string(b) + ", query row " + std::to_string(i) + ", key ";
      bool all_unmasked_finite = true, any_unmasked = false;
      double zmax = -kInfD, zabs = 0;
      for (size_t j = 0; j < lk; ++j) {
        std::ostringstream os;
        os << where << j << ": ";
        const double m = in.m[j];
        const bool hidden = !in.visible[j] || m == -kInfD;
        // Reference of the scaled and softcapped stages where float32 cannot overflow.
        bool k_fin = true;
        for (size_t d = 0; d < g.dk; ++d) k_fin = k_fin && std::isfinite(g.Key(c, b, j)[d]);
        const double as = std::fabs(g.scale);
        if (q_fin && k_fin && in.absdot[j] * std::max(1.0, as) <= kTame) {
          const double ref1 = g.scale * in.dot[j], tol1 = kEps * in.coef * as * in.absdot[j] + 1e-30;
          if (!(std::fabs(s1[j] - ref1) <= tol1)) {
            os << "scaled = " << FloatStr(s1[j]) << ", reference " << ref1 << " (tolerance " << tol1 << ")";
            return Finding(os.str());
          }
          const double ref2 = Softcap(ref1, cap), tol2 = tol1 + SoftcapError(cap);
          if (!(std::fabs(s2[j] - ref2) <= tol2)) {
            os << "softcapped = " << FloatStr(s2[j]) << ", reference " << ref2 << " (tolerance " << tol2 << ")";
            return Finding(os.str());
          }
        }
        // softcapped = c·tanh(scaled / c) of the returned scaled value (= scaled without a softcap).
        if (std::isfinite(s1[j])) {
          const double want = Softcap(s1[j], cap), tol = SoftcapError(cap) + 1e-30;
          if (cap > 0 ? !(std::fabs(s2[j] - want) <= tol) : std::memcmp(&s1[j], &s2[j], sizeof(float)) != 0) {
            os << "softcapped = " << FloatStr(s2[j]) << ", but c·tanh(scaled / c) = " << want << " for scaled "
               << FloatStr(s1[j]);
            return Finding(os.str());
          }
        }
        // masked: -inf where masked (whatever the logit holds), else softcapped + mask.
        if (hidden) {
          if (s3[j] != -kInfD) {
            os << "masked = " << FloatStr(s3[j]) << " for a masked key, expected -inf";
            return Finding(os.str());
          }
          continue;
        }
        any_unmasked = true;
        if (std::isfinite(s2[j]) && std::isfinite(m)) {
          const double want = static_cast<double>(s2[j]) + m, tol = kEps * (std::fabs(s2[j]) + std::fabs(m)) + 1e-30;
          if (!(std::fabs(s3[j] - want) <= tol)) {
            os << "masked = " << FloatStr(s3[j]) << ", but softcapped + mask = " << want;
            return Finding(os.str());
          }
        } else if (std::isnan(m) && !std::isnan(s3[j])) {
          os << "masked = " << FloatStr(s3[j]) << " where the mask holds NaN";
          return Finding(os.str());
        }
        all_unmasked_finite = all_unmasked_finite && std::isfinite(s3[j]);
        if (std::isfinite(s3[j])) {
          zmax = std::max(zmax, static_cast<double>(s3[j]));
          zabs = std::max(zabs, std::fabs(static_cast<double>(s3[j])));
        }
      }
      // weights = softmax(masked).
      if (!any_unmasked || !all_unmasked_finite) continue;
      double sum = 0;
      for (size_t j = 0; j < lk; ++j) {
        if (s3[j] != -kInfD) sum += std::exp(s3[j] - zmax);
      }
      // The weights' logits may round differently from the returned scores: the oracle's bound on that (δ).
      const double tol = 1e-5 + 4 * (AttendRow(in).delta + kEps * zabs);
      for (size_t j = 0; j < lk; ++j) {
        const double want = s3[j] == -kInfD ? 0.0 : std::exp(s3[j] - zmax) / sum;
        if (!(std::fabs(w[j] - want) <= tol)) {
          std::ostringstream os;
          os << where << j << ": weight " << FloatStr(w[j]) << ", but softmax(masked scores) = " << want;
          return Finding(os.str());
        }
      }
    }
  }
}

void Session::CheckSdpaGqa(const SdpaCase& c, const SdpaGeom& g, const attnlab::AttentionResult& res) {
  if (g.rank < 3 || g.hkv == g.hq || g.hkv == 0 || g.nbatch == 0) return;
  SdpaCase e = RepeatKvHeads(c, g);
  attnlab::SdpaOptions oo = e.Options();
  oo.attn_mask = c.mask.View();
  const attnlab::AttentionResult r = attnlab::ScaledDotProductAttention(c.q.View(), e.k.View(), e.v.View(), oo);
  if (!BitsEqual(r.output.data, res.output.data) || !BitsEqual(r.weights.data, res.weights.data) ||
      !BitsEqual(r.scores.data, res.scores.data)) {
    return Finding("enable_gqa: the result differs from the same call on K/V heads repeated explicitly");
  }
}

}  // namespace attnlab_fuzz
