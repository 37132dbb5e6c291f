// The poem trainer's data (token_data.h).
#include "cpp/tools/common/token_data.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "cpp/tools/common/files.h"

namespace attnlab::tools {
namespace {

// Splits one token file into poems, checking that each is BOS … EOS and every id is in the vocabulary.
std::vector<Poem> ReadSplit(const std::string& path, const std::string& file, const TokenData& d) {
  const std::string bytes = ReadFile(path);
  if (bytes.size() % 2) throw std::runtime_error(file + ": odd size");
  std::vector<Poem> poems;
  Poem cur;
  for (size_t i = 0; i < bytes.size(); i += 2) {
    const int32_t id = static_cast<uint8_t>(bytes[i]) | (static_cast<uint8_t>(bytes[i + 1]) << 8);
    if (id >= d.vocab) throw std::runtime_error(file + ": id out of range");
    if (id == d.bos && !cur.empty()) throw std::runtime_error(file + ": BOS inside a poem");
    cur.push_back(id);
    if (id == d.eos) {
      if (cur.front() != d.bos) throw std::runtime_error(file + ": poem without BOS");
      poems.push_back(std::move(cur));
      cur.clear();
    }
  }
  if (!cur.empty()) throw std::runtime_error(file + ": truncated poem");
  return poems;
}

}  // namespace

TokenData ReadTokenData(const std::string& dir) {
  TokenData d;
  std::istringstream in(ReadFile(dir + "/data.txt"));
  std::string key;
  while (in >> key) {
    if (key == "split") {
      std::string name, file;
      in >> name >> file;
      d.files[name] = file;
    } else {
      int64_t v;
      in >> v;
      if (key == "vocab_size") d.vocab = v;
      if (key == "context_length") d.context = v;
      if (key == "pad_id") d.pad = static_cast<int32_t>(v);
      if (key == "unk_id") d.unk = static_cast<int32_t>(v);
      if (key == "bos_id") d.bos = static_cast<int32_t>(v);
      if (key == "eos_id") d.eos = static_cast<int32_t>(v);
    }
  }
  for (const auto& [name, file] : d.files) d.splits[name] = ReadSplit(dir + "/" + file, file, d);
  return d;
}

Batch MakeBatch(const std::vector<Poem>& poems, const int64_t* idx, int64_t count, int32_t pad, int32_t eos,
                int64_t per_row) {
  Batch b;
  b.b = count / per_row;
  std::vector<Poem> rows(b.b);
  for (int64_t r = 0; r < b.b; ++r) {
    for (int64_t k = 0; k < per_row; ++k) {
      const Poem& p = poems[idx[r * per_row + k]];
      rows[r].insert(rows[r].end(), p.begin(), p.end());
    }
    b.t = std::max<int64_t>(b.t, rows[r].size() - 1);
  }
  b.tokens.assign(b.b * b.t, pad);
  b.targets.assign(b.b * b.t, kIgnore);
  for (int64_t r = 0; r < b.b; ++r) {
    const Poem& p = rows[r];
    for (size_t j = 0; j + 1 < p.size(); ++j) {
      b.tokens[r * b.t + j] = p[j];
      b.targets[r * b.t + j] = p[j] == eos ? kIgnore : p[j + 1];
    }
  }
  return b;
}

BatchStream::BatchStream(const std::vector<Poem>& poems, int64_t batch, uint64_t seed, int32_t pad, int32_t eos,
                         int64_t per_row)
    : poems_(poems), batch_(batch), rng_(seed), pad_(pad), eos_(eos), per_row_(per_row), order_(poems.size()) {
  if (static_cast<int64_t>(poems.size()) < batch) throw std::invalid_argument("fewer training poems than --batch");
  if (per_row < 1 || batch % per_row != 0) throw std::invalid_argument("--batch must be a multiple of --poems-per-row");
  Shuffle();
}

Batch BatchStream::Next() {
  if (pos_ + batch_ > static_cast<int64_t>(order_.size())) Shuffle();
  Batch b = MakeBatch(poems_, order_.data() + pos_, batch_, pad_, eos_, per_row_);
  pos_ += batch_;
  return b;
}

void BatchStream::Shuffle() {
  for (size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<int64_t>(i);
  for (size_t i = order_.size() - 1; i > 0; --i) std::swap(order_[i], order_[rng_.Below(i + 1)]);
  pos_ = 0;
  ++epoch_;
}

}  // namespace attnlab::tools
