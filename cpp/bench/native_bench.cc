// Native benchmark of attnlab (Highway runtime dispatch: AVX-512 / AVX2 / …) against a naive loop reference
// and Eigen (MatrixXf-style products, single thread). Built by CMake as attnlab_native_bench when this file
// exists; run with `npm run bench:native` or build/native/attnlab_native_bench [--quick] [--max-run-s S]
// [--reps N] [--out DIR] [--threads N].
//
// Cases: SDPA (query (8, L, 64), need_weights false) at L = 128 / 512 / 2048 / 8192 and MHA (E = 512, 8 heads,
// batch 1, batch_first self-attention, need_weights false) at L = 128 / 512 / 2048. Every implementation's
// output is checked against attnlab's (max |Δ| ≤ 1e-3, abort on a mismatch), then warm-up, then ≥ 10 timed
// runs round-robin; median ms, min–max, GFLOP/s (MHA 8·L·E² + 4·L²·E, SDPA 4·L²·E). --threads N lets attnlab's
// calls use N threads (attnlab/threads.h; the references stay single-threaded): run it at 1 and N to see scaling.
//
// A second table breaks attnlab's time into sub-steps using the public API only:
//   - SDPA exact path (need_weights true) next to the online one, to price the online softmax bookkeeping;
//   - SDPA with d = 128 instead of 64: the same 8·L² exponentials with twice the matmul FLOPs, which gives an
//     estimate of the softmax (and tile bookkeeping) share: T_softmax ≈ 2·T(d=64) − T(d=128);
//   - MHA with a single key/value row: the query and output projections (4·L·E² FLOPs) with a trivial
//     attention, i.e. the projection GEMM rate.
//
// The references (references.h): Eigen gets AVX2+FMA code through a GCC target pragma (the project builds without
// -march, which would leave Eigen at SSE2), used only after a CPU check; the naive reference uses the project's
// flags; attnlab dispatches at run time. Timing: harness.h.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/attention.h"
#include "attnlab/threads.h"
#include "cpp/bench/harness.h"
#include "cpp/bench/references.h"

namespace {

using namespace bench;  // NOLINT(build/namespaces): the harness

constexpr int kE = 512;
constexpr int kHeads = 8;
constexpr int kD = kE / kHeads;

// ---------------------------------------------------------------------------------------------------------------
// The run's stages: options → the main table (attnlab against Eigen and naive loops, case by case) → attnlab's
// sub-steps → the Markdown and JSON reports.

// false (after printing the usage) on a bad argument.
bool ParseOptions(int argc, char** argv, Options& opt) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      opt.quick = true;
    } else if (a == "--max-run-s" && i + 1 < argc) {
      opt.max_run_s = std::atof(argv[++i]);
    } else if (a == "--reps" && i + 1 < argc) {
      opt.min_reps = std::max(10, std::atoi(argv[++i]));
    } else if (a == "--out" && i + 1 < argc) {
      opt.out_dir = argv[++i];
    } else if (a == "--threads" && i + 1 < argc) {
      attnlab::SetThreadCount(static_cast<size_t>(std::max(1, std::atoi(argv[++i]))));
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--max-run-s S] [--reps N>=10] [--out DIR] [--threads N]\n", argv[0]);
      return false;
    }
  }
  return true;
}

double FlopsOf(const std::string& op, double L) {
  return op == "MHA" ? 8 * L * kE * kE + 4 * L * L * kE : 4 * L * L * kE;
}

