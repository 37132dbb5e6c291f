// Trains the couplet model (issue 34 §1; docs/couplet-model.md) with attnlab's own engine: a `marian` (MarianMTModel;
// or with --arch t5 a T5ForConditionalGeneration) that writes the lower line of a couplet from the upper, on the Song
// pairs of scripts/couplet/prepare.mjs, with Transformer::TrainStep on the batch form (input ids, labels; decoder
// inputs shift_right(labels)), a linear warm-up and cosine schedule, a seeded data order, a loss log (CSV), weight
// snapshots, and on the held-out splits: the loss by couplet, the characters right, and every decoder layer and
// head's mean cross-attention weight on the aligned upper character, parallel (颔联, 颈联) against control (首联,
// 尾联) couplets. Writes a Hugging Face folder (config.json, model.safetensors in F16, the tokenizer files).
//
//   attnlab_train_couplet --data DIR --out DIR [options]        train (options: --help)
//   attnlab_train_couplet --data DIR --bench N [options]        time N training steps of this configuration
//
// The Tang test split is scored once, at the end, on the shipped F16 weights; tuning uses the Song validation split.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnlab/attention.h"
#include "attnlab/threads.h"
#include "attnlab/transformer.h"
#include "cpp/src/rng.h"
#include "cpp/tools/common/couplet_data.h"
#include "cpp/tools/common/files.h"
#include "cpp/tools/common/flags.h"
#include "cpp/tools/common/log.h"
#include "cpp/tools/common/lr_schedule.h"
#include "cpp/tools/common/safetensors.h"
#include "nlohmann/json.hpp"

