// Command-line flags shared by the trainers (cpp/tools/train_*.cc): "--name value" pairs, numbers by table, and
// the AdamW flags every trainer takes.
#ifndef ATTNLAB_TOOLS_COMMON_FLAGS_H_
#define ATTNLAB_TOOLS_COMMON_FLAGS_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>

#include "attnlab/transformer.h"
#include "cpp/tools/common/files.h"
#include "cpp/tools/common/lr_schedule.h"
#include "nlohmann/json.hpp"

namespace attnlab::tools {

// A tool's main: run(), or on an exception "NAME: what" on stderr and exit status 2.
inline int RunTool(const char* name, const std::function<int()>& run) {
  try {
    return run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", name, e.what());
    return 2;
  }
}

// summary.json in `dir`, also printed.
inline void WriteSummary(const std::string& dir, const nlohmann::ordered_json& summary) {
  const std::string text = summary.dump(2) + "\n";
  std::fputs(text.c_str(), stdout);
  WriteText(dir + "/summary.json", text);
}

// Calls set(name, value) for each "--name value" pair of argv (false: an unknown flag, std::invalid_argument);
// --help or -h prints `usage` and exits.
inline void ParseFlags(int argc, char** argv, const char* usage,
                       const std::function<bool(const std::string&, const std::string&)>& set) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(usage, stdout);
      std::exit(0);
    }
    if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value (--help)");
    if (!set(a, argv[++i])) throw std::invalid_argument("unknown argument " + a + " (--help)");
  }
}

// Sets the integer or real flag `name` from `value` (false: neither table has it); std::invalid_argument on a value
// that is not a number.
inline bool SetNumber(const std::map<std::string, int64_t*>& ints, const std::map<std::string, double*>& doubles,
                      const std::string& name, const std::string& value) {
  char* end = nullptr;
  if (auto n = ints.find(name); n != ints.end()) {
    *n->second = std::strtoll(value.c_str(), &end, 10);
  } else if (auto d = doubles.find(name); d != doubles.end()) {
    *d->second = std::strtod(value.c_str(), &end);
  } else {
    return false;
  }
  if (value.empty() || *end) throw std::invalid_argument(name + ": not a number: " + value);
  return true;
}

// torch.optim.AdamW's settings and clip_grad_norm_'s bound (the learning rate comes from the schedule).
struct AdamWFlags {
  double weight_decay = 0.1, beta1 = 0.9, beta2 = 0.99, eps = 1e-8, clip = 1.0;

  std::map<std::string, double*> Table() {
    return {{"--weight-decay", &weight_decay},
            {"--beta1", &beta1},
            {"--beta2", &beta2},
            {"--eps", &eps},
            {"--clip", &clip}};
  }
  Transformer::AdamWOptions Options() const {
    Transformer::AdamWOptions adamw;
    adamw.weight_decay = static_cast<float>(weight_decay);
    adamw.beta1 = static_cast<float>(beta1);
    adamw.beta2 = static_cast<float>(beta2);
    adamw.eps = static_cast<float>(eps);
    adamw.clip_grad_norm = static_cast<float>(clip);
    return adamw;
  }
};

// The flags every trainer takes: the schedule, the optimiser, the batch, logging, seed, threads and --bench.
struct TrainFlags {
  CosineSchedule schedule;
  AdamWFlags adamw;
  int64_t batch = 64, log_every = 50, eval_every = 500, seed = 1, threads = 2, bench = 0;

  void AddTo(std::map<std::string, int64_t*>& ints, std::map<std::string, double*>& doubles) {
    ints.insert({{"--steps", &schedule.steps},
                 {"--warmup", &schedule.warmup},
                 {"--batch", &batch},
                 {"--log-every", &log_every},
                 {"--eval-every", &eval_every},
                 {"--seed", &seed},
                 {"--threads", &threads},
                 {"--bench", &bench}});
    doubles = adamw.Table();
    doubles.insert({{"--lr", &schedule.lr}, {"--min-lr-ratio", &schedule.min_lr_ratio}});
  }
  // The settings as summary.json records them.
  nlohmann::ordered_json Json() const {
    return {{"steps", schedule.steps},
            {"batch", batch},
            {"seed", seed},
            {"lr", schedule.lr},
            {"warmup", schedule.warmup},
            {"min_lr_ratio", schedule.min_lr_ratio},
            {"weight_decay", adamw.weight_decay},
            {"betas", {adamw.beta1, adamw.beta2}},
            {"eps", adamw.eps},
            {"clip_grad_norm", adamw.clip}};
  }
};

}  // namespace attnlab::tools

#endif  // ATTNLAB_TOOLS_COMMON_FLAGS_H_
