// The poem trainer's data (cpp/tools/train_poems.cc): scripts/poems/prepare.mjs's token files, whole-poem batches and
// the seeded batch stream (the one tool RNG: attnlab::Xoshiro256 of cpp/src/rng.h). As llm.c's llmc/dataloader.h.
#ifndef ATTNLAB_TOOLS_COMMON_TOKEN_DATA_H_
#define ATTNLAB_TOOLS_COMMON_TOKEN_DATA_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "attnlab/transformer.h"
#include "cpp/src/rng.h"

namespace attnlab::tools {

using Poem = std::vector<int32_t>;

constexpr int32_t kIgnore = -100;  // a target that is not predicted (torch's ignore_index)

// DIR/data.txt (key value lines: vocab_size, context_length, pad_id, unk_id, bos_id, eos_id, and "split NAME FILE"
// lines) and each split's FILE (little-endian uint16 ids, poem after poem, each BOS … EOS).
struct TokenData {
  int64_t vocab = 0, context = 0;
  int32_t pad = 0, unk = 1, bos = 2, eos = 3;
  std::map<std::string, std::vector<Poem>> splits;
  std::map<std::string, std::string> files;
};

// Reads DIR; throws std::runtime_error naming the file on a missing file or a malformed split.
TokenData ReadTokenData(const std::string& dir);

struct Batch {
  std::vector<int32_t> tokens, targets;
  int64_t b = 0, t = 0;
  TokensView Tokens() const { return {tokens.data(), {b, t}}; }
  TokensView Targets() const { return {targets.data(), {b, t}}; }
};

// Whole poems, right-padded: a row is `per_row` poems one after another ([BOS] a [EOS] [BOS] b [EOS] …); the input is
// row[0 … n−2], the target row[1 … n−1], except that an [EOS] input has target −100 (the next poem's [BOS] is given,
// not predicted: every row predicts exactly its poems' characters and [EOS]s). Padding is [PAD] with target −100
// (causal attention: a row's positions never see the padding after it). Rows are poems[idx[…]], count poems in all.
Batch MakeBatch(const std::vector<Poem>& poems, const int64_t* idx, int64_t count, int32_t pad, int32_t eos,
                int64_t per_row = 1);

// Batches of `batch` poems in a seeded order: each epoch a Fisher–Yates permutation drawn with Xoshiro256(seed); an
// epoch's last incomplete batch is dropped. This order is a reproducibility contract (the shipped poem model).
class BatchStream {
 public:
  // std::invalid_argument when there are fewer poems than `batch` or `batch` is not a multiple of `per_row`.
  BatchStream(const std::vector<Poem>& poems, int64_t batch, uint64_t seed, int32_t pad, int32_t eos, int64_t per_row);
  Batch Next();
  int64_t epoch() const { return epoch_; }

 private:
  void Shuffle();
  const std::vector<Poem>& poems_;
  int64_t batch_;
  Xoshiro256 rng_;
  int32_t pad_, eos_;
  int64_t per_row_;
  std::vector<int64_t> order_;
  int64_t pos_ = 0, epoch_ = 0;
};

}  // namespace attnlab::tools

#endif  // ATTNLAB_TOOLS_COMMON_TOKEN_DATA_H_
