// The NaN / Inf policy of ScaledDotProductAttention (nan_policy.h states it) with the options of issue 19, on
// every Highway target and both attention paths: a key that a row does not see (another grouped-query group,
// beyond its item's kv_lengths, outside its window, before a lower-right causal offset) cannot reach the row,
// whatever it holds; a row that sees no key is 0 (weights and output), never NaN.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attnlab/attention.h"
#include "hwy_targets.h"
#include "nan_policy.h"

namespace {

using namespace nan_policy_test;  // NOLINT(build/namespaces): the policy's helpers

// One SDPA problem: query (*batch, lq, d), key/value (*kv_batch, lk, d), an optional past (*kv_batch, lpast, d),
// random data, d = dk = dv. Rows are numbered over (*batch, lq) flattened; keys j over past ‖ new.
struct Problem {
  Shape batch, kv_batch;
  size_t lq = 4, lk = 6, lpast = 0, d = 3;
  std::vector<float> q, k, v, pk, pv;
  std::vector<int32_t> kv_lengths;
  attnlab::SdpaOptions o;

  Problem(Shape b, Shape kvb, size_t lq_, size_t lk_, size_t lpast_ = 0)
      : batch(std::move(b)), kv_batch(std::move(kvb)), lq(lq_), lk(lk_), lpast(lpast_) {
    q = Values(Rows() * d, 11);
    k = Values(KvRows() * lk * d, 12);
    v = Values(KvRows() * lk * d, 13);
    pk = Values(KvRows() * lpast * d, 14);
    pv = Values(KvRows() * lpast * d, 15);
  }
  static size_t Count(const Shape& s) {
    size_t n = 1;
    for (int64_t x : s) n *= static_cast<size_t>(x);
    return n;
  }
  size_t Rows() const { return Count(batch) * lq; }
  size_t KvRows() const { return Count(kv_batch); }
  size_t Lkt() const { return lpast + lk; }
  // Element c of key / value row j (past first) of K/V batch row kb.
  float& K(size_t kb, size_t j, size_t c) {
    return j < lpast ? pk[(kb * lpast + j) * d + c] : k[(kb * lk + j - lpast) * d + c];
  }
  float& V(size_t kb, size_t j, size_t c) {
    return j < lpast ? pv[(kb * lpast + j) * d + c] : v[(kb * lk + j - lpast) * d + c];
  }
  static Shape With(Shape s, std::initializer_list<int64_t> tail) {
    s.insert(s.end(), tail);
    return s;
  }

  AttentionResult Run(bool need_weights) const {
    attnlab::SdpaOptions oo = o;
    oo.need_weights = need_weights;
    if (!kv_lengths.empty()) {
      oo.kv_lengths = kv_lengths.data();
      oo.num_kv_lengths = kv_lengths.size();
    }
    const int64_t D = static_cast<int64_t>(d);
    if (lpast > 0) {
      oo.past_key = TensorView{pk.data(), With(kv_batch, {int64_t(lpast), D})};
      oo.past_value = TensorView{pv.data(), With(kv_batch, {int64_t(lpast), D})};
    }
    return attnlab::ScaledDotProductAttention(TensorView{q.data(), With(batch, {int64_t(lq), D})},
                                              TensorView{k.data(), With(kv_batch, {int64_t(lk), D})},
                                              TensorView{v.data(), With(kv_batch, {int64_t(lk), D})}, oo);
  }
};

// Row r of `got`: NaN when poisoned(r) (weights too), 0 when zero(r), else equal to `clean`.
void ExpectRows(const Problem& p, const AttentionResult& got, const AttentionResult& clean, bool need_weights,
                const std::function<bool(size_t)>& poisoned, const std::function<bool(size_t)>& zero) {
  REQUIRE(got.output.data.size() == p.Rows() * p.d);
  if (need_weights) REQUIRE(got.weights.data.size() == p.Rows() * p.Lkt());
  for (size_t r = 0; r < p.Rows(); ++r) {
    INFO("row " << r << " (batch row " << r / p.lq << ", query " << r % p.lq << ")");
    if (poisoned(r)) {
      CHECK(AllNaN(got.output.data, r * p.d, p.d));
      if (need_weights) CHECK(AllNaN(got.weights.data, r * p.Lkt(), p.Lkt()));
    } else if (zero(r)) {
      CHECK(AllZero(got.output.data, r * p.d, p.d));
      if (need_weights) CHECK(AllZero(got.weights.data, r * p.Lkt(), p.Lkt()));
    } else {
      CHECK(Same(got.output.data, clean.output.data, r * p.d, p.d));
      if (need_weights) CHECK(Same(got.weights.data, clean.weights.data, r * p.Lkt(), p.Lkt()));
    }
  }
}

const auto kNone = [](size_t) { return false; };

}  // namespace

