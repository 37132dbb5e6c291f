// Tests of cpp/src/ops/gemm-inl.h below the public API, on every compiled target: Gemm / GemmUnpacked for m, n, k
// across every tile remainder (n 0…2 tile widths + 1, partial 4-row tiles, several k blocks, the packed-A path), A
// and B transposed or not, padded strides and misaligned pointers, against a float64 reference; nothing outside C's
// (m, n) block may change. GemvPacked (the few-row path of decoding) the same way: every panel remainder, k across
// its interleaved sets, bias or none. 16-bit B (F16 and BF16, PackedB16): the conversion of all 65536 bit patterns
// against packing.h's exact scalar one; Gemm and GemvPacked on a 16-bit B bit for bit equal to the same call on the
// float32 values of B (random normals, subnormals, ±0, large values, ±inf and NaNs) over the same shapes, and within
// tolerance of float64. The packings themselves: packing_test.cc.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tests/cpp/ops/gemm_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cpp/src/ops/gemm-inl.h"
#include "hwy/highway.h"
#include "kernel_sweep.h"
#include "ops/per_target.h"
#include "test_util.h"

ATTNLAB_BEGIN_TARGET_CHECKS();

using attnlab_test::DotTolerance;

// A float that no computation produces: padding that must stay untouched.
constexpr float kSentinel = -1234.5f;

struct GemmShape {
  size_t m, n, k;
};

// flags: bit 0 A transposed, 1 B transposed, 2 bias, 3 accumulate.
struct GemmCase {
  GemmCase(GemmShape shape, size_t flags, size_t misalign)
      : m(shape.m),
        n(shape.n),
        k(shape.k),
        a_transposed(flags & 1),
        b_transposed(flags & 2),
        bias(flags & 4),
        accumulate(flags & 8),
        misalign(misalign) {}
  size_t m, n, k;
  bool a_transposed, b_transposed, bias, accumulate;
  size_t misalign;
};

// The GEMM sweeps' shapes. Every tile remainder: m across 4-row tiles, n across two column tiles, short k.
std::vector<GemmShape> TileRemainderShapes(size_t lanes) {
  const size_t width = 2 * lanes;  // a column tile
  std::vector<GemmShape> shapes;
  for (size_t m = 0; m <= 9; ++m) {
    for (size_t n = 0; n <= 2 * width + 1; ++n) {
      for (const size_t k : {size_t{0}, size_t{1}, size_t{3}, lanes + 1}) shapes.push_back({m, n, k});
    }
  }
  return shapes;
}

// Cache blocks: several row and k blocks, the packed-A path (>= kPackAMinTiles column tiles).
std::vector<GemmShape> CacheBlockShapes(size_t lanes) {
  const size_t width = 2 * lanes;
  const size_t wide = kPackAMinTiles * width;
  return {{kGemmMc + 5, wide + 3, kGemmKc + 7},
          {2 * kGemmMc + 1, wide, 5},
          {4, wide + width / 2 + 1, 2 * kGemmKc + 1},
          {kGemmMc, 1, kGemmKc}};
}

// The GemvPacked sweeps' shapes: m up to kGemvMaxRows, n across panel remainders, k across the interleaved sets.
std::vector<GemmShape> GemvShapes() {
  std::vector<GemmShape> shapes;
  for (size_t m = 0; m <= kGemvMaxRows; ++m) {
    for (const size_t n : {size_t{1}, size_t{3}, kPanel - 1, kPanel, kPanel + 1, 2 * kPanel + 7}) {
      for (const size_t k : {size_t{0}, size_t{1}, size_t{2}, size_t{7}, size_t{8}, size_t{9}, size_t{67}}) {
        shapes.push_back({m, n, k});
      }
    }
  }
  return shapes;
}

// A (m, k) of a GemmCase at its misalignment, uniform in [-1, 1): row-major with row stride k + 3, or stored
// transposed (k, m) with row stride m + 2.
struct MatrixA {
  MatrixA(const GemmCase& g, attnlab_test::Rng& rng)
      : transposed(g.a_transposed), off(g.misalign), lda(g.k + 3), ldt(g.m + 2) {
    data.resize(off + std::max<size_t>(1, transposed ? g.k * ldt : g.m * lda));
    for (float& x : data) x = rng.Uniform(-1.0f, 1.0f);
  }
  float At(size_t i, size_t p) const { return transposed ? data[off + p * ldt + i] : data[off + i * lda + p]; }
  const float* Ptr() const { return data.data() + off; }
  size_t RowStride() const { return transposed ? 1 : lda; }
  size_t ColStride() const { return transposed ? ldt : 1; }

