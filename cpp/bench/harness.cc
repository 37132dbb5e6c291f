// The native benchmark's timing harness (harness.h).
#include "cpp/bench/harness.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace bench {

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double Median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  const size_t n = xs.size();
  return n % 2 ? xs[n / 2] : 0.5 * (xs[n / 2 - 1] + xs[n / 2]);
}

std::vector<float> Uniform(size_t n, float bound, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-bound, bound);
  std::vector<float> a(n);
  for (auto& x : a) x = dist(rng);
  return a;
}

double MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(static_cast<double>(a[i]) - b[i]);
    if (!(d <= m)) m = std::isnan(d) ? INFINITY : d;
  }
  return m;
}

std::string Fmt(const char* f, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}

std::string FmtMs(double ms) { return Fmt(ms >= 100 ? "%.0f" : ms >= 10 ? "%.1f" : "%.2f", ms); }

// Times `impls` round-robin: checks each against the first (the reference), then warm-up and timed rounds.
// Entries with a non-"ok" status are left alone.
void RunCase(const std::string& label, std::vector<Impl>& impls, const Options& opt) {
  std::vector<float> reference;
  for (auto& impl : impls) {
    if (impl.status != "ok") continue;
    const double t0 = Now();
    std::vector<float> out = impl.run();
    impl.first_s = Now() - t0;
    if (reference.empty()) {
      reference = std::move(out);
      impl.max_abs_diff = 0;
    } else {
      impl.max_abs_diff = MaxAbsDiff(out, reference);
      if (!(impl.max_abs_diff <= kTol)) {
        std::fprintf(stderr, "\nMISMATCH: %s disagrees with attnlab on %s: max |diff| = %g (tolerance %g). Aborting.\n",
                     impl.name.c_str(), label.c_str(), impl.max_abs_diff, kTol);
        std::exit(1);
      }
    }
  }
  double round_s = 0;
  std::vector<Impl*> live;
  for (auto& impl : impls) {
    if (impl.status == "ok") {
      live.push_back(&impl);
      round_s += impl.first_s;
    }
  }
  const int warmups = round_s < 0.5 ? 3 : round_s < 5 ? 1 : 0;  // big cases: the check run was the warm-up
  const int reps = std::max(opt.min_reps, std::min(50, static_cast<int>(2.0 / std::max(round_s, 1e-4))));
  for (int rep = -warmups; rep < reps; ++rep) {
    const size_t start = static_cast<size_t>(rep + warmups) % live.size();
    for (size_t j = 0; j < live.size(); ++j) {
      Impl& impl = *live[(start + j) % live.size()];
      const double t0 = Now();
      const std::vector<float> out = impl.run();
      const double dt = (Now() - t0) * 1e3;
      if (out.empty()) std::abort();  // keeps the result observable
      if (rep >= 0) impl.times_ms.push_back(dt);
    }
  }
}

}  // namespace bench