namespace attnlab::tools {
namespace {

struct Options {
  std::string data, out, eval_file, arch = "marian", ff = "gated-gelu", act = "swish",
                                    snapshots = "0,100,200,400,800,1600,3200,6400";
  int64_t embed = 128, layers = 3, decoder_layers = 3, heads = 4, head_dim = 32, hidden = 384, buckets = 8,
          max_distance = 16;
  int64_t eval_pairs = 4000, train_pairs = 0, tied = 0;
  TrainFlags train{{1e-3, 0.1, 200, 8000}, {0.1, 0.9, 0.99, 1e-8, 1.0}, 64, 50, 500};
};

const char kUsage[] =
    "attnlab_train_couplet --data DIR (scripts/couplet/prepare.mjs's output) and one of\n"
    "  --out DIR     train, then write DIR/model.safetensors (F16), config.json, the tokenizer files, losses.csv,\n"
    "                summary.json, snapshots/step-S.safetensors\n"
    "  --bench N     time N training steps (after 2 untimed ones) and exit\n"
    "  --eval FILE   score a checkpoint (F32/F16/BF16 safetensors) of this configuration on validation and test\n"
    "model:  --arch marian|t5 (marian)  --embed E (128)  --layers (3)  --decoder-layers (3)  --heads (4)  --hidden "
    "(384)\n"
    "        t5: --head-dim (32)  --ff relu|gated-gelu (gated-gelu)  --buckets (8)  --max-distance (16)  --tied 0|1 "
    "(0)\n"
    "        marian: --act swish|gelu|relu (swish); head dim E/H, the embedding x sqrt(E), tied head\n"
    "train:  --seed (1)  --batch pairs (64)  --steps (8000)  --lr (1e-3)  --warmup (200)  --min-lr-ratio (0.1)\n"
    "        --weight-decay (0.1)  --beta1 (0.9)  --beta2 (0.99)  --eps (1e-8)  --clip (1.0)  --threads (2)\n"
    "        --train-pairs N (0: all; else the first N training pairs: an overfitting check)\n"
    "log:    --log-every (50)  --eval-every (500)  --eval-pairs (4000: the validation curve's pairs)\n"
    "        --snapshots S1,S2,... (0,100,200,400,800,1600,3200,6400: the steps whose weights are also written)\n";

Options ParseArgs(int argc, char** argv) {
  Options o;
  std::map<std::string, int64_t*> ints = {{"--embed", &o.embed},
                                          {"--layers", &o.layers},
                                          {"--decoder-layers", &o.decoder_layers},
                                          {"--heads", &o.heads},
                                          {"--head-dim", &o.head_dim},
                                          {"--hidden", &o.hidden},
                                          {"--buckets", &o.buckets},
                                          {"--max-distance", &o.max_distance},
                                          {"--eval-pairs", &o.eval_pairs},
                                          {"--train-pairs", &o.train_pairs},
                                          {"--tied", &o.tied}};
  std::map<std::string, double*> doubles;
  o.train.AddTo(ints, doubles);
  const std::map<std::string, std::string*> strings = {
      {"--data", &o.data}, {"--out", &o.out}, {"--eval", &o.eval_file},     {"--arch", &o.arch},
      {"--ff", &o.ff},     {"--act", &o.act}, {"--snapshots", &o.snapshots}};
  ParseFlags(argc, argv, kUsage, [&](const std::string& name, const std::string& value) {
    const auto s = strings.find(name);
    if (s != strings.end()) *s->second = value;
    return s != strings.end() || SetNumber(ints, doubles, name, value);
  });
  if (o.data.empty()) throw std::invalid_argument("--data is required (--help)");
  if (o.arch != "t5" && o.arch != "marian") throw std::invalid_argument("--arch: t5 or marian, got " + o.arch);
  if (o.out.empty() && o.train.bench == 0 && o.eval_file.empty()) {
    throw std::invalid_argument("one of --out, --bench, --eval is required");
  }
  return o;
}

// "0,100,200" → {0, 100, 200}: the steps after which the weights are written (0: the initial ones).
std::set<int64_t> SnapshotSteps(const std::string& list) {
  std::set<int64_t> steps;
  for (size_t at = 0; at < list.size();) {
    const size_t comma = std::min(list.find(',', at), list.size());
    int64_t step = 0;
    SetNumber({{"--snapshots", &step}}, {}, "--snapshots", list.substr(at, comma - at));
    steps.insert(step);
    at = comma + 1;
  }
  return steps;
}

// The model's configuration, through the library's own createModel options reader: a t5 (T5 v1.1's layout by
// default) or a marian (opus-mt's: post-norm, sinusoidal positions, the embedding × √E, tied head). Both start the
// decoder at [PAD] and read at most 7 characters and [EOS].
TransformerConfig MakeConfig(const Options& o, const CoupletData& d) {
  nlohmann::json options = {{"arch", o.arch},      {"task", "seq2seq-lm"},         {"vocabSize", d.vocab},
                            {"embedDim", o.embed}, {"numLayers", o.layers},        {"decoderLayers", o.decoder_layers},
                            {"numHeads", o.heads}, {"hiddenDim", o.hidden},        {"contextLength", 8},
                            {"padTokenId", d.pad}, {"decoderStartTokenId", d.pad}, {"eosTokenId", d.eos}};
  if (o.arch == "marian") {
    options.update({{"hiddenAct", o.act}, {"scaleEmbedding", true}, {"tieEmbeddings", true}});
  } else {
    options.update({{"headDim", o.head_dim},
                    {"feedForwardProj", o.ff},
                    {"relativeBuckets", o.buckets},
                    {"relativeMaxDistance", o.max_distance},
                    {"tieEmbeddings", o.tied != 0}});
  }
  return ConfigFromOptions(options.dump());
}

// Marian as Hugging Face initialises it (init_std 0.02: the library's own N(0, 0.02), biases 0, LayerNorms 1), but
// for the shared embedding's pad row: zero, as nn.Embedding's padding_idx (it gets no gradient from the lookups).
std::map<std::string, Tensor> MarianInit(const Transformer& model, int32_t pad) {
  std::map<std::string, Tensor> state = model.StateDict();
  for (auto& [name, t] : state) {
    if (name.size() < 13 || name.compare(name.size() - 13, 13, "shared.weight") != 0) continue;
    const size_t e = static_cast<size_t>(t.shape[1]);
    std::fill_n(t.data.begin() + static_cast<ptrdiff_t>(pad * e), e, 0.0f);
  }
  return state;
}

// Hugging Face's T5 initialisation (T5PreTrainedModel._init_weights, factor 1), drawn with the library's Rng:
// T5 has no 1/√d in its attention and scales its tied head by d_model^−0.5, so it trains from these scales, not
// from the library's GPT-2-style N(0, 0.02). Norm weights 1.
std::map<std::string, Tensor> T5Init(const Transformer& model, uint64_t seed) {
  const TransformerConfig& c = model.config();
  const double e = static_cast<double>(c.embed_dim), kv = static_cast<double>(c.head_dim),
               inner = static_cast<double>(c.num_heads) * kv, ff = static_cast<double>(c.hidden_dim);
  auto std_of = [&](const std::string& name) {
    auto has = [&](const char* part) { return name.find(part) != std::string::npos; };
    if (has("layer_norm")) return 0.0;
    if (has(".q.")) return 1.0 / std::sqrt(e * kv);
    if (has(".o.")) return 1.0 / std::sqrt(inner);
    if (has(".wo.")) return 1.0 / std::sqrt(ff);
    if (has("shared") || has("lm_head")) return c.tie_embeddings ? 1.0 : 1.0 / std::sqrt(e);
    return 1.0 / std::sqrt(e);  // (k, v, wi, wi_0, wi_1, relative_attention_bias)
  };
  Rng rng(seed);
  std::map<std::string, Tensor> state = model.StateDict();
  for (auto& [name, t] : state) {
    const double sd = std_of(name);
    for (float& x : t.data) x = sd == 0.0 ? 1.0f : rng.Normal(sd);
  }
  return state;
}

Transformer::StepResult Step(Transformer& model, const CoupletBatch& b, const Transformer::AdamWOptions& adamw) {
  Transformer::TrainBatch batch;
  batch.tokens = b.Inputs();
  batch.labels = b.Labels();
  return model.TrainStep(batch, adamw);
}

// A split's scores, teacher-forced: the mean cross-entropy over every label (the lower line's characters and [EOS],
// as the training loss) and over the characters alone (scripts/couplet/baselines.mjs's measure: the upper line gives
// the length), by couplet k; the characters whose most likely id is right; and per decoder layer and head the mean
// cross-attention weight of lower position t on upper character t (t < n), for parallel (k = 2, 3) and control
// (k = 1, 4) pairs.
struct Scores {
  double loss = 0, char_loss = 0, k_loss[5] = {};  // k_loss: characters only
  int64_t count = 0, k_count[5] = {}, right = 0, chars = 0;
  std::vector<double> aligned[2];  // (Ld · H): [0] parallel, [1] control
  int64_t aligned_count[2] = {};
};

// Cross-entropy of one row of logits (v) against `label`, and whether the label is its largest.
std::pair<double, bool> RowLoss(const float* row, size_t v, int32_t label) {
  const float top = *std::max_element(row, row + v);
  double sum = 0;
  for (size_t c = 0; c < v; ++c) sum += std::exp(static_cast<double>(row[c] - top));
  return {std::log(sum) - (row[label] - top), row[label] == top};
}

void AddAlignment(const TransformerOutput& out, const CoupletBatch& b, Scores& s) {
  const size_t t_len = static_cast<size_t>(b.t), n = t_len - 1, layers = out.cross_attentions.size();
  for (size_t l = 0; l < layers; ++l) {
    const Tensor& a = out.cross_attentions[l];  // (B, H, T, S = T)
    const size_t heads = static_cast<size_t>(a.shape[1]);
    for (int64_t i = 0; i < b.b; ++i) {
      const int cls = b.k[i] == 2 || b.k[i] == 3 ? 0 : 1;
      std::vector<double>& sums = s.aligned[cls];
      sums.resize(layers * heads, 0.0);
      for (size_t h = 0; h < heads; ++h) {
        const float* map = a.data.data() + (static_cast<size_t>(i) * heads + h) * t_len * t_len;
        for (size_t t = 0; t < n; ++t) sums[l * heads + h] += map[t * t_len + t];
      }
      if (l == 0) s.aligned_count[cls] += static_cast<int64_t>(n);
    }
  }
}

Scores Score(Transformer& model, const CoupletData& d, const std::vector<Couplet>& pairs, size_t limit) {
  Scores s;
  const size_t v = static_cast<size_t>(d.vocab);
  for (const std::vector<uint32_t>& indices : SplitBatches(pairs, 256, limit)) {
    const CoupletBatch b = MakeCoupletBatch(d, pairs, indices);
    std::vector<int32_t> decoder(b.labels.size());
    for (size_t i = 0; i < decoder.size(); ++i) decoder[i] = i % b.t == 0 ? d.pad : b.labels[i - 1];
    TransformerForwardOptions options;
    options.decoder_input_ids = decoder.data();
    options.decoder_input_ids_shape = {b.b, b.t};
    for (int64_t l = 0; l < model.config().decoder_layers; ++l) options.output_attentions.push_back(l);
    const TransformerOutput out = model.Forward(b.Inputs(), options);
    for (size_t i = 0; i < b.labels.size(); ++i) {
      const auto [loss, right] = RowLoss(out.logits.data.data() + i * v, v, b.labels[i]);
      s.loss += loss;
      ++s.count;
      if (b.labels[i] == d.eos) continue;
      const int32_t k = b.k[i / b.t];
      s.char_loss += loss;
      s.k_loss[k] += loss;
      ++s.k_count[k];
      s.right += right;
      ++s.chars;
    }
    AddAlignment(out, b, s);
  }
  return s;
}

double Round6(double x) { return std::round(x * 1e6) / 1e6; }

nlohmann::ordered_json ScoresJson(const Scores& s, int64_t heads) {
  nlohmann::ordered_json j = {{"loss_per_label", Round6(s.loss / s.count)},
                              {"labels", s.count},
                              {"loss_per_char", Round6(s.char_loss / s.chars)},
                              {"chars", s.chars},
                              {"char_accuracy", Round6(static_cast<double>(s.right) / s.chars)}};
  const char* names[5] = {"", "shoulian", "hanlian", "jinglian", "weilian"};
  for (int k = 1; k <= 4; ++k) j["char_loss_by_couplet"][names[k]] = Round6(s.k_loss[k] / s.k_count[k]);
  const char* classes[2] = {"aligned_weight_parallel", "aligned_weight_control"};
  for (int c = 0; c < 2; ++c) {
    nlohmann::ordered_json layers = nlohmann::ordered_json::array();
    for (size_t l = 0; l * heads < s.aligned[c].size(); ++l) {
      nlohmann::ordered_json row = nlohmann::ordered_json::array();
      for (int64_t h = 0; h < heads; ++h) row.push_back(Round6(s.aligned[c][l * heads + h] / s.aligned_count[c]));
      layers.push_back(row);
    }
    j[classes[c]] = layers;  // [layer][head]
  }
  return j;
}

int RunBench(Transformer& model, const Options& o, CoupletStream& stream, Transformer::AdamWOptions adamw) {
  adamw.lr = 1e-4f;
  for (int i = 0; i < 2; ++i) Step(model, stream.Next(), adamw);
  const auto start = Clock::now();
  const double cpu0 = CpuSeconds();
  int64_t labels = 0;
  for (int64_t i = 0; i < o.train.bench; ++i) {
    const CoupletBatch b = stream.Next();
    labels += b.b * b.t;
    Step(model, b, adamw);
  }
  const double s = Seconds(start), cpu = CpuSeconds() - cpu0;
  std::printf("bench: %.1f ms/step, %.0f labels/s (batch %" PRId64 " pairs), %.1f CPU ms/step (all threads)\n",
              1e3 * s / o.train.bench, labels / s, o.train.batch, 1e3 * cpu / o.train.bench);
  return 0;
}

void MaybeSnapshot(const Transformer& model, const Options& o, const std::set<int64_t>& steps, int64_t step) {
  if (steps.count(step) == 0) return;
  MakeDir(o.out + "/snapshots");
  WriteSafetensors(o.out + "/snapshots/step-" + std::to_string(step) + ".safetensors", model.StateDict(),
                   StDtype::kF16);
}

// The training loop: --steps AdamW steps at the scheduled learning rate, logged to losses.csv (the validation loss
// on its first --eval-pairs pairs).
TrainTotals Train(Transformer& model, const Options& o, const CoupletData& d, CoupletStream& stream,
                  Transformer::AdamWOptions adamw) {
  const std::vector<Couplet>& validation = d.splits.at("validation");
  const std::set<int64_t> snapshots = SnapshotSteps(o.snapshots);
  TrainLog log(o.out + "/losses.csv", {o.train.log_every, o.train.eval_every, o.train.schedule.steps}, [&] {
    const Scores s = Score(model, d, validation, static_cast<size_t>(o.eval_pairs));
    return s.loss / s.count;
  });
  TrainTotals totals;
  MaybeSnapshot(model, o, snapshots, 0);
  for (int64_t step = 1; step <= o.train.schedule.steps; ++step) {
    const CoupletBatch b = stream.Next();
    adamw.lr = static_cast<float>(o.train.schedule.At(step));
    const Transformer::StepResult r = Step(model, b, adamw);
    if (!std::isfinite(r.loss)) throw std::runtime_error("loss is not finite at step " + std::to_string(step));
    totals.tokens_seen += b.b * b.t;  // (labels)
    log.Step(step, stream.epoch(), adamw.lr, r, totals);
    MaybeSnapshot(model, o, snapshots, step);
  }
  log.Finish(totals);
  return totals;
}

// config.json: the library's writer with the shipped dtype.
std::string ShippedConfigJson(const TransformerConfig& c) {
  nlohmann::ordered_json hf = nlohmann::ordered_json::parse(HuggingFaceConfigJson(c));
  hf["torch_dtype"] = "float16";
  return hf.dump(2) + "\n";
}

// The shipped folder: F16 weights (F32 beside them), config.json and the tokenizer files.
void WriteShipped(const Transformer& model, const TransformerConfig& config, const Options& o) {
  const std::map<std::string, Tensor> state = model.StateDict();
  WriteSafetensors(o.out + "/model.safetensors", state, StDtype::kF16);
  WriteSafetensors(o.out + "/model-f32.safetensors", state, StDtype::kF32);
  WriteText(o.out + "/config.json", ShippedConfigJson(config));
  for (const char* file : {"tokenizer.json", "tokenizer_config.json"}) {
    WriteText(o.out + "/" + file, ReadFile(o.data + "/" + file));
  }
}

// The held-out scores: the Song validation split and the Tang test split, every pair.
nlohmann::ordered_json HeldOutJson(Transformer& model, const CoupletData& d) {
  const int64_t heads = model.config().num_heads;
  return {{"validation", ScoresJson(Score(model, d, d.splits.at("validation"), 0), heads)},
          {"test", ScoresJson(Score(model, d, d.splits.at("test"), 0), heads)}};
}

nlohmann::ordered_json RunJson(const Options& o, const Transformer& model, const CoupletStream& stream,
                               const TrainTotals& totals) {
  nlohmann::ordered_json j = {{"cpu_target", ActiveTargetName()},
                              {"threads", ThreadCount()},
                              {"parameters", model.ParameterCount()},
                              {"model",
                               {{"arch", o.arch},
                                {"embed", o.embed},
                                {"layers", o.layers},
                                {"decoder_layers", o.decoder_layers},
                                {"heads", o.heads},
                                {"head_dim", o.head_dim},
                                {"hidden", o.hidden},
                                {"ff", o.arch == "t5" ? o.ff : o.act},
                                {"buckets", o.buckets},
                                {"max_distance", o.max_distance}}},
                              {"epochs_started", stream.epoch()},
                              {"train_seconds", std::round(totals.seconds)},
                              {"train_cpu_seconds", std::round(totals.cpu_seconds)}};
  j.update(o.train.Json());
  return j;
}

int Run(const Options& o) {
  SetThreadCount(static_cast<size_t>(std::max<int64_t>(1, o.train.threads)));
  CoupletData d = ReadCoupletData(o.data);
  std::vector<Couplet>& train = d.splits.at("train");
  if (o.train_pairs > 0 && o.train_pairs < static_cast<int64_t>(train.size())) train.resize(o.train_pairs);
  const TransformerConfig config = MakeConfig(o, d);
  Transformer model(config, static_cast<uint64_t>(o.train.seed));
  const uint64_t seed = static_cast<uint64_t>(o.train.seed);
  LoadInto(model, o.arch == "t5" ? T5Init(model, seed) : MarianInit(model, d.pad));
  std::printf("attnlab_train_couplet on %s, %zu threads: %s E=%" PRId64 " L=%" PRId64 "+%" PRId64 " H=%" PRId64
              " d_kv=%" PRId64 " hidden=%" PRId64 " V=%" PRId64 ", %" PRId64 " parameters; %zu training pairs\n",
              ActiveTargetName(), ThreadCount(), o.arch.c_str(), o.embed, o.layers, o.decoder_layers, o.heads,
              config.head_dim, o.hidden, d.vocab, model.ParameterCount(), d.splits.at("train").size());
  std::fflush(stdout);
  const Transformer::AdamWOptions adamw = o.train.adamw.Options();
  CoupletStream stream(d, static_cast<size_t>(o.train.batch), static_cast<uint64_t>(o.train.seed) ^ 0x5EED0DA7A0ull);
  if (o.train.bench > 0) return RunBench(model, o, stream, adamw);
  if (!o.eval_file.empty()) {
    LoadInto(model, ReadSafetensors(o.eval_file).tensors);
    std::printf("%s\n", HeldOutJson(model, d).dump(2).c_str());
    return 0;
  }
  MakeDir(o.out);
  const TrainTotals totals = Train(model, o, d, stream, adamw);
  nlohmann::ordered_json summary = RunJson(o, model, stream, totals);
  WriteShipped(model, config, o);
  Transformer shipped(config, 0, false);
  LoadInto(shipped, ReadSafetensors(o.out + "/model.safetensors").tensors);
  summary["f16"] = HeldOutJson(shipped, d);
  WriteSummary(o.out, summary);
  return 0;
}

}  // namespace
}  // namespace attnlab::tools

int main(int argc, char** argv) {
  return attnlab::tools::RunTool("train_couplet",
                                 [&] { return attnlab::tools::Run(attnlab::tools::ParseArgs(argc, argv)); });
}
