// Native whole-model benchmark (scripts/bench/model/run.sh), two modes, each driven by a Node script
// that interleaves it with its peers:
//
//   attnlab_model_bench --model DIR --tokens FILE [--serve]     inference (native.mjs, against onnxruntime-node)
//   attnlab_model_bench --train CONFIG --tokens FILE [--serve]  training (train.mjs, against wasm and PyTorch)
// (--model's commands include "importance T gradient|ablation": scripts/bench/head_importance.mjs --native)
//
// --model: the GPT-2-small-shaped checkpoint of scripts/bench/model/export_gpt2.py (config.json + model.safetensors,
// F32, read by the tools' codec cpp/tools/common/safetensors.h). --train: a Llama-family Hugging Face config.json
// (the poem model's, written by train.mjs); the model is initialised from seed 1. FILE: int32 little-endian token ids
// (the same ids the JS side feeds its peers). With --serve the program reads one command per line on stdin and
// answers each with one JSON line on stdout (the driver times its peers between them); without it, it runs a short
// default script and prints the answers.
// Both modes:
//   threads N                     attnlab::SetThreadCount(N)
//   peak N                        FLOP/s of independent FMA chains on N threads at once (the CPU's SIMD peak:
//                                 AVX-512 or AVX2 + FMA, whichever the CPU has) → {gflops, perThread, isa}
// Inference:
//   prefill T ATTN                one Forward of ids[0, T) (ATTN 1: every layer's attention returned) → {ms, cpuMs}
//   logits T FILE                 one Forward of ids[0, T); the logits (T, V) float32 → FILE (the driver's check)
//   fill NAME C                   a KV cache NAME (max length = the context length) reset and filled with
//                                 ids[0, C) (last logits only) → {ms}
//   steps NAME N [FILE]           N one-token Forwards through cache NAME, continuing the ids → {ms: [...],
//                                 cpuMs: [...]}; the logits of each step (V floats) appended to FILE when given
//   breakdown T REPS              where the time of a T-token forward goes (public API only; see Breakdown)
// Training:
//   train B T N                   N Transformer::TrainSteps (AdamW, lr 1e-4, clip 1) on batches of B rows of T
//                                 tokens (row r of step s: ids from (s·B + r)·(T + 1), targets shifted by one, the
//                                 ids reused cyclically) → {ms: [...], cpuMs: [...], loss: [...]}
//   quit
// Times are the call's wall time (steady_clock) and the process's CPU time (every thread: on a shared machine what
// the call itself ran); nothing is printed between a command and its answer, so that the driver's clock and ours
// measure the same thing.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <nlohmann/json.hpp>

#include "attnlab/attention.h"
#include "attnlab/threads.h"
#include "attnlab/transformer.h"
#include "cpp/tools/common/files.h"
#include "cpp/tools/common/safetensors.h"

namespace {

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// CPU time of the whole process (every thread), seconds: on a shared machine the time this program actually ran,
// whatever its neighbours did (with one thread, the call's own CPU time).
double CpuNow() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// --- the CPU's SIMD peak ---------------------------------------------------------------------------------------------
// kChains independent chains acc = acc · m + a, one FMA each per iteration: enough to cover an FMA's latency (4
// cycles) on two pipes. Returns a sum of the accumulators.
constexpr int kChains = 16;
volatile float g_sink = 0;  // the chains' results, so that no run is optimised away

#if defined(__x86_64__)
__attribute__((target("avx512f"))) float FmaChains512(int64_t iters) {
  __m512 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = _mm512_set1_ps(0.5f + 0.01f * static_cast<float>(k));
  const __m512 m = _mm512_set1_ps(0.9999f), a = _mm512_set1_ps(0.001f);
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 16
    for (int k = 0; k < kChains; ++k) acc[k] = _mm512_fmadd_ps(acc[k], m, a);
  }
  for (int k = 1; k < kChains; ++k) acc[0] = _mm512_add_ps(acc[0], acc[k]);
  return _mm512_reduce_add_ps(acc[0]);
}

