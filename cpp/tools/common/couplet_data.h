// The couplet trainer's data (cpp/tools/train_couplet.cc): the pairs scripts/couplet/prepare.mjs writes
// (<split>.u16: per pair n, k, the upper line's n ids, the lower line's n ids) framed as Hugging Face's seq2seq
// models are (the encoder reads upper + [EOS]; the labels are lower + [EOS]; decoder_input_ids are left to
// shift_right(labels)), and the seeded batch stream: a Fisher–Yates permutation of the training pairs each epoch
// (the tools' one RNG, attnlab::Xoshiro256), cut into batches of one line length (no padding anywhere).
#ifndef ATTNLAB_TOOLS_COMMON_COUPLET_DATA_H_
#define ATTNLAB_TOOLS_COMMON_COUPLET_DATA_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "attnlab/transformer.h"
#include "cpp/src/rng.h"

namespace attnlab::tools {

struct Couplet {
  int32_t k = 0;                      // 1 首联, 2 颔联, 3 颈联, 4 尾联
  std::vector<int32_t> upper, lower;  // n ids each, no specials
};

struct CoupletData {
  int64_t vocab = 0;
  int32_t pad = 0, eos = 3;
  std::map<std::string, std::vector<Couplet>> splits;  // train, validation, test
};

// Reads DIR (its vocab.json for the vocabulary size); std::runtime_error naming a malformed file.
CoupletData ReadCoupletData(const std::string& dir);

// Pairs of one line length n: input_ids (B, n + 1) and labels (B, n + 1).
struct CoupletBatch {
  std::vector<int32_t> input_ids, labels;
  std::vector<int32_t> k;  // (B) each pair's couplet
  int64_t b = 0, t = 0;
  TokensView Inputs() const { return {input_ids.data(), {b, t}}; }
  TokensView Labels() const { return {labels.data(), {b, t}}; }
};

// The pairs at `indices` (all of one length) framed as a batch.
CoupletBatch MakeCoupletBatch(const CoupletData& d, const std::vector<Couplet>& pairs,
                              const std::vector<uint32_t>& indices);

// Every pair of a split (the first `limit`, 0: all), in batches of at most `batch` pairs of one length, in order.
std::vector<std::vector<uint32_t>> SplitBatches(const std::vector<Couplet>& pairs, size_t batch, size_t limit = 0);

class CoupletStream {
 public:
  CoupletStream(const CoupletData& d, size_t batch, uint64_t seed);
  CoupletBatch Next();
  int64_t epoch() const { return epoch_; }

 private:
  const CoupletData& d_;
  const std::vector<Couplet>& train_;
  size_t batch_, next_ = 0;
  int64_t epoch_ = 0;
  std::vector<uint32_t> order_;
  std::map<size_t, std::vector<uint32_t>> pending_;  // by line length
  Xoshiro256 rng_;
};

}  // namespace attnlab::tools

#endif  // ATTNLAB_TOOLS_COMMON_COUPLET_DATA_H_
