// Trains the poem model (issue 26 item 2; docs/poem-model.md) with attnlab's own engine: an attnlab::Transformer
// (Llama family by default) on the token files of scripts/poems/prepare.mjs, with Transformer::TrainStep
// (torch.optim.AdamW, clip_grad_norm_), a linear warm-up and cosine learning-rate schedule, its own seeded data order,
// a loss log (CSV), a character-bigram baseline, and a Hugging Face folder (config.json, model.safetensors in F16).
//
//   attnlab_train_poems --data DIR --out DIR [options]        train (options: --help)
//   attnlab_train_poems --data DIR --bench N [options]        time N training steps of this configuration
//   attnlab_train_poems --data DIR --eval FILE.safetensors    evaluate a checkpoint (F32/F16) of this configuration
//
// Results do not depend on --threads (attnlab's invariant); they do depend on the CPU's SIMD target (summation
// order), so a run on another machine agrees with the logged losses to float32 rounding, not bit for bit.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <malloc.h>
#include <sys/resource.h>

#include "attnlab/attention.h"
#include "attnlab/threads.h"
#include "attnlab/transformer.h"

namespace {

using attnlab::Shape;
using attnlab::Tensor;
using attnlab::TensorView;
using attnlab::TokensView;
using attnlab::Transformer;
using attnlab::TransformerConfig;
using Poem = std::vector<int32_t>;
using Clock = std::chrono::steady_clock;

constexpr int32_t kIgnore = -100;

struct Options {
  std::string data, out, eval_file, dump;
  std::string arch = "llama";
  int64_t embed = 192, layers = 4, heads = 4, kv_heads = 0, hidden = 0, context = 0;
  int64_t batch = 48, steps = 6000, warmup = 200, log_every = 50, eval_every = 500, eval_poems = 1000;
  double lr = 3e-3, min_lr_ratio = 0.1, weight_decay = 0.1, beta1 = 0.9, beta2 = 0.99, eps = 1e-8, clip = 1.0;
  double rope_theta = 10000, norm_eps = 1e-5;
  uint64_t seed = 1;
  int64_t threads = 2, bench = 0;
  int64_t train_poems = 0;       // 0 = all
  int64_t final_eval_poems = 0;  // 0 = all
  int64_t poems_per_row = 1;
};

[[noreturn]] void Die(const std::string& msg) {
  std::fprintf(stderr, "train_poems: %s\n", msg.c_str());
  std::exit(2);
}

void Usage() {
  std::printf(
      "attnlab_train_poems --data DIR (scripts/poems/prepare.mjs's output) and one of\n"
      "  --out DIR            train, then write DIR/model.safetensors (F16), config.json, losses.csv, summary.json\n"
      "  --bench N            time N training steps (after 2 untimed ones) and exit\n"
      "  --eval FILE          evaluate a checkpoint of this configuration on every split\n"
      "attnlab_train_poems --selftest: check the float32 -> F16 conversion on every half and midpoint\n"
      "model:  --arch llama|gpt2 (llama)  --embed E (192)  --layers L (4)  --heads H (4)  --kv-heads (H)\n"
      "        --hidden (llama: 8E/3 rounded up to 32; gpt2: 4E)  --context (data.txt's)  --rope-theta (1e4)\n"
      "train:  --seed (1)  --batch poems (48)  --steps (6000)  --lr (3e-3)  --warmup steps (200)\n"
      "        --min-lr-ratio (0.1: cosine from lr to lr*ratio)  --weight-decay (0.1)  --beta1 (0.9) --beta2 (0.99)\n"
      "        --eps (1e-8)  --clip (1.0)  --threads (2)  --train-poems N (the first N of the train split; 0 = all)\n"
      "        --poems-per-row K (1: each row of a batch is K whole poems one after another; a multiple of K poems)\n"
      "log:    --log-every (50)  --eval-every (500)  --eval-poems (1000: the validation curve's poems)\n"
      "        --final-eval-poems (0: the final evaluation on all poems of each held-out split)\n"
      "check:  --dump DIR  write the initial and final weights (F32), every batch and every step's loss, for\n"
      "        scripts/poems/check_pytorch.py\n");
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  std::map<std::string, std::string*> strings = {
      {"--data", &o.data}, {"--out", &o.out}, {"--eval", &o.eval_file}, {"--dump", &o.dump}, {"--arch", &o.arch}};
  std::map<std::string, int64_t*> ints = {{"--embed", &o.embed},
                                          {"--layers", &o.layers},
                                          {"--heads", &o.heads},
                                          {"--kv-heads", &o.kv_heads},
                                          {"--hidden", &o.hidden},
                                          {"--context", &o.context},
                                          {"--batch", &o.batch},
                                          {"--steps", &o.steps},
                                          {"--warmup", &o.warmup},
                                          {"--threads", &o.threads},
                                          {"--log-every", &o.log_every},
                                          {"--eval-every", &o.eval_every},
                                          {"--bench", &o.bench},
                                          {"--eval-poems", &o.eval_poems},
                                          {"--train-poems", &o.train_poems},
                                          {"--final-eval-poems", &o.final_eval_poems},
                                          {"--poems-per-row", &o.poems_per_row}};
  std::map<std::string, double*> doubles = {{"--lr", &o.lr},
                                            {"--min-lr-ratio", &o.min_lr_ratio},
                                            {"--weight-decay", &o.weight_decay},
                                            {"--beta1", &o.beta1},
                                            {"--beta2", &o.beta2},
                                            {"--eps", &o.eps},
                                            {"--clip", &o.clip},
                                            {"--rope-theta", &o.rope_theta},
                                            {"--norm-eps", &o.norm_eps}};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      Usage();
      std::exit(0);
    }
    if (i + 1 >= argc) Die(a + " needs a value (--help)");
    const std::string v = argv[++i];
    char* end = nullptr;
    if (auto s = strings.find(a); s != strings.end()) {
      *s->second = v;
    } else if (a == "--seed") {
      o.seed = std::strtoull(v.c_str(), &end, 10);
    } else if (auto n = ints.find(a); n != ints.end()) {
      *n->second = std::strtoll(v.c_str(), &end, 10);
    } else if (auto d = doubles.find(a); d != doubles.end()) {
      *d->second = std::strtod(v.c_str(), &end);
    } else {
      Die("unknown argument " + a + " (--help)");
    }
    if (end && *end) Die(a + ": not a number: " + v);
  }
  if (o.data.empty()) Die("--data is required (--help)");
  if (o.out.empty() && o.bench == 0 && o.eval_file.empty()) Die("one of --out, --bench, --eval is required");
  return o;
}