__attribute__((target("avx2,fma"))) float FmaChains256(int64_t iters) {
  __m256 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = _mm256_set1_ps(0.5f + 0.01f * static_cast<float>(k));
  const __m256 m = _mm256_set1_ps(0.9999f), a = _mm256_set1_ps(0.001f);
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 16
    for (int k = 0; k < kChains; ++k) acc[k] = _mm256_fmadd_ps(acc[k], m, a);
  }
  float lanes[8];
  for (int k = 1; k < kChains; ++k) acc[0] = _mm256_add_ps(acc[0], acc[k]);
  _mm256_storeu_ps(lanes, acc[0]);
  return lanes[0];
}
#endif

// `peak N`: N threads run the chains at once, best of 5 trials of ≈ 0.1 s: {gflops (all threads, by the wall clock),
// perThreadCpu (one thread's flops ÷ its own CPU time: the rate while it runs, whatever the neighbours take),
// threads, isa}. The widest of AVX-512 and AVX2 + FMA that the CPU has; elsewhere an error (no peak to compare with).
std::string PeakCommand(int threads) {
#if defined(__x86_64__)
  const bool avx512 = __builtin_cpu_supports("avx512f");
  if (!avx512 && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) {
    throw std::runtime_error("peak: no AVX2 + FMA");
  }
  const double flops_per_iter = kChains * (avx512 ? 16 : 8) * 2.0;
  auto run = [&](int64_t iters) { return avx512 ? FmaChains512(iters) : FmaChains256(iters); };
  auto thread_cpu = [] {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
  };
  int64_t iters = 1 << 16;
  for (double t0 = Now(); Now() - t0 < 0.02; iters *= 2) g_sink = run(iters);  // calibrate: ≈ 0.1 s a trial
  iters *= 4;
  const double flops = flops_per_iter * static_cast<double>(iters);
  double best_wall = 0, best_cpu = 0;
  for (int trial = 0; trial < 5; ++trial) {
    std::vector<std::thread> pool;
    std::vector<double> cpu_s(static_cast<size_t>(threads));
    const double t0 = Now();
    for (int i = 0; i < threads; ++i) {
      pool.emplace_back([&, i] {
        const double c0 = thread_cpu();
        g_sink = run(iters);
        cpu_s[static_cast<size_t>(i)] = thread_cpu() - c0;
      });
    }
    for (auto& t : pool) t.join();
    best_wall = std::max(best_wall, threads * flops / (Now() - t0));
    for (const double c : cpu_s) best_cpu = std::max(best_cpu, flops / c);
  }
  std::ostringstream os;
  os << "{\"gflops\":" << best_wall / 1e9 << ",\"perThreadCpu\":" << best_cpu / 1e9 << ",\"threads\":" << threads
     << ",\"isa\":\"" << (avx512 ? "AVX-512" : "AVX2+FMA") << "\"}";
  return os.str();
#else
  (void)threads;
  throw std::runtime_error("peak: x86-64 only");
#endif
}

double Median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  const size_t n = xs.size();
  return n % 2 ? xs[n / 2] : 0.5 * (xs[n / 2 - 1] + xs[n / 2]);
}

attnlab::TransformerConfig Gpt2Config(int64_t V, int64_t P, int64_t E, int64_t L, int64_t H) {
  attnlab::TransformerConfig c;
  c.arch = "gpt2";
  c.vocab_size = V;
  c.context_length = P;
  c.embed_dim = E;
  c.num_layers = L;
  c.num_heads = H;
  c.norm_eps = 1e-5;
  return c;
}

struct Bench {
  std::unique_ptr<attnlab::Transformer> model;
  attnlab::TransformerConfig cfg;
  std::vector<int32_t> ids;
  std::vector<int32_t> small_ids;  // ids % 8, for Breakdown's models with a vocabulary of 8
  std::map<std::string, attnlab::TransformerKVCache> caches;

  attnlab::TransformerOutput Run(attnlab::Transformer& m, int64_t T, bool attn, attnlab::TransformerKVCache* cache,
                                 int64_t offset, bool last_logits_only = false) {
    if (offset + T > static_cast<int64_t>(ids.size())) throw std::runtime_error("not enough token ids");
    const std::vector<int32_t>& src = m.config().vocab_size == cfg.vocab_size ? ids : small_ids;
    attnlab::TransformerForwardOptions o;
    if (attn) {
      for (int64_t l = 0; l < m.config().num_layers; ++l) o.output_attentions.push_back(l);
    }
    o.cache = cache;
    o.last_logits_only = last_logits_only;
    return m.Forward(attnlab::TokensView{src.data() + offset, {1, T}}, o);
  }

