// Trains the ViT chapter's model (issue 34 §2; docs/vit-model.md) with attnlab's own engine: a `vit`
// (ViTForImageClassification) on Fashion-MNIST as scripts/vit/prepare.mjs prepares it, with Transformer::TrainStep on
// the batch form (pixels, class labels; torch.optim.AdamW, clip_grad_norm_), a linear warm-up and cosine schedule,
// a seeded data order with optional shifts and mirroring, a loss log (CSV), accuracy and the confusion matrix on the
// validation and test splits, and a Hugging Face folder (config.json, model.safetensors in F16,
// preprocessor_config.json).
//
//   attnlab_train_vit --data DIR --out DIR [options]        train (options: --help)
//   attnlab_train_vit --data DIR --bench N [options]        time N training steps of this configuration
//
// The test split is scored once, at the end, on the shipped F16 weights; tuning uses the validation split only.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnlab/attention.h"
#include "attnlab/threads.h"
#include "attnlab/transformer.h"
#include "cpp/tools/common/files.h"
#include "cpp/tools/common/flags.h"
#include "cpp/tools/common/image_data.h"
#include "cpp/tools/common/log.h"
#include "cpp/tools/common/lr_schedule.h"
#include "cpp/tools/common/safetensors.h"
#include "nlohmann/json.hpp"