// The MHA module every MHA case runs: E = 512, 8 heads, biases, batch_first; seeded uniform weights, which the
// references read too.
struct MhaWeights {
  std::vector<float> w_in, b_in, w_out, b_out;
  attnlab::MultiHeadAttention mha{attnlab::MhaConfig{kE, kHeads, true, false, false, -1, -1, true}};
  MhaWeights() {
    std::mt19937 rng(20240605);
    w_in = Uniform(3 * kE * kE, std::sqrt(6.0f / (4 * kE)), rng);
    b_in = Uniform(3 * kE, 0.1f, rng);
    w_out = Uniform(kE * kE, 1.0f / std::sqrt(static_cast<float>(kE)), rng);
    b_out = Uniform(kE, 0.1f, rng);
    mha.LoadStateDict({{"in_proj_weight", {w_in.data(), {3 * kE, kE}}},
                       {"in_proj_bias", {b_in.data(), {3 * kE}}},
                       {"out_proj.weight", {w_out.data(), {kE, kE}}},
                       {"out_proj.bias", {b_out.data(), {kE}}}});
  }
};

// One case's inputs: q, k, v (8, L, 64) for SDPA, x (1, L, 512) for MHA.
struct CaseInputs {
  std::vector<float> q, k, v, x;
  CaseInputs(const std::string& op, int L) {
    std::mt19937 rng(static_cast<unsigned>(L * 7 + (op == "MHA")));
    if (op == "SDPA") {
      q = Uniform(static_cast<size_t>(kHeads) * L * kD, 1, rng);
      k = Uniform(q.size(), 1, rng);
      v = Uniform(q.size(), 1, rng);
    } else {
      x = Uniform(static_cast<size_t>(L) * kE, 1, rng);
    }
  }
};

// attnlab (first: the reference the others are checked against), Eigen and naive loops on one SDPA case.
std::vector<Impl> SdpaImpls(const CaseInputs& in, int L) {
  const attnlab::Shape hs{kHeads, L, kD};
  attnlab::SdpaOptions so;
  so.need_weights = false;
  std::vector<Impl> impls;
  impls.push_back({"attnlab", [&in, hs, so] {
                     return attnlab::ScaledDotProductAttention({in.q.data(), hs}, {in.k.data(), hs}, {in.v.data(), hs},
                                                               so)
                         .output.data;
                   }});
  impls.push_back({"Eigen", [&in, L] {
                     std::vector<float> out(in.q.size());
                     eigen_ref::Sdpa(in.q.data(), in.k.data(), in.v.data(), out.data(), kHeads, L, kD);
                     return out;
                   }});
  impls.push_back({"naive loops", [&in, L] {
                     std::vector<float> out(in.q.size());
                     naive::Sdpa(in.q.data(), in.k.data(), in.v.data(), out.data(), kHeads, L, kD);
                     return out;
                   }});
  return impls;
}

// The same three on one MHA (self-attention) case.
std::vector<Impl> MhaImpls(const CaseInputs& in, int L, MhaWeights& m) {
  const attnlab::Shape xs{1, L, kE};
  attnlab::MhaForwardOptions fo;
  fo.need_weights = false;
  std::vector<Impl> impls;
  impls.push_back({"attnlab", [&in, &m, xs, fo] {
                     const float* x = in.x.data();
                     return m.mha.Forward({x, xs}, {x, xs}, {x, xs}, fo).output.data;
                   }});
  impls.push_back({"Eigen", [&in, &m, L] {
                     std::vector<float> out(in.x.size());
                     eigen_ref::Mha(in.x.data(), m.w_in.data(), m.b_in.data(), m.w_out.data(), m.b_out.data(),
                                    out.data(), L, kE, kHeads);
                     return out;
                   }});
  impls.push_back({"naive loops", [&in, &m, L] {
                     std::vector<float> out(in.x.size());
                     naive::Mha(in.x.data(), m.w_in.data(), m.b_in.data(), m.w_out.data(), m.b_out.data(), out.data(),
                                L, kE, kHeads);
                     return out;
                   }});
  return impls;
}

using LastRuns = std::map<std::string, std::pair<double, double>>;  // impl|op → (flops, seconds) of its last case

