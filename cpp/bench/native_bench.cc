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

}  // namespace

int main(int argc, char** argv) {
  Options opt;
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
      return 2;
    }
  }
  const bool eigen_ok = eigen_ref::CpuSupported();
  const double t_start = Now();
  const char* target = attnlab::ActiveTargetName();
  std::fprintf(stderr, "attnlab native bench: Highway target %s, %zu attnlab thread(s), Eigen %s\n", target,
               attnlab::ThreadCount(), eigen_ok ? eigen_ref::SimdInUse() : "(skipped: this CPU lacks AVX2/FMA)");

  std::mt19937 rng(20240605);
  const std::vector<float> w_in = Uniform(3 * kE * kE, std::sqrt(6.0f / (4 * kE)), rng);
  const std::vector<float> b_in = Uniform(3 * kE, 0.1f, rng);
  const std::vector<float> w_out = Uniform(kE * kE, 1.0f / std::sqrt(static_cast<float>(kE)), rng);
  const std::vector<float> b_out = Uniform(kE, 0.1f, rng);
  attnlab::MultiHeadAttention mha(attnlab::MhaConfig{kE, kHeads, true, false, false, -1, -1, true});
  mha.LoadStateDict({{"in_proj_weight", {w_in.data(), {3 * kE, kE}}},
                     {"in_proj_bias", {b_in.data(), {3 * kE}}},
                     {"out_proj.weight", {w_out.data(), {kE, kE}}},
                     {"out_proj.bias", {b_out.data(), {kE}}}});

  struct Case {
    std::string op;
    int L;
  };
  std::vector<Case> cases = opt.quick ? std::vector<Case>{{"SDPA", 128}, {"MHA", 128}, {"SDPA", 512}}
                                      : std::vector<Case>{{"SDPA", 128}, {"SDPA", 512}, {"SDPA", 2048}, {"SDPA", 8192},
                                                          {"MHA", 128},  {"MHA", 512},  {"MHA", 2048}};
  auto flops_of = [](const std::string& op, double L) {
    return op == "MHA" ? 8 * L * kE * kE + 4 * L * L * kE : 4 * L * L * kE;
  };
  std::map<std::string, std::pair<double, double>> last;  // impl|op → (flops, seconds) of its last case
  std::vector<Row> rows;

  for (const Case& c : cases) {
    const int L = c.L;
    const double flops = flops_of(c.op, L);
    std::mt19937 case_rng(static_cast<unsigned>(L * 7 + (c.op == "MHA")));
    std::vector<float> q, k, v, x;
    if (c.op == "SDPA") {
      q = Uniform(static_cast<size_t>(kHeads) * L * kD, 1, case_rng);
      k = Uniform(q.size(), 1, case_rng);
      v = Uniform(q.size(), 1, case_rng);
    } else {
      x = Uniform(static_cast<size_t>(L) * kE, 1, case_rng);
    }
    const attnlab::Shape heads_shape{kHeads, L, kD};
    const attnlab::Shape x_shape{1, L, kE};
    std::vector<Impl> impls;
    if (c.op == "SDPA") {
      attnlab::SdpaOptions so;
      so.need_weights = false;
      impls.push_back({"attnlab", [&, so] {
                         return attnlab::ScaledDotProductAttention({q.data(), heads_shape}, {k.data(), heads_shape},
                                                                   {v.data(), heads_shape}, so)
                             .output.data;
                       }});
      impls.push_back({"Eigen", [&] {
                         std::vector<float> out(q.size());
                         eigen_ref::Sdpa(q.data(), k.data(), v.data(), out.data(), kHeads, L, kD);
                         return out;
                       }});
      impls.push_back({"naive loops", [&] {
                         std::vector<float> out(q.size());
                         naive::Sdpa(q.data(), k.data(), v.data(), out.data(), kHeads, L, kD);
                         return out;
                       }});
    } else {
      attnlab::MhaForwardOptions fo;
      fo.need_weights = false;
      impls.push_back(
          {"attnlab", [&, fo] {
             return mha.Forward({x.data(), x_shape}, {x.data(), x_shape}, {x.data(), x_shape}, fo).output.data;
           }});
      impls.push_back({"Eigen", [&] {
                         std::vector<float> out(x.size());
                         eigen_ref::Mha(x.data(), w_in.data(), b_in.data(), w_out.data(), b_out.data(), out.data(), L,
                                        kE, kHeads);
                         return out;
                       }});
      impls.push_back({"naive loops", [&] {
                         std::vector<float> out(x.size());
                         naive::Mha(x.data(), w_in.data(), b_in.data(), w_out.data(), b_out.data(), out.data(), L, kE,
                                    kHeads);
                         return out;
                       }});
    }
    if (!eigen_ok) impls[1].status = "skipped: CPU lacks AVX2/FMA";
    for (auto& impl : impls) {
      const auto it = last.find(impl.name + "|" + c.op);
      // attnlab (first) is the reference every other output is checked against: it always runs.
      if (&impl == &impls[0] || impl.status != "ok" || it == last.end()) continue;
      const double predicted = it->second.second * flops / it->second.first;
      if (predicted > opt.max_run_s) {
        impl.status =
            "skipped: ~" + Fmt("%.0f", predicted) + " s/run predicted (> " + Fmt("%.0f", opt.max_run_s) + " s)";
      }
    }
    const std::string label = c.op + " L=" + std::to_string(L);
    std::fprintf(stderr, "== %s (%.2f GFLOP)\n", label.c_str(), flops / 1e9);
    RunCase(label, impls, opt);
    double attnlab_ms = 0;
    for (auto& impl : impls) {
      Row r{c.op, L, flops, impl.name, impl.status};
      if (impl.status == "ok") {
        r.median_ms = Median(impl.times_ms);
        r.min_ms = *std::min_element(impl.times_ms.begin(), impl.times_ms.end());
        r.max_ms = *std::max_element(impl.times_ms.begin(), impl.times_ms.end());
        r.runs = static_cast<int>(impl.times_ms.size());
        r.gflops = flops / (r.median_ms / 1e3) / 1e9;
        r.max_abs_diff = impl.max_abs_diff;
        if (impl.name == "attnlab") attnlab_ms = r.median_ms;
        r.vs_attnlab = attnlab_ms > 0 ? attnlab_ms / r.median_ms : 0;
        last[impl.name + "|" + c.op] = {flops, r.median_ms / 1e3};
        std::fprintf(stderr, "  %-12s median %s ms [%s–%s] %.1f GFLOP/s\n", impl.name.c_str(),
                     FmtMs(r.median_ms).c_str(), FmtMs(r.min_ms).c_str(), FmtMs(r.max_ms).c_str(), r.gflops);
      } else {
        std::fprintf(stderr, "  %-12s %s\n", impl.name.c_str(), impl.status.c_str());
      }
      rows.push_back(r);
    }
  }

  // --- attnlab sub-steps (public API only) ---
  struct Step {
    std::string name;
    int L;
    double flops;
    double median_ms = 0, min_ms = 0, max_ms = 0;
  };
  std::vector<Step> steps;
  const std::vector<int> step_ls = opt.quick ? std::vector<int>{512} : std::vector<int>{512, 2048};
  std::fprintf(stderr, "== attnlab sub-steps\n");
  for (const int L : step_ls) {
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
    std::vector<Impl> impls;
    impls.push_back({"SDPA online (need_weights false)", [&] {
                       return attnlab::ScaledDotProductAttention({q.data(), hs}, {k.data(), hs}, {v.data(), hs}, online)
                           .output.data;
                     }});
    impls.push_back(
        {"SDPA exact (need_weights true)", [&] {
           return attnlab::ScaledDotProductAttention({q.data(), hs}, {k.data(), hs}, {v.data(), hs}, exact).output.data;
         }});
    impls.push_back({"SDPA online, d = 128", [&] {
                       return attnlab::ScaledDotProductAttention({q2.data(), hs2}, {k2.data(), hs2}, {v2.data(), hs2},
                                                                 online2)
                           .output.data;
                     }});
    impls.push_back({"MHA full (need_weights false)", [&] {
                       return mha.Forward({x.data(), xs}, {x.data(), xs}, {x.data(), xs}, fo).output.data;
                     }});
    impls.push_back({"MHA, one key (≈ Q + out projections)", [&] {
                       return mha.Forward({x.data(), xs}, {x1.data(), x1s}, {x1.data(), x1s}, fo).output.data;
                     }});
    // The sub-steps compute different things: nothing to compare across them (the main table checked results).
    {
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
    const double fl[] = {4.0 * L * L * kE, 4.0 * L * L * kE, 8.0 * L * L * kE, flops_of("MHA", L), 4.0 * L * kE * kE};
    for (size_t i = 0; i < impls.size(); ++i) {
      Step s{impls[i].name, L, fl[i]};
      s.median_ms = Median(impls[i].times_ms);
      s.min_ms = *std::min_element(impls[i].times_ms.begin(), impls[i].times_ms.end());
      s.max_ms = *std::max_element(impls[i].times_ms.begin(), impls[i].times_ms.end());
      steps.push_back(s);
    }
  }
  const double wall_s = Now() - t_start;

  // --- report ---
  const char* mmap_env = std::getenv("MALLOC_MMAP_THRESHOLD_");  // set by scripts/bench/native.sh
  const std::string malloc_setting = mmap_env ? mmap_env : "default";
  std::ostringstream md;
  md << "## attnlab native benchmark\n\n";
  md << "Highway target chosen at run time: **" << target << "**; Eigen " << eigen_ref::Version() << " single thread ("
     << (eigen_ok ? eigen_ref::SimdInUse() : "skipped") << "); naive loops with the project's flags "
     << "(-O3, no -march). E = 512, 8 heads (d = 64), batch 1, need_weights false; SDPA query (8, L, 64). "
     << "Round-robin, warm-up then >= 10 timed runs; total " << Fmt("%.0f", wall_s) << " s. glibc "
     << "MALLOC_MMAP_THRESHOLD_: " << malloc_setting << ".\n\n";
  md << "| op | L | implementation | median ms | min–max ms | runs | GFLOP/s | attnlab speed-up | max abs Δ |\n";
  md << "|---|---:|---|---:|---:|---:|---:|---:|---:|\n";
  for (const Row& r : rows) {
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
  for (const Step& s : steps) {
    md << "| " << s.L << " | " << s.name << " | " << FmtMs(s.median_ms) << " | " << FmtMs(s.min_ms) << "–"
       << FmtMs(s.max_ms) << " | " << Fmt("%.1f", s.flops / (s.median_ms / 1e3) / 1e9) << " |\n";
  }
  for (const int L : step_ls) {
    // Minimum times: on a shared machine they are the steadiest estimate of each step's own cost.
    auto find = [&](const std::string& prefix) {
      for (const Step& s : steps)
        if (s.L == L && s.name.rfind(prefix, 0) == 0) return s.min_ms;
      return 0.0;
    };
    const double t64 = find("SDPA online (need"), t128 = find("SDPA online, d = 128"), mha_ms = find("MHA full"),
                 proj = find("MHA, one key");
    const double softmax = std::max(0.0, 2 * t64 - t128);
    const double proj_all = proj * 2.0;  // Q+out measured; K and V projections cost the same again
    md << "\nL = " << L << ", from minimum times: softmax + tile bookkeeping share of SDPA ≈ "
       << Fmt("%.0f", 100 * softmax / t64) << "% (" << FmtMs(softmax) << " of " << FmtMs(t64) << " ms; matmul part ≈ "
       << Fmt("%.1f", 4.0 * L * L * kE / ((t64 - softmax) / 1e3) / 1e9) << " GFLOP/s). MHA " << FmtMs(mha_ms)
       << " ms ≈ projections " << FmtMs(proj_all) << " ms (4 × L·E² GEMMs, from the one-key run × 2) + attention "
       << FmtMs(t64) << " ms (the SDPA at this L) + rest " << FmtMs(mha_ms - proj_all - t64) << " ms.\n";
  }
  const std::string report = md.str();
  std::fputs(report.c_str(), stdout);

  std::ostringstream js;
  js << "{\n  \"target\": \"" << target << "\",\n  \"eigen_simd\": \"" << (eigen_ok ? eigen_ref::SimdInUse() : "")
     << "\",\n  \"malloc_mmap_threshold\": \"" << malloc_setting << "\",\n  \"wall_s\": " << wall_s
     << ",\n  \"results\": [\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    js << "    {\"op\": \"" << r.op << "\", \"L\": " << r.L << ", \"impl\": \"" << r.impl << "\", \"status\": \""
       << r.status << "\", \"flops\": " << r.flops << ", \"median_ms\": " << r.median_ms << ", \"min_ms\": " << r.min_ms
       << ", \"max_ms\": " << r.max_ms << ", \"runs\": " << r.runs << ", \"gflops\": " << r.gflops
       << ", \"max_abs_diff\": " << r.max_abs_diff << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  js << "  ],\n  \"substeps\": [\n";
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    js << "    {\"L\": " << s.L << ", \"step\": \"" << s.name << "\", \"flops\": " << s.flops
       << ", \"median_ms\": " << s.median_ms << ", \"min_ms\": " << s.min_ms << ", \"max_ms\": " << s.max_ms << "}"
       << (i + 1 < steps.size() ? "," : "") << "\n";
  }
  js << "  ]\n}\n";
  std::string mkdir = "mkdir -p '" + opt.out_dir + "'";
  if (std::system(mkdir.c_str()) == 0) {
    std::ofstream(opt.out_dir + "/native.md") << report;
    std::ofstream(opt.out_dir + "/native.json") << js.str();
    std::fprintf(stderr, "wrote %s/native.md and %s/native.json (%.0f s)\n", opt.out_dir.c_str(), opt.out_dir.c_str(),
                 wall_s);
  }
  return 0;
}