  bool transposed;
  size_t off, lda, ldt;
  std::vector<float> data;
};

// C at offset off, m + 1 rows of ldc: the (m, n) block uniform in [-1, 1), the padding columns and row kSentinel.
std::vector<float> RandomC(size_t m, size_t n, size_t ldc, size_t off, attnlab_test::Rng& rng) {
  std::vector<float> c(off + (m + 1) * ldc, kSentinel);
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) c[off + i * ldc + j] = rng.Uniform(-1.0f, 1.0f);
  }
  return c;
}

// One GemmUnpacked call against a float64 reference; C has two padding columns and a padding row of sentinels.
void CheckGemm(const GemmCase& g, attnlab_test::Rng& rng, SweepResult& result) {
  const size_t m = g.m, n = g.n, k = g.k, off = g.misalign;
  const MatrixA a(g, rng);
  // B (k, n) with row stride ldb, or stored transposed (n, k).
  const size_t ldb = g.b_transposed ? k + 1 : n + 5;
  std::vector<float> b(off + std::max<size_t>(1, (g.b_transposed ? n : k) * ldb));
  for (float& x : b) x = rng.Uniform(-1.0f, 1.0f);
  auto b_at = [&](size_t p, size_t j) { return g.b_transposed ? b[off + j * ldb + p] : b[off + p * ldb + j]; };
  std::vector<float> bias(off + std::max<size_t>(1, n));
  for (float& x : bias) x = rng.Uniform(-1.0f, 1.0f);
  const size_t ldc = n + 2;
  std::vector<float> c = RandomC(m, n, ldc, off, rng);
  const std::vector<float> c0 = c;

  std::vector<float> pack;
  GemmUnpacked(m, n, k, a.Ptr(), a.RowStride(), a.ColStride(), b.data() + off, ldb, g.b_transposed, c.data() + off, ldc,
               g.bias ? bias.data() + off : nullptr, g.accumulate, pack);
  ++result.cases;

  for (size_t i = 0; i <= m; ++i) {
    for (size_t j = 0; j < ldc; ++j) {
      const size_t at = off + i * ldc + j;
      if (i == m || j >= n) {
        if (std::memcmp(&c[at], &c0[at], sizeof(float)) != 0) {
          return result.Fail("m ", m, " n ", n, " k ", k, ": C outside (m, n) changed at (", i, ", ", j, ")");
        }
        continue;
      }
      // The start value: C itself when accumulating (bias not read), else the bias or 0.
      const double start = g.accumulate ? c0[at] : g.bias ? bias[off + j] : 0.0;
      double ref = start, bound = std::fabs(start);
      for (size_t p = 0; p < k; ++p) {
        const double prod = static_cast<double>(a.At(i, p)) * b_at(p, j);
        ref += prod;
        bound += std::fabs(prod);
      }
      const double tol = DotTolerance(k, bound);
      if (!(std::fabs(c[at] - ref) <= tol)) {
        return result.Fail("m ", m, " n ", n, " k ", k, " a_transposed ", g.a_transposed, " b_transposed ",
                           g.b_transposed, " bias ", g.bias, " accumulate ", g.accumulate, " misalign ", g.misalign,
                           ": C(", i, ", ", j, ") = ", c[at], ", reference ", ref, " (tolerance ", tol, ")");
      }
    }
  }
}

SweepResult GemmSweep() {
  const size_t lanes = hn::Lanes(hn::ScalableTag<float>());
  const std::vector<size_t> misalign = attnlab_test::Misalignments(lanes);
  attnlab_test::Rng rng(17);
  SweepResult result;
  // Flags and misalignment cycle over the tile remainders; the cache blocks take every flag.
  size_t v = 0;
  for (const GemmShape& shape : TileRemainderShapes(lanes)) {
    ++v;
    CheckGemm(GemmCase(shape, v % 16, misalign[v % misalign.size()]), rng, result);
    if (result.Failed()) return result;
  }
  for (const GemmShape& shape : CacheBlockShapes(lanes)) {
    for (size_t flags = 0; flags < 16; ++flags) {
      CheckGemm(GemmCase(shape, flags, misalign[flags % misalign.size()]), rng, result);
      if (result.Failed()) return result;
    }
  }
  return result;
}