// A reference whose previous case predicts a run longer than --max-run-s is skipped (attnlab always runs).
void SkipSlow(std::vector<Impl>& impls, const std::string& op, double flops, const LastRuns& last, const Options& opt) {
  for (auto& impl : impls) {
    const auto it = last.find(impl.name + "|" + op);
    if (&impl == &impls[0] || impl.status != "ok" || it == last.end()) continue;
    const double predicted = it->second.second * flops / it->second.first;
    if (predicted > opt.max_run_s) {
      impl.status = "skipped: ~" + Fmt("%.0f", predicted) + " s/run predicted (> " + Fmt("%.0f", opt.max_run_s) + " s)";
    }
  }
}

// A timed implementation's row of the main table (and its console line).
Row MakeRow(const std::string& op, int L, double flops, const Impl& impl, double attnlab_ms) {
  Row r{op, L, flops, impl.name, impl.status};
  if (impl.status != "ok") {
    std::fprintf(stderr, "  %-12s %s\n", impl.name.c_str(), impl.status.c_str());
    return r;
  }
  r.median_ms = Median(impl.times_ms);
  r.min_ms = *std::min_element(impl.times_ms.begin(), impl.times_ms.end());
  r.max_ms = *std::max_element(impl.times_ms.begin(), impl.times_ms.end());
  r.runs = static_cast<int>(impl.times_ms.size());
  r.gflops = flops / (r.median_ms / 1e3) / 1e9;
  r.max_abs_diff = impl.max_abs_diff;
  r.vs_attnlab = attnlab_ms > 0 ? attnlab_ms / r.median_ms : 0;
  std::fprintf(stderr, "  %-12s median %s ms [%s–%s] %.1f GFLOP/s\n", impl.name.c_str(), FmtMs(r.median_ms).c_str(),
               FmtMs(r.min_ms).c_str(), FmtMs(r.max_ms).c_str(), r.gflops);
  return r;
}

// The main table: every case, every implementation checked against attnlab, then timed round-robin.
std::vector<Row> RunMainCases(const Options& opt, bool eigen_ok) {
  struct Case {
    std::string op;
    int L;
  };
  const std::vector<Case> cases = opt.quick
                                      ? std::vector<Case>{{"SDPA", 128}, {"MHA", 128}, {"SDPA", 512}}
                                      : std::vector<Case>{{"SDPA", 128}, {"SDPA", 512}, {"SDPA", 2048}, {"SDPA", 8192},
                                                          {"MHA", 128},  {"MHA", 512},  {"MHA", 2048}};
  MhaWeights weights;
  LastRuns last;
  std::vector<Row> rows;
  for (const Case& c : cases) {
    const double flops = FlopsOf(c.op, c.L);
    const CaseInputs in(c.op, c.L);
    std::vector<Impl> impls = c.op == "SDPA" ? SdpaImpls(in, c.L) : MhaImpls(in, c.L, weights);
    if (!eigen_ok) impls[1].status = "skipped: CPU lacks AVX2/FMA";
    SkipSlow(impls, c.op, flops, last, opt);
    const std::string label = c.op + " L=" + std::to_string(c.L);
    std::fprintf(stderr, "== %s (%.2f GFLOP)\n", label.c_str(), flops / 1e9);
    RunCase(label, impls, opt);
    double attnlab_ms = 0;
    for (const Impl& impl : impls) {
      const Row r = MakeRow(c.op, c.L, flops, impl, attnlab_ms);
      if (r.status == "ok") {
        if (impl.name == "attnlab") attnlab_ms = r.median_ms;
        last[impl.name + "|" + c.op] = {flops, r.median_ms / 1e3};
      }
      rows.push_back(r);
    }
  }
  return rows;
}

struct Step {
  std::string name;
  int L;
  double flops;
  double median_ms = 0, min_ms = 0, max_ms = 0;
};

