// Evaluation helpers of the poem trainer (cpp/tools/train_poems.cc): the model's mean cross-entropy on a set of poems
// with its per-couplet parts, and the count-based baselines fit on the training split.
#ifndef ATTNLAB_TOOLS_COMMON_EVAL_H_
#define ATTNLAB_TOOLS_COMMON_EVAL_H_

#include <cmath>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "attnlab/transformer.h"
#include "cpp/tools/common/token_data.h"

namespace attnlab::tools {

// Mean cross-entropy (nats per predicted token, as the training loss) over all targets of a set of poems, and its
// parts: per couplet (the targets of couplet k are its characters and punctuation; EOS counts apart).
struct EvalResult {
  double loss = 0;  // mean over all targets
  int64_t count = 0;
  std::vector<double> couplet_sum;  // per couplet index
  std::vector<int64_t> couplet_count;
  double eos_sum = 0;
  int64_t eos_count = 0;
  double Couplet(size_t k) const { return couplet_count[k] ? couplet_sum[k] / couplet_count[k] : NAN; }
};

// The first `limit` poems (0: all), `batch` poems a forward.
EvalResult Evaluate(Transformer& model, const std::vector<Poem>& poems, int64_t limit, const TokenData& d,
                    int64_t batch = 32);

// {"loss": …, "targets": …, "couplets": [...], "eos": …}
std::string EvalJson(const EvalResult& r);

// The baselines: an add-k character bigram P(b | a) = (c(a,b) + k) / (c(a) + k V) over the V tokens of the
// vocabulary (k chosen on validation), and the add-one unigram, fit on the training split.
struct Baselines {
  double k = 1, validation = INFINITY, test = 0, neighbour = 0, unigram_validation = 0, unigram_test = 0;
  std::string grid;  // "k": validation loss, for every k tried
};

// Fits on `train`, scores the validation, test and neighbour splits of `d`, and prints a one-line summary.
Baselines FitBaselines(const std::vector<Poem>& train, const TokenData& d);

}  // namespace attnlab::tools

#endif  // ATTNLAB_TOOLS_COMMON_EVAL_H_