// ---------------------------------------------------------------------------------------------------------------
// Data: data.txt (key value lines) and <split>.u16 (little-endian uint16 ids, poem after poem, each BOS … EOS).

struct Data {
  int64_t vocab = 0, context = 0;
  int32_t pad = 0, unk = 1, bos = 2, eos = 3;
  std::map<std::string, std::vector<Poem>> splits;
  std::map<std::string, std::string> files;
};

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) Die("cannot read " + path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

Data ReadData(const std::string& dir) {
  Data d;
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
  for (const auto& [name, file] : d.files) {
    const std::string bytes = ReadFile(dir + "/" + file);
    if (bytes.size() % 2) Die(file + ": odd size");
    std::vector<Poem>& poems = d.splits[name];
    Poem cur;
    for (size_t i = 0; i < bytes.size(); i += 2) {
      const int32_t id = static_cast<uint8_t>(bytes[i]) | (static_cast<uint8_t>(bytes[i + 1]) << 8);
      if (id >= d.vocab) Die(file + ": id out of range");
      if (id == d.bos && !cur.empty()) Die(file + ": BOS inside a poem");
      cur.push_back(id);
      if (id == d.eos) {
        if (cur.front() != d.bos) Die(file + ": poem without BOS");
        poems.push_back(std::move(cur));
        cur.clear();
      }
    }
    if (!cur.empty()) Die(file + ": truncated poem");
  }
  return d;
}

// ---------------------------------------------------------------------------------------------------------------
// The data order: xoshiro256** seeded through splitmix64, Fisher–Yates per epoch.

class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (uint64_t& x : s_) {
      seed += 0x9E3779B97F4A7C15ull;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      x = z ^ (z >> 31);
    }
  }
  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9, t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }
  uint64_t Below(uint64_t n) {  // unbiased, by rejection
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do x = Next();
    while (x >= limit);
    return x % n;
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

struct Batch {
  std::vector<int32_t> tokens, targets;
  int64_t b = 0, t = 0;
  TokensView Tokens() const { return {tokens.data(), {b, t}}; }
  TokensView Targets() const { return {targets.data(), {b, t}}; }
};

// Whole poems, right-padded: a row is `per_row` poems one after another ([BOS] a [EOS] [BOS] b [EOS] …); the input is
// row[0 … n−2], the target row[1 … n−1], except that an [EOS] input has target −100 (the next poem's [BOS] is given,
// not predicted: every row predicts exactly its poems' characters and [EOS]s). Padding is [PAD] with target −100
// (causal attention: a row's positions never see the padding after it).
Batch MakeBatch(const std::vector<Poem>& poems, const int64_t* idx, int64_t count, int32_t pad, int32_t eos,
                int64_t per_row = 1) {
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

class BatchStream {
 public:
  BatchStream(const std::vector<Poem>& poems, int64_t batch, uint64_t seed, int32_t pad, int32_t eos, int64_t per_row)
      : poems_(poems), batch_(batch), rng_(seed), pad_(pad), eos_(eos), per_row_(per_row), order_(poems.size()) {
    if (static_cast<int64_t>(poems.size()) < batch) Die("fewer training poems than --batch");
    if (per_row < 1 || batch % per_row != 0) Die("--batch must be a multiple of --poems-per-row");
    Shuffle();
  }
  // The next batch; an epoch's last incomplete batch is dropped, and the next epoch is a new permutation.
  Batch Next() {
    if (pos_ + batch_ > static_cast<int64_t>(order_.size())) Shuffle();
    Batch b = MakeBatch(poems_, order_.data() + pos_, batch_, pad_, eos_, per_row_);
    pos_ += batch_;
    return b;
  }
  int64_t epoch() const { return epoch_; }

 private:
  void Shuffle() {
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<int64_t>(i);
    for (size_t i = order_.size() - 1; i > 0; --i) std::swap(order_[i], order_[rng_.Below(i + 1)]);
    pos_ = 0;
    ++epoch_;
  }
  const std::vector<Poem>& poems_;
  int64_t batch_;
  Rng rng_;
  int32_t pad_, eos_;
  int64_t per_row_;
  std::vector<int64_t> order_;
  int64_t pos_ = 0, epoch_ = 0;
};

// ---------------------------------------------------------------------------------------------------------------
// Evaluation: mean cross-entropy (nats per predicted token, as the training loss) over all targets of a set of poems,
// and its parts: per couplet (the targets of couplet k are its characters and punctuation; EOS counts apart).

struct EvalResult {
  double loss = 0;  // mean over all targets
  int64_t count = 0;
  std::vector<double> couplet_sum;  // per couplet index; the last entry: EOS
  std::vector<int64_t> couplet_count;
  double eos_sum = 0;
  int64_t eos_count = 0;
  double Couplet(size_t k) const { return couplet_count[k] ? couplet_sum[k] / couplet_count[k] : NAN; }
};

// Couplet index of target position j (predicting poem[j + 1]) in a poem with lines of n characters: each couplet is
// 2n + 2 tokens.
int64_t CoupletOf(const Poem& p, size_t j) {
  const int64_t chars = static_cast<int64_t>(p.size()) - 2;  // without BOS and EOS: 24 or 48 (5), 32 or 64 (7)
  const int64_t line = chars % 12 == 0 ? 5 : 7;
  return static_cast<int64_t>(j) / (2 * line + 2);
}

EvalResult Evaluate(Transformer& model, const std::vector<Poem>& poems, int64_t limit, const Data& d,
                    int64_t batch = 32) {
  EvalResult r;
  const int64_t n = limit > 0 ? std::min<int64_t>(limit, poems.size()) : static_cast<int64_t>(poems.size());
  const int64_t v = model.config().vocab_size;
  double total = 0;
  std::vector<int64_t> idx(n);
  for (int64_t i = 0; i < n; ++i) idx[i] = i;
  for (int64_t start = 0; start < n; start += batch) {
    const int64_t count = std::min(batch, n - start);
    const Batch b = MakeBatch(poems, idx.data() + start, count, d.pad, d.eos);
    const attnlab::TransformerOutput out = model.Forward(b.Tokens());
    for (int64_t i = 0; i < b.b; ++i) {
      const Poem& p = poems[idx[start + i]];
      for (int64_t j = 0; j < b.t; ++j) {
        const int32_t target = b.targets[i * b.t + j];
        if (target == kIgnore) continue;
        const float* row = out.logits.data.data() + (i * b.t + j) * v;
        double mx = row[0];
        for (int64_t k = 1; k < v; ++k) mx = std::max<double>(mx, row[k]);
        double sum = 0;
        for (int64_t k = 0; k < v; ++k) sum += std::exp(static_cast<double>(row[k]) - mx);
        const double nll = std::log(sum) + mx - row[target];
        total += nll;
        ++r.count;
        if (target == d.eos) {
          r.eos_sum += nll;
          ++r.eos_count;
        } else {
          const size_t k = static_cast<size_t>(CoupletOf(p, j));
          if (r.couplet_sum.size() <= k) {
            r.couplet_sum.resize(k + 1, 0);
            r.couplet_count.resize(k + 1, 0);
          }
          r.couplet_sum[k] += nll;
          ++r.couplet_count[k];
        }
      }
    }
  }
  r.loss = r.count ? total / r.count : NAN;
  return r;
}

// ---------------------------------------------------------------------------------------------------------------
// Baselines fit on the training split: add-k smoothed character bigram P(b | a) = (c(a,b) + k) / (c(a) + k V) over
// the V tokens of the vocabulary, and the add-one unigram.

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

// ---------------------------------------------------------------------------------------------------------------
// safetensors: F32 or F16 (IEEE half, round to nearest even), Hugging Face's names, header padded to 8 bytes.

uint16_t HalfFromFloat(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) return static_cast<uint16_t>(sign | (abs > 0x7F800000u ? 0x7E00u : 0x7C00u));  // NaN, inf
  if (abs >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds to ≥ 65520: inf
  if (abs < 0x38800000u) {                                               // below 2^-14: subnormal half (or 0)
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);           // below 2^-25: ±0
    const uint32_t mant = (abs & 0x7FFFFFu) | 0x800000u;
    // value = mant · 2^(e − 150) = (mant · 2^(e − 126)) half units of 2^-24: shift right by 126 − e (14 … 24).
    const int shift = 126 - static_cast<int>(abs >> 23);
    const uint32_t q = mant >> shift, rem = mant & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    return static_cast<uint16_t>(sign | (q + (rem > halfway || (rem == halfway && (q & 1)))));
  }
  const uint32_t q = (abs - 0x38000000u) >> 13, rem = abs & 0x1FFFu;  // rebias 127 → 15
  return static_cast<uint16_t>(sign | (q + (rem > 0x1000u || (rem == 0x1000u && (q & 1)))));
}

float FloatFromHalf(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  float f;
  if (e == 0) {
    f = std::ldexp(static_cast<float>(m), -24);
    return sign ? -f : f;
  }
  uint32_t x = e == 31 ? (sign | 0x7F800000u | (m << 13)) : (sign | ((e + 112) << 23) | (m << 13));
  std::memcpy(&f, &x, 4);
  return f;
}

// Exhaustive check of the two conversions: every half converts to a float and back unchanged (NaNs stay NaNs), and
// every float halfway between two neighbouring finite halves rounds to the one with an even mantissa, the floats
// just above and below it to the nearer one. Returns the number of failures.
int64_t CheckHalfConversion() {
  int64_t bad = 0;
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const float f = FloatFromHalf(static_cast<uint16_t>(h));
    const uint16_t back = HalfFromFloat(f);
    const bool nan = (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu);
    if (nan ? !(std::isnan(f) && (back & 0x7C00u) == 0x7C00u && (back & 0x3FFu)) : back != h) ++bad;
    const uint32_t mag = h & 0x7FFFu;
    if (mag >= 0x7BFFu) continue;  // the next half up is inf (or h is inf/NaN)
    const float lo = f, hi = FloatFromHalf(static_cast<uint16_t>(h + 1));
    const double mid = (static_cast<double>(lo) + hi) / 2;  // exact in float: halves have 11 significant bits
    const float m = static_cast<float>(mid);
    const uint16_t even = (h & 1) ? static_cast<uint16_t>(h + 1) : static_cast<uint16_t>(h);
    if (HalfFromFloat(m) != even) ++bad;
    if (HalfFromFloat(std::nextafter(m, lo)) != h) ++bad;
    if (HalfFromFloat(std::nextafter(m, hi)) != static_cast<uint16_t>(h + 1)) ++bad;
  }
  return bad;
}

