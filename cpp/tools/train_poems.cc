// Trains the poem model (issue 26 item 2; docs/poem-model.md) with attnlab's own engine: an attnlab::Transformer
// (Llama family by default) on the token files of scripts/poems/prepare.mjs, with Transformer::TrainStep
// (torch.optim.AdamW, clip_grad_norm_), a linear warm-up and cosine learning-rate schedule, its own seeded data order,
// a loss log (CSV), a character-bigram baseline, and a Hugging Face folder (config.json, model.safetensors in F16).
//
//   attnlab_train_poems --data DIR --out DIR [options]        train (options: --help)
//   attnlab_train_poems --data DIR --bench N [options]        time N training steps of this configuration
//   attnlab_train_poems --data DIR --eval FILE.safetensors    evaluate a checkpoint (F32/F16/BF16) of this
//   configuration
//
// This file is the options, the loop and the stages; the pieces are cpp/tools/common/ (as llm.c's llmc/): the data and
// batch stream (token_data.h), the schedule (lr_schedule.h), evaluation and baselines (eval.h), the log (log.h), the
// safetensors codec (safetensors.h) and the config mappings (hf_config.h).
//
// Results do not depend on --threads (attnlab's invariant); they do depend on the CPU's SIMD target (summation
// order), so a run on another machine agrees with the logged losses to float32 rounding, not bit for bit.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <malloc.h>

#include "attnlab/attention.h"
#include "attnlab/threads.h"
#include "attnlab/transformer.h"
#include "cpp/src/ops/packing.h"
#include "cpp/tools/common/eval.h"
#include "cpp/tools/common/files.h"
#include "cpp/tools/common/flags.h"
#include "cpp/tools/common/hf_config.h"
#include "cpp/tools/common/log.h"
#include "cpp/tools/common/lr_schedule.h"
#include "cpp/tools/common/safetensors.h"
#include "cpp/tools/common/token_data.h"

namespace attnlab::tools {
namespace {

struct Options {
  std::string data, out, eval_file, dump;
  ModelOptions model;
  CosineSchedule schedule;  // lr (3e-3), min_lr_ratio (0.1), warmup (200), steps (6000)
  int64_t batch = 48, log_every = 50, eval_every = 500, eval_poems = 1000;
  double weight_decay = 0.1, beta1 = 0.9, beta2 = 0.99, eps = 1e-8, clip = 1.0;
  uint64_t seed = 1;
  int64_t threads = 2, bench = 0;
  int64_t train_poems = 0;       // 0 = all
  int64_t final_eval_poems = 0;  // 0 = all
  int64_t poems_per_row = 1;
  std::set<int64_t> snapshot_steps;  // the steps after which the weights are also written (0: the initial ones)
};

void Usage() {
  std::printf(
      "attnlab_train_poems --data DIR (scripts/poems/prepare.mjs's output) and one of\n"
      "  --out DIR            train, then write DIR/model.safetensors (F16), config.json, losses.csv, summary.json\n"
      "  --bench N            time N training steps (after 2 untimed ones) and exit\n"
      "  --eval FILE          evaluate a checkpoint of this configuration on every split\n"
      "attnlab_train_poems --selftest [DTYPES]: check the float32 -> F16 and BF16 conversions on every value and\n"
      "        midpoint, and with tests/fixtures/hf/dtypes.safetensors the safetensors codec against PyTorch\n"
      "model:  --arch llama|gpt2 (llama)  --embed E (192)  --layers L (4)  --heads H (4)  --kv-heads (H)\n"
      "        --hidden (llama: 8E/3 rounded up to 32; gpt2: 4E)  --context (data.txt's)  --rope-theta (1e4)\n"
      "train:  --seed (1)  --batch poems (48)  --steps (6000)  --lr (3e-3)  --warmup steps (200)\n"
      "        --min-lr-ratio (0.1: cosine from lr to lr*ratio)  --weight-decay (0.1)  --beta1 (0.9) --beta2 (0.99)\n"
      "        --eps (1e-8)  --clip (1.0)  --threads (2)  --train-poems N (the first N of the train split; 0 = all)\n"
      "        --poems-per-row K (1: each row of a batch is K whole poems one after another; a multiple of K poems)\n"
      "log:    --log-every (50)  --eval-every (500)  --eval-poems (1000: the validation curve's poems)\n"
      "        --final-eval-poems (0: the final evaluation on all poems of each held-out split)\n"
      "        --snapshot-steps S1,S2,... also write DIR/snapshots/step-S.safetensors (F16) after each listed step\n"
      "        (0: the initial weights), for scripts/poems/snapshots.mjs\n"
      "check:  --dump DIR  write the initial and final weights (F32), every batch and every step's loss, for\n"
      "        scripts/poems/check_pytorch.py\n");
}

// "0,100,6000" -> {0, 100, 6000}; throws std::invalid_argument on anything but non-negative integers and commas.
std::set<int64_t> ParseSteps(const std::string& list) {
  std::set<int64_t> steps;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    char* end = nullptr;
    const long long step = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end || step < 0) throw std::invalid_argument("--snapshot-steps: not a step: '" + item + "'");
    steps.insert(step);
  }
  return steps;
}

