// The GEMMs of the GPT-2-small-shaped bench model, one by one, against the register tile's own peak measured in
// the same run (issue 36). Built natively (attnlab_gemm_bench) and for WebAssembly SIMD128 (attnlab_gemm_bench.js,
// run by Node): scripts/bench/gemm.sh builds both and alternates them.
//
//   attnlab_gemm_bench [ROUNDS] [SHAPES]
//
// Shapes: M = T tokens (128, 512) by K × N = 768 × 2304 (QKV), 768 × 768 (output projection), 768 × 3072 (MLP up),
// 3072 × 768 (MLP down) and 768 × 50257 (the LM head), weights float32 and F16 kept 16-bit, each through
// Linear (ops/linear-inl.h, the model's call) with bias, on one thread. SHAPES (optional) keeps the shapes whose
// name contains it, e.g. "head". The peaks: `tile`, GemmTile's register tile (kGemmRows rows by 2 vectors: 8 on
// AVX-512, 4 on wasm) on a packed A and an aligned B slice held in L1 (what the GEMM's inner loop does at best), and
// `fma`, independent multiply-add chains (the SIMD unit's peak; in wasm a multiply and an add: SIMD128 has no FMA).
// After one untimed pass over every shape (the output's first-touch page faults, V8's tier-up to optimised code),
// each round runs the fma peak, then per shape the tile peak and the shape (interleaved: a shared machine's load hits
// both alike). One line per shape at the end: GFLOP/s by the process's CPU time (wasm: Node's process.cpuUsage),
// the median over rounds with min–max, and the median over rounds of the shape's rate as % of the tile peak measured
// just before it.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpp/bench/gemm_bench.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// Highway after foreach_target
#include "cpp/src/ops/linear-inl.h"
#include "hwy/highway.h"

#ifndef ATTNLAB_CPP_BENCH_GEMM_BENCH_ONCE_
#define ATTNLAB_CPP_BENCH_GEMM_BENCH_ONCE_
namespace attnlab {
constexpr size_t kTileK = 128;       // the tile peak's steps per call
constexpr size_t kMaxTileRows = 16;  // at least every target's kGemmRows
}  // namespace attnlab
#endif

HWY_BEFORE_NAMESPACE();
namespace attnlab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
static_assert(kGemmRows <= kMaxTileRows, "the tile peak's buffers hold a tile");

void BenchLinear(size_t rows, const float* x, const LinearArgs* w, float* y) { Linear(rows, x, w->in, *w, y, w->out); }

// reps passes of the GEMM's register tile (kGemmRows rows, 2 vectors) over a (kTileK, 2 vectors) B slice and a
// packed (kGemmRows, kTileK) A, accumulating into c (kGemmRows × 2 vectors); returns the flops.
double BenchTile(size_t reps, const float* a_packed, const float* b, float* c) {
  const hn::ScalableTag<float> d;
  const size_t width = 2 * hn::Lanes(d);
  for (size_t r = 0; r < reps; ++r) {
    GemmTile<kGemmRows, 2, kGemmRows>(d, kTileK, a_packed, 1, 0, b, c, width, c, width);
  }
  return 2.0 * kGemmRows * width * kTileK * reps;
}

// reps steps of 12 independent multiply-add chains; returns the flops (the sum goes to *sink).
double BenchFma(size_t reps, float* sink) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  constexpr size_t kChains = 12;
  V acc[kChains];
  for (size_t i = 0; i < kChains; ++i) acc[i] = hn::Set(d, static_cast<float>(i));
  const V m = hn::Set(d, 0.999f), add = hn::Set(d, 1e-3f);
  for (size_t r = 0; r < reps; ++r) {
    for (size_t i = 0; i < kChains; ++i) acc[i] = hn::MulAdd(acc[i], m, add);
  }
  for (size_t i = 1; i < kChains; ++i) acc[0] = hn::Add(acc[0], acc[i]);
  *sink = hn::GetLane(acc[0]);
  return 2.0 * kChains * hn::Lanes(d) * reps;
}

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace attnlab
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "attnlab/threads.h"
#include "cpp/src/ops/packing.h"
#ifdef __EMSCRIPTEN__
#include <emscripten.h>
#endif