  // Where a T-token forward's time goes, with public calls only (each timed REPS times, round-robin, medians):
  //   full / full_attn     the model without / with every layer's attention returned
  //   l1 / l2              1 and 2 layers of the same shape with a vocabulary of 8 (no LM head to speak of):
  //                        one layer = l2 − l1, embeddings etc. = l1 − one layer (with attention: l1_attn, l2_attn)
  //   l1_vocab             1 layer with the full vocabulary: LM head (+ final norm) = l1_vocab − l1, a GEMM of
  //                        2·T·E·V flops whose rate prices the layers' GEMMs (24·T·E² flops per layer)
  //   sdpa_weights         ScaledDotProductAttention (H, T, 64) causal with weights (the layers' attention path)
  //   sdpa_online          the same without weights (need_weights false: tiled online softmax)
  //   mha_proj             MultiHeadAttention (E, H) over T query rows and one key/value row: the Q and output
  //                        projections, 4·T·E² flops of GEMMs shaped like the layers' (K = E)
  // Medians and minima of the wall time; minima of the process's CPU time (cpuMin).
  std::string Breakdown(int64_t T, int reps) {
    const int64_t E = cfg.embed_dim, H = cfg.num_heads, D = E / H, P = cfg.context_length;
    attnlab::Transformer l1(Gpt2Config(8, P, E, 1, H), 1), l2(Gpt2Config(8, P, E, 2, H), 2),
        l1v(Gpt2Config(cfg.vocab_size, P, E, 1, H), 3);
    std::vector<float> q(static_cast<size_t>(H * T * D)), k(q.size()), v(q.size());
    uint32_t s = 12345;
    for (auto* a : {&q, &k, &v}) {
      for (auto& x : *a) {
        s = s * 1664525u + 1013904223u;
        x = static_cast<float>(static_cast<int32_t>(s >> 8) - (1 << 23)) / static_cast<float>(1 << 23);
      }
    }
    const attnlab::Shape qs{H, T, D};
    // Q and output projections of T rows through a MultiHeadAttention with one key/value row: 4·T·E² flops of
    // layer-shaped GEMMs (K = E) with a trivial attention, to price the layers' GEMMs.
    attnlab::MultiHeadAttention mha(attnlab::MhaConfig{E, H, true, false, false, -1, -1, true});
    std::vector<float> x(static_cast<size_t>(T * E)), x1(static_cast<size_t>(E));
    for (size_t i = 0; i < x.size(); ++i) x[i] = q[i % q.size()];
    for (size_t i = 0; i < x1.size(); ++i) x1[i] = k[i];
    attnlab::MhaForwardOptions mopt;
    mopt.need_weights = false;
    const attnlab::Shape xs{1, T, E}, x1s{1, 1, E};
    attnlab::SdpaOptions wopt, oopt;
    wopt.is_causal = oopt.is_causal = true;
    wopt.need_weights = true;
    oopt.need_weights = false;
    struct Step {
      std::string name;
      std::function<void()> run;
      std::vector<double> ms, cpu_ms;
    };
    std::vector<Step> steps = {
        {"full", [&] { Run(*model, T, false, nullptr, 0); }, {}, {}},
        {"full_attn", [&] { Run(*model, T, true, nullptr, 0); }, {}, {}},
        {"l1", [&] { Run(l1, T, false, nullptr, 0); }, {}, {}},
        {"l2", [&] { Run(l2, T, false, nullptr, 0); }, {}, {}},
        {"l1_attn", [&] { Run(l1, T, true, nullptr, 0); }, {}, {}},
        {"l2_attn", [&] { Run(l2, T, true, nullptr, 0); }, {}, {}},
        {"l1_vocab", [&] { Run(l1v, T, false, nullptr, 0); }, {}, {}},
        {"sdpa_weights",
         [&] {
           attnlab::ScaledDotProductAttention({q.data(), qs}, {k.data(), qs}, {v.data(), qs}, wopt);
         },
         {},
         {}},
        {"sdpa_online",
         [&] {
           attnlab::ScaledDotProductAttention({q.data(), qs}, {k.data(), qs}, {v.data(), qs}, oopt);
         },
         {},
         {}},
        {"mha_proj",
         [&] {
           mha.Forward({x.data(), xs}, {x1.data(), x1s}, {x1.data(), x1s}, mopt);
         },
         {},
         {}},
    };
    for (auto& st : steps) st.run();  // warm-up
    for (int r = 0; r < reps; ++r) {
      for (size_t j = 0; j < steps.size(); ++j) {
        Step& st = steps[(j + static_cast<size_t>(r)) % steps.size()];
        const double c0 = CpuNow(), t0 = Now();
        st.run();
        st.ms.push_back((Now() - t0) * 1e3);
        st.cpu_ms.push_back((CpuNow() - c0) * 1e3);
      }
    }
    std::ostringstream os;
    os << "{\"T\":" << T << ",\"threads\":" << attnlab::ThreadCount() << ",\"reps\":" << reps << ",\"ms\":{";
    for (size_t i = 0; i < steps.size(); ++i) {
      os << (i ? "," : "") << "\"" << steps[i].name << "\":" << Median(steps[i].ms);
    }
    os << "},\"min\":{";
    for (size_t i = 0; i < steps.size(); ++i) {
      os << (i ? "," : "") << "\"" << steps[i].name
         << "\":" << *std::min_element(steps[i].ms.begin(), steps[i].ms.end());
    }
    os << "},\"cpuMin\":{";
    for (size_t i = 0; i < steps.size(); ++i) {
      os << (i ? "," : "") << "\"" << steps[i].name
         << "\":" << *std::min_element(steps[i].cpu_ms.begin(), steps[i].cpu_ms.end());
    }
    os << "}}";
    return os.str();
  }