TEST_CASE("NaN policy (SDPA options): NaN in K/V head g reaches only the query heads of its group", "[nan][gqa]") {
  EveryPath([](bool nw) {
    Problem p({2, 4}, {2, 2}, 3, 5);  // 4 query heads over 2 K/V heads: heads 0, 1 read K/V head 0; 2, 3 head 1
    p.o.enable_gqa = true;
    const AttentionResult clean = p.Run(nw);
    const float saved = p.K(1 * 2 + 1, 3, 0);
    p.K(1 * 2 + 1, 3, 0) = kNaN;  // item 1, K/V head 1, key 3: attended by every row of query heads 2 and 3
    ExpectRows(
        p, p.Run(nw), clean, nw, [&](size_t r) { return r / p.lq == 1 * 4 + 2 || r / p.lq == 1 * 4 + 3; }, kNone);
    p.K(1 * 2 + 1, 3, 0) = saved;
    p.V(0, 2, 1) = kInf;  // item 0, K/V head 0: value column 1 of query heads 0 and 1 (inf · w → inf, not NaN)
    const AttentionResult r = p.Run(nw);
    for (size_t row = 0; row < p.Rows(); ++row) {
      INFO("row " << row);
      const size_t head = row / p.lq;
      if (head == 0 || head == 1) {
        CHECK(std::isinf(r.output.data[row * p.d + 1]));
        CHECK(Same(r.output.data, clean.output.data, row * p.d, 1));
      } else {
        CHECK(Same(r.output.data, clean.output.data, row * p.d, p.d));
      }
    }
  });
}

TEST_CASE("NaN policy (SDPA options): NaN / Inf beyond an item's kv_lengths reaches no row", "[nan][kv_lengths]") {
  EveryPath([](bool nw) {
    Problem p({2, 2}, {2, 2}, 3, 6);
    p.kv_lengths = {3, 6};
    const AttentionResult clean = p.Run(nw);
    for (size_t head = 0; head < 2; ++head) {
      p.K(0 * 2 + head, 4, 0) = kNaN;  // item 0 sees keys 0..2 only
      p.V(0 * 2 + head, 5, 2) = kNaN;
      p.K(0 * 2 + head, 3, 1) = kInf;
    }
    ExpectRows(p, p.Run(nw), clean, nw, kNone, kNone);
    p.K(1 * 2 + 0, 5, 0) = kNaN;  // item 1 sees all 6 keys: head 0 of item 1 turns NaN
    ExpectRows(
        p, p.Run(nw), clean, nw, [&](size_t r) { return r / p.lq == 2; }, kNone);
  });
}

TEST_CASE("NaN policy (SDPA options): NaN outside a row's window reaches no row", "[nan][window]") {
  EveryPath([](bool nw) {
    Problem p({2}, {2}, 5, 5);
    p.o.window_left = 1;
    p.o.window_right = 0;  // row i sees keys i - 1, i
    const AttentionResult clean = p.Run(nw);
    p.K(0, 3, 1) = kNaN;  // seen by rows 3 and 4 of item 0
    ExpectRows(
        p, p.Run(nw), clean, nw, [](size_t r) { return r == 3 || r == 4; }, kNone);
    // Lower-right with a past: Lq 2 over Lkt 3 + 4; row i at p = i + 5 sees keys p - 1 .. p + 1 (window [1, 1]).
    Problem w({1}, {1}, 2, 4, 3);
    w.o.causal_align = attnlab::CausalAlign::kLowerRight;
    w.o.window_left = 1;
    w.o.window_right = 1;
    const AttentionResult wclean = w.Run(nw);
    for (size_t j : {0, 1, 2, 3}) w.K(0, j, 0) = kNaN;  // every past key and the first new one: outside both windows
    w.V(0, 2, 0) = kInf;
    ExpectRows(w, w.Run(nw), wclean, nw, kNone, kNone);
    w.V(0, 4, 1) = kNaN;  // key 4: row 0 (p = 5) sees it, row 1 (p = 6) does not
    const AttentionResult r = w.Run(nw);
    CHECK(std::isnan(r.output.data[0 * w.d + 1]));
    CHECK(Same(r.output.data, wclean.output.data, 1 * w.d, w.d));
  });
}

