// Evaluation helpers of the poem trainer (eval.h).
#include "cpp/tools/common/eval.h"

#include <algorithm>
#include <cstdio>

#include "cpp/tools/common/log.h"

namespace attnlab::tools {
namespace {

// Couplet index of target position j (predicting poem[j + 1]) in a poem with lines of n characters: each couplet is
// 2n + 2 tokens.
int64_t CoupletOf(const Poem& p, size_t j) {
  const int64_t chars = static_cast<int64_t>(p.size()) - 2;  // without BOS and EOS: 24 or 48 (5), 32 or 64 (7)
  const int64_t line = chars % 12 == 0 ? 5 : 7;
  return static_cast<int64_t>(j) / (2 * line + 2);
}

// −log softmax(row)[target] over v logits, in double.
double Nll(const float* row, int64_t v, int32_t target) {
  double mx = row[0];
  for (int64_t k = 1; k < v; ++k) mx = std::max<double>(mx, row[k]);
  double sum = 0;
  for (int64_t k = 0; k < v; ++k) sum += std::exp(static_cast<double>(row[k]) - mx);
  return std::log(sum) + mx - row[target];
}

void AddToCouplet(EvalResult& r, size_t k, double nll) {
  if (r.couplet_sum.size() <= k) {
    r.couplet_sum.resize(k + 1, 0);
    r.couplet_count.resize(k + 1, 0);
  }
  r.couplet_sum[k] += nll;
  ++r.couplet_count[k];
}

struct Bigram {
  int64_t v;
  std::unordered_map<uint64_t, int64_t> pair;
  std::vector<int64_t> first, uni;
  int64_t uni_total = 0;
  explicit Bigram(const std::vector<Poem>& poems, int64_t vocab) : v(vocab), first(vocab, 0), uni(vocab, 0) {
    for (const Poem& p : poems) {
      for (size_t j = 0; j + 1 < p.size(); ++j) {
        ++pair[static_cast<uint64_t>(p[j]) * v + p[j + 1]];
        ++first[p[j]];
        ++uni[p[j + 1]];
        ++uni_total;
      }
    }
  }
  double Loss(const std::vector<Poem>& poems, double k) const {
    double total = 0;
    int64_t n = 0;
    for (const Poem& p : poems) {
      for (size_t j = 0; j + 1 < p.size(); ++j) {
        const auto it = pair.find(static_cast<uint64_t>(p[j]) * v + p[j + 1]);
        const double c = it == pair.end() ? 0 : static_cast<double>(it->second);
        total -= std::log((c + k) / (static_cast<double>(first[p[j]]) + k * v));
        ++n;
      }
    }
    return total / n;
  }
  double UnigramLoss(const std::vector<Poem>& poems) const {
    double total = 0;
    int64_t n = 0;
    for (const Poem& p : poems) {
      for (size_t j = 1; j < p.size(); ++j) {
        total -= std::log((uni[p[j]] + 1.0) / (static_cast<double>(uni_total) + v));
        ++n;
      }
    }
    return total / n;
  }
};

}  // namespace

EvalResult Evaluate(Transformer& model, const std::vector<Poem>& poems, int64_t limit, const TokenData& d,
                    int64_t batch) {
  EvalResult r;
  const int64_t n = limit > 0 ? std::min<int64_t>(limit, poems.size()) : static_cast<int64_t>(poems.size());
  const int64_t v = model.config().vocab_size;
  double total = 0;
  std::vector<int64_t> idx(n);
  for (int64_t i = 0; i < n; ++i) idx[i] = i;
  for (int64_t start = 0; start < n; start += batch) {
    const Batch b = MakeBatch(poems, idx.data() + start, std::min(batch, n - start), d.pad, d.eos);
    const TransformerOutput out = model.Forward(b.Tokens());
    for (int64_t i = 0; i < b.b; ++i) {
      for (int64_t j = 0; j < b.t; ++j) {
        const int32_t target = b.targets[i * b.t + j];
        if (target == kIgnore) continue;
        const double nll = Nll(out.logits.data.data() + (i * b.t + j) * v, v, target);
        total += nll;
        ++r.count;
        if (target == d.eos) {
          r.eos_sum += nll;
          ++r.eos_count;
        } else {
          AddToCouplet(r, static_cast<size_t>(CoupletOf(poems[idx[start + i]], j)), nll);
        }
      }
    }
  }
  r.loss = r.count ? total / r.count : NAN;
  return r;
}

std::string EvalJson(const EvalResult& r) {
  std::string s = "{\"loss\": " + Fmt(r.loss) + ", \"targets\": " + std::to_string(r.count) + ", \"couplets\": [";
  for (size_t k = 0; k < r.couplet_sum.size(); ++k) s += (k ? ", " : "") + Fmt(r.Couplet(k));
  s += "], \"eos\": " + Fmt(r.eos_count ? r.eos_sum / r.eos_count : NAN) + "}";
  return s;
}

Baselines FitBaselines(const std::vector<Poem>& train, const TokenData& d) {
  const Bigram bigram(train, d.vocab);
  Baselines b;
  for (double k : {1.0, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001}) {
    const double l = bigram.Loss(d.splits.at("validation"), k);
    b.grid += (b.grid.empty() ? "" : ", ") + ("\"" + Fmt(k, 3) + "\": " + Fmt(l));
    if (l < b.validation) b.validation = l, b.k = k;
  }
  b.test = bigram.Loss(d.splits.at("test"), b.k);
  b.neighbour = bigram.Loss(d.splits.at("neighbour"), b.k);
  b.unigram_validation = bigram.UnigramLoss(d.splits.at("validation"));
  b.unigram_test = bigram.UnigramLoss(d.splits.at("test"));
  std::printf("bigram baseline (add-k, k = %g chosen on validation): validation %.4f, test %.4f; unigram %.4f\n", b.k,
              b.validation, b.test, b.unigram_validation);
  return b;
}

}  // namespace attnlab::tools