std::string JsonString(const std::string& s) { return "\"" + s + "\""; }  // (names and dtypes: no escapes needed)

void WriteSafetensors(const std::string& path, const std::map<std::string, Tensor>& tensors, bool f16) {
  std::string header = "{\"__metadata__\":{\"format\":\"pt\"}";
  size_t offset = 0;
  const size_t elem = f16 ? 2 : 4;
  for (const auto& [name, t] : tensors) {
    std::string shape;
    for (int64_t d : t.shape) shape += (shape.empty() ? "" : ",") + std::to_string(d);
    const size_t bytes = t.data.size() * elem;
    header += "," + JsonString(name) + ":{\"dtype\":\"" + (f16 ? "F16" : "F32") + "\",\"shape\":[" + shape +
              "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + bytes) + "]}";
    offset += bytes;
  }
  header += "}";
  while ((header.size() + 8) % 8) header += ' ';
  std::ofstream f(path, std::ios::binary);
  if (!f) Die("cannot write " + path);
  const uint64_t n = header.size();
  unsigned char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
  f.write(reinterpret_cast<const char*>(len), 8);
  f << header;
  for (const auto& [name, t] : tensors) {
    if (f16) {
      std::vector<unsigned char> buf(t.data.size() * 2);
      for (size_t i = 0; i < t.data.size(); ++i) {
        const uint16_t h = HalfFromFloat(t.data[i]);
        buf[2 * i] = static_cast<unsigned char>(h);
        buf[2 * i + 1] = static_cast<unsigned char>(h >> 8);
      }
      f.write(reinterpret_cast<const char*>(buf.data()), buf.size());
    } else {
      f.write(reinterpret_cast<const char*>(t.data.data()), t.data.size() * 4);  // (little-endian hosts)
    }
  }
  if (!f) Die("write failed: " + path);
}