// GemvPacked: C (m, n) = A (m, k) · B (k, n) [+ bias] for m <= kGemvMaxRows, B packed from a row-major (k, n)
// or a transposed (n, k) matrix, A rows with padding, C with two padding columns and a padding row of sentinels.
SweepResult GemvSweep() {
  const size_t lanes = hn::Lanes(hn::ScalableTag<float>());
  const std::vector<size_t> misalign = attnlab_test::Misalignments(lanes);
  attnlab_test::Rng rng(29);
  SweepResult result;
  size_t v = 0;
  for (const GemmShape& shape : GemvShapes()) {
    const size_t m = shape.m, n = shape.n, k = shape.k;
    ++v;
    const bool bias_on = v % 2 == 0, transposed = v % 3 == 0;
    const size_t off = misalign[v % misalign.size()], lda = k + 3, ldc = n + 2;
    std::vector<float> a(off + std::max<size_t>(1, m * lda)), b(std::max<size_t>(1, k * n)), bias(off + n);
    for (float& x : a) x = rng.Uniform(-1.0f, 1.0f);
    for (float& x : b) x = rng.Uniform(-1.0f, 1.0f);
    for (float& x : bias) x = rng.Uniform(-1.0f, 1.0f);
    auto b_at = [&](size_t p, size_t j) { return transposed ? b[j * k + p] : b[p * n + j]; };
    std::vector<float> pack;
    const PackedB packed = PackB(b.data(), transposed ? k : n, k, n, transposed, pack);
    std::vector<float> c(off + (m + 1) * ldc, kSentinel);
    GemvPacked(m, n, k, a.data() + off, lda, packed, c.data() + off, ldc, bias_on ? bias.data() + off : nullptr);
    ++result.cases;
    for (size_t i = 0; i <= m; ++i) {
      for (size_t j = 0; j < ldc; ++j) {
        const float got = c[off + i * ldc + j];
        if (i == m || j >= n) {
          if (std::memcmp(&got, &kSentinel, sizeof(float)) != 0) {
            result.Fail("GemvPacked m ", m, " n ", n, " k ", k, ": C outside (m, n) changed at (", i, ", ", j, ")");
            return result;
          }
          continue;
        }
        double ref = bias_on ? bias[off + j] : 0.0, bound = std::fabs(ref);
        for (size_t p = 0; p < k; ++p) {
          const double prod = static_cast<double>(a[off + i * lda + p]) * b_at(p, j);
          ref += prod;
          bound += std::fabs(prod);
        }
        const double tol = DotTolerance(k, bound);
        if (!(std::fabs(got - ref) <= tol)) {
          result.Fail("GemvPacked m ", m, " n ", n, " k ", k, " bias ", bias_on, " transposed ", transposed, ": C(", i,
                      ", ", j, ") = ", got, ", reference ", ref, " (tolerance ", tol, ")");
          return result;
        }
      }
    }
  }
  return result;
}

// ---- 16-bit B

const char* DtypeName(Dtype16 dtype) { return dtype == Dtype16::kF16 ? "F16" : "BF16"; }

// Random 16-bit elements: mostly magnitudes 1/8…2, then subnormals, ±0, tiny and large normals (F16 up to 65504,
// BF16 up to 2^73: sums of products with |A| <= 1 stay finite); with `special` also ±inf and NaNs (random payloads,
// quiet or signalling).
uint16_t Random16(attnlab_test::Rng& rng, Dtype16 dtype, bool special) {
  const bool f16 = dtype == Dtype16::kF16;
  const uint32_t man_bits = f16 ? 10 : 7, max_exp = f16 ? 31 : 255;
  const uint32_t sign = rng.Bernoulli(0.5) ? 0x8000u : 0u;
  uint32_t man = static_cast<uint32_t>(rng.Int(0, (int64_t{1} << man_bits) - 1));
  const double r = rng.Uniform01();
  int64_t exp;
  if (special && r < 0.03) {
    exp = max_exp, man = 0;  // ±inf
  } else if (special && r < 0.07) {
    exp = max_exp, man = man == 0 ? 1 : man;  // NaN
  } else if (r < 0.15) {
    exp = 0;  // subnormal (or ±0)
  } else if (r < 0.19) {
    exp = 0, man = 0;  // ±0
  } else if (r < 0.25) {
    exp = rng.Int(1, f16 ? 4 : 8);
  } else if (r < 0.32) {
    exp = f16 ? rng.Int(26, 30) : rng.Int(150, 200);
  } else {
    exp = f16 ? rng.Int(12, 16) : rng.Int(124, 128);
  }
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(exp) << man_bits) | man);
}