// Times the sub-steps round-robin (they compute different things: nothing to compare; the main table checked).
void TimeRoundRobin(std::vector<Impl>& impls, const Options& opt) {
  double round_s = 0;
  for (auto& impl : impls) {
    const double t0 = Now();
    impl.run();
    round_s += Now() - t0;
  }
  const int reps = std::max(opt.min_reps, std::min(30, static_cast<int>(2.0 / std::max(round_s, 1e-4))));
  for (int rep = -1; rep < reps; ++rep) {
    for (size_t j = 0; j < impls.size(); ++j) {
      Impl& impl = impls[(j + static_cast<size_t>(rep + 1)) % impls.size()];
      const double t0 = Now();
      const std::vector<float> out = impl.run();
      if (out.empty()) std::abort();
      if (rep >= 0) impl.times_ms.push_back((Now() - t0) * 1e3);
    }
  }
}

// attnlab's time split by the public API at one L: online vs exact SDPA, d = 128 (the softmax share), MHA in full
// and with one key (≈ the Q and output projections).
void RunSubSteps(int L, MhaWeights& m, const Options& opt, std::vector<Step>& steps) {
  std::mt19937 r2(static_cast<unsigned>(L));
  const std::vector<float> q = Uniform(static_cast<size_t>(kHeads) * L * kD, 1, r2), k = Uniform(q.size(), 1, r2),
                           v = Uniform(q.size(), 1, r2);
  const std::vector<float> q2 = Uniform(static_cast<size_t>(kHeads) * L * 2 * kD, 1, r2),
                           k2 = Uniform(q2.size(), 1, r2), v2 = Uniform(q2.size(), 1, r2);
  const std::vector<float> x = Uniform(static_cast<size_t>(L) * kE, 1, r2), x1 = Uniform(kE, 1, r2);
  const attnlab::Shape hs{kHeads, L, kD}, hs2{kHeads, L, 2 * kD}, xs{1, L, kE}, x1s{1, 1, kE};
  attnlab::SdpaOptions online, exact, online2;
  online.need_weights = false;
  exact.need_weights = true;
  online2.need_weights = false;
  online2.has_scale = true;
  online2.scale = 0.125f / std::sqrt(2.0f);  // keeps the logits' spread of d = 64 (inputs are uniform)
  attnlab::MhaForwardOptions fo;
  fo.need_weights = false;
  auto sdpa = [](const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c,
                 const attnlab::Shape& s, const attnlab::SdpaOptions& o) {
    return attnlab::ScaledDotProductAttention({a.data(), s}, {b.data(), s}, {c.data(), s}, o).output.data;
  };
  std::vector<Impl> impls;
  impls.push_back({"SDPA online (need_weights false)", [&] { return sdpa(q, k, v, hs, online); }});
  impls.push_back({"SDPA exact (need_weights true)", [&] { return sdpa(q, k, v, hs, exact); }});
  impls.push_back({"SDPA online, d = 128", [&] { return sdpa(q2, k2, v2, hs2, online2); }});
  impls.push_back({"MHA full (need_weights false)", [&] {
                     return m.mha.Forward({x.data(), xs}, {x.data(), xs}, {x.data(), xs}, fo).output.data;
                   }});
  impls.push_back({"MHA, one key (≈ Q + out projections)", [&] {
                     return m.mha.Forward({x.data(), xs}, {x1.data(), x1s}, {x1.data(), x1s}, fo).output.data;
                   }});
  TimeRoundRobin(impls, opt);
  const double fl[] = {4.0 * L * L * kE, 4.0 * L * L * kE, 8.0 * L * L * kE, FlopsOf("MHA", L), 4.0 * L * kE * kE};
  for (size_t i = 0; i < impls.size(); ++i) {
    Step s{impls[i].name, L, fl[i]};
    s.median_ms = Median(impls[i].times_ms);
    s.min_ms = *std::min_element(impls[i].times_ms.begin(), impls[i].times_ms.end());
    s.max_ms = *std::max_element(impls[i].times_ms.begin(), impls[i].times_ms.end());
    steps.push_back(s);
  }
}