TEST_CASE("NaN policy (SDPA options): NaN in a past key reaches only the rows that see it", "[nan][past]") {
  EveryPath([](bool nw) {
    Problem p({1, 2}, {1, 2}, 3, 3, 2);  // upper-left causal with a past of 2: row i sees keys j <= i + 2
    p.o.is_causal = true;
    p.o.window_left = 2;  // … and j >= i
    const AttentionResult clean = p.Run(nw);
    p.K(1, 0, 2) = kNaN;  // past key 0 of head 1: only row 0 of head 1 sees it
    ExpectRows(
        p, p.Run(nw), clean, nw, [&](size_t r) { return r == 1 * p.lq + 0; }, kNone);
    p.K(1, 0, 2) = 0.5f;
    p.V(0, 4, 0) = kNaN;  // the last new key: row 2 only (causal)
    const AttentionResult r = p.Run(nw);
    CHECK(std::isnan(r.output.data[2 * p.d + 0]));
    CHECK(Same(r.output.data, clean.output.data, 0, 2 * p.d));
  });
}

TEST_CASE("NaN policy (SDPA options): rows left with no key are 0, never NaN (kv_lengths 0, windows, offsets)",
          "[nan][masked]") {
  EveryPath([](bool nw) {
    // kv_lengths = 0: every row of item 0 is 0 even when its keys and values hold NaN and Inf; softcap too.
    Problem p({2, 1}, {2, 1}, 3, 4);
    p.kv_lengths = {0, 4};
    p.o.softcap = 5.0f;
    p.o.return_scores = attnlab::ScoresStage::kMasked;
    const AttentionResult clean = p.Run(nw);
    for (size_t j = 0; j < p.lk; ++j) {
      p.K(0, j, 0) = kNaN;
      p.V(0, j, 1) = kInf;
    }
    const AttentionResult r = p.Run(nw);
    ExpectRows(p, r, clean, nw, kNone, [&](size_t row) { return row < p.lq; });
    for (size_t x = 0; x < p.lq * p.Lkt(); ++x) CHECK(r.scores.data[x] == -kInf);  // masked scores stay -inf
    // Lower-right causal with Lq > Lk: rows 0, 1 sit before the first key (offset -2).
    Problem c({2}, {2}, 5, 3);
    c.o.is_causal = true;
    c.o.causal_align = attnlab::CausalAlign::kLowerRight;
    const AttentionResult cr = c.Run(nw);
    ExpectRows(c, cr, cr, nw, kNone, [&](size_t row) { return row % c.lq < 2; });
    for (size_t row = 0; row < c.Rows(); ++row) CHECK((row % c.lq < 2 || AllFinite(cr.output.data, row * c.d, c.d)));
    // A window that leaves nothing: lower-right over kv length 2 with Lq 4, window [0, 0] (no causal): rows 0, 1
    // sit at p = -2, -1.
    Problem w({1}, {1}, 4, 5);
    w.kv_lengths = {2};
    w.o.causal_align = attnlab::CausalAlign::kLowerRight;
    w.o.window_left = 0;
    w.o.window_right = 0;
    const AttentionResult wr = w.Run(nw);
    ExpectRows(w, wr, wr, nw, kNone, [](size_t row) { return row < 2; });
    // NaN in a zero row's query: still 0 (it attends no key).
    w.q[0] = kNaN;
    ExpectRows(w, w.Run(nw), wr, nw, kNone, [](size_t row) { return row < 2; });
  });
}

TEST_CASE("NaN policy (SDPA options): softcap keeps NaN in its row, huge logits finite", "[nan][softcap]") {
  EveryPath([](bool nw) {
    Problem p({2}, {2}, 3, 4);
    p.o.softcap = 2.0f;
    const AttentionResult clean = p.Run(nw);
    p.q[(1 * p.lq + 2) * p.d] = kNaN;  // tanh(NaN) = NaN: row 2 of item 1
    ExpectRows(
        p, p.Run(nw), clean, nw, [&](size_t r) { return r == 1 * p.lq + 2; }, kNone);
    // A huge query row: the capped logits stay within ±c, so the row stays finite.
    p.q[(1 * p.lq + 2) * p.d] = 0.5f;
    p.q[(0 * p.lq + 1) * p.d] = 1e30f;
    const AttentionResult big = p.Run(nw);
    CHECK(AllFinite(big.output.data, 0, p.Rows() * p.d));
    if (nw) CHECK(AllFinite(big.weights.data, 0, p.Rows() * p.Lkt()));
  });
}
