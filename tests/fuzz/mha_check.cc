// Checks of one MultiHeadAttention::Forward: every clean output token and weight row against a float64 reference
// built from the module's state dict, and the NaN policy per head.
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

Session::Params Session::ReadParams(const attnlab::MultiHeadAttention& mha) {
  const attnlab::MhaConfig& c = mha.config();
  const size_t e = static_cast<size_t>(c.embed_dim), kdim = static_cast<size_t>(c.kdim),
               vdim = static_cast<size_t>(c.vdim),
               ekv = e / static_cast<size_t>(c.num_heads) * static_cast<size_t>(c.num_kv_heads);
  const auto sd = mha.StateDict();
  Params p;
  auto get = [&](const char* name, size_t offset, size_t count) {
    std::vector<double> out(count, 0.0);
    const auto it = sd.find(name);
    if (it == sd.end()) return out;
    for (size_t i = 0; i < count; ++i) {
      out[i] = it->second.data[offset + i];
      p.finite = p.finite && std::isfinite(out[i]);
    }
    return out;
  };
  if (sd.count("in_proj_weight")) {
    p.wq = get("in_proj_weight", 0, e * e);
    p.wk = get("in_proj_weight", e * e, e * e);
    p.wv = get("in_proj_weight", 2 * e * e, e * e);
  } else {
    p.wq = get("q_proj_weight", 0, e * e);
    p.wk = get("k_proj_weight", 0, ekv * kdim);
    p.wv = get("v_proj_weight", 0, ekv * vdim);
  }
  p.bq = get("in_proj_bias", 0, e);
  p.bk = get("in_proj_bias", e, ekv);
  p.bv = get("in_proj_bias", e + ekv, ekv);
  p.bias_k = get("bias_k", 0, ekv);
  p.bias_v = get("bias_v", 0, ekv);
  p.wo = get("out_proj.weight", 0, e * e);
  p.bo = get("out_proj.bias", 0, e);
  return p;
}