bool SameBits(float x, float y) { return std::memcmp(&x, &y, sizeof(float)) == 0; }

// The same bits, except that any NaN equals any NaN: which NaN operand's sign and payload a multiply-add passes on
// depends on the instruction form the compiler picked (x86's vfmadd132/213/231, wasm leaves it open), not on B's
// type. Non-NaN results, ±0 and ±inf included, must match bit for bit.
bool SameResult(float x, float y) { return (std::isnan(x) && std::isnan(y)) || SameBits(x, y); }

// c (rows (m + 1) of ldc at offset off) against a float64 reference ref(i, j) → {value, bound}: every element of the
// (m, n) block within tolerance (NaN where the reference is NaN, the same infinity where it is infinite).
template <class Ref>
bool CheckAgainstFloat64(const char* what, size_t m, size_t n, size_t k, const float* c, size_t ldc, Ref&& ref,
                         SweepResult& result) {
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      double value = 0.0, bound = 0.0;
      ref(i, j, value, bound);
      const float got = c[i * ldc + j];
      const double tol = DotTolerance(k, bound);
      const bool ok = std::isnan(value)   ? std::isnan(got)
                      : std::isinf(value) ? static_cast<double>(got) == value
                                          : std::fabs(got - value) <= tol;
      if (!ok) {
        result.Fail(what, " m ", m, " n ", n, " k ", k, ": C(", i, ", ", j, ") = ", got, ", reference ", value,
                    " (tolerance ", tol, ")");
        return false;
      }
    }
  }
  return true;
}

// ToF32<Read16<dtype>> (and so every read of a 16-bit B) on all 65536 bit patterns from a misaligned start: bit for bit
// F16ToFloat / BF16ToFloat.
SweepResult Convert16Sweep() {
  const size_t lanes = hn::Lanes(hn::ScalableTag<float>());
  SweepResult result;
  for (const size_t off : attnlab_test::Misalignments(lanes)) {
    std::vector<uint16_t> bits(off + 65536);
    for (size_t h = 0; h < 65536; ++h) bits[off + h] = static_cast<uint16_t>(h);
    for (const Dtype16 dtype : {Dtype16::kF16, Dtype16::kBF16}) {
      std::vector<float> out(off + 65536 + 1, kSentinel);
      if (dtype == Dtype16::kF16) {
        ToF32<Read16<Dtype16::kF16>>(bits.data() + off, 65536, out.data() + off);
      } else {
        ToF32<Read16<Dtype16::kBF16>>(bits.data() + off, 65536, out.data() + off);
      }
      ++result.cases;
      for (size_t h = 0; h < 65536; ++h) {
        const float want = Bits16ToFloat(static_cast<uint16_t>(h), dtype);
        if (!SameBits(out[off + h], want)) {
          uint32_t got_bits, want_bits;
          std::memcpy(&got_bits, &out[off + h], 4);
          std::memcpy(&want_bits, &want, 4);
          result.Fail("ToF32<Read16> ", DtypeName(dtype), " bits 0x", std::hex, h, ": 0x", got_bits, ", want 0x",
                      want_bits);
          return result;
        }
      }
      if (!SameBits(out[off + 65536], kSentinel)) {
        result.Fail("ToF32<Read16> ", DtypeName(dtype), ": wrote past count");
        return result;
      }
    }
  }
  return result;
}

