// The native benchmark's timing harness (native_bench.cc): implementations of one case checked against the first
// (attnlab), then warm-up and timed rounds, round-robin.
#ifndef ATTNLAB_CPP_BENCH_HARNESS_H_
#define ATTNLAB_CPP_BENCH_HARNESS_H_

#include <cstddef>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace bench {

constexpr double kTol = 1e-3;  // max |Δ| of an implementation's output against attnlab's

double Now();
double Median(std::vector<double> xs);
std::vector<float> Uniform(size_t n, float bound, std::mt19937& rng);
double MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b);
std::string Fmt(const char* f, double x);
std::string FmtMs(double ms);

struct Impl {
  Impl(std::string n, std::function<std::vector<float>()> r) : name(std::move(n)), run(std::move(r)) {}
  std::string name;
  std::function<std::vector<float>()> run;
  std::vector<double> times_ms;
  std::string status = "ok";
  double max_abs_diff = 0;
  double first_s = 0;
};

struct Row {
  std::string op;
  int L;
  double flops;
  std::string impl;
  std::string status;
  double median_ms = 0, min_ms = 0, max_ms = 0, gflops = 0, vs_attnlab = 0, max_abs_diff = 0;
  int runs = 0;
};

struct Options {
  bool quick = false;
  double max_run_s = 5.0;
  int min_reps = 10;
  std::string out_dir = "build/bench";
};

// Times `impls` round-robin: checks each against the first (the reference), then warm-up and timed rounds.
// Entries with a non-"ok" status are left alone.
void RunCase(const std::string& label, std::vector<Impl>& impls, const Options& opt);

}  // namespace bench

#endif  // ATTNLAB_CPP_BENCH_HARNESS_H_