  // "importance T gradient|ablation": HeadImportance of every head on the first T ids (targets: the next ids).
  std::string Importance(std::istream& in) {
    int64_t T = 0;
    std::string method;
    in >> T >> method;
    if (T + 1 > static_cast<int64_t>(ids.size())) throw std::runtime_error("not enough token ids");
    const attnlab::TokensView tokens{ids.data(), {1, T}}, targets{ids.data() + 1, {1, T}};
    const double c0 = CpuNow(), t0 = Now();
    const attnlab::Transformer::HeadImportanceResult r =
        model->HeadImportance(tokens, targets,
                              method == "ablation" ? attnlab::Transformer::ImportanceMethod::kAblation
                                                   : attnlab::Transformer::ImportanceMethod::kGradient);
    const double ms = (Now() - t0) * 1e3, cpu_ms = (CpuNow() - c0) * 1e3;
    std::ostringstream os;
    os << "{\"ms\":" << ms << ",\"cpuMs\":" << cpu_ms << ",\"loss\":" << r.loss
       << ",\"heads\":" << r.importance.data.size() << "}";
    return os.str();
  }

  std::string Command(const std::string& line) {
    std::istringstream in(line);
    std::string cmd;
    in >> cmd;
    std::ostringstream os;
    os.precision(6);
    if (cmd == "threads") {
      size_t n = 1;
      in >> n;
      attnlab::SetThreadCount(n);
      os << "{\"threads\":" << attnlab::ThreadCount() << "}";
    } else if (cmd == "prefill") {
      int64_t T = 0;
      int attn = 0;
      in >> T >> attn;
      const double c0 = CpuNow(), t0 = Now();
      const attnlab::TransformerOutput out = Run(*model, T, attn != 0, nullptr, 0);
      const double ms = (Now() - t0) * 1e3, cpu_ms = (CpuNow() - c0) * 1e3;
      os << "{\"ms\":" << ms << ",\"cpuMs\":" << cpu_ms << ",\"logit0\":" << out.logits.data[0] << "}";
    } else if (cmd == "logits") {
      int64_t T = 0;
      std::string file;
      in >> T >> file;
      const attnlab::TransformerOutput out = Run(*model, T, false, nullptr, 0);
      std::ofstream f(file, std::ios::binary);
      f.write(reinterpret_cast<const char*>(out.logits.data.data()),
              static_cast<std::streamsize>(out.logits.data.size() * 4));
      os << "{\"written\":" << out.logits.data.size() << "}";
    } else if (cmd == "fill") {
      std::string name;
      int64_t C = 0;
      in >> name >> C;
      auto it = caches.find(name);
      if (it == caches.end()) it = caches.emplace(name, model->CreateKVCache(1, cfg.context_length)).first;
      it->second.Reset();
      const double t0 = Now();
      Run(*model, C, false, &it->second, 0, /*last_logits_only=*/true);
      os << "{\"ms\":" << (Now() - t0) * 1e3 << ",\"length\":" << it->second.Length() << "}";
    } else if (cmd == "steps") {
      std::string name, file;
      int n = 0;
      in >> name >> n >> file;
      attnlab::TransformerKVCache& cache = caches.at(name);
      std::ofstream f;
      if (!file.empty()) f.open(file, std::ios::binary | std::ios::app);
      std::ostringstream cpu;
      cpu.precision(6);
      os << "{\"ms\":[";
      for (int i = 0; i < n; ++i) {
        const int64_t at = cache.Length();
        const double c0 = CpuNow(), t0 = Now();
        const attnlab::TransformerOutput out = Run(*model, 1, false, &cache, at);
        const double ms = (Now() - t0) * 1e3, cpu_ms = (CpuNow() - c0) * 1e3;
        if (f.is_open()) {
          f.write(reinterpret_cast<const char*>(out.logits.data.data()),
                  static_cast<std::streamsize>(out.logits.data.size() * 4));
        }
        os << (i ? "," : "") << ms;
        cpu << (i ? "," : "") << cpu_ms;
      }
      os << "],\"cpuMs\":[" << cpu.str() << "],\"length\":" << cache.Length() << "}";
    } else if (cmd == "peak") {
      int n = 1;
      in >> n;
      os << PeakCommand(std::max(1, n));
    } else if (cmd == "importance") {
      os << Importance(in);
    } else if (cmd == "breakdown") {
      int64_t T = 0;
      int reps = 5;
      in >> T >> reps;
      os << Breakdown(T, std::max(1, reps));
    } else {
      throw std::runtime_error("unknown command: " + line);
    }
    return os.str();
  }
};