// One Gemm on a 16-bit B vs the same Gemm on its float32 values (the same bits everywhere in C, padding included;
// NaN for NaN: SameResult) and vs float64.
void CheckGemm16(const GemmCase& g, Dtype16 dtype, bool special, attnlab_test::Rng& rng, SweepResult& result) {
  const size_t m = g.m, n = g.n, k = g.k, off = g.misalign;
  const MatrixA a(g, rng);
  const size_t ldb = g.b_transposed ? k + 1 : n + 5;
  std::vector<uint16_t> b16(off + std::max<size_t>(1, (g.b_transposed ? n : k) * ldb));
  for (uint16_t& x : b16) x = Random16(rng, dtype, special);
  std::vector<float> b32(b16.size());
  for (size_t t = 0; t < b16.size(); ++t) b32[t] = Bits16ToFloat(b16[t], dtype);
  auto b_at = [&](size_t p, size_t j) { return g.b_transposed ? b32[off + j * ldb + p] : b32[off + p * ldb + j]; };
  std::vector<float> bias(off + std::max<size_t>(1, n));
  for (float& x : bias) x = rng.Uniform(-1.0f, 1.0f);
  const size_t ldc = n + 2;
  const std::vector<float> c0 = RandomC(m, n, ldc, off, rng);
  std::vector<uint16_t> pack16;
  std::vector<float> pack32;
  const PackedB16 packed16 = PackB16(b16.data() + off, ldb, k, n, g.b_transposed, dtype, pack16);
  const PackedB packed32 = PackB(b32.data() + off, ldb, k, n, g.b_transposed, pack32);
  std::vector<float> c16 = c0, c32 = c0;
  const float* bias_ptr = g.bias ? bias.data() + off : nullptr;
  Gemm(m, n, k, a.Ptr(), a.RowStride(), a.ColStride(), packed16, c16.data() + off, ldc, bias_ptr, g.accumulate);
  Gemm(m, n, k, a.Ptr(), a.RowStride(), a.ColStride(), packed32, c32.data() + off, ldc, bias_ptr, g.accumulate);
  ++result.cases;
  for (size_t t = 0; t < c0.size(); ++t) {
    const bool outside = t < off || (t - off) / ldc == m || (t - off) % ldc >= n;
    if (!SameResult(c16[t], c32[t]) || (outside && !SameBits(c16[t], c0[t]))) {
      return result.Fail("Gemm ", DtypeName(dtype), " m ", m, " n ", n, " k ", k, " a_transposed ", g.a_transposed,
                         " b_transposed ", g.b_transposed, " bias ", g.bias, " accumulate ", g.accumulate, " special ",
                         special, ": element ", t, " = ", c16[t], ", float32 B gives ", c32[t],
                         outside ? " (outside C's block)" : "");
    }
  }
  CheckAgainstFloat64(
      DtypeName(dtype), m, n, k, c16.data() + off, ldc,
      [&](size_t i, size_t j, double& value, double& bound) {
        value = g.accumulate ? c0[off + i * ldc + j] : g.bias ? bias[off + j] : 0.0;
        bound = std::fabs(value);
        for (size_t p = 0; p < k; ++p) {
          const double prod = static_cast<double>(a.At(i, p)) * b_at(p, j);
          value += prod;
          bound += std::fabs(prod);
        }
      },
      result);
}

// The shapes of GemmSweep, each with F16 and BF16 in turn; every third call with ±inf and NaNs in B.
SweepResult Gemm16Sweep() {
  const size_t lanes = hn::Lanes(hn::ScalableTag<float>());
  const std::vector<size_t> misalign = attnlab_test::Misalignments(lanes);
  attnlab_test::Rng rng(31);
  SweepResult result;
  size_t v = 0;
  auto check = [&](GemmShape shape, size_t flags) {
    ++v;
    const Dtype16 dtype = v % 2 ? Dtype16::kF16 : Dtype16::kBF16;
    CheckGemm16(GemmCase(shape, flags, misalign[v % misalign.size()]), dtype, v % 3 == 0, rng, result);
  };
  for (const GemmShape& shape : TileRemainderShapes(lanes)) {
    check(shape, v % 16);
    if (result.Failed()) return result;
  }
  std::vector<GemmShape> big = CacheBlockShapes(lanes);
  big.push_back({kGemmMc + 1, 3 * kPanel + 5, kGemmKc + 1});
  for (const GemmShape& shape : big) {
    for (size_t flags = 0; flags < 16; ++flags) {
      for (int twice = 0; twice < 2; ++twice) {  // both dtypes for every flag
        check(shape, flags);
        if (result.Failed()) return result;
      }
    }
  }
  return result;
}