// A minimal reader for the files WriteSafetensors writes (and others with F32/F16 tensors and the same layout).
std::map<std::string, Tensor> ReadSafetensors(const std::string& path) {
  const std::string bytes = ReadFile(path);
  if (bytes.size() < 8) Die(path + ": too short");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<uint8_t>(bytes[i]);
  const std::string header = bytes.substr(8, n);
  const size_t base = 8 + n;
  std::map<std::string, Tensor> out;
  size_t pos = 0;
  while ((pos = header.find("\"dtype\"", pos)) != std::string::npos) {
    const size_t name_end = header.rfind("\":{", pos);
    const size_t name_start = header.rfind('"', name_end - 1) + 1;
    const std::string name = header.substr(name_start, name_end - name_start);
    const size_t dq = header.find('"', header.find(':', pos) + 1) + 1;
    const std::string dtype = header.substr(dq, header.find('"', dq) - dq);
    const size_t sh = header.find('[', header.find("\"shape\"", pos)) + 1;
    const size_t sh_end = header.find(']', sh);
    Tensor t;
    std::istringstream shape(header.substr(sh, sh_end - sh));
    for (std::string tok; std::getline(shape, tok, ',');) t.shape.push_back(std::stoll(tok));
    const size_t off = header.find('[', header.find("\"data_offsets\"", pos)) + 1;
    const size_t begin = std::stoull(header.substr(off));
    const size_t end = std::stoull(header.substr(header.find(',', off) + 1));
    if (dtype == "F32") {
      t.data.resize((end - begin) / 4);
      std::memcpy(t.data.data(), bytes.data() + base + begin, end - begin);
    } else if (dtype == "F16") {
      t.data.resize((end - begin) / 2);
      for (size_t i = 0; i < t.data.size(); ++i) {
        const uint8_t* p = reinterpret_cast<const uint8_t*>(bytes.data() + base + begin + 2 * i);
        t.data[i] = FloatFromHalf(static_cast<uint16_t>(p[0] | (p[1] << 8)));
      }
    } else {
      Die(path + ": dtype " + dtype + " of " + name);
    }
    out[name] = std::move(t);
    pos = sh_end;
  }
  return out;
}