// Sets the option `name` from `value`; false when there is no such option. Throws std::invalid_argument on a value
// that is not a number.
bool SetOption(Options& o, const std::string& name, const std::string& value) {
  const std::map<std::string, std::string*> strings = {
      {"--data", &o.data}, {"--out", &o.out}, {"--eval", &o.eval_file}, {"--dump", &o.dump}, {"--arch", &o.model.arch}};
  const std::map<std::string, int64_t*> ints = {{"--embed", &o.model.embed},
                                                {"--layers", &o.model.layers},
                                                {"--heads", &o.model.heads},
                                                {"--kv-heads", &o.model.kv_heads},
                                                {"--hidden", &o.model.hidden},
                                                {"--context", &o.model.context},
                                                {"--batch", &o.batch},
                                                {"--steps", &o.schedule.steps},
                                                {"--warmup", &o.schedule.warmup},
                                                {"--threads", &o.threads},
                                                {"--log-every", &o.log_every},
                                                {"--eval-every", &o.eval_every},
                                                {"--bench", &o.bench},
                                                {"--eval-poems", &o.eval_poems},
                                                {"--train-poems", &o.train_poems},
                                                {"--final-eval-poems", &o.final_eval_poems},
                                                {"--poems-per-row", &o.poems_per_row}};
  const std::map<std::string, double*> doubles = {{"--lr", &o.schedule.lr},
                                                  {"--min-lr-ratio", &o.schedule.min_lr_ratio},
                                                  {"--weight-decay", &o.weight_decay},
                                                  {"--beta1", &o.beta1},
                                                  {"--beta2", &o.beta2},
                                                  {"--eps", &o.eps},
                                                  {"--clip", &o.clip},
                                                  {"--rope-theta", &o.model.rope_theta},
                                                  {"--norm-eps", &o.model.norm_eps}};
  char* end = nullptr;
  if (auto s = strings.find(name); s != strings.end()) {
    *s->second = value;
  } else if (name == "--seed") {
    o.seed = std::strtoull(value.c_str(), &end, 10);
  } else if (name == "--snapshot-steps") {
    o.snapshot_steps = ParseSteps(value);
  } else if (auto n = ints.find(name); n != ints.end()) {
    *n->second = std::strtoll(value.c_str(), &end, 10);
  } else if (auto d = doubles.find(name); d != doubles.end()) {
    *d->second = std::strtod(value.c_str(), &end);
  } else {
    return false;
  }
  if (end && *end) throw std::invalid_argument(name + ": not a number: " + value);
  return true;
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      Usage();
      std::exit(0);
    }
    if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value (--help)");
    if (!SetOption(o, a, argv[++i])) throw std::invalid_argument("unknown argument " + a + " (--help)");
  }
  if (o.data.empty()) throw std::invalid_argument("--data is required (--help)");
  if (o.out.empty() && o.bench == 0 && o.eval_file.empty()) {
    throw std::invalid_argument("one of --out, --bench, --eval is required");
  }
  if (!o.snapshot_steps.empty() && *o.snapshot_steps.rbegin() > o.schedule.steps) {
    throw std::invalid_argument("--snapshot-steps: step " + std::to_string(*o.snapshot_steps.rbegin()) +
                                " is past --steps " + std::to_string(o.schedule.steps));
  }
  return o;
}

