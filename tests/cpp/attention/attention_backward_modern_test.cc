// ScaledDotProductAttentionBackward with the issue-19 options: gradients of sum(grad_output ⊙ output) against
// central finite differences of the float64 oracle (reference_modern.h), on every Highway target. Grouped-query
// heads sum their key/value gradients over the group; a past gets its own gradients.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "attnlab/attention.h"
#include "hwy_targets.h"
#include "reference_modern.h"
#include "test_util.h"

namespace {

using attnlab::CausalAlign;
using attnlab::SdpaOptions;
using attnlab::Shape;
using attnlab::TensorView;
using attnlab_test::RefTensor;

struct GradCase {
  std::string name;
  Shape q, k, v;
  int64_t past;  // -1: none
  SdpaOptions options;
  std::vector<int32_t> kv_lengths;
  Shape mask_shape;  // float mask, empty: none
};

Shape WithRows(Shape s, int64_t rows) {
  s.end()[-2] = rows;
  return s;
}

// d/dx sum(g ⊙ f(x)) by central differences on the float64 oracle, for every element of `x`.
std::vector<double> NumericGradient(std::vector<double>& x, const std::function<double()>& loss) {
  std::vector<double> grad(x.size());
  const double h = 1e-5;
  for (size_t i = 0; i < x.size(); ++i) {
    const double keep = x[i];
    x[i] = keep + h;
    const double up = loss();
    x[i] = keep - h;
    const double down = loss();
    x[i] = keep;
    grad[i] = (up - down) / (2 * h);
  }
  return grad;
}

void CheckGradients(const GradCase& c, uint64_t seed) {
  INFO(c.name);
  attnlab_test::Rng rng(seed);
  auto draw = [&](const Shape& s) { return attnlab_test::RandomVector(rng, attnlab_test::NumElements(s)); };
  Shape grad_shape(c.q.begin(), c.q.end() - 1);
  grad_shape.push_back(c.v.back());
  std::vector<float> q = draw(c.q), k = draw(c.k), v = draw(c.v), grad_out = draw(grad_shape);
  const int64_t past = c.past < 0 ? 0 : c.past;
  std::vector<float> pk = draw(WithRows(c.k, past)), pv = draw(WithRows(c.v, past));
  std::vector<float> mask = draw(c.mask_shape.empty() ? Shape{0} : c.mask_shape);
  for (size_t i = 0; i < mask.size(); i += 5) mask[i] = -attnlab_test::kInf;
  SdpaOptions o = c.options;
  if (!c.kv_lengths.empty()) {
    o.kv_lengths = c.kv_lengths.data();
    o.num_kv_lengths = c.kv_lengths.size();
  }
  if (!c.mask_shape.empty()) o.attn_mask = attnlab::Mask::Float(mask.data(), c.mask_shape);
  if (c.past >= 0) {
    o.past_key = TensorView{pk.data(), WithRows(c.k, past)};
    o.past_value = TensorView{pv.data(), WithRows(c.v, past)};
  }
  const attnlab::SdpaGradients g =
      attnlab::ScaledDotProductAttentionBackward(TensorView{q.data(), c.q}, TensorView{k.data(), c.k},
                                                 TensorView{v.data(), c.v}, TensorView{grad_out.data(), grad_shape}, o);

  RefTensor rq = attnlab_test::ToRef(q, c.q), rk = attnlab_test::ToRef(k, c.k), rv = attnlab_test::ToRef(v, c.v);
  RefTensor rpk = attnlab_test::ToRef(pk, WithRows(c.k, past)), rpv = attnlab_test::ToRef(pv, WithRows(c.v, past));
  auto loss = [&]() {
    const attnlab_test::ModernRefResult r =
        attnlab_test::ReferenceSdpaModern(rq, rk, rv, c.past >= 0 ? &rpk : nullptr, c.past >= 0 ? &rpv : nullptr, o);
    double sum = 0;
    for (size_t i = 0; i < r.output.size(); ++i) sum += r.output[i] * grad_out[i];
    return sum;
  };
  const attnlab_test::Tolerance tol{2e-4, 2e-3};
  attnlab_test::CheckAllClose("grad_query", g.grad_query.data, NumericGradient(rq.data, loss), tol);
  attnlab_test::CheckAllClose("grad_key", g.grad_key.data, NumericGradient(rk.data, loss), tol);
  attnlab_test::CheckAllClose("grad_value", g.grad_value.data, NumericGradient(rv.data, loss), tol);
  CHECK(g.grad_key.shape == c.k);
  if (c.past >= 0) {
    attnlab_test::CheckAllClose("grad_past_key", g.grad_past_key.data, NumericGradient(rpk.data, loss), tol);
    attnlab_test::CheckAllClose("grad_past_value", g.grad_past_value.data, NumericGradient(rpv.data, loss), tol);
    CHECK(g.grad_past_value.shape == WithRows(c.v, past));
  } else {
    CHECK(g.grad_past_key.data.empty());
  }
}

SdpaOptions GradOpts(bool causal, CausalAlign align, bool gqa, int64_t left = -1, int64_t right = -1, float cap = 0) {
  SdpaOptions o;
  o.is_causal = causal;
  o.causal_align = align;
  o.enable_gqa = gqa;
  o.window_left = left;
  o.window_right = right;
  o.softcap = cap;
  return o;
}

}  // namespace

TEST_CASE("SDPA backward with the #19 options matches finite differences of the float64 reference, on every target",
          "[sdpa][modern][backward]") {
  const CausalAlign ul = CausalAlign::kUpperLeft, lr = CausalAlign::kLowerRight;
  const std::vector<GradCase> cases = {
      {"GQA 4/2 causal lower-right", {2, 4, 3, 4}, {2, 2, 5, 4}, {2, 2, 5, 3}, -1, GradOpts(true, lr, true), {}, {}},
      {"GQA 2/1 + softcap 1.5 + window 1,1 + kv_lengths + mask",
       {2, 2, 4, 4},
       {2, 1, 6, 4},
       {2, 1, 6, 3},
       -1,
       GradOpts(false, ul, true, 1, 1, 1.5f),
       {5, 3},
       {4, 6}},
      {"softcap 0.7 + causal upper-left",
       {1, 2, 4, 3},
       {1, 2, 4, 3},
       {1, 2, 4, 2},
       -1,
       GradOpts(true, ul, false, -1, -1, 0.7f),
       {},
       {}},
      {"past 3 + GQA 2/1 + causal lower-right",
       {2, 2, 2, 4},
       {2, 1, 2, 4},
       {2, 1, 2, 3},
       3,
       GradOpts(true, lr, true),
       {},
       {}},
      {"past 2 + causal upper-left + broadcast mask (Lk)",
       {1, 2, 3, 4},
       {1, 2, 3, 4},
       {1, 2, 3, 2},
       2,
       GradOpts(true, ul, false),
       {},
       {5}},
      {"lower-right Lq 5 > Lk 2 (fully masked rows)",
       {1, 1, 5, 3},
       {1, 1, 2, 3},
       {1, 1, 2, 3},
       -1,
       GradOpts(true, lr, false),
       {},
       {}},
  };
  attnlab_test::ForEachTarget([&](const std::string&) {
    uint64_t seed = 90;
    for (const GradCase& c : cases) CheckGradients(c, ++seed);
  });
}