// --- training --------------------------------------------------------------------------------------------------------
struct TrainBench {
  std::unique_ptr<attnlab::Transformer> model;
  std::vector<int32_t> ids;
  int64_t next_row = 0;  // rows are consecutive (T + 1)-id slices of ids, reused cyclically

  std::string Train(int64_t B, int64_t T, int n) {
    const int64_t rows = static_cast<int64_t>(ids.size()) / (T + 1);
    if (B < 1 || T < 1 || rows < 1) throw std::runtime_error("train: bad B or T, or too few ids");
    std::vector<int32_t> x(static_cast<size_t>(B * T)), y(x.size());
    attnlab::Transformer::AdamWOptions adamw;
    adamw.lr = 1e-4f;
    adamw.clip_grad_norm = 1.0f;
    std::ostringstream ms, cpu, loss;
    for (int s = 0; s < n; ++s) {
      for (int64_t r = 0; r < B; ++r, ++next_row) {
        const int32_t* row = ids.data() + (next_row % rows) * (T + 1);
        std::copy(row, row + T, x.begin() + r * T);
        std::copy(row + 1, row + T + 1, y.begin() + r * T);
      }
      const double c0 = CpuNow(), t0 = Now();
      const auto step = model->TrainStep({x.data(), {B, T}}, {y.data(), {B, T}}, adamw);
      const double wall_ms = (Now() - t0) * 1e3, cpu_ms = (CpuNow() - c0) * 1e3;
      ms << (s ? "," : "") << wall_ms;
      cpu << (s ? "," : "") << cpu_ms;
      loss << (s ? "," : "") << step.loss;
    }
    return "{\"ms\":[" + ms.str() + "],\"cpuMs\":[" + cpu.str() + "],\"loss\":[" + loss.str() + "]}";
  }

  std::string Command(const std::string& line) {
    std::istringstream in(line);
    std::string cmd;
    in >> cmd;
    if (cmd == "threads") {
      size_t n = 1;
      in >> n;
      attnlab::SetThreadCount(n);
      return "{\"threads\":" + std::to_string(attnlab::ThreadCount()) + "}";
    }
    if (cmd == "train") {
      int64_t B = 0, T = 0;
      int n = 1;
      in >> B >> T >> n;
      return Train(B, T, n);
    }
    if (cmd == "peak") {
      int n = 1;
      in >> n;
      return PeakCommand(std::max(1, n));
    }
    throw std::runtime_error("unknown command: " + line);
  }
};

