// The fuzz target's float64 oracle (oracle.h).
#include "tests/fuzz/oracle.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "tests/fuzz/input.h"

namespace attnlab_fuzz {

double Softcap(double s, double c) { return c > 0 ? c * std::tanh(s / c) : s; }

double SoftcapError(double c) { return c > 0 ? 8 * kEps * c + 2.4e-38 * c : 0.0; }

RowRef AttendRow(const RowInput& in) {
  RowRef ref;
  const size_t lk = in.lk;
  ref.unmasked.assign(lk, 0);
  ref.w.assign(lk, 0.0);
  const double as = std::fabs(in.scale);
  double zmax = -kInfD;
  std::vector<double> z(lk, 0.0);
  for (size_t j = 0; j < lk; ++j) {
    if (!in.visible[j]) continue;
    const double mj = in.m[j];
    const bool over = !(in.absdot[j] * std::max(1.0, as) <= kTame) ||
                      (std::isfinite(mj) && !(as * in.absdot[j] + std::fabs(mj) <= kTame));
    if (over) ref.tame_visible = false;
    if (mj == -kInfD) continue;
    ref.unmasked[j] = 1;
    ref.fully_masked = false;
    if (over || !std::isfinite(mj)) ref.tame_unmasked = false;
    z[j] = Softcap(in.scale * in.dot[j], in.softcap) + mj;
    zmax = std::max(zmax, z[j]);
    ref.delta =
        std::max(ref.delta, kEps * (in.coef * as * in.absdot[j] + 2 * std::fabs(mj)) + SoftcapError(in.softcap));
  }
  ref.delta += 1e-6;
  if (ref.fully_masked) return ref;
  double sum = 0;
  for (size_t j = 0; j < lk; ++j) {
    if (ref.unmasked[j]) sum += ref.w[j] = std::exp(z[j] - zmax);
  }
  for (size_t j = 0; j < lk; ++j) ref.w[j] /= sum;
  return ref;
}

bool BitsEqual(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

bool AllNaN(const float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (!std::isnan(x[i])) return false;
  }
  return true;
}

std::string CheckWeightsRow(const float* w, size_t lk, const RowRef& ref, double tol_w, bool compare) {
  std::ostringstream os;
  double sum = 0;
  for (size_t j = 0; j < lk; ++j) {
    const double x = w[j];
    if (ref.fully_masked) {
      if (x != 0.0) {
        os << "fully masked row: weight[" << j << "] = " << FloatStr(w[j]) << ", expected 0";
        return os.str();
      }
      continue;
    }
    if (!(x >= 0.0 && x <= 1.0 + 1e-6)) {
      os << "weight[" << j << "] = " << FloatStr(w[j]) << " outside [0, 1]";
      return os.str();
    }
    sum += x;
    if (compare && !(std::fabs(x - ref.w[j]) <= tol_w)) {
      os << "weight[" << j << "] = " << FloatStr(w[j]) << ", reference " << ref.w[j] << " (tolerance " << tol_w << ")";
      return os.str();
    }
  }
  // 1e-5, plus the float32 rounding of a sum over lk terms (only matters for long rows).
  if (!ref.fully_masked && !(std::fabs(sum - 1.0) <= 1e-5 + kEps * static_cast<double>(lk))) {
    os << "weights sum to " << sum << ", expected 1";
    return os.str();
  }
  return "";
}

}  // namespace attnlab_fuzz
