// The couplet trainer's data: prepare.mjs's pairs, framing, and the seeded stream (couplet_data.h).
#include "cpp/tools/common/couplet_data.h"

#include <algorithm>
#include <stdexcept>

#include "cpp/tools/common/files.h"
#include "nlohmann/json.hpp"

namespace attnlab::tools {
namespace {

std::vector<Couplet> ReadPairs(const std::string& path, int64_t vocab) {
  const std::string bytes = ReadFile(path);
  auto at = [&](size_t i) {
    if (2 * i + 1 >= bytes.size()) throw std::runtime_error(path + ": truncated");
    return static_cast<int32_t>(static_cast<uint8_t>(bytes[2 * i]) | static_cast<uint8_t>(bytes[2 * i + 1]) << 8);
  };
  std::vector<Couplet> pairs;
  for (size_t i = 0; 2 * i < bytes.size();) {
    Couplet c;
    const size_t n = static_cast<size_t>(at(i));
    c.k = at(i + 1);
    for (size_t j = 0; j < n; ++j) c.upper.push_back(at(i + 2 + j));
    for (size_t j = 0; j < n; ++j) c.lower.push_back(at(i + 2 + n + j));
    for (int32_t id : c.upper) {
      if (id >= vocab) throw std::runtime_error(path + ": id out of the vocabulary");
    }
    if (n == 0 || c.k < 1 || c.k > 4) throw std::runtime_error(path + ": malformed pair");
    pairs.push_back(std::move(c));
    i += 2 + 2 * n;
  }
  return pairs;
}

}  // namespace

CoupletData ReadCoupletData(const std::string& dir) {
  CoupletData d;
  d.vocab = static_cast<int64_t>(nlohmann::json::parse(ReadFile(dir + "/vocab.json")).at("tokens").size());
  for (const char* name : {"train", "validation", "test"}) {
    d.splits[name] = ReadPairs(dir + "/" + name + ".u16", d.vocab);
  }
  return d;
}

CoupletBatch MakeCoupletBatch(const CoupletData& d, const std::vector<Couplet>& pairs,
                              const std::vector<uint32_t>& indices) {
  CoupletBatch b;
  b.b = static_cast<int64_t>(indices.size());
  b.t = static_cast<int64_t>(pairs[indices[0]].upper.size()) + 1;
  for (uint32_t i : indices) {
    const Couplet& c = pairs[i];
    if (static_cast<int64_t>(c.upper.size()) + 1 != b.t) throw std::logic_error("a batch of mixed line lengths");
    b.input_ids.insert(b.input_ids.end(), c.upper.begin(), c.upper.end());
    b.input_ids.push_back(d.eos);
    b.labels.insert(b.labels.end(), c.lower.begin(), c.lower.end());
    b.labels.push_back(d.eos);
    b.k.push_back(c.k);
  }
  return b;
}

std::vector<std::vector<uint32_t>> SplitBatches(const std::vector<Couplet>& pairs, size_t batch, size_t limit) {
  const size_t n = limit ? std::min(limit, pairs.size()) : pairs.size();
  std::map<size_t, std::vector<uint32_t>> by_length;
  for (uint32_t i = 0; i < n; ++i) by_length[pairs[i].upper.size()].push_back(i);
  std::vector<std::vector<uint32_t>> batches;
  for (const auto& [length, indices] : by_length) {
    for (size_t first = 0; first < indices.size(); first += batch) {
      batches.emplace_back(indices.begin() + first, indices.begin() + std::min(indices.size(), first + batch));
    }
  }
  return batches;
}

CoupletStream::CoupletStream(const CoupletData& d, size_t batch, uint64_t seed)
    : d_(d), train_(d.splits.at("train")), batch_(batch), rng_(seed) {
  if (batch == 0 || batch > train_.size()) throw std::invalid_argument("--batch: in [1, the training pairs]");
  order_.resize(train_.size());
  next_ = order_.size();  // (the first Next() shuffles)
}

// The next full batch of one length: pairs are taken in the epoch's order, each into its length's pending batch.
CoupletBatch CoupletStream::Next() {
  for (;;) {
    if (next_ == order_.size()) {
      for (uint32_t i = 0; i < order_.size(); ++i) order_[i] = i;
      for (size_t i = order_.size(); i > 1; --i) std::swap(order_[i - 1], order_[rng_.Below(i)]);
      next_ = 0;
      ++epoch_;
    }
    const uint32_t at = order_[next_++];
    std::vector<uint32_t>& pending = pending_[train_[at].upper.size()];
    pending.push_back(at);
    if (pending.size() == batch_) {
      CoupletBatch b = MakeCoupletBatch(d_, train_, pending);
      pending.clear();
      return b;
    }
  }
}

}  // namespace attnlab::tools