Transformer::AdamWOptions MakeAdamW(const Options& o) {
  Transformer::AdamWOptions adamw;
  adamw.weight_decay = static_cast<float>(o.weight_decay);
  adamw.beta1 = static_cast<float>(o.beta1);
  adamw.beta2 = static_cast<float>(o.beta2);
  adamw.eps = static_cast<float>(o.eps);
  adamw.clip_grad_norm = static_cast<float>(o.clip);
  return adamw;
}

// ---------------------------------------------------------------------------------------------------------------
// The run's stages: main() picks --selftest, --eval, --bench or training; training is baselines → loop → the shipped
// F16 folder → summary.json.

// --eval: the held-out splits' losses of a checkpoint.
int RunEval(Transformer& model, const Options& o, const TokenData& d) {
  LoadInto(model, ReadSafetensors(o.eval_file).tensors);
  for (const auto& [name, poems] : d.splits) {
    if (name == "train") continue;
    std::printf("%s: %s\n", name.c_str(), EvalJson(Evaluate(model, poems, o.final_eval_poems, d)).c_str());
  }
  return 0;
}

// --bench N: wall and CPU time of N training steps (after 2 warm-up steps), and the evaluation's speed.
int RunBench(Transformer& model, const Options& o, const TokenData& d, BatchStream& stream,
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

// The weights after `step` as DIR/snapshots/step-<step>.safetensors (F16, as shipped) when --snapshot-steps lists it.
void MaybeSnapshot(const Transformer& model, const Options& o, int64_t step) {
  if (o.snapshot_steps.count(step) == 0) return;
  MakeDir(o.out + "/snapshots");
  WriteSafetensors(o.out + "/snapshots/step-" + std::to_string(step) + ".safetensors", model.StateDict(),
                   StDtype::kF16);
}

// The training loop: --steps AdamW steps on the stream's batches at the scheduled learning rate, logged to
// losses.csv (the validation loss on the first --eval-poems poems).
TrainTotals Train(Transformer& model, const Options& o, const TokenData& d, BatchStream& stream,
                  Transformer::AdamWOptions adamw, StepDump& dump) {
  const std::vector<Poem>& validation = d.splits.at("validation");
  TrainLog log(o.out + "/losses.csv", {o.log_every, o.eval_every, o.schedule.steps},
               [&] { return Evaluate(model, validation, o.eval_poems, d).loss; });
  TrainTotals totals;
  MaybeSnapshot(model, o, 0);
  for (int64_t step = 1; step <= o.schedule.steps; ++step) {
    const Batch b = stream.Next();
    adamw.lr = static_cast<float>(o.schedule.At(step));
    const Transformer::StepResult r = model.TrainStep(b.Tokens(), b.Targets(), adamw);
    if (!std::isfinite(r.loss)) throw std::runtime_error("loss is not finite at step " + std::to_string(step));
    for (int32_t t : b.targets) totals.tokens_seen += t != kIgnore;
    dump.Step(step, b, adamw.lr, r);
    log.Step(step, stream.epoch(), adamw.lr, r, totals);
    MaybeSnapshot(model, o, step);
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

void CheckF16ReadBack(const std::map<std::string, Tensor>& state, const std::map<std::string, Tensor>& back) {
  for (const auto& [name, t] : state) {
    const auto it = back.find(name);
    bool same = it != back.end() && it->second.shape == t.shape && it->second.data.size() == t.data.size();
    for (size_t i = 0; same && i < t.data.size(); ++i) same = it->second.data[i] == F16ToFloat(F16FromFloat(t.data[i]));
    if (!same) throw std::runtime_error("F16 read-back: " + name);
  }
}

ShippedResult WriteShipped(Transformer& model, const TransformerConfig& config, const Options& o, const TokenData& d,
                           const StepDump& dump) {
  const std::map<std::string, Tensor> state = model.StateDict();
  dump.Final(state);
  ShippedResult r;
  r.validation_f32 = Evaluate(model, d.splits.at("validation"), o.final_eval_poems, d);
  WriteSafetensors(o.out + "/model.safetensors", state, StDtype::kF16);
  WriteSafetensors(o.out + "/model-f32.safetensors", state, StDtype::kF32);
  const std::map<std::string, Tensor> back = ReadSafetensors(o.out + "/model.safetensors").tensors;
  CheckF16ReadBack(state, back);
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
  s << "{\n  \"cpu_target\": \"" << ActiveTargetName() << "\",\n  \"threads\": " << ThreadCount()
    << ",\n  \"parameters\": " << model.ParameterCount() << ",\n  \"steps\": " << o.schedule.steps
    << ",\n  \"batch_poems\": " << o.batch << ",\n  \"poems_per_row\": " << o.poems_per_row
    << ",\n  \"epochs_started\": " << stream.epoch() << ",\n  \"target_tokens_seen\": " << totals.tokens_seen
    << ",\n  \"seed\": " << o.seed << ",\n  \"lr\": " << o.schedule.lr << ", \"warmup\": " << o.schedule.warmup
    << ", \"min_lr_ratio\": " << o.schedule.min_lr_ratio << ", \"weight_decay\": " << o.weight_decay << ", \"betas\": ["
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

// --selftest [DTYPES]: the checks of the codec (safetensors.h); exit status 1 on a failure.
int SelfTest(const std::string& dtypes) {
  std::printf("F16 conversion: all 65536 halves round-trip, every midpoint rounds to even\n");
  const int64_t bf16 = CheckBF16Conversion();
  std::printf("BF16 conversion: %" PRId64 " failures over all 65536 bfloat16s and their midpoints\n", bf16);
  if (dtypes.empty()) return bf16 != 0;
  const int64_t codec = CheckCodec(dtypes, "attnlab_train_poems_selftest.safetensors");
  std::printf("codec: %" PRId64 " failures against PyTorch's conversions in %s and through F32/F16/BF16 files\n", codec,
              dtypes.c_str());
  return bf16 != 0 || codec != 0;
}

int Run(const Options& o) {
  // A training step allocates its logits (B·T·V floats, tens of MB) afresh: keep freed memory in the heap instead of
  // returning it to the system (glibc maps blocks above 32 MB anew each time, and the kernel zeroes every page).
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  SetThreadCount(static_cast<size_t>(std::max<int64_t>(1, o.threads)));
  const auto t0 = Clock::now();
  TokenData d = ReadTokenData(o.data);
  std::vector<Poem>& train = d.splits["train"];
  if (o.train_poems > 0 && o.train_poems < static_cast<int64_t>(train.size())) train.resize(o.train_poems);
  const TransformerConfig config = MakeConfig(o.model, d);
  Transformer model(config, o.seed);
  std::printf("attnlab_train_poems on %s, %zu threads: %s E=%" PRId64 " L=%" PRId64 " H=%" PRId64 " KV=%" PRId64
              " hidden=%" PRId64 " V=%" PRId64 " context=%" PRId64 ", %" PRId64 " parameters; %zu training poems\n",
              ActiveTargetName(), ThreadCount(), o.model.arch.c_str(), config.embed_dim, config.num_layers,
              config.num_heads, config.num_kv_heads, config.hidden_dim, config.vocab_size, config.context_length,
              model.ParameterCount(), train.size());
  std::fflush(stdout);
  if (!o.eval_file.empty()) return RunEval(model, o, d);

  const Transformer::AdamWOptions adamw = MakeAdamW(o);
  BatchStream stream(train, o.batch, o.seed ^ 0x5EED0DA7A0ull, d.pad, d.eos, o.poems_per_row);
  if (o.bench > 0) return RunBench(model, o, d, stream, adamw);

  MakeDir(o.out);
  StepDump dump(o.dump, model);
  const Baselines base = FitBaselines(train, d);
  const TrainTotals totals = Train(model, o, d, stream, adamw, dump);
  const ShippedResult shipped = WriteShipped(model, config, o, d, dump);
  const std::string summary = SummaryJson(o, model, stream, totals, shipped, base, Seconds(t0));
  WriteText(o.out + "/summary.json", summary);
  std::printf("%s", summary.c_str());
  return 0;
}

}  // namespace
}  // namespace attnlab::tools

int main(int argc, char** argv) {
  using namespace attnlab::tools;
  return RunTool("train_poems", [&] {
    // The F16 writer is checked on every half before anything else (and alone with --selftest, with the BF16 writer
    // and, given scripts/make_hf_fixtures.py's dtypes.safetensors, the whole codec against PyTorch).
    if (const int64_t bad = CheckF16Conversion(); bad != 0) {
      throw std::runtime_error("F16 conversion: " + std::to_string(bad) + " failures");
    }
    if (argc >= 2 && argc <= 3 && std::string(argv[1]) == "--selftest") return SelfTest(argc == 3 ? argv[2] : "");
    return Run(ParseArgs(argc, argv));
  });
}