void Session::CheckMhaRows(const attnlab::MultiHeadAttention& mha, const attnlab::MhaConfig& c, int64_t kdim_,
                           int64_t vdim_, const TensorBuf& q, const TensorBuf& k, const TensorBuf& v,
                           const MaskBuf& kpm, const MaskBuf& am, const attnlab::MhaForwardOptions& o,
                           const attnlab::AttentionResult& res, int64_t N_, int64_t L_, int64_t S_, bool batched) {
  const Params p = ReadParams(mha);
  const size_t e = static_cast<size_t>(c.embed_dim), H = static_cast<size_t>(c.num_heads), hd = e / H;
  const size_t kdim = static_cast<size_t>(kdim_), vdim = static_cast<size_t>(vdim_);
  const size_t N = static_cast<size_t>(N_), L = static_cast<size_t>(L_), S = static_cast<size_t>(S_);
  const size_t extra_k = c.add_bias_kv ? 1 : 0;
  const size_t s_all = S + extra_k + (c.add_zero_attn ? 1 : 0);
  const bool bf = c.batch_first || !batched;
  auto tok = [&](size_t b, size_t t, size_t len) { return bf ? b * len + t : t * N + b; };
  const double scale = 1.0f / std::sqrt(static_cast<float>(hd));
  // Projection of one token: value and abs bound; `finite` tracks non-finite inputs.
  // Grouped-query heads: head hh reads key/value features [kvh(hh) · hd, (kvh(hh) + 1) · hd) of Ekv.
  const size_t hkv = static_cast<size_t>(mha.config().num_kv_heads), group = H / hkv, ekv = hd * hkv;
  auto project = [&](const float* x, size_t in, const std::vector<double>& w, const std::vector<double>& bias,
                     std::vector<double>& out, std::vector<double>& aout) {
    const size_t outs = bias.size();
    out.assign(outs, 0.0);
    aout.assign(outs, 0.0);
    for (size_t oo = 0; oo < outs; ++oo) {
      double acc = bias[oo], a = std::fabs(bias[oo]);
      for (size_t i = 0; i < in; ++i) {
        acc += x[i] * w[oo * in + i];
        a += std::fabs(x[i] * w[oo * in + i]);
      }
      out[oo] = acc;
      aout[oo] = std::isnan(a) ? kInfD : a;
    }
  };
  auto row_finite = [](const float* x, size_t n, bool* has_nan) {
    bool fin = true;
    for (size_t i = 0; i < n; ++i) {
      fin = fin && std::isfinite(x[i]);
      if (has_nan && std::isnan(x[i])) *has_nan = true;
    }
    return fin;
  };
  const bool broadcast_am = am.kind != Mask::Kind::kNone && am.shape.size() == 2;
  for (size_t b = 0; b < N && !Failed(); ++b) {
    // Projected keys and values of item b (s_all rows), with abs bounds and finiteness of the source tokens.
    std::vector<std::vector<double>> kp(s_all), akp(s_all), vp(s_all), avp(s_all);
    std::vector<char> k_fin(s_all, 1), v_fin(s_all, 1), k_nan(s_all, 0), v_nan(s_all, 0);
    bool kv_all_finite = true;
    for (size_t j = 0; j < S; ++j) {
      const float* kt = k.data.get() + tok(b, j, S) * kdim;
      const float* vt = v.data.get() + tok(b, j, S) * vdim;
      bool kn = false, vn = false;
      k_fin[j] = row_finite(kt, kdim, &kn);
      v_fin[j] = row_finite(vt, vdim, &vn);
      k_nan[j] = kn;
      v_nan[j] = vn;
      kv_all_finite = kv_all_finite && k_fin[j] && v_fin[j];
      project(kt, kdim, p.wk, p.bk, kp[j], akp[j]);
      project(vt, vdim, p.wv, p.bv, vp[j], avp[j]);
    }
    for (size_t j = S; j < s_all; ++j) {
      const bool bias_row = j == S && c.add_bias_kv;
      kp[j].assign(ekv, 0.0);
      vp[j].assign(ekv, 0.0);
      if (bias_row) {
        kp[j] = p.bias_k;
        vp[j] = p.bias_v;
      }
      akp[j] = kp[j];
      avp[j] = vp[j];
      for (double& x : akp[j]) x = std::fabs(x);
      for (double& x : avp[j]) x = std::fabs(x);
    }
    for (size_t i = 0; i < L && !Failed(); ++i) {
      const float* qt = q.data.get() + tok(b, i, L) * e;
      bool q_nan = false;
      const bool q_fin = row_finite(qt, e, &q_nan);
      std::vector<double> qp, aqp;
      project(qt, e, p.wq, p.bq, qp, aqp);
      bool proj_tame = true;
      for (size_t d = 0; d < e; ++d) proj_tame = proj_tame && aqp[d] <= kTame;
      std::vector<RowRef> refs(H);
      std::vector<char> head_nan_src(H, 0), head_value_nan(H, 0);
      bool masks_ok = true, lenient_tame = proj_tame, strict_tame = proj_tame, unmasked_kv_finite = true,
           unmasked_k_finite = true;
      std::vector<double> ctx(e, 0.0), actx(e, 0.0), dctx(e, 0.0);
      for (size_t hh = 0; hh < H; ++hh) {
        RowInput in(s_all, scale, static_cast<double>(e + kdim + hd + 10));
        bool mask_nan = false, mask_posinf = false;
        for (size_t j = 0; j < s_all; ++j) {
          double dot = 0, ad = 0;
          bool key_tame = true;  // a projected key beyond float32 is ±inf there, and 0 · inf = NaN
          for (size_t d = hh * hd, dkv = hh / group * hd; d < (hh + 1) * hd; ++d, ++dkv) {
            dot += qp[d] * kp[j][dkv];
            ad += aqp[d] * akp[j][dkv];
            key_tame = key_tame && akp[j][dkv] <= kTame;
          }
          if (!key_tame) ad = kInfD;
          in.dot[j] = dot;
          in.absdot[j] = std::isnan(ad) ? kInfD : ad;
          if (j < S) {
            double rb = 0, kb = 0;
            if (am.kind != Mask::Kind::kNone) {
              const size_t base = broadcast_am ? 0 : (b * H + hh) * L * S;
              rb = am.Additive(base + i * S + j, /*masked_when=*/true);
            }
            if (kpm.kind != Mask::Kind::kNone) kb = kpm.Additive(b * S + j, /*masked_when=*/true);
            // The masks are added in float32, as the library (and PyTorch 2's attn_mask + key_padding_mask) adds
            // them: two finite masks whose sum overflows are -inf (the key is masked, whatever its logit holds) or
            // +inf (the row is NaN), not the finite double sum (docs/robustness.md).
            in.m[j] = static_cast<double>(static_cast<float>(rb) + static_cast<float>(kb));
            mask_nan = mask_nan || std::isnan(in.m[j]);
            mask_posinf = mask_posinf || in.m[j] == kInfD;
          }
        }
        refs[hh] = AttendRow(in);
        const RowRef& ref = refs[hh];
        masks_ok = masks_ok && !mask_nan && !mask_posinf;
        lenient_tame = lenient_tame && ref.tame_visible;
        strict_tame = strict_tame && ref.tame_unmasked;
        bool k_nan_unmasked = false;
        for (size_t j = 0; j < s_all; ++j) {
          if (!ref.unmasked[j]) continue;
          unmasked_kv_finite = unmasked_kv_finite && k_fin[j] && v_fin[j];
          unmasked_k_finite = unmasked_k_finite && k_fin[j];
          k_nan_unmasked = k_nan_unmasked || k_nan[j];
          head_value_nan[hh] = head_value_nan[hh] || v_nan[j];
        }
        head_nan_src[hh] = q_nan || mask_nan || mask_posinf || k_nan_unmasked;
        const double tol_w = 1e-5 + 4 * ref.delta;
        for (size_t d = hh * hd, dkv = hh / group * hd; d < (hh + 1) * hd; ++d, ++dkv) {
          double acc = 0, a = 0, a_all = 0;
          for (size_t j = 0; j < s_all; ++j) {
            a_all += avp[j][dkv];
            if (!ref.unmasked[j]) continue;
            acc += ref.w[j] * vp[j][dkv];
            a += (ref.w[j] + tol_w) * avp[j][dkv];
            strict_tame = strict_tame && avp[j][dkv] <= kTame;  // the float projection itself must not overflow
          }
          ctx[d] = acc;
          actx[d] = a;
          dctx[d] = (2e-5 + 4 * ref.delta + kEps * static_cast<double>(vdim + s_all + 8)) * a;
          lenient_tame = lenient_tame && a_all <= kTame;
          strict_tame = strict_tame && a <= kTame;
        }
      }
      // Output token and its tolerance.
      std::vector<double> out(e), tol(e);
      for (size_t oo = 0; oo < e; ++oo) {
        double acc = p.bo[oo], a = std::fabs(p.bo[oo]), err = 0;
        for (size_t cc = 0; cc < e; ++cc) {
          acc += ctx[cc] * p.wo[oo * e + cc];
          a += actx[cc] * std::fabs(p.wo[oo * e + cc]);
          err += dctx[cc] * std::fabs(p.wo[oo * e + cc]);
        }
        out[oo] = acc;
        tol[oo] = 4 * err + (1e-5 + kEps * static_cast<double>(e + 4)) * a + 1e-30;
        lenient_tame = lenient_tame && a <= kTame;
        strict_tame = strict_tame && a <= kTame;
      }
      const bool lenient_clean = p.finite && q_fin && kv_all_finite && masks_ok && lenient_tame;
      const bool strict_clean = p.finite && q_fin && unmasked_kv_finite && masks_ok && strict_tame;
      const float* orow = res.output.data.data() + tok(b, i, L) * e;
      const std::string where = "MHA item " + std::to_string(b) + ", query position " + std::to_string(i) + ": ";
      // Weights of head hh / the averaged row.
      auto wrow = [&](size_t hh) -> const float* {
        if (!o.need_weights) return nullptr;
        if (o.average_attn_weights) return res.weights.data.data() + (b * L + i) * s_all;
        return res.weights.data.data() + ((b * H + hh) * L + i) * s_all;
      };
      if (lenient_clean || (opts_.strict_nan && strict_clean)) {
        double max_delta = 0;
        for (const RowRef& ref : refs) max_delta = std::max(max_delta, ref.delta);
        const bool compare = max_delta <= 1e-2;
        if (o.need_weights && !o.average_attn_weights) {
          for (size_t hh = 0; hh < H; ++hh) {
            const std::string err = CheckWeightsRow(wrow(hh), s_all, refs[hh], 1e-5 + 4 * refs[hh].delta, compare);
            if (!err.empty()) return Finding(where + "head " + std::to_string(hh) + ": " + err);
          }
        } else if (o.need_weights) {
          const float* w = wrow(0);
          double sum = 0, expect_sum = 0;
          for (const RowRef& ref : refs) expect_sum += ref.fully_masked ? 0.0 : 1.0 / static_cast<double>(H);
          for (size_t j = 0; j < s_all; ++j) {
            double ref_w = 0, tol_w = 1e-6;
            for (const RowRef& ref : refs) {
              ref_w += ref.w[j] / static_cast<double>(H);
              tol_w += (1e-5 + 4 * ref.delta) / static_cast<double>(H);
            }
            if (!(w[j] >= 0.0f && w[j] <= 1.0f + 1e-6f)) {
              return Finding(where + "averaged weight[" + std::to_string(j) + "] = " + FloatStr(w[j]) +
                             " outside [0, 1]");
            }
            if (compare && !(std::fabs(w[j] - ref_w) <= tol_w)) {
              std::ostringstream os;
              os << where << "averaged weight[" << j << "] = " << FloatStr(w[j]) << ", reference " << ref_w
                 << " (tolerance " << tol_w << ")";
              return Finding(os.str());
            }
            sum += w[j];
          }
          if (!(std::fabs(sum - expect_sum) <= 1e-5 + kEps * static_cast<double>(s_all))) {
            std::ostringstream os;
            os << where << "averaged weights sum to " << sum << ", expected " << expect_sum
               << " (the share of heads that are not fully masked)";
            return Finding(os.str());
          }
        }
        for (size_t oo = 0; oo < e; ++oo) {
          if (!std::isfinite(orow[oo])) {
            return Finding(where + "output[" + std::to_string(oo) + "] = " + FloatStr(orow[oo]) + ", expected finite");
          }
          if (compare && !(std::fabs(orow[oo] - out[oo]) <= tol[oo])) {
            std::ostringstream os;
            os << where << "output[" << oo << "] = " << FloatStr(orow[oo]) << ", reference " << out[oo]
               << " (tolerance " << tol[oo] << ")";
            return Finding(os.str());
          }
        }
      }
      // NaN in a value token that some head attends reaches the whole output token (IEEE), whatever the mode.
      if (p.finite && q_fin && masks_ok && unmasked_k_finite && strict_tame) {
        for (size_t hh = 0; hh < H; ++hh) {
          if (head_value_nan[hh] && !refs[hh].fully_masked && !AllNaN(orow, e)) {
            return Finding(where + "a value token attended by head " + std::to_string(hh) +
                           " holds NaN, but the output token is not all NaN");
          }
        }
      }
      if (opts_.strict_nan && p.finite) {
        bool any = false;
        for (size_t hh = 0; hh < H; ++hh) {
          if (!head_nan_src[hh] || refs[hh].fully_masked) continue;  // a head that attends nothing stays 0
          any = true;
          const float* w = wrow(hh);
          if (w && !AllNaN(w, s_all)) {
            return Finding(where + "head " + std::to_string(hh) +
                           " has a NaN source (query, mask or attended key) but its weight row is not all NaN "
                           "(strict NaN policy)");
          }
        }
        if (any && !AllNaN(orow, e)) {
          return Finding(where + "a head has a NaN source but the output token is not all NaN (strict NaN policy)");
        }
      }
    }
  }
}

}  // namespace attnlab_fuzz