struct Report {
  std::string target, eigen_simd, malloc_setting;
  double wall_s = 0;
  std::vector<Row> rows;
  std::vector<Step> steps;
  std::vector<int> step_ls;
};

// The sub-steps' reading at one L, from minimum times: the softmax share and the MHA time by part.
std::string SubStepSummary(const Report& rep, int L) {
  auto find = [&](const std::string& prefix) {
    for (const Step& s : rep.steps)
      if (s.L == L && s.name.rfind(prefix, 0) == 0) return s.min_ms;
    return 0.0;
  };
  const double t64 = find("SDPA online (need"), t128 = find("SDPA online, d = 128"), mha_ms = find("MHA full"),
               proj = find("MHA, one key");
  const double softmax = std::max(0.0, 2 * t64 - t128);
  const double proj_all = proj * 2.0;  // Q+out measured; K and V projections cost the same again
  std::ostringstream md;
  md << "\nL = " << L << ", from minimum times: softmax + tile bookkeeping share of SDPA ≈ "
     << Fmt("%.0f", 100 * softmax / t64) << "% (" << FmtMs(softmax) << " of " << FmtMs(t64) << " ms; matmul part ≈ "
     << Fmt("%.1f", 4.0 * L * L * kE / ((t64 - softmax) / 1e3) / 1e9) << " GFLOP/s). MHA " << FmtMs(mha_ms)
     << " ms ≈ projections " << FmtMs(proj_all) << " ms (4 × L·E² GEMMs, from the one-key run × 2) + attention "
     << FmtMs(t64) << " ms (the SDPA at this L) + rest " << FmtMs(mha_ms - proj_all - t64) << " ms.\n";
  return md.str();
}

std::string MarkdownReport(const Report& rep) {
  std::ostringstream md;
  md << "## attnlab native benchmark\n\n";
  md << "Highway target chosen at run time: **" << rep.target << "**; Eigen " << eigen_ref::Version()
     << " single thread (" << (rep.eigen_simd.empty() ? "skipped" : rep.eigen_simd) << "); naive loops with the "
     << "project's flags (-O3, no -march). E = 512, 8 heads (d = 64), batch 1, need_weights false; SDPA query (8, L, "
     << "64). Round-robin, warm-up then >= 10 timed runs; total " << Fmt("%.0f", rep.wall_s) << " s. glibc "
     << "MALLOC_MMAP_THRESHOLD_: " << rep.malloc_setting << ".\n\n";
  md << "| op | L | implementation | median ms | min–max ms | runs | GFLOP/s | attnlab speed-up | max abs Δ |\n";
  md << "|---|---:|---|---:|---:|---:|---:|---:|---:|\n";
  for (const Row& r : rep.rows) {
    if (r.status != "ok") {
      md << "| " << r.op << " | " << r.L << " | " << r.impl << " | — | " << r.status << " | | | | |\n";
      continue;
    }
    md << "| " << r.op << " | " << r.L << " | " << r.impl << " | " << FmtMs(r.median_ms) << " | " << FmtMs(r.min_ms)
       << "–" << FmtMs(r.max_ms) << " | " << r.runs << " | " << Fmt("%.1f", r.gflops) << " | "
       << (r.impl == "attnlab" ? std::string("—") : Fmt("%.2f×", 1.0 / r.vs_attnlab)) << " | "
       << (r.impl == "attnlab" ? std::string("reference") : Fmt("%.1e", r.max_abs_diff)) << " |\n";
  }
  md << "\nattnlab speed-up: this implementation's median / attnlab's (> 1 = attnlab is faster).\n\n";
  md << "### attnlab sub-steps (public API)\n\n";
  md << "| L | step | median ms | min–max ms | GFLOP/s |\n|---:|---|---:|---:|---:|\n";
  for (const Step& s : rep.steps) {
    md << "| " << s.L << " | " << s.name << " | " << FmtMs(s.median_ms) << " | " << FmtMs(s.min_ms) << "–"
       << FmtMs(s.max_ms) << " | " << Fmt("%.1f", s.flops / (s.median_ms / 1e3) / 1e9) << " |\n";
  }
  // Minimum times: on a shared machine they are the steadiest estimate of each step's own cost.
  for (const int L : rep.step_ls) md << SubStepSummary(rep, L);
  return md.str();
}