// Answers the commands of stdin (serve) or of `script`, one JSON line each (errors as {"error": ...}).
void Serve(const std::function<std::string(const std::string&)>& command, bool serve,
           const std::vector<std::string>& script) {
  std::string line;
  for (size_t i = 0;; ++i) {
    if (serve) {
      if (!std::getline(std::cin, line)) break;
    } else {
      if (i >= script.size()) break;
      line = script[i];
    }
    if (line.empty()) continue;
    if (line == "quit") break;
    std::string answer;
    try {
      answer = command(line);
    } catch (const std::exception& e) {
      answer = nlohmann::json({{"error", e.what()}}).dump();
    }
    if (!serve) std::printf("%s → ", line.c_str());
    std::printf("%s\n", answer.c_str());
    std::fflush(stdout);
  }
}

std::vector<int32_t> ReadIds(const std::string& file) {
  const std::string raw = attnlab::tools::ReadFile(file);
  std::vector<int32_t> ids(raw.size() / 4);
  std::memcpy(ids.data(), raw.data(), ids.size() * 4);
  return ids;
}

void PrintReady(const attnlab::Transformer& model, double load_s) {
  std::fprintf(stderr, "attnlab_model_bench: Highway target %s, %lld parameters, ready in %.1f s\n",
               attnlab::ActiveTargetName(), static_cast<long long>(model.ParameterCount()), load_s);
  std::printf("{\"ready\":true,\"target\":\"%s\",\"parameters\":%lld,\"threadsSupported\":%s}\n",
              attnlab::ActiveTargetName(), static_cast<long long>(model.ParameterCount()),
              attnlab::ThreadsSupported() ? "true" : "false");
  std::fflush(stdout);
}

// --model DIR: the inference mode on export_gpt2.py's checkpoint.
void RunInference(const std::string& dir, const std::string& tokens, bool serve) {
  Bench b;
  b.cfg = attnlab::ConfigFromHuggingFace(attnlab::tools::ReadFile(dir + "/config.json"));
  const double t0 = Now();
  b.model = std::make_unique<attnlab::Transformer>(b.cfg, 0, false);
  {
    const attnlab::tools::Safetensors st = attnlab::tools::ReadSafetensors(dir + "/model.safetensors");
    std::map<std::string, attnlab::TensorView> views;
    for (const auto& [name, t] : st.tensors) views[name] = attnlab::TensorView{t.data.data(), t.shape};
    b.model->LoadStateDict(views);
  }
  b.ids = ReadIds(tokens);
  for (const int32_t id : b.ids) b.small_ids.push_back(id % 8);
  PrintReady(*b.model, Now() - t0);
  Serve([&](const std::string& line) { return b.Command(line); }, serve,
        {"threads 1", "prefill 128 1", "prefill 128 1", "prefill 512 1", "fill a 480", "steps a 8", "breakdown 512 3",
         "threads 2", "prefill 512 1", "breakdown 512 3"});
}

// --train CONFIG: the training mode, a model of that config initialised from seed 1.
void RunTraining(const std::string& config, const std::string& tokens, bool serve) {
  TrainBench b;
  const double t0 = Now();
  b.model = std::make_unique<attnlab::Transformer>(attnlab::ConfigFromHuggingFace(attnlab::tools::ReadFile(config)), 1);
  b.ids = ReadIds(tokens);
  PrintReady(*b.model, Now() - t0);
  Serve([&](const std::string& line) { return b.Command(line); }, serve,
        {"peak 1", "peak 2", "threads 1", "train 48 34 3", "threads 2", "train 48 34 3"});
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir, config, tokens;
  bool serve = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--model" && i + 1 < argc) {
      dir = argv[++i];
    } else if (a == "--train" && i + 1 < argc) {
      config = argv[++i];
    } else if (a == "--tokens" && i + 1 < argc) {
      tokens = argv[++i];
    } else if (a == "--serve") {
      serve = true;
    } else {
      dir.clear();
      config.clear();
      break;
    }
  }
  if (dir.empty() == config.empty() || tokens.empty()) {
    std::fprintf(stderr, "usage: %s (--model DIR | --train CONFIG.json) --tokens FILE [--serve]\n", argv[0]);
    return 2;
  }
  try {
    if (!dir.empty()) {
      RunInference(dir, tokens, serve);
    } else {
      RunTraining(config, tokens, serve);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnlab_model_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
