// The training log of the tools (log.h).
#include "cpp/tools/common/log.h"

#include <cinttypes>
#include <cstdio>
#include <stdexcept>
#include <utility>

#include <sys/resource.h>

#include "cpp/tools/common/files.h"
#include "cpp/tools/common/safetensors.h"

namespace attnlab::tools {

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

double CpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

std::string Fmt(double x, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

TrainLog::TrainLog(const std::string& csv_path, LogEvery every, std::function<double()> validation_loss)
    : every_(every), validation_loss_(std::move(validation_loss)), csv_(csv_path) {
  if (!csv_) throw std::runtime_error("cannot write " + csv_path);
  csv_ << "step,epoch,tokens,lr,train_loss,grad_norm,val_loss,elapsed_s,cpu_s\n";
}

void TrainLog::Step(int64_t step, int64_t epoch, float lr, const Transformer::StepResult& r, TrainTotals& totals) {
  loss_sum_ += r.loss;
  norm_sum_ += r.grad_norm;
  ++n_;
  const bool log = step % every_.log_every == 0 || step == every_.steps;
  const bool eval = every_.eval_every > 0 && (step % every_.eval_every == 0 || step == every_.steps);
  if (!log && !eval) return;
  std::string val_loss;
  if (eval) {
    const auto e0 = Clock::now();
    val_loss = Fmt(validation_loss_());
    totals.eval_seconds += Seconds(e0);
  }
  const double elapsed = Seconds(start_);
  csv_ << step << "," << epoch << "," << totals.tokens_seen << "," << Fmt(lr, 8) << ","
       << (log ? Fmt(loss_sum_ / n_) : "") << "," << (log ? Fmt(norm_sum_ / n_, 4) : "") << "," << val_loss << ","
       << Fmt(elapsed, 1) << "," << Fmt(CpuSeconds() - cpu_start_, 1) << "\n";
  csv_.flush();
  std::printf("step %6" PRId64 "  epoch %" PRId64 "  lr %.2e  train %.4f  |g| %.3f%s%s  %.0f s (%.0f ms/step)\n", step,
              epoch, lr, loss_sum_ / n_, norm_sum_ / n_, eval ? "  val " : "", val_loss.c_str(), elapsed,
              1e3 * (elapsed - totals.eval_seconds) / step);
  std::fflush(stdout);
  loss_sum_ = norm_sum_ = 0;
  n_ = 0;
}

void TrainLog::Finish(TrainTotals& totals) const {
  totals.seconds = Seconds(start_);
  totals.cpu_seconds = CpuSeconds() - cpu_start_;
}

StepDump::StepDump(const std::string& dir, const Transformer& model) : dir_(dir) {
  if (dir.empty()) return;
  MakeDir(dir);
  WriteSafetensors(dir + "/init.safetensors", model.StateDict(), StDtype::kF32);
  batches_.open(dir + "/batches.i32", std::ios::binary);
  steps_.open(dir + "/steps.csv");
  steps_ << "step,lr,loss,grad_norm\n";
}

void StepDump::Step(int64_t step, const Batch& b, float lr, const Transformer::StepResult& r) {
  if (dir_.empty()) return;
  const int32_t dims[2] = {static_cast<int32_t>(b.b), static_cast<int32_t>(b.t)};
  batches_.write(reinterpret_cast<const char*>(dims), 8);
  batches_.write(reinterpret_cast<const char*>(b.tokens.data()), static_cast<std::streamsize>(b.tokens.size() * 4));
  batches_.write(reinterpret_cast<const char*>(b.targets.data()), static_cast<std::streamsize>(b.targets.size() * 4));
  char line[128];
  std::snprintf(line, sizeof line, "%" PRId64 ",%.9g,%.9g,%.9g\n", step, lr, r.loss, r.grad_norm);
  steps_ << line;
}

void StepDump::Final(const std::map<std::string, Tensor>& state) const {
  if (!dir_.empty()) WriteSafetensors(dir_ + "/final.safetensors", state, StDtype::kF32);
}

}  // namespace attnlab::tools