namespace attnlab {
HWY_EXPORT(BenchLinear);
HWY_EXPORT(BenchTile);
HWY_EXPORT(BenchFma);
HWY_EXPORT(TargetName);

namespace {

double CpuSeconds() {
#ifdef __EMSCRIPTEN__
  return EM_ASM_DOUBLE({
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  });
#else
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
#endif
}

// GFLOP/s of fn(), which returns its flops, by CPU time.
double Rate(const std::function<double()>& fn) {
  const double t0 = CpuSeconds();
  const double flops = fn();
  return flops / (CpuSeconds() - t0) / 1e9;
}

// F16 bits of a float in [-1, 1] (round toward zero: a bench needs values, not rounding).
uint16_t ToF16(float f) {
  const uint16_t sign = f < 0 ? 0x8000 : 0;
  float x = f < 0 ? -f : f;
  if (x < 0x1p-14f) return sign;
  int e = 0;
  while (x >= 2.0f) x *= 0.5f, ++e;
  while (x < 1.0f) x *= 2.0f, --e;
  return static_cast<uint16_t>(sign | ((e + 15) << 10) | static_cast<uint16_t>((x - 1.0f) * 1024.0f));
}

// One GEMM of the model: y (m, n) = x (m, k) · W + bias, W packed float32 or 16-bit.
struct Shape {
  std::string name;
  size_t m, k, n;
  bool f16;
  std::vector<float> x, y, bias, w32;
  std::vector<uint16_t> w16;
  LinearArgs args;
};

void Prepare(Shape& s, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  s.x.resize(s.m * s.k);
  for (float& v : s.x) v = u(rng);
  s.bias.resize(s.n);
  for (float& v : s.bias) v = u(rng);
  s.y.resize(s.m * s.n);
  std::vector<uint16_t> raw(s.k * s.n);
  for (uint16_t& v : raw) v = ToF16(0.05f * u(rng));
  s.args.in = s.k;
  s.args.out = s.n;
  s.args.bias = s.bias.data();
  if (s.f16) {
    s.args.w16 = PackB16(raw.data(), s.n, s.k, s.n, false, Dtype16::kF16, s.w16);
  } else {
    std::vector<float> dense(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) dense[i] = F16ToFloat(raw[i]);
    s.args.w = PackB(dense.data(), s.n, s.k, s.n, false, s.w32);
  }
}

std::vector<Shape> Shapes(const std::string& filter) {
  const struct {
    const char* name;
    size_t k, n;
  } kGemms[] = {{"qkv", 768, 2304}, {"o", 768, 768}, {"up", 768, 3072}, {"down", 3072, 768}, {"head", 768, 50257}};
  std::vector<Shape> out;
  for (const size_t m : {128, 512}) {
    for (const bool f16 : {false, true}) {
      for (const auto& g : kGemms) {
        const std::string name = std::string(g.name) + " T=" + std::to_string(m) + (f16 ? " f16" : " f32");
        if (name.find(filter) == std::string::npos) continue;
        Shape s;
        s.name = name;
        s.m = m, s.k = g.k, s.n = g.n, s.f16 = f16;
        out.push_back(std::move(s));
      }
    }
  }
  return out;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One line: the median rate of v with its range, and the median over rounds of v's rate as % of the tile peak
// measured just before it (paired: on a shared host the load changes between rounds).
void Print(const char* name, const std::vector<double>& v, const std::vector<double>& tile) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  std::vector<double> share(v.size());
  for (size_t i = 0; i < v.size(); ++i) share[i] = 100.0 * v[i] / tile[i];
  std::printf("%-16s %7.1f GFLOP/s (%.1f-%.1f)  %5.1f %% of tile\n", name, Median(v), *lo, *hi, Median(share));
}

// 64-byte aligned floats (the GEMM's own buffers are aligned to the vector).
float* Aligned(std::vector<float>& v) {
  return reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(v.data()) + 63) / 64 * 64);
}

int Main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 3;
  std::vector<Shape> shapes = Shapes(argc > 2 ? argv[2] : "");
  SetThreadCount(1);
  std::mt19937 rng(1);
  for (Shape& s : shapes) Prepare(s, rng);
  std::vector<float> a_packed(kMaxTileRows * kTileK + 16, 0.5f);
  std::vector<float> b(kTileK * kPanel + 16, 0.25f), c(kMaxTileRows * kPanel + 16, 0.0f);
  float sink = 0;
  auto tile_rate = [&] {
    return Rate([&] { return HWY_DYNAMIC_DISPATCH(BenchTile)(100000, Aligned(a_packed), Aligned(b), Aligned(c)); });
  };
  for (Shape& s : shapes) HWY_DYNAMIC_DISPATCH(BenchLinear)(s.m, s.x.data(), &s.args, s.y.data());  // warm-up
  std::vector<double> fma, tiles;
  std::vector<std::vector<double>> rates(shapes.size()), tile(shapes.size());
  for (int r = 0; r < rounds; ++r) {
    fma.push_back(Rate([&] { return HWY_DYNAMIC_DISPATCH(BenchFma)(20000000, &sink); }));
    tiles.push_back(tile_rate());
    for (size_t i = 0; i < shapes.size(); ++i) {
      Shape& s = shapes[i];
      tile[i].push_back(tile_rate());
      rates[i].push_back(Rate([&] {
        HWY_DYNAMIC_DISPATCH(BenchLinear)(s.m, s.x.data(), &s.args, s.y.data());
        return 2.0 * s.m * s.k * s.n;
      }));
    }
  }
  std::printf("target %s, %d rounds, 1 thread (c %g, sink %g)\n", HWY_DYNAMIC_DISPATCH(TargetName)(), rounds,
              Aligned(c)[0], sink);
  Print("tile peak", tiles, tiles);
  Print("fma peak", fma, tiles);
  for (size_t i = 0; i < shapes.size(); ++i) Print(shapes[i].name.c_str(), rates[i], tile[i]);
  return 0;
}

}  // namespace
}  // namespace attnlab

int main(int argc, char** argv) { return attnlab::Main(argc, argv); }
#endif  // HWY_ONCE
