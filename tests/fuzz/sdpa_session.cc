// The SDPA session: decodes one ScaledDotProductAttention call, runs it against the model of the argument rules
// and checks shapes, determinism and every clean row against the float64 oracle (and the NaN policy).
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

void Session::RunSdpa() {
  const uint8_t sb = r_.U8();
  const size_t nb = sb % 3;
  Shape batch;
  for (size_t i = 0; i < nb; ++i) batch.push_back(BatchDim(r_));
  const int64_t lq = Dim(r_), lk = Dim(r_), dk = Dim(r_), dv = Dim(r_);
  TensorBuf q, k, v;
  q.shape = batch;
  q.shape.insert(q.shape.end(), {lq, dk});
  k.shape = batch;
  k.shape.insert(k.shape.end(), {lk, dk});
  v.shape = batch;
  v.shape.insert(v.shape.end(), {lk, dv});
  Shape* shapes[3] = {&q.shape, &k.shape, &v.shape};
  PerturbShapes(r_, shapes, 3);
  const uint8_t f = r_.U8();
  attnlab::SdpaOptions o;
  o.is_causal = f & 1;
  o.has_scale = f & 2;
  o.need_weights = !(f & 4);
  uint8_t nulls = 0;
  if (f & 8) nulls = r_.U8();
  if (o.has_scale) o.scale = ScaleValue(r_);
  MaskBuf mask;
  {
    Shape full = batch;
    full.insert(full.end(), {lq, lk});
    DecodeMask(r_, mask, {Shape{lq, lk}, full});
  }
  FillInputs(nulls, {&q, &k, &v}, {&mask});

  {
    std::ostringstream os;
    os << "SDPA " << DescribeTensor("query", q) << "; " << DescribeTensor("key", k) << "; "
       << DescribeTensor("value", v) << "; attn_mask " << mask.Describe() << "; is_causal " << o.is_causal << "; scale "
       << (o.has_scale ? FloatStr(o.scale) : "default") << "; need_weights " << o.need_weights;
    case_ = os.str();
  }

  // The model.
  bool valid = q.shape.size() >= 2 && q.ModelValid() && k.ModelValid() && v.ModelValid() && mask.ModelValid();
  const size_t rank = q.shape.size();
  Shape out_shape, w_shape;
  uint64_t nbatch = 0;
  if (valid) {
    const Shape qb(q.shape.begin(), q.shape.end() - 2);
    valid = k.shape.size() == rank && v.shape.size() == rank && Shape(k.shape.begin(), k.shape.end() - 2) == qb &&
            Shape(v.shape.begin(), v.shape.end() - 2) == qb && k.shape[rank - 1] == q.shape[rank - 1] &&
            v.shape[rank - 2] == k.shape[rank - 2] && (!o.has_scale || std::isfinite(o.scale));
    if (valid && mask.kind != Mask::Kind::kNone) {
      Shape full = qb;
      full.insert(full.end(), {q.shape[rank - 2], k.shape[rank - 2]});
      valid = mask.shape == Shape{q.shape[rank - 2], k.shape[rank - 2]} || mask.shape == full;
    }
    if (valid) {
      out_shape = qb;
      out_shape.insert(out_shape.end(), {q.shape[rank - 2], v.shape[rank - 1]});
      w_shape = qb;
      w_shape.insert(w_shape.end(), {q.shape[rank - 2], k.shape[rank - 2]});
      valid = ModelNumel(out_shape).ok && (!o.need_weights || ModelNumel(w_shape).ok);
      nbatch = ModelNumel(qb).n;
    }
  }
  // The library may read any argument whose shape is valid, even in a call it then rejects: such an argument must
  // be real memory. The fuzzer only allocates small ones, so it skips calls with a big, validly shaped argument.
  if (TooBigToAllocate({&q, &k, &v}) || (mask.kind != Mask::Kind::kNone && mask.numel.ok && !mask.allocated)) return;
  if (valid) {
    // Skip valid calls too big for the fuzzer (it allocates inputs; large ones are legitimate, not hostile).
    if (!q.allocated || !k.allocated || !v.allocated || (mask.kind != Mask::Kind::kNone && !mask.allocated)) return;
    const double lqd = static_cast<double>(q.shape[rank - 2]), lkd = static_cast<double>(k.shape[rank - 2]);
    // Also the outputs: empty inputs may legitimately ask for a huge output (e.g. dk = 0, Lq = 2^40).
    // Only work the call really needs (inputs, outputs, logits; weights cost more: the reference and the checks
    // visit each). Loops over empty rows or items are not counted: they are the library's to avoid.
    const double work = static_cast<double>(nbatch) *
                        (lqd * lkd * (static_cast<double>(q.shape[rank - 1] + v.shape[rank - 1]) + 2) +
                         lkd * static_cast<double>(q.shape[rank - 1]) + lqd * static_cast<double>(v.shape[rank - 1]) +
                         (o.need_weights ? lqd * lkd * 16 : 0.0));
    if (work > kMaxWork) return;
  }

  attnlab::AttentionResult res;
  if (!Invoke("ScaledDotProductAttention", valid, [&] {
        res = attnlab::ScaledDotProductAttention(q.View(), k.View(), v.View(), [&] {
          attnlab::SdpaOptions oo = o;
          oo.attn_mask = mask.View();
          return oo;
        }());
      })) {
    return;
  }
  if (res.output.shape != out_shape || res.output.data.size() != ModelNumel(out_shape).n) {
    Finding("output shape " + ShapeStr(res.output.shape) + " (" + std::to_string(res.output.data.size()) +
            " values), expected " + ShapeStr(out_shape));
    return;
  }
  if (o.need_weights ? (res.weights.shape != w_shape || res.weights.data.size() != ModelNumel(w_shape).n)
                     : (!res.weights.shape.empty() || !res.weights.data.empty())) {
    Finding("weights shape " + ShapeStr(res.weights.shape) + " (" + std::to_string(res.weights.data.size()) +
            " values), expected " + (o.need_weights ? ShapeStr(w_shape) : std::string("none")));
    return;
  }
  // Determinism: a second call is bit-identical.
  {
    attnlab::SdpaOptions oo = o;
    oo.attn_mask = mask.View();
    const attnlab::AttentionResult again = attnlab::ScaledDotProductAttention(q.View(), k.View(), v.View(), oo);
    if (!BitsEqual(again.output.data, res.output.data) || !BitsEqual(again.weights.data, res.weights.data)) {
      Finding("a repeated call is not bit-identical");
      return;
    }
  }
  // Row by row checks visit every (item, row): not for absurd counts of empty rows. They (and the backward
  // reference) also allocate per-dimension buffers: not for the huge dimensions of an empty call.
  if (static_cast<double>(nbatch) * static_cast<double>(std::max<int64_t>(q.shape[rank - 2], 1)) > 1e5) return;
  for (const TensorBuf* t : {&q, &k, &v}) {
    for (const int64_t d : t->shape) {
      if (d > int64_t{1} << 20) return;
    }
  }
  CheckSdpaRows(q, k, v, mask, o, res, static_cast<size_t>(nbatch));
  if (!Failed()) RunSdpaBackward(q, k, v, mask, o, out_shape, static_cast<size_t>(nbatch));
}