std::string JsonReport(const Report& rep) {
  std::ostringstream js;
  js << "{\n  \"target\": \"" << rep.target << "\",\n  \"eigen_simd\": \"" << rep.eigen_simd
     << "\",\n  \"malloc_mmap_threshold\": \"" << rep.malloc_setting << "\",\n  \"wall_s\": " << rep.wall_s
     << ",\n  \"results\": [\n";
  for (size_t i = 0; i < rep.rows.size(); ++i) {
    const Row& r = rep.rows[i];
    js << "    {\"op\": \"" << r.op << "\", \"L\": " << r.L << ", \"impl\": \"" << r.impl << "\", \"status\": \""
       << r.status << "\", \"flops\": " << r.flops << ", \"median_ms\": " << r.median_ms << ", \"min_ms\": " << r.min_ms
       << ", \"max_ms\": " << r.max_ms << ", \"runs\": " << r.runs << ", \"gflops\": " << r.gflops
       << ", \"max_abs_diff\": " << r.max_abs_diff << "}" << (i + 1 < rep.rows.size() ? "," : "") << "\n";
  }
  js << "  ],\n  \"substeps\": [\n";
  for (size_t i = 0; i < rep.steps.size(); ++i) {
    const Step& s = rep.steps[i];
    js << "    {\"L\": " << s.L << ", \"step\": \"" << s.name << "\", \"flops\": " << s.flops
       << ", \"median_ms\": " << s.median_ms << ", \"min_ms\": " << s.min_ms << ", \"max_ms\": " << s.max_ms << "}"
       << (i + 1 < rep.steps.size() ? "," : "") << "\n";
  }
  js << "  ]\n}\n";
  return js.str();
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!ParseOptions(argc, argv, opt)) return 2;
  const bool eigen_ok = eigen_ref::CpuSupported();
  const double t_start = Now();
  Report rep;
  rep.target = attnlab::ActiveTargetName();
  rep.eigen_simd = eigen_ok ? eigen_ref::SimdInUse() : "";
  std::fprintf(stderr, "attnlab native bench: Highway target %s, %zu attnlab thread(s), Eigen %s\n", rep.target.c_str(),
               attnlab::ThreadCount(), eigen_ok ? eigen_ref::SimdInUse() : "(skipped: this CPU lacks AVX2/FMA)");
  rep.rows = RunMainCases(opt, eigen_ok);
  rep.step_ls = opt.quick ? std::vector<int>{512} : std::vector<int>{512, 2048};
  std::fprintf(stderr, "== attnlab sub-steps\n");
  MhaWeights weights;
  for (const int L : rep.step_ls) RunSubSteps(L, weights, opt, rep.steps);
  rep.wall_s = Now() - t_start;
  const char* mmap_env = std::getenv("MALLOC_MMAP_THRESHOLD_");  // set by scripts/bench/native.sh
  rep.malloc_setting = mmap_env ? mmap_env : "default";
  const std::string report = MarkdownReport(rep);
  std::fputs(report.c_str(), stdout);
  const std::string mkdir = "mkdir -p '" + opt.out_dir + "'";
  if (std::system(mkdir.c_str()) == 0) {
    std::ofstream(opt.out_dir + "/native.md") << report;
    std::ofstream(opt.out_dir + "/native.json") << JsonReport(rep);
    std::fprintf(stderr, "wrote %s/native.md and %s/native.json (%.0f s)\n", opt.out_dir.c_str(), opt.out_dir.c_str(),
                 rep.wall_s);
  }
  return 0;
}
