// The training log of the tools, as llm.c's llmc/logger.h: losses.csv and its console line, the clocks it reads, and
// the step dump that scripts/poems/check_pytorch.py replays.
#ifndef ATTNLAB_TOOLS_COMMON_LOG_H_
#define ATTNLAB_TOOLS_COMMON_LOG_H_

#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <string>

#include "attnlab/transformer.h"
#include "cpp/tools/common/token_data.h"

namespace attnlab::tools {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since);
// CPU seconds of this process (user + system, all threads): on a shared machine the wall time overstates the work.
double CpuSeconds();
// x with `digits` decimals ("%.*f").
std::string Fmt(double x, int digits = 6);

struct TrainTotals {
  double seconds = 0, cpu_seconds = 0, eval_seconds = 0;
  int64_t tokens_seen = 0;
};

// When to log: the mean train loss and gradient norm every `log_every` steps, the validation loss every `eval_every`
// steps (0: never), both at the last step `steps`.
struct LogEvery {
  int64_t log_every = 50, eval_every = 500, steps = 0;
};

// losses.csv (step,epoch,tokens,lr,train_loss,grad_norm,val_loss,elapsed_s,cpu_s) and one console line per row.
class TrainLog {
 public:
  TrainLog(const std::string& csv_path, LogEvery every, std::function<double()> validation_loss);
  void Step(int64_t step, int64_t epoch, float lr, const Transformer::StepResult& r, TrainTotals& totals);
  void Finish(TrainTotals& totals) const;

 private:
  LogEvery every_;
  std::function<double()> validation_loss_;
  std::ofstream csv_;
  const Clock::time_point start_ = Clock::now();
  const double cpu_start_ = CpuSeconds();
  double loss_sum_ = 0, norm_sum_ = 0;
  int64_t n_ = 0;
};

// --dump DIR: the initial weights (init.safetensors, F32), every batch (batches.i32: b, t, tokens, targets as int32),
// every step's lr, loss and gradient norm (steps.csv) and the final weights (final.safetensors). Does nothing when
// `dir` is empty.
class StepDump {
 public:
  StepDump(const std::string& dir, const Transformer& model);
  void Step(int64_t step, const Batch& b, float lr, const Transformer::StepResult& r);
  void Final(const std::map<std::string, Tensor>& state) const;

 private:
  std::string dir_;
  std::ofstream batches_, steps_;
};

}  // namespace attnlab::tools

#endif  // ATTNLAB_TOOLS_COMMON_LOG_H_