void Session::CheckSdpaRows(const TensorBuf& q, const TensorBuf& k, const TensorBuf& v, const MaskBuf& mask,
                            const attnlab::SdpaOptions& o, const attnlab::AttentionResult& res, size_t nbatch) {
  const size_t rank = q.shape.size();
  const size_t lq = static_cast<size_t>(q.shape[rank - 2]), dk = static_cast<size_t>(q.shape[rank - 1]);
  const size_t lk = static_cast<size_t>(k.shape[rank - 2]), dv = static_cast<size_t>(v.shape[rank - 1]);
  const double scale = o.has_scale ? o.scale : dk > 0 ? 1.0f / std::sqrt(static_cast<float>(dk)) : 1.0f;
  const bool broadcast = mask.kind != Mask::Kind::kNone && mask.shape.size() == 2 && mask.shape.size() != rank;
  for (size_t b = 0; b < nbatch && !Failed(); ++b) {
    const size_t kbase = b * lk * dk, vbase = b * lk * dv;
    bool kv_all_finite = true;
    std::vector<char> k_fin(lk, 1), k_nan(lk, 0), v_fin(lk, 1);
    std::vector<double> vabs_all(dv, 0.0);
    for (size_t j = 0; j < lk; ++j) {
      for (size_t d = 0; d < dk; ++d) {
        const float x = k.at(kbase + j * dk + d);
        if (!std::isfinite(x)) k_fin[j] = 0;
        if (std::isnan(x)) k_nan[j] = 1;
      }
      for (size_t d = 0; d < dv; ++d) {
        const float x = v.at(vbase + j * dv + d);
        if (!std::isfinite(x)) v_fin[j] = 0;
        vabs_all[d] += std::fabs(static_cast<double>(x));
      }
      kv_all_finite = kv_all_finite && k_fin[j] && v_fin[j];
    }
    for (size_t i = 0; i < lq && !Failed(); ++i) {
      const size_t row = b * lq + i;
      const float* qr = q.data.get() + row * dk;
      bool q_fin = true, q_nan = false;
      for (size_t d = 0; d < dk; ++d) {
        q_fin = q_fin && std::isfinite(qr[d]);
        q_nan = q_nan || std::isnan(qr[d]);
      }
      RowInput in(lk, scale, static_cast<double>(dk) + 4);
      const size_t mrow = (broadcast ? i : row) * lk;
      bool mask_nan = false, mask_posinf = false;
      for (size_t j = 0; j < lk; ++j) {
        in.visible[j] = !o.is_causal || j <= i;
        double dot = 0, ad = 0;
        for (size_t d = 0; d < dk; ++d) {
          const double x = qr[d], y = k.at(kbase + j * dk + d);
          dot += x * y;
          ad += std::fabs(x * y);
        }
        in.dot[j] = dot;
        in.absdot[j] = std::isnan(ad) ? kInfD : ad;
        if (mask.kind != Mask::Kind::kNone) in.m[j] = mask.Additive(mrow + j, /*masked_when=*/false);
        if (in.visible[j]) {
          mask_nan = mask_nan || std::isnan(in.m[j]);
          mask_posinf = mask_posinf || in.m[j] == kInfD;
        }
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
        for (size_t d = 0; d < dv; ++d) {
          const float x = v.at(vbase + j * dv + d);
          vabs[d] += std::fabs(static_cast<double>(x));
          vweighted[d] += (ref.w[j] + tol_w) * std::fabs(static_cast<double>(x));
          if (std::isnan(x)) v_nan_col[d] = 1;
        }
      }
      bool vtame_all = true, vtame = true;
      for (size_t d = 0; d < dv; ++d) {
        vtame_all = vtame_all && vabs_all[d] <= kTame;
        vtame = vtame && vabs[d] <= kTame;
      }
      const bool lenient_clean = q_fin && kv_all_finite && mask_ok && ref.tame_visible && vtame_all;
      const bool strict_clean = q_fin && unmasked_kv_finite && mask_ok && ref.tame_unmasked && vtame;
      const float* wrow = o.need_weights ? res.weights.data.data() + row * lk : nullptr;
      const float* orow = res.output.data.data() + row * dv;
      std::string where = "SDPA batch item " + std::to_string(b) + ", query row " + std::to_string(i) + ": ";
      if (lenient_clean || (opts_.strict_nan && strict_clean)) {
        const bool compare = ref.delta <= 1e-2;
        if (wrow) {
          const std::string e = CheckWeightsRow(wrow, lk, ref, tol_w, compare);
          if (!e.empty()) return Finding(where + e);
        }
        for (size_t d = 0; d < dv; ++d) {
          const double ref_o = [&] {
            double acc = 0;
            for (size_t j = 0; j < lk; ++j) {
              if (ref.unmasked[j]) acc += ref.w[j] * v.at(vbase + j * dv + d);
            }
            return acc;
          }();
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

}  // namespace attnlab_fuzz