namespace attnlab::tools {
namespace {

struct Options {
  std::string data, out;
  int64_t embed = 96, layers = 4, heads = 4, hidden = 192, patch = 4;
  int64_t shift = 2, flip = 1;
  TrainFlags train{{1e-3, 0.02, 300, 8000}, {0.05, 0.9, 0.999, 1e-8, 1.0}, 128, 100, 1000};
};

const char kUsage[] =
    "attnlab_train_vit --data DIR (scripts/vit/prepare.mjs's output) and one of\n"
    "  --out DIR     train, then write DIR/model.safetensors (F16), config.json, preprocessor_config.json,\n"
    "                losses.csv, summary.json\n"
    "  --bench N     time N training steps (after 2 untimed ones) and exit\n"
    "model:  --embed E (96)  --layers L (4)  --heads H (4)  --hidden (192)  --patch P (4: 7 x 7 patches)\n"
    "train:  --seed (1)  --batch (128)  --steps (8000)  --lr (1e-3)  --warmup (300)  --min-lr-ratio (0.02)\n"
    "        --weight-decay (0.05)  --beta1 (0.9)  --beta2 (0.999)  --eps (1e-8)  --clip (1.0)  --threads (2)\n"
    "        --shift S (2: each training image moved by up to S pixels)  --flip 0|1 (1: mirrored with p 1/2)\n"
    "log:    --log-every (100)  --eval-every (1000: the validation loss)\n";

Options ParseArgs(int argc, char** argv) {
  Options o;
  std::map<std::string, int64_t*> ints = {{"--embed", &o.embed},   {"--layers", &o.layers}, {"--heads", &o.heads},
                                          {"--hidden", &o.hidden}, {"--patch", &o.patch},   {"--shift", &o.shift},
                                          {"--flip", &o.flip}};
  std::map<std::string, double*> doubles;
  o.train.AddTo(ints, doubles);
  ParseFlags(argc, argv, kUsage, [&](const std::string& name, const std::string& value) {
    if (name == "--data" || name == "--out") (name == "--data" ? o.data : o.out) = value;
    return name == "--data" || name == "--out" || SetNumber(ints, doubles, name, value);
  });
  if (o.data.empty()) throw std::invalid_argument("--data is required (--help)");
  if (o.out.empty() && o.train.bench == 0) throw std::invalid_argument("one of --out, --bench is required");
  if (o.shift < 0 || o.flip < 0 || o.flip > 1) throw std::invalid_argument("--shift >= 0, --flip 0 or 1");
  return o;
}

// The model's configuration, through the library's own createModel options reader.
TransformerConfig MakeConfig(const Options& o, const ImageData& d) {
  nlohmann::json options = {
      {"arch", "vit"},       {"task", "image-classification"}, {"embedDim", o.embed}, {"numLayers", o.layers},
      {"numHeads", o.heads}, {"hiddenDim", o.hidden},          {"imageSize", d.side}, {"patchSize", o.patch},
      {"numChannels", 1},    {"numLabels", d.classes},         {"hiddenAct", "gelu"}, {"pooler", false}};
  return ConfigFromOptions(options.dump());
}

// config.json: the library's writer, with the labels' names and the shipped dtype.
std::string ShippedConfigJson(const TransformerConfig& c, const ImageData& d) {
  nlohmann::ordered_json hf = nlohmann::ordered_json::parse(HuggingFaceConfigJson(c));
  const nlohmann::json labels = nlohmann::json::parse(d.labels_json).at("id2label");
  hf["id2label"] = labels;
  nlohmann::ordered_json label2id;
  for (const auto& [id, name] : labels.items()) label2id[name.get<std::string>()] = std::stoi(id);
  hf["label2id"] = label2id;
  hf["torch_dtype"] = "float16";
  return hf.dump(2) + "\n";
}

// Mean cross-entropy, accuracy and the confusion matrix (true class × predicted) over a split.
struct Scores {
  double loss = 0, accuracy = 0;
  std::vector<std::vector<int64_t>> confusion;
};

Scores Score(Transformer& model, const ImageData& d, const ImageSplit& split, size_t limit = 0) {
  const size_t n = limit ? std::min(limit, split.size()) : split.size(), k = static_cast<size_t>(d.classes);
  Scores s;
  s.confusion.assign(k, std::vector<int64_t>(k, 0));
  int64_t right = 0;
  for (size_t first = 0; first < n; first += 256) {
    const ImageBatch b = SliceBatch(d, split, first, std::min<size_t>(256, n - first));
    const Tensor logits = model.Forward(b.View()).logits;  // (B, classes)
    for (size_t i = 0; i < b.labels.size(); ++i) {
      const float* row = logits.data.data() + i * k;
      const size_t best = static_cast<size_t>(std::max_element(row, row + k) - row);
      double sum = 0;
      for (size_t c = 0; c < k; ++c) sum += std::exp(static_cast<double>(row[c] - row[best]));
      s.loss += std::log(sum) - (row[b.labels[i]] - row[best]);
      right += best == static_cast<size_t>(b.labels[i]);
      ++s.confusion[b.labels[i]][best];
    }
  }
  s.loss /= static_cast<double>(n);
  s.accuracy = static_cast<double>(right) / static_cast<double>(n);
  return s;
}

nlohmann::ordered_json ScoresJson(const Scores& s) {
  return {{"loss", std::round(s.loss * 1e6) / 1e6},
          {"accuracy", std::round(s.accuracy * 1e6) / 1e6},
          {"confusion", s.confusion}};
}

Transformer::StepResult Step(Transformer& model, const ImageBatch& b, const Transformer::AdamWOptions& adamw) {
  const PixelsView pixels = b.View();
  Transformer::TrainBatch batch;
  batch.pixels = &pixels;
  batch.labels = b.Labels();
  return model.TrainStep(batch, adamw);
}

// --bench N: wall and CPU time of N training steps after 2 warm-up steps.
int RunBench(Transformer& model, const Options& o, ImageStream& stream, Transformer::AdamWOptions adamw) {
  adamw.lr = 1e-4f;
  for (int i = 0; i < 2; ++i) Step(model, stream.Next(), adamw);
  const auto start = Clock::now();
  const double cpu0 = CpuSeconds();
  for (int64_t i = 0; i < o.train.bench; ++i) Step(model, stream.Next(), adamw);
  const double s = Seconds(start), cpu = CpuSeconds() - cpu0;
  std::printf("bench: %.1f ms/step, %.0f images/s (batch %" PRId64 "), %.1f CPU ms/step (all threads)\n",
              1e3 * s / o.train.bench, o.train.batch * o.train.bench / s, o.train.batch, 1e3 * cpu / o.train.bench);
  return 0;
}

// The training loop: --steps AdamW steps at the scheduled learning rate, logged to losses.csv (the validation loss
// on its first 2,000 images every --eval-every steps).
TrainTotals Train(Transformer& model, const Options& o, const ImageData& d, ImageStream& stream,
                  Transformer::AdamWOptions adamw) {
  const ImageSplit& validation = d.splits.at("validation");
  TrainLog log(o.out + "/losses.csv", {o.train.log_every, o.train.eval_every, o.train.schedule.steps},
               [&] { return Score(model, d, validation, 2000).loss; });
  TrainTotals totals;
  for (int64_t step = 1; step <= o.train.schedule.steps; ++step) {
    const ImageBatch b = stream.Next();
    adamw.lr = static_cast<float>(o.train.schedule.At(step));
    const Transformer::StepResult r = Step(model, b, adamw);
    if (!std::isfinite(r.loss)) throw std::runtime_error("loss is not finite at step " + std::to_string(step));
    totals.tokens_seen += o.train.batch;  // (images)
    log.Step(step, stream.epoch(), adamw.lr, r, totals);
  }
  log.Finish(totals);
  return totals;
}

// The shipped folder: F16 weights (and F32 beside them), read back into a fresh model that is scored on the
// validation and, once, the test split.
nlohmann::ordered_json WriteShipped(Transformer& model, const TransformerConfig& config, const Options& o,
                                    const ImageData& d) {
  const std::map<std::string, Tensor> state = model.StateDict();
  const Scores f32 = Score(model, d, d.splits.at("validation"));
  WriteSafetensors(o.out + "/model.safetensors", state, StDtype::kF16);
  WriteSafetensors(o.out + "/model-f32.safetensors", state, StDtype::kF32);
  Transformer shipped(config, 0, false);
  LoadInto(shipped, ReadSafetensors(o.out + "/model.safetensors").tensors);
  WriteText(o.out + "/config.json", ShippedConfigJson(config, d));
  WriteText(o.out + "/preprocessor_config.json", d.preprocessor_config);
  return {{"validation_f32", ScoresJson(f32)},
          {"f16",
           {{"validation", ScoresJson(Score(shipped, d, d.splits.at("validation")))},
            {"test", ScoresJson(Score(shipped, d, d.splits.at("test")))}}}};
}

nlohmann::ordered_json RunJson(const Options& o, const Transformer& model, const ImageStream& stream,
                               const TrainTotals& totals) {
  nlohmann::ordered_json j = {
      {"cpu_target", ActiveTargetName()},
      {"threads", ThreadCount()},
      {"parameters", model.ParameterCount()},
      {"model",
       {{"embed", o.embed}, {"layers", o.layers}, {"heads", o.heads}, {"hidden", o.hidden}, {"patch", o.patch}}},
      {"shift", o.shift},
      {"flip", o.flip},
      {"epochs_started", stream.epoch()},
      {"train_seconds", std::round(totals.seconds)},
      {"train_cpu_seconds", std::round(totals.cpu_seconds)}};
  j.update(o.train.Json());
  return j;
}

int Run(const Options& o) {
  SetThreadCount(static_cast<size_t>(std::max<int64_t>(1, o.train.threads)));
  const ImageData d = ReadImageData(o.data);
  const TransformerConfig config = MakeConfig(o, d);
  Transformer model(config, o.train.seed);
  std::printf("attnlab_train_vit on %s, %zu threads: E=%" PRId64 " L=%" PRId64 " H=%" PRId64 " hidden=%" PRId64
              " patch=%" PRId64 " tokens=%" PRId64 ", %" PRId64 " parameters; %zu training images\n",
              ActiveTargetName(), ThreadCount(), o.embed, o.layers, o.heads, o.hidden, o.patch, config.context_length,
              model.ParameterCount(), d.splits.at("train").size());
  std::fflush(stdout);
  const Transformer::AdamWOptions adamw = o.train.adamw.Options();
  ImageStream stream(d, static_cast<size_t>(o.train.batch), static_cast<uint64_t>(o.train.seed) ^ 0x5EED0DA7A0ull,
                     static_cast<int>(o.shift), o.flip);
  if (o.train.bench > 0) return RunBench(model, o, stream, adamw);
  MakeDir(o.out);
  const TrainTotals totals = Train(model, o, d, stream, adamw);
  nlohmann::ordered_json summary = RunJson(o, model, stream, totals);
  summary.update(WriteShipped(model, config, o, d));
  WriteSummary(o.out, summary);
  return 0;
}

}  // namespace
}  // namespace attnlab::tools

int main(int argc, char** argv) {
  return attnlab::tools::RunTool("train_vit",
                                 [&] { return attnlab::tools::Run(attnlab::tools::ParseArgs(argc, argv)); });
}