void LoadInto(Transformer& model, const std::map<std::string, Tensor>& tensors) {
  std::map<std::string, TensorView> views;
  for (const auto& [name, t] : tensors) views[name] = TensorView{t.data.data(), t.shape};
  model.LoadStateDict(views);
}

std::map<std::string, Tensor> Rounded16(const std::map<std::string, Tensor>& tensors) {
  std::map<std::string, Tensor> out = tensors;
  for (auto& [name, t] : out) {
    for (float& x : t.data) x = FloatFromHalf(HalfFromFloat(x));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------

TransformerConfig MakeConfig(const Options& o, const Data& d) {
  TransformerConfig c;
  c.arch = o.arch;
  if (o.arch != "gpt2" && o.arch != "llama") Die("--arch: llama or gpt2");
  c.vocab_size = d.vocab;
  c.context_length = o.context ? o.context : d.context;
  c.embed_dim = o.embed;
  c.num_layers = o.layers;
  c.num_heads = o.heads;
  c.norm_eps = o.norm_eps;
  if (c.arch == "llama") {
    c.num_kv_heads = o.kv_heads ? o.kv_heads : o.heads;
    c.hidden_dim = o.hidden ? o.hidden : (8 * o.embed / 3 + 31) / 32 * 32;
    c.rope_theta = o.rope_theta;
    c.tie_embeddings = true;
  }
  return c;
}

std::string Fmt(double x, int digits = 6) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

std::string HfConfigJson(const TransformerConfig& c, const Data& d) {
  std::ostringstream s;
  s << "{\n";
  if (c.arch == "llama") {
    s << "  \"architectures\": [\"LlamaForCausalLM\"],\n"
      << "  \"model_type\": \"llama\",\n"
      << "  \"vocab_size\": " << c.vocab_size << ",\n"
      << "  \"hidden_size\": " << c.embed_dim << ",\n"
      << "  \"intermediate_size\": " << c.hidden_dim << ",\n"
      << "  \"num_hidden_layers\": " << c.num_layers << ",\n"
      << "  \"num_attention_heads\": " << c.num_heads << ",\n"
      << "  \"num_key_value_heads\": " << c.num_kv_heads << ",\n"
      << "  \"head_dim\": " << c.embed_dim / c.num_heads << ",\n"
      << "  \"max_position_embeddings\": " << c.context_length << ",\n"
      << "  \"rms_norm_eps\": " << c.norm_eps << ",\n"
      << "  \"rope_theta\": " << Fmt(c.rope_theta, 1) << ",\n"
      << "  \"rope_scaling\": null,\n"
      << "  \"hidden_act\": \"silu\",\n"
      << "  \"attention_bias\": false,\n"
      << "  \"attention_dropout\": 0.0,\n"
      << "  \"mlp_bias\": false,\n"
      << "  \"initializer_range\": 0.02,\n"
      << "  \"tie_word_embeddings\": true,\n";
  } else {
    s << "  \"architectures\": [\"GPT2LMHeadModel\"],\n"
      << "  \"model_type\": \"gpt2\",\n"
      << "  \"vocab_size\": " << c.vocab_size << ",\n"
      << "  \"n_positions\": " << c.context_length << ",\n"
      << "  \"n_embd\": " << c.embed_dim << ",\n"
      << "  \"n_layer\": " << c.num_layers << ",\n"
      << "  \"n_head\": " << c.num_heads << ",\n"
      << "  \"n_inner\": null,\n"
      << "  \"activation_function\": \"gelu_new\",\n"
      << "  \"layer_norm_epsilon\": " << c.norm_eps << ",\n"
      << "  \"resid_pdrop\": 0.0, \"embd_pdrop\": 0.0, \"attn_pdrop\": 0.0,\n"
      << "  \"tie_word_embeddings\": true,\n";
  }
  s << "  \"bos_token_id\": " << d.bos << ",\n"
    << "  \"eos_token_id\": " << d.eos << ",\n"
    << "  \"pad_token_id\": " << d.pad << ",\n"
    << "  \"torch_dtype\": \"float16\",\n"
    << "  \"use_cache\": true\n"
    << "}\n";
  return s.str();
}

double LearningRate(const Options& o, int64_t step) {  // step 1 … steps
  if (step <= o.warmup) return o.lr * static_cast<double>(step) / static_cast<double>(o.warmup);
  const double progress =
      static_cast<double>(step - o.warmup) / static_cast<double>(std::max<int64_t>(1, o.steps - o.warmup));
  const double min_lr = o.lr * o.min_lr_ratio;
  return min_lr + 0.5 * (o.lr - min_lr) * (1 + std::cos(3.14159265358979323846 * std::min(1.0, progress)));
}

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

// CPU seconds of this process (user + system, all threads): on a shared machine the wall time overstates the work.
double CpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

std::string EvalJson(const EvalResult& r) {
  std::string s = "{\"loss\": " + Fmt(r.loss) + ", \"targets\": " + std::to_string(r.count) + ", \"couplets\": [";
  for (size_t k = 0; k < r.couplet_sum.size(); ++k) s += (k ? ", " : "") + Fmt(r.Couplet(k));
  s += "], \"eos\": " + Fmt(r.eos_count ? r.eos_sum / r.eos_count : NAN) + "}";
  return s;
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  if (!f) Die("cannot write " + path);
  f << text;
}

// ---------------------------------------------------------------------------------------------------------------
// The run's stages: main() picks --selftest, --eval, --bench or training; training is baselines → loop → the shipped
// F16 folder → summary.json.

Transformer::AdamWOptions MakeAdamW(const Options& o) {
  Transformer::AdamWOptions adamw;
  adamw.weight_decay = static_cast<float>(o.weight_decay);
  adamw.beta1 = static_cast<float>(o.beta1);
  adamw.beta2 = static_cast<float>(o.beta2);
  adamw.eps = static_cast<float>(o.eps);
  adamw.clip_grad_norm = static_cast<float>(o.clip);
  return adamw;
}

// --eval: the held-out splits' losses of a checkpoint.
int RunEval(Transformer& model, const Options& o, const Data& d) {
  LoadInto(model, ReadSafetensors(o.eval_file));
  for (const auto& [name, poems] : d.splits) {
    if (name == "train") continue;
    std::printf("%s: %s\n", name.c_str(), EvalJson(Evaluate(model, poems, o.final_eval_poems, d)).c_str());
  }
  return 0;
}

// --bench N: wall and CPU time of N training steps (after 2 warm-up steps), and the evaluation's speed.
int RunBench(Transformer& model, const Options& o, const Data& d, BatchStream& stream,
             Transformer::AdamWOptions adamw) {
  adamw.lr = 1e-4f;
  int64_t tokens = 0;
  for (int i = 0; i < 2; ++i) {
    const Batch b = stream.Next();
    model.TrainStep(b.Tokens(), b.Targets(), adamw);
  }
  const auto start = Clock::now();
  const double cpu0 = CpuSeconds();
  for (int64_t i = 0; i < o.bench; ++i) {
    const Batch b = stream.Next();
    tokens += b.b * b.t;
    model.TrainStep(b.Tokens(), b.Targets(), adamw);
  }
  const double s = Seconds(start), cpu = CpuSeconds() - cpu0;
  const auto e0 = Clock::now();
  const EvalResult ev = Evaluate(model, d.splits.at("validation"), 512, d);
  const double es = Seconds(e0);
  std::printf("bench: %.1f ms/step, %.0f tokens/s (batch %" PRId64 " poems, %" PRId64
              " padded tokens per step), %.1f CPU ms/step (all threads); eval %.0f targets/s\n",
              1e3 * s / o.bench, tokens / s, o.batch, tokens / o.bench, 1e3 * cpu / o.bench, ev.count / es);
  return 0;
}

// The baselines: an add-k character bigram (k chosen on validation) and an add-one unigram, fit on `train`.
struct Baselines {
  double k = 1, validation = INFINITY, test = 0, neighbour = 0, unigram_validation = 0, unigram_test = 0;
  std::string grid;  // "k": validation loss, for every k tried
};

Baselines FitBaselines(const std::vector<Poem>& train, const Data& d) {
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

// --dump DIR (for scripts/poems/check_pytorch.py): the initial weights, every batch, every step's lr, loss and norm.
class Dump {
 public:
  Dump(const std::string& dir, const Transformer& model) : dir_(dir) {
    if (dir.empty()) return;
    MakeDir(dir);
    WriteSafetensors(dir + "/init.safetensors", model.StateDict(), false);
    batches_.open(dir + "/batches.i32", std::ios::binary);
    steps_.open(dir + "/steps.csv");
    steps_ << "step,lr,loss,grad_norm\n";
  }
  void Step(int64_t step, const Batch& b, float lr, const Transformer::StepResult& r) {
    if (dir_.empty()) return;
    const int32_t dims[2] = {static_cast<int32_t>(b.b), static_cast<int32_t>(b.t)};
    batches_.write(reinterpret_cast<const char*>(dims), 8);
    batches_.write(reinterpret_cast<const char*>(b.tokens.data()), b.tokens.size() * 4);
    batches_.write(reinterpret_cast<const char*>(b.targets.data()), b.targets.size() * 4);
    char line[128];
    std::snprintf(line, sizeof line, "%" PRId64 ",%.9g,%.9g,%.9g\n", step, lr, r.loss, r.grad_norm);
    steps_ << line;
  }
  void Final(const std::map<std::string, Tensor>& state) const {
    if (!dir_.empty()) WriteSafetensors(dir_ + "/final.safetensors", state, false);
  }
  static void MakeDir(const std::string& dir) {
    const std::string mkdir = "mkdir -p '" + dir + "'";
    if (std::system(mkdir.c_str()) != 0) Die("cannot create " + dir);
  }

 private:
  std::string dir_;
  std::ofstream batches_, steps_;
};

// losses.csv and the console: the mean train loss and gradient norm every --log-every steps, the validation loss on
// the first --eval-poems poems every --eval-every steps.
struct TrainTotals {
  double seconds = 0, cpu_seconds = 0, eval_seconds = 0;
  int64_t tokens_seen = 0;
};

class TrainLog {
 public:
  TrainLog(const Options& o, const Data& d) : o_(o), d_(d), csv_(o.out + "/losses.csv") {
    csv_ << "step,epoch,tokens,lr,train_loss,grad_norm,val_loss,elapsed_s,cpu_s\n";
  }
  void Step(Transformer& model, int64_t step, int64_t epoch, float lr, const Transformer::StepResult& r,
            TrainTotals& totals) {
    loss_sum_ += r.loss;
    norm_sum_ += r.grad_norm;
    ++n_;
    const bool log = step % o_.log_every == 0 || step == o_.steps;
    const bool eval = o_.eval_every > 0 && (step % o_.eval_every == 0 || step == o_.steps);
    if (!log && !eval) return;
    std::string val_loss;
    if (eval) {
      const auto e0 = Clock::now();
      val_loss = Fmt(Evaluate(model, d_.splits.at("validation"), o_.eval_poems, d_).loss);
      totals.eval_seconds += Seconds(e0);
    }
    const double elapsed = Seconds(start_);
    csv_ << step << "," << epoch << "," << totals.tokens_seen << "," << Fmt(lr, 8) << ","
         << (log ? Fmt(loss_sum_ / n_) : "") << "," << (log ? Fmt(norm_sum_ / n_, 4) : "") << "," << val_loss << ","
         << Fmt(elapsed, 1) << "," << Fmt(CpuSeconds() - cpu_start_, 1) << "\n";
    csv_.flush();
    std::printf("step %6" PRId64 "  epoch %" PRId64 "  lr %.2e  train %.4f  |g| %.3f%s%s  %.0f s (%.0f ms/step)\n",
                step, epoch, lr, loss_sum_ / n_, norm_sum_ / n_, eval ? "  val " : "", val_loss.c_str(), elapsed,
                1e3 * (elapsed - totals.eval_seconds) / step);
    std::fflush(stdout);
    loss_sum_ = norm_sum_ = 0;
    n_ = 0;
  }
  void Finish(TrainTotals& totals) const {
    totals.seconds = Seconds(start_);
    totals.cpu_seconds = CpuSeconds() - cpu_start_;
  }

 private:
  const Options& o_;
  const Data& d_;
  std::ofstream csv_;
  const Clock::time_point start_ = Clock::now();
  const double cpu_start_ = CpuSeconds();
  double loss_sum_ = 0, norm_sum_ = 0;
  int64_t n_ = 0;
};

// The training loop: --steps AdamW steps on the stream's batches at the scheduled learning rate.
TrainTotals Train(Transformer& model, const Options& o, const Data& d, BatchStream& stream,
                  Transformer::AdamWOptions adamw, Dump& dump) {
  TrainLog log(o, d);
  TrainTotals totals;
  for (int64_t step = 1; step <= o.steps; ++step) {
    const Batch b = stream.Next();
    adamw.lr = static_cast<float>(LearningRate(o, step));
    const Transformer::StepResult r = model.TrainStep(b.Tokens(), b.Targets(), adamw);
    if (!std::isfinite(r.loss)) Die("loss is not finite at step " + std::to_string(step));
    for (int32_t t : b.targets) totals.tokens_seen += t != kIgnore;
    dump.Step(step, b, adamw.lr, r);
    log.Step(model, step, stream.epoch(), adamw.lr, r, totals);
  }
  log.Finish(totals);
  return totals;
}

// What the run ships and how it scores: the F16 weights as written, read back (checked to be exactly the F16
// rounding) and loaded into a fresh model, evaluated on every held-out split and the first 5000 training poems.
struct ShippedResult {
  EvalResult validation_f32, train_part;
  std::map<std::string, EvalResult> held_out;
};

ShippedResult WriteShipped(Transformer& model, const TransformerConfig& config, const Options& o, const Data& d,
                           const Dump& dump) {
  const std::map<std::string, Tensor> state = model.StateDict();
  dump.Final(state);
  ShippedResult r;
  r.validation_f32 = Evaluate(model, d.splits.at("validation"), o.final_eval_poems, d);
  WriteSafetensors(o.out + "/model.safetensors", state, true);
  WriteSafetensors(o.out + "/model-f32.safetensors", state, false);
  const std::map<std::string, Tensor> back = ReadSafetensors(o.out + "/model.safetensors");
  for (const auto& [name, t] : Rounded16(state)) {
    const auto it = back.find(name);
    if (it == back.end() || it->second.shape != t.shape || it->second.data != t.data) Die("F16 read-back: " + name);
  }
  Transformer shipped(config, 0, false);
  LoadInto(shipped, back);
  for (const auto& [name, poems] : d.splits) {
    if (name != "train") r.held_out[name] = Evaluate(shipped, poems, o.final_eval_poems, d);
  }
  r.train_part = Evaluate(shipped, d.splits.at("train"), 5000, d);
  WriteText(o.out + "/config.json", HfConfigJson(config, d));
  return r;
}

std::string SummaryJson(const Options& o, const Transformer& model, const BatchStream& stream,
                        const TrainTotals& totals, const ShippedResult& shipped, const Baselines& base,
                        double total_s) {
  std::ostringstream s;
  s << "{\n  \"cpu_target\": \"" << attnlab::ActiveTargetName() << "\",\n  \"threads\": " << attnlab::ThreadCount()
    << ",\n  \"parameters\": " << model.ParameterCount() << ",\n  \"steps\": " << o.steps
    << ",\n  \"batch_poems\": " << o.batch << ",\n  \"poems_per_row\": " << o.poems_per_row
    << ",\n  \"epochs_started\": " << stream.epoch() << ",\n  \"target_tokens_seen\": " << totals.tokens_seen
    << ",\n  \"seed\": " << o.seed << ",\n  \"lr\": " << o.lr << ", \"warmup\": " << o.warmup
    << ", \"min_lr_ratio\": " << o.min_lr_ratio << ", \"weight_decay\": " << o.weight_decay << ", \"betas\": ["
    << o.beta1 << ", " << o.beta2 << "], \"eps\": " << o.eps << ", \"clip_grad_norm\": " << o.clip
    << ",\n  \"train_seconds\": " << Fmt(totals.seconds, 1)
    << ",\n  \"train_cpu_seconds\": " << Fmt(totals.cpu_seconds, 1)
    << ",\n  \"eval_seconds_during_training\": " << Fmt(totals.eval_seconds, 1)
    << ",\n  \"total_seconds\": " << Fmt(total_s, 1) << ",\n  \"total_cpu_seconds\": " << Fmt(CpuSeconds(), 1)
    << ",\n  \"validation_f32\": " << EvalJson(shipped.validation_f32)
    << ",\n  \"f16\": {\n    \"train_first_5000\": " << EvalJson(shipped.train_part);
  for (const auto& [name, r] : shipped.held_out) s << ",\n    \"" << name << "\": " << EvalJson(r);
  s << "\n  },\n  \"bigram\": {\"k\": " << base.k << ", \"validation\": " << Fmt(base.validation)
    << ", \"test\": " << Fmt(base.test) << ", \"neighbour\": " << Fmt(base.neighbour) << ", \"validation_by_k\": {"
    << base.grid << "}},\n  \"unigram\": {\"validation\": " << Fmt(base.unigram_validation)
    << ", \"test\": " << Fmt(base.unigram_test) << "}\n}\n";
  return s.str();
}

}  // namespace

int main(int argc, char** argv) {
  // The F16 writer is checked on every half before anything else (and alone with --selftest).
  if (const int64_t bad = CheckHalfConversion(); bad != 0) Die("F16 conversion: " + std::to_string(bad) + " failures");
  if (argc == 2 && std::string(argv[1]) == "--selftest") {
    std::printf("F16 conversion: all 65536 halves round-trip, every midpoint rounds to even\n");
    return 0;
  }
  const Options o = ParseArgs(argc, argv);
  // A training step allocates its logits (B·T·V floats, tens of MB) afresh: keep freed memory in the heap instead of
  // returning it to the system (glibc maps blocks above 32 MB anew each time, and the kernel zeroes every page).
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  attnlab::SetThreadCount(static_cast<size_t>(std::max<int64_t>(1, o.threads)));
  const auto t0 = Clock::now();
  Data d = ReadData(o.data);
  std::vector<Poem>& train = d.splits["train"];
  if (o.train_poems > 0 && o.train_poems < static_cast<int64_t>(train.size())) train.resize(o.train_poems);
  const TransformerConfig config = MakeConfig(o, d);
  Transformer model(config, o.seed);
  std::printf("attnlab_train_poems on %s, %zu threads: %s E=%" PRId64 " L=%" PRId64 " H=%" PRId64 " KV=%" PRId64
              " hidden=%" PRId64 " V=%" PRId64 " context=%" PRId64 ", %" PRId64 " parameters; %zu training poems\n",
              attnlab::ActiveTargetName(), attnlab::ThreadCount(), o.arch.c_str(), config.embed_dim, config.num_layers,
              config.num_heads, config.num_kv_heads, config.hidden_dim, config.vocab_size, config.context_length,
              model.ParameterCount(), train.size());
  std::fflush(stdout);
  if (!o.eval_file.empty()) return RunEval(model, o, d);

  const Transformer::AdamWOptions adamw = MakeAdamW(o);
  BatchStream stream(train, o.batch, o.seed ^ 0x5EED0DA7A0ull, d.pad, d.eos, o.poems_per_row);
  if (o.bench > 0) return RunBench(model, o, d, stream, adamw);

  Dump::MakeDir(o.out);
  Dump dump(o.dump, model);
  const Baselines base = FitBaselines(train, d);
  const TrainTotals totals = Train(model, o, d, stream, adamw, dump);
  const ShippedResult shipped = WriteShipped(model, config, o, d, dump);
  const std::string summary = SummaryJson(o, model, stream, totals, shipped, base, Seconds(t0));
  WriteText(o.out + "/summary.json", summary);
  std::printf("%s", summary.c_str());
  return 0;
}
