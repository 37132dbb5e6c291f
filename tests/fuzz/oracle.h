// The fuzz target's float64 oracle: one attention row's softmax weights computed in double, with a bound on the
// float32 error of its logits and flags for where float32 could overflow, and the checks of a returned weight row.
#ifndef ATTNLAB_TESTS_FUZZ_ORACLE_H_
#define ATTNLAB_TESTS_FUZZ_ORACLE_H_

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

namespace attnlab_fuzz {

constexpr double kTame = 1e36;   // bound on every |intermediate|: below it float32 cannot overflow
constexpr double kEps = 1.2e-7;  // 2^-23: float32 rounding, with a factor 2 of slack
constexpr double kInfD = std::numeric_limits<double>::infinity();

// One query row: lk keys, all visible and unmasked until the caller says otherwise.
struct RowInput {
  RowInput(size_t keys, double logit_scale, double error_coef)
      : lk(keys),
        dot(keys, 0.0),
        absdot(keys, 0.0),
        m(keys, 0.0),
        visible(keys, 1),
        scale(logit_scale),
        coef(error_coef) {}
  size_t lk = 0;
  std::vector<double> dot;     // q · k_j
  std::vector<double> absdot;  // a bound on Σ |q_d k_jd| (abs values of everything that rounds on the way)
  std::vector<double> m;       // additive mask value (0, finite, ±inf, NaN)
  std::vector<char> visible;   // causally visible
  double scale = 1.0;
  double coef = 1.0;     // δz_j ≈ kEps (coef |scale| absdot_j + 2 |m_j|)
  double softcap = 0.0;  // > 0: z_j = softcap · tanh(scale · dot_j / softcap) + m_j
};

// c · tanh(s / c) for c > 0, else s.
double Softcap(double s, double c);
// A bound on the float32 error that softcap c adds to a logit (tanh's rounding relative to c; the quotient s / c
// loses absolute precision below float32's smallest normal, 2^-126, which c multiplies back).
double SoftcapError(double c);

struct RowRef {
  std::vector<char> unmasked;  // visible and mask != -inf
  bool fully_masked = true;
  std::vector<double> w;
  double delta = 0;           // bound on the float32 error of the logits that matter
  bool tame_unmasked = true;  // no float32 overflow in the logits of unmasked keys
  bool tame_visible = true;   // … of every visible key (masked ones included)
};

// The reference weights of one row (all 0 when fully masked).
RowRef AttendRow(const RowInput& in);

bool BitsEqual(const std::vector<float>& a, const std::vector<float>& b);
bool AllNaN(const float* x, size_t n);

// Checks of a clean row's weights: all exactly 0 when fully masked, else in [0, 1], summing to 1, near the
// reference (within tol_w per weight, when `compare`). Returns "" or a description.
std::string CheckWeightsRow(const float* w, size_t lk, const RowRef& ref, double tol_w, bool compare);

}  // namespace attnlab_fuzz

#endif  // ATTNLAB_TESTS_FUZZ_ORACLE_H_