// GemvPacked on a 16-bit B vs on its float32 values (all of C the same bits; NaN for NaN) and vs float64, F16 and BF16,
// with and without ±inf/NaN; also on the columns from kPanel on (B.At(0, kPanel)), as a caller splitting n reads them.
SweepResult Gemv16Sweep() {
  const size_t lanes = hn::Lanes(hn::ScalableTag<float>());
  const std::vector<size_t> misalign = attnlab_test::Misalignments(lanes);
  attnlab_test::Rng rng(37);
  SweepResult result;
  size_t v = 0;
  for (const GemmShape& shape : GemvShapes()) {
    const size_t m = shape.m, n = shape.n, k = shape.k;
    for (const Dtype16 dtype : {Dtype16::kF16, Dtype16::kBF16}) {
      ++v;
      const bool bias_on = v % 2 == 0, transposed = v % 3 == 0, special = v % 5 < 2;
      const size_t off = misalign[v % misalign.size()], lda = k + 3, ldc = n + 2;
      std::vector<float> a(off + std::max<size_t>(1, m * lda)), bias(off + n);
      for (float& x : a) x = rng.Uniform(-1.0f, 1.0f);
      for (float& x : bias) x = rng.Uniform(-1.0f, 1.0f);
      std::vector<uint16_t> b16(std::max<size_t>(1, k * n));
      for (uint16_t& x : b16) x = Random16(rng, dtype, special);
      std::vector<float> b32(b16.size());
      for (size_t t = 0; t < b16.size(); ++t) b32[t] = Bits16ToFloat(b16[t], dtype);
      auto b_at = [&](size_t p, size_t j) { return transposed ? b32[j * k + p] : b32[p * n + j]; };
      std::vector<uint16_t> pack16;
      std::vector<float> pack32;
      const PackedB16 packed16 = PackB16(b16.data(), transposed ? k : n, k, n, transposed, dtype, pack16);
      const PackedB packed32 = PackB(b32.data(), transposed ? k : n, k, n, transposed, pack32);
      const float* bias_ptr = bias_on ? bias.data() + off : nullptr;
      for (const size_t j0 : {size_t{0}, kPanel}) {
        if (j0 >= n) continue;
        std::vector<float> c16(off + (m + 1) * ldc, kSentinel), c32 = c16;
        GemvPacked(m, n - j0, k, a.data() + off, lda, packed16.At(0, j0), c16.data() + off + j0, ldc,
                   bias_ptr ? bias_ptr + j0 : nullptr);
        GemvPacked(m, n - j0, k, a.data() + off, lda, packed32.At(0, j0), c32.data() + off + j0, ldc,
                   bias_ptr ? bias_ptr + j0 : nullptr);
        ++result.cases;
        for (size_t t = 0; t < c16.size(); ++t) {
          const bool outside = t < off || (t - off) / ldc == m || (t - off) % ldc >= n || (t - off) % ldc < j0;
          if (!SameResult(c16[t], c32[t]) || (outside && !SameBits(c16[t], kSentinel))) {
            result.Fail("GemvPacked ", DtypeName(dtype), " m ", m, " n ", n, " k ", k, " from column ", j0, " bias ",
                        bias_on, " transposed ", transposed, " special ", special, ": element ", t, " = ", c16[t],
                        ", float32 B gives ", c32[t], outside ? " (outside C's block)" : "");
            return result;
          }
        }
        const bool ok = CheckAgainstFloat64(
            DtypeName(dtype), m, n - j0, k, c16.data() + off + j0, ldc,
            [&](size_t i, size_t j, double& value, double& bound) {
              value = bias_on ? bias[off + j0 + j] : 0.0;
              bound = std::fabs(value);
              for (size_t p = 0; p < k; ++p) {
                const double prod = static_cast<double>(a[off + i * lda + p]) * b_at(p, j0 + j);
                value += prod;
                bound += std::fabs(prod);
              }
            },
            result);
        if (!ok) return result;
      }
    }
  }
  return result;
}

ATTNLAB_END_TARGET_CHECKS();

#if HWY_ONCE
ATTNLAB_TEST_ON_EVERY_TARGET(GemmSweep, "gemm: every tile remainder, block and layout vs float64, on every target",
                             "[gemm][kernels]");

ATTNLAB_TEST_ON_EVERY_TARGET(GemvSweep,
                             "gemm: GemvPacked (few rows) vs float64 for every panel remainder, on every target",
                             "[gemm][kernels]");

ATTNLAB_TEST_ON_EVERY_TARGET(
    Convert16Sweep,
    "gemm: 16-bit B, all 65536 F16 and BF16 patterns convert as packing.h's exact scalar conversion, on every "
    "target",
    "[gemm][gemm16][kernels]");

ATTNLAB_TEST_ON_EVERY_TARGET(
    Gemm16Sweep,
    "gemm: Gemm with a 16-bit B is bit for bit Gemm on its float32 values, and near float64, on every target",
    "[gemm][gemm16][kernels]");

ATTNLAB_TEST_ON_EVERY_TARGET(
    Gemv16Sweep, "gemm: GemvPacked with a 16-bit B is bit for bit GemvPacked on its float32 values, on every target",
    "[gemm][gemm16][kernels]");
#endif  // HWY_ONCE
