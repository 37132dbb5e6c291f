// attnlab fuzz target: decodes bytes into one ScaledDotProductAttention call or a MultiHeadAttention session
// (construction, LoadStateDict, Forward, StateDict) and checks invariants. Shared by the libFuzzer driver
// (tests/fuzz/attention_fuzzer.cc) and the Catch2 replay of the corpus and regressions
// (tests/cpp/fuzz_regressions_test.cc), so that both run exactly the same decode + check code.
//
// Invariants (any violation is a finding; RunOne returns its description, "" when none):
//   * a call either throws std::invalid_argument whose message reads "<argument>: expected ..., got ..." or
//     returns; any other exception (or a crash, a sanitizer report, a hang) is a finding;
//   * a small model of the documented argument rules (docs/api.md, attention.h) predicts which: a valid call
//     that throws or an invalid call that returns is a finding;
//   * a returned result has the documented shapes and sizes (weights empty when not requested);
//   * every "clean" row (its query row, the keys/values it can see, its mask row and the parameters finite,
//     -inf allowed in masks, and no float32 overflow possible on the way) has weights that are all exactly 0
//     (fully masked; then its output is exactly 0) or lie in [0, 1] and sum to 1 within 1e-5, a finite output,
//     and agrees with a float64 reference (tolerance from a float32 error bound, 1e-5 relative floor);
//   * NaN stays where it belongs: a clean row is clean whatever other rows and other batch items hold; an output
//     column whose visible value row holds NaN is NaN;
//   * repeated calls are bit-identical; a failed LoadStateDict changes nothing; StateDict returns what was loaded;
//   * ScaledDotProductAttentionBackward (after most valid SDPA calls): the same model, shapes and determinism, and
//     on batch items whose inputs are all finite, finite gradients that agree with a float64 reference.
//
// Strict NaN policy (the default; ATTNLAB_FUZZ_STRICT=0 or Options::strict_nan = false turn it off): also the policy of docs/robustness.md, "NaN
// and Inf": a NaN in query row i, in mask element (i, j) of a visible key, or in a visible, unmasked key row makes
// weight row i and output row i all NaN; a +inf mask element makes its row NaN; and NaN/Inf in a key or value
// row that row i cannot see (causally hidden, bool-masked or -inf) never reaches row i.
//
// Input format (bytes past the end read as 0): see Decoder below; tests/fuzz/make_corpus.py writes seeds in it.
#ifndef ATTNLAB_TESTS_FUZZ_FUZZ_TARGET_H_
#define ATTNLAB_TESTS_FUZZ_FUZZ_TARGET_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "attnlab/attention.h"
#include "hwy/targets.h"

namespace attnlab_fuzz {

using attnlab::Mask;
using attnlab::Shape;

struct Options {
  bool strict_nan = true;    // also check the strict NaN policy (see above)
  int64_t forced_target = 0;  // a Highway target to force (0: the one input byte 0 selects)
  bool use_target_byte = true;
  bool verbose = false;       // print every decoded case to stderr (ATTNLAB_FUZZ_VERBOSE=1)
};

inline Options OptionsFromEnv() {
  Options o;
  const char* s = std::getenv("ATTNLAB_FUZZ_STRICT");
  o.strict_nan = s == nullptr || s[0] != '0';
  const char* v = std::getenv("ATTNLAB_FUZZ_VERBOSE");
  o.verbose = v != nullptr && v[0] == '1';
  return o;
}

constexpr double kTame = 1e36;         // bound on every |intermediate|: below it float32 cannot overflow
constexpr double kEps = 1.2e-7;        // 2^-23: float32 rounding, with a factor 2 of slack
constexpr uint64_t kMaxAlloc = 1 << 14;  // elements per tensor the fuzzer allocates
constexpr double kMaxWork = 1e6;       // multiply-adds per call above which a valid call is skipped
constexpr double kInfD = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------------------------------------------------------
// Byte reader and value decoders.

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : p_(data), n_(size) {}
  uint8_t U8() { return i_ < n_ ? p_[i_++] : 0; }
  uint32_t U32() {
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v |= static_cast<uint32_t>(U8()) << (8 * k);
    return v;
  }

 private:
  const uint8_t* p_;
  size_t n_;
  size_t i_ = 0;
};

// Dimensions that must be rejected or that cross tile boundaries (16-row query blocks, 128-key tiles).
inline int64_t HostileDim(uint8_t k) {
  static const int64_t kTable[16] = {-1,
                                     -7,
                                     std::numeric_limits<int64_t>::min(),
                                     std::numeric_limits<int64_t>::max(),
                                     int64_t{1} << 31,
                                     int64_t{1} << 32,
                                     int64_t{1} << 40,
                                     (int64_t{1} << 61) - 1,  // PTRDIFF_MAX / 4: the largest dim of an empty tensor
                                     int64_t{1} << 61,
                                     int64_t{1} << 62,
                                     16,
                                     17,
                                     129,
                                     int64_t{1} << 29,
                                     33,
                                     1000};
  return kTable[k % 16];
}

// 0..8 mostly; 1/16 of the time a hostile or tile-crossing dimension.
inline int64_t Dim(Reader& r) {
  const uint8_t b = r.U8();
  return b < 240 ? b % 9 : HostileDim(b - 240);
}

// Batch dimensions: 0..3 mostly.
inline int64_t BatchDim(Reader& r) {
  const uint8_t b = r.U8();
  return b < 240 ? b % 4 : HostileDim(b - 240);
}

inline float SpecialValue(Reader& r, uint8_t k) {
  const float inf = std::numeric_limits<float>::infinity();
  const float flt_max = std::numeric_limits<float>::max();
  switch (k % 32) {
    case 0: return std::numeric_limits<float>::quiet_NaN();
    case 1: return inf;
    case 2: return -inf;
    case 3: return 0.0f;
    case 4: return -0.0f;
    case 5: return 1e30f;
    case 6: return -1e30f;
    case 7: return flt_max;
    case 8: return -flt_max;
    case 9: return 1e-40f;  // denormal
    case 10: return -1e-40f;
    case 11: return std::numeric_limits<float>::denorm_min();
    case 12: return std::numeric_limits<float>::min();
    case 13: return 1e-30f;
    case 14: return 1e10f;
    case 15: return -1e10f;
    case 16: return 1e20f;
    case 17: return -1e20f;
    case 18: return 1e37f;
    case 19: return 65504.0f;
    case 20: return 100.0f;
    case 21: return -100.0f;
    case 22: return 1000.0f;
    case 23: return -1000.0f;
    case 24: return 88.7f;
    case 25: return -88.7f;
    case 26: return 104.0f;
    case 27: return -104.0f;
    case 28: return 0.5f;
    case 29: return 1.0f / 3.0f;
    case 30: {  // any bit pattern (signalling NaNs, NaN payloads, …)
      const uint32_t bits = r.U32();
      float f;
      std::memcpy(&f, &bits, sizeof f);
      return f;
    }
    default: return -std::numeric_limits<float>::quiet_NaN();
  }
}

// Ordinary values in [-7, 7) in steps of 1/16 (7/8 of bytes), else a special one.
inline float Value(Reader& r) {
  const uint8_t b = r.U8();
  if (b < 224) return (static_cast<int>(b) - 112) / 16.0f;
  return SpecialValue(r, b - 224);
}

// Float mask elements: 0, -inf, small, or any Value.
inline float MaskValue(Reader& r) {
  const uint8_t b = r.U8();
  if (b < 96) return 0.0f;
  if (b < 160) return -std::numeric_limits<float>::infinity();
  if (b < 208) return (static_cast<int>(b) - 184) / 8.0f;
  return Value(r);
}

// SDPA scale: ordinary in [-0.5, 2), else any Value (NaN, inf, huge, denormal, 0, …).
inline float ScaleValue(Reader& r) {
  const uint8_t b = r.U8();
  if (b < 160) return (static_cast<int>(b) - 32) / 64.0f;
  return Value(r);
}

// ---------------------------------------------------------------------------------------------------------------
// The model of the documented size rules (checks.cc's contract): dims >= 0, the bytes of a float32 tensor
// addressable, an empty tensor's dims too.

struct Numel {
  bool ok = false;
  uint64_t n = 0;
};

inline Numel ModelNumel(const Shape& shape) {
  const uint64_t max_elements = static_cast<uint64_t>(std::numeric_limits<ptrdiff_t>::max()) / sizeof(float);
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return {};
    const uint64_t u = static_cast<uint64_t>(d);
    if (u != 0 && n > max_elements / u) return {};
    n *= u;
  }
  if (n == 0) {
    for (int64_t d : shape) {
      if (static_cast<uint64_t>(d) > max_elements) return {};
    }
  }
  return {true, n};
}

inline std::string ShapeStr(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

inline std::string FloatStr(float x) {
  if (std::isnan(x)) return std::signbit(x) ? "-nan" : "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(x));
  return buf;
}

// A float32 tensor the fuzzer owns. Allocated to exactly its element count (so that ASan sees any read past it)
// when the shape is valid and small; otherwise a 16-float dummy the library must never read past.
struct TensorBuf {
  Shape shape;
  Numel numel;
  bool allocated = false;
  bool null_ptr = false;
  std::unique_ptr<float[]> data;

  void Fill(Reader& r) {
    numel = ModelNumel(shape);
    if (numel.ok && numel.n <= kMaxAlloc) {
      allocated = true;
      data.reset(new float[numel.n]);
      for (uint64_t i = 0; i < numel.n; ++i) data[i] = Value(r);
    } else {
      data.reset(new float[16]());
    }
  }
  // Fills with given values (LoadStateDict entries).
  const float* ptr() const { return null_ptr ? nullptr : data.get(); }
  attnlab::TensorView View() const { return attnlab::TensorView{ptr(), shape}; }
  // The model: what CheckTensor must accept.
  bool ModelValid() const { return numel.ok && !(null_ptr && numel.n > 0); }
  size_t n() const { return allocated ? static_cast<size_t>(numel.n) : 0; }
  float at(size_t i) const { return data[i]; }
};

struct MaskBuf {
  Mask::Kind kind = Mask::Kind::kNone;
  Shape shape;
  Numel numel;
  bool allocated = false;
  bool null_ptr = false;
  std::unique_ptr<uint8_t[]> bools;
  std::unique_ptr<float[]> floats;

  void Fill(Reader& r) {
    if (kind == Mask::Kind::kNone) return;
    numel = ModelNumel(shape);
    const bool small = numel.ok && numel.n <= kMaxAlloc;
    allocated = small;
    const uint64_t count = small ? numel.n : 16;
    if (kind == Mask::Kind::kBool) {
      bools.reset(new uint8_t[count]());
      if (small) {
        for (uint64_t i = 0; i < count; ++i) bools[i] = r.U8();  // any byte: non-zero is true
      }
    } else {
      floats.reset(new float[count]());
      if (small) {
        for (uint64_t i = 0; i < count; ++i) floats[i] = MaskValue(r);
      }
    }
  }
  Mask View() const {
    switch (kind) {
      case Mask::Kind::kBool: return Mask::Bool(null_ptr ? nullptr : bools.get(), shape);
      case Mask::Kind::kFloat: return Mask::Float(null_ptr ? nullptr : floats.get(), shape);
      default: return Mask::None();
    }
  }
  bool ModelValid() const { return kind == Mask::Kind::kNone || (numel.ok && !(null_ptr && numel.n > 0)); }
  // Additive value of element i: bool elements are 0 or -inf, `masked_when` saying which byte value masks.
  double Additive(size_t i, bool masked_when) const {
    if (kind == Mask::Kind::kFloat) return floats[i];
    if (kind == Mask::Kind::kBool) return ((bools[i] != 0) == masked_when) ? -kInfD : 0.0;
    return 0.0;
  }
  std::string Describe() const {
    if (kind == Mask::Kind::kNone) return "none";
    std::string s = std::string(kind == Mask::Kind::kBool ? "bool " : "float ") + ShapeStr(shape) +
                    (null_ptr ? " (null data)" : "");
    if (allocated && numel.n <= 256) {
      s += " {";
      for (uint64_t i = 0; i < numel.n; ++i) {
        s += (i ? ", " : "") + (kind == Mask::Kind::kBool ? std::to_string(bools[i]) : FloatStr(floats[i]));
      }
      s += "}";
    }
    return s;
  }
};

inline std::string DescribeTensor(const char* name, const TensorBuf& t) {
  std::string s = std::string(name) + " " + ShapeStr(t.shape) + (t.null_ptr ? " (null data)" : "");
  if (t.allocated && t.numel.n <= 256) {
    s += " {";
    for (uint64_t i = 0; i < t.numel.n; ++i) s += (i ? ", " : "") + FloatStr(t.data[i]);
    s += "}";
  }
  return s;
}

// Randomly edits shapes: set a dimension, drop one or insert one. 3/4 of inputs edit nothing.
inline void PerturbShapes(Reader& r, Shape* const* shapes, size_t count) {
  const uint8_t p = r.U8();
  if (p < 192) return;
  const int edits = 1 + p % 3;
  for (int e = 0; e < edits; ++e) {
    const uint8_t op = r.U8();
    Shape& s = *shapes[op % count];
    const size_t idx = r.U8();
    switch ((op / count) % 3) {
      case 0:
        if (!s.empty()) s[idx % s.size()] = Dim(r);
        break;
      case 1:
        if (!s.empty()) s.erase(s.begin() + static_cast<ptrdiff_t>(idx % s.size()));
        break;
      default:
        s.insert(s.begin() + static_cast<ptrdiff_t>(idx % (s.size() + 1)), Dim(r));
        break;
    }
  }
}

// A mask decoder: kind (none / bool / float) and a shape that is one of the `valid` ones, a perturbed one, or
// random.
inline void DecodeMask(Reader& r, MaskBuf& m, const std::vector<Shape>& valid) {
  const uint8_t b = r.U8();
  m.kind = static_cast<Mask::Kind>(b % 3);
  if (m.kind == Mask::Kind::kNone) return;
  const int sel = (b / 3) % 8;
  if (sel < 6) {
    m.shape = valid[static_cast<size_t>(sel) % valid.size()];
  } else if (sel == 6) {
    m.shape = valid[r.U8() % valid.size()];
    if (!m.shape.empty()) m.shape[r.U8() % m.shape.size()] = Dim(r);
  } else {
    const int rank = r.U8() % 5;
    for (int i = 0; i < rank; ++i) m.shape.push_back(Dim(r));
  }
}

// ---------------------------------------------------------------------------------------------------------------
// float64 reference of one attention row with an error bound.

struct RowInput {
  size_t lk = 0;
  std::vector<double> dot;      // q · k_j
  std::vector<double> absdot;   // a bound on Σ |q_d k_jd| (abs values of everything that rounds on the way)
  std::vector<double> m;        // additive mask value (0, finite, ±inf, NaN)
  std::vector<char> visible;    // causally visible
  double scale = 1.0;
  double coef = 1.0;            // δz_j ≈ kEps (coef |scale| absdot_j + 2 |m_j|)
};

struct RowRef {
  std::vector<char> unmasked;   // visible and mask != -inf
  bool fully_masked = true;
  std::vector<double> w;
  double delta = 0;             // bound on the float32 error of the logits that matter
  bool tame_unmasked = true;    // no float32 overflow in the logits of unmasked keys
  bool tame_visible = true;     // … of every visible key (masked ones included)
};

inline RowRef AttendRow(const RowInput& in) {
  RowRef ref;
  const size_t lk = in.lk;
  ref.unmasked.assign(lk, 0);
  ref.w.assign(lk, 0.0);
  const double as = std::fabs(in.scale);
  double zmax = -kInfD;
  std::vector<double> z(lk, 0.0);
  for (size_t j = 0; j < lk; ++j) {
    if (!in.visible[j]) continue;
    const double mj = in.m[j];
    const bool over = !(in.absdot[j] * std::max(1.0, as) <= kTame) ||
                      (std::isfinite(mj) && !(as * in.absdot[j] + std::fabs(mj) <= kTame));
    if (over) ref.tame_visible = false;
    if (mj == -kInfD) continue;
    ref.unmasked[j] = 1;
    ref.fully_masked = false;
    if (over || !std::isfinite(mj)) ref.tame_unmasked = false;
    z[j] = in.scale * in.dot[j] + mj;
    zmax = std::max(zmax, z[j]);
    ref.delta = std::max(ref.delta, kEps * (in.coef * as * in.absdot[j] + 2 * std::fabs(mj)));
  }
  ref.delta += 1e-6;
  if (ref.fully_masked) return ref;
  double sum = 0;
  for (size_t j = 0; j < lk; ++j) {
    if (ref.unmasked[j]) sum += ref.w[j] = std::exp(z[j] - zmax);
  }
  for (size_t j = 0; j < lk; ++j) ref.w[j] /= sum;
  return ref;
}

inline bool BitsEqual(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

inline bool AllNaN(const float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (!std::isnan(x[i])) return false;
  }
  return true;
}

// Checks of a clean row's weights: all exactly 0 when fully masked, else in [0, 1], summing to 1, near the
// reference. `tol_w` per weight; `scale_w` divides the weights (MHA averages heads: then compare per head
// sums via the caller). Returns "" or a description.
inline std::string CheckWeightsRow(const float* w, size_t lk, const RowRef& ref, double tol_w, bool compare) {
  std::ostringstream os;
  double sum = 0;
  for (size_t j = 0; j < lk; ++j) {
    const double x = w[j];
    if (ref.fully_masked) {
      if (x != 0.0) {
        os << "fully masked row: weight[" << j << "] = " << FloatStr(w[j]) << ", expected 0";
        return os.str();
      }
      continue;
    }
    if (!(x >= 0.0 && x <= 1.0 + 1e-6)) {
      os << "weight[" << j << "] = " << FloatStr(w[j]) << " outside [0, 1]";
      return os.str();
    }
    sum += x;
    if (compare && !(std::fabs(x - ref.w[j]) <= tol_w)) {
      os << "weight[" << j << "] = " << FloatStr(w[j]) << ", reference " << ref.w[j] << " (tolerance " << tol_w << ")";
      return os.str();
    }
  }
  // 1e-5, plus the float32 rounding of a sum over lk terms (only matters for long rows).
  if (!ref.fully_masked && !(std::fabs(sum - 1.0) <= 1e-5 + kEps * static_cast<double>(lk))) {
    os << "weights sum to " << sum << ", expected 1";
    return os.str();
  }
  return "";
}

// ---------------------------------------------------------------------------------------------------------------
// The session: decode, call, check.

class Session {
 public:
  Session(const uint8_t* data, size_t size, const Options& opts) : r_(data, size), opts_(opts) {}

  std::string Run() {
    const uint8_t target_byte = r_.U8();
    const std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
    int64_t target = opts_.forced_target;
    if (target == 0 && opts_.use_target_byte && targets.size() > 1) target = targets[target_byte % targets.size()];
    if (target != 0 && targets.size() > 1) hwy::SetSupportedTargetsForTest(target);
    target_name_ = attnlab::ActiveTargetName();
    const uint8_t kind = r_.U8();
    try {
      if (kind % 2 == 0) {
        RunSdpa();
      } else {
        RunMha();
      }
    } catch (const std::exception& e) {
      Finding(std::string("unexpected exception escaped the fuzz target: ") + e.what());
    }
    if (target != 0 && targets.size() > 1) hwy::SetSupportedTargetsForTest(0);
    if (opts_.verbose) std::fprintf(stderr, "[%s] %s\n  -> %s\n", target_name_.c_str(), case_.c_str(), finding_.empty() ? "ok" : "FINDING");
    return finding_;
  }

 private:
  void Finding(const std::string& what) {
    if (!finding_.empty()) return;
    finding_ = "[" + target_name_ + (opts_.strict_nan ? ", strict NaN policy" : "") + "] " + what + "\n  case: " + case_;
  }
  bool Failed() const { return !finding_.empty(); }
  static bool TooBigToAllocate(std::initializer_list<const TensorBuf*> tensors) {
    for (const TensorBuf* t : tensors) {
      if (t->numel.ok && !t->allocated) return true;
    }
    return false;
  }

  // Runs `call`, which calls the library. Returns true when it returned; classifies exceptions.
  template <class Call>
  bool Invoke(const char* what, bool model_valid, Call&& call) {
    if (opts_.verbose) std::fprintf(stderr, "calling %s (model: %s): %s\n", what, model_valid ? "valid" : "invalid", case_.c_str());
    try {
      call();
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      if (model_valid) {
        Finding(std::string(what) + ": a valid call was rejected: std::invalid_argument(\"" + msg + "\")");
      } else if (msg.find(": expected ") == std::string::npos || msg.find(", got ") == std::string::npos) {
        Finding(std::string(what) + ": error message not in the form \"<argument>: expected …, got …\": " + msg);
      }
      return false;
    } catch (const std::exception& e) {
      Finding(std::string(what) + ": threw an exception other than std::invalid_argument: " + typeid(e).name() +
              "(\"" + e.what() + "\")");
      return false;
    } catch (...) {
      Finding(std::string(what) + ": threw a non-std::exception");
      return false;
    }
    if (!model_valid) Finding(std::string(what) + ": an invalid call was accepted (expected std::invalid_argument)");
    return model_valid;
  }

  // ----------------------------------------------------------------------------------------------- SDPA
  void RunSdpa() {
    const uint8_t sb = r_.U8();
    const size_t nb = sb % 3;
    Shape batch;
    for (size_t i = 0; i < nb; ++i) batch.push_back(BatchDim(r_));
    const int64_t lq = Dim(r_), lk = Dim(r_), dk = Dim(r_), dv = Dim(r_);
    TensorBuf q, k, v;
    q.shape = batch;
    q.shape.insert(q.shape.end(), {lq, dk});
    k.shape = batch;
    k.shape.insert(k.shape.end(), {lk, dk});
    v.shape = batch;
    v.shape.insert(v.shape.end(), {lk, dv});
    Shape* shapes[3] = {&q.shape, &k.shape, &v.shape};
    PerturbShapes(r_, shapes, 3);
    const uint8_t f = r_.U8();
    attnlab::SdpaOptions o;
    o.is_causal = f & 1;
    o.has_scale = f & 2;
    o.need_weights = !(f & 4);
    uint8_t nulls = 0;
    if (f & 8) nulls = r_.U8();
    if (o.has_scale) o.scale = ScaleValue(r_);
    MaskBuf mask;
    {
      Shape full = batch;
      full.insert(full.end(), {lq, lk});
      DecodeMask(r_, mask, {Shape{lq, lk}, full});
    }
    q.null_ptr = nulls & 1;
    k.null_ptr = nulls & 2;
    v.null_ptr = nulls & 4;
    mask.null_ptr = nulls & 8;
    q.Fill(r_);
    k.Fill(r_);
    v.Fill(r_);
    mask.Fill(r_);

    {
      std::ostringstream os;
      os << "SDPA " << DescribeTensor("query", q) << "; " << DescribeTensor("key", k) << "; "
         << DescribeTensor("value", v) << "; attn_mask " << mask.Describe() << "; is_causal " << o.is_causal
         << "; scale " << (o.has_scale ? FloatStr(o.scale) : "default") << "; need_weights " << o.need_weights;
      case_ = os.str();
    }

    // The model.
    bool valid = q.shape.size() >= 2 && q.ModelValid() && k.ModelValid() && v.ModelValid() && mask.ModelValid();
    const size_t rank = q.shape.size();
    Shape out_shape, w_shape;
    uint64_t nbatch = 0;
    if (valid) {
      const Shape qb(q.shape.begin(), q.shape.end() - 2);
      valid = k.shape.size() == rank && v.shape.size() == rank && Shape(k.shape.begin(), k.shape.end() - 2) == qb &&
              Shape(v.shape.begin(), v.shape.end() - 2) == qb && k.shape[rank - 1] == q.shape[rank - 1] &&
              v.shape[rank - 2] == k.shape[rank - 2] && (!o.has_scale || std::isfinite(o.scale));
      if (valid && mask.kind != Mask::Kind::kNone) {
        Shape full = qb;
        full.insert(full.end(), {q.shape[rank - 2], k.shape[rank - 2]});
        valid = mask.shape == Shape{q.shape[rank - 2], k.shape[rank - 2]} || mask.shape == full;
      }
      if (valid) {
        out_shape = qb;
        out_shape.insert(out_shape.end(), {q.shape[rank - 2], v.shape[rank - 1]});
        w_shape = qb;
        w_shape.insert(w_shape.end(), {q.shape[rank - 2], k.shape[rank - 2]});
        valid = ModelNumel(out_shape).ok && (!o.need_weights || ModelNumel(w_shape).ok);
        nbatch = ModelNumel(qb).n;
      }
    }
    // The library may read any argument whose shape is valid, even in a call it then rejects: such an argument must
    // be real memory. The fuzzer only allocates small ones, so it skips calls with a big, validly shaped argument.
    if (TooBigToAllocate({&q, &k, &v}) || (mask.kind != Mask::Kind::kNone && mask.numel.ok && !mask.allocated)) return;
    if (valid) {
      // Skip valid calls too big for the fuzzer (it allocates inputs; large ones are legitimate, not hostile).
      if (!q.allocated || !k.allocated || !v.allocated || (mask.kind != Mask::Kind::kNone && !mask.allocated)) return;
      const double lqd = static_cast<double>(q.shape[rank - 2]), lkd = static_cast<double>(k.shape[rank - 2]);
      // Also the outputs: empty inputs may legitimately ask for a huge output (e.g. dk = 0, Lq = 2^40).
      // Only work the call really needs (inputs, outputs, logits; weights cost more: the reference and the checks
      // visit each). Loops over empty rows or items are not counted: they are the library's to avoid.
      const double work = static_cast<double>(nbatch) *
                          (lqd * lkd * (static_cast<double>(q.shape[rank - 1] + v.shape[rank - 1]) + 2) +
                           lkd * static_cast<double>(q.shape[rank - 1]) + lqd * static_cast<double>(v.shape[rank - 1]) +
                           (o.need_weights ? lqd * lkd * 16 : 0.0));
      if (work > kMaxWork) return;
    }

    attnlab::AttentionResult res;
    if (!Invoke("ScaledDotProductAttention", valid, [&] {
          res = attnlab::ScaledDotProductAttention(q.View(), k.View(), v.View(), [&] {
            attnlab::SdpaOptions oo = o;
            oo.attn_mask = mask.View();
            return oo;
          }());
        })) {
      return;
    }
    if (res.output.shape != out_shape || res.output.data.size() != ModelNumel(out_shape).n) {
      Finding("output shape " + ShapeStr(res.output.shape) + " (" + std::to_string(res.output.data.size()) +
              " values), expected " + ShapeStr(out_shape));
      return;
    }
    if (o.need_weights ? (res.weights.shape != w_shape || res.weights.data.size() != ModelNumel(w_shape).n)
                       : (!res.weights.shape.empty() || !res.weights.data.empty())) {
      Finding("weights shape " + ShapeStr(res.weights.shape) + " (" + std::to_string(res.weights.data.size()) +
              " values), expected " + (o.need_weights ? ShapeStr(w_shape) : std::string("none")));
      return;
    }
    // Determinism: a second call is bit-identical.
    {
      attnlab::SdpaOptions oo = o;
      oo.attn_mask = mask.View();
      const attnlab::AttentionResult again = attnlab::ScaledDotProductAttention(q.View(), k.View(), v.View(), oo);
      if (!BitsEqual(again.output.data, res.output.data) || !BitsEqual(again.weights.data, res.weights.data)) {
        Finding("a repeated call is not bit-identical");
        return;
      }
    }
    // Row by row checks visit every (item, row): not for absurd counts of empty rows. They (and the backward
    // reference) also allocate per-dimension buffers: not for the huge dimensions of an empty call.
    if (static_cast<double>(nbatch) * static_cast<double>(std::max<int64_t>(q.shape[rank - 2], 1)) > 1e5) return;
    for (const TensorBuf* t : {&q, &k, &v}) {
      for (const int64_t d : t->shape) {
        if (d > int64_t{1} << 20) return;
      }
    }
    CheckSdpaRows(q, k, v, mask, o, res, static_cast<size_t>(nbatch));
    if (!Failed()) RunSdpaBackward(q, k, v, mask, o, out_shape, static_cast<size_t>(nbatch));
  }

  // ScaledDotProductAttentionBackward on the same arguments (3/4 of valid calls): the model (grad_output must have
  // the output's shape), shapes, determinism, and on batch items whose every input is finite and tame: finite
  // gradients that agree with a float64 reference (tolerance from an abs-value bound of every product).
  void RunSdpaBackward(const TensorBuf& q, const TensorBuf& k, const TensorBuf& v, const MaskBuf& mask,
                       const attnlab::SdpaOptions& o, const Shape& out_shape, size_t nbatch) {
    const uint8_t gb = r_.U8();
    if (gb % 4 == 3) return;
    TensorBuf g;
    g.shape = out_shape;
    if (gb & 4) {
      Shape* s[1] = {&g.shape};
      PerturbShapes(r_, s, 1);
      if (!g.shape.empty() && (gb & 8)) g.shape[r_.U8() % g.shape.size()] = Dim(r_);
    }
    g.null_ptr = (gb & 0x30) == 0x30;
    g.Fill(r_);
    case_ += "; backward with " + DescribeTensor("grad_output", g);
    const bool valid = g.shape == out_shape && g.ModelValid();
    if (valid && !g.allocated) return;  // a legitimately big grad_output: the fuzzer does not allocate it
    attnlab::SdpaOptions oo = o;
    oo.attn_mask = mask.View();
    attnlab::SdpaGradients grads;
    if (!Invoke("ScaledDotProductAttentionBackward", valid, [&] {
          grads = attnlab::ScaledDotProductAttentionBackward(q.View(), k.View(), v.View(), g.View(), oo);
        })) {
      return;
    }
    if (grads.grad_query.shape != q.shape || grads.grad_key.shape != k.shape || grads.grad_value.shape != v.shape ||
        grads.grad_query.data.size() != q.n() || grads.grad_key.data.size() != k.n() ||
        grads.grad_value.data.size() != v.n()) {
      return Finding("backward: gradient shapes differ from query/key/value");
    }
    {
      const attnlab::SdpaGradients again =
          attnlab::ScaledDotProductAttentionBackward(q.View(), k.View(), v.View(), g.View(), oo);
      if (!BitsEqual(again.grad_query.data, grads.grad_query.data) ||
          !BitsEqual(again.grad_key.data, grads.grad_key.data) ||
          !BitsEqual(again.grad_value.data, grads.grad_value.data)) {
        return Finding("backward: a repeated call is not bit-identical");
      }
    }
    const size_t rank = q.shape.size();
    const size_t lq = static_cast<size_t>(q.shape[rank - 2]), dk = static_cast<size_t>(q.shape[rank - 1]);
    const size_t lk = static_cast<size_t>(k.shape[rank - 2]), dv = static_cast<size_t>(v.shape[rank - 1]);
    const double scale = o.has_scale ? o.scale : dk > 0 ? 1.0f / std::sqrt(static_cast<float>(dk)) : 1.0f;
    const bool broadcast = mask.kind != Mask::Kind::kNone && mask.shape.size() == 2 && mask.shape.size() != rank;
    auto finite = [](const float* x, size_t n) {
      for (size_t i = 0; i < n; ++i) {
        if (!std::isfinite(x[i])) return false;
      }
      return true;
    };
    for (size_t b = 0; b < nbatch; ++b) {
      const float* Q = q.data.get() + b * lq * dk;
      const float* K = k.data.get() + b * lk * dk;
      const float* V = v.data.get() + b * lk * dv;
      const float* G = g.data.get() + b * lq * dv;
      if (!finite(Q, lq * dk) || !finite(K, lk * dk) || !finite(V, lk * dv) || !finite(G, lq * dv)) continue;
      std::vector<double> P(lq * lk, 0.0), dS(lq * lk, 0.0), mdS(lq * lk, 0.0);
      double delta = 0;
      bool tame = true;
      for (size_t i = 0; i < lq && tame; ++i) {
        RowInput in;
        in.lk = lk;
        in.dot.assign(lk, 0.0);
        in.absdot.assign(lk, 0.0);
        in.m.assign(lk, 0.0);
        in.visible.assign(lk, 1);
        in.scale = scale;
        in.coef = static_cast<double>(dk) + 4;
        for (size_t j = 0; j < lk; ++j) {
          in.visible[j] = !o.is_causal || j <= i;
          for (size_t d = 0; d < dk; ++d) {
            in.dot[j] += static_cast<double>(Q[i * dk + d]) * K[j * dk + d];
            in.absdot[j] += std::fabs(static_cast<double>(Q[i * dk + d]) * K[j * dk + d]);
          }
          if (mask.kind != Mask::Kind::kNone) {
            in.m[j] = mask.Additive(((broadcast ? 0 : b) * lq + i) * lk + j, /*masked_when=*/false);
            if (in.visible[j] && (std::isnan(in.m[j]) || in.m[j] == kInfD)) tame = false;
          }
        }
        const RowRef ref = AttendRow(in);
        tame = tame && ref.tame_visible;
        delta = std::max(delta, ref.delta);
        // dP_ij = Σ_d dO_id V_jd; dS_ij = P_ij (dP_ij - Σ_j P_ij dP_ij), with abs bounds.
        std::vector<double> dP(lk, 0.0), mdP(lk, 0.0);
        double dot = 0, mdot = 0;
        for (size_t j = 0; j < lk; ++j) {
          P[i * lk + j] = ref.w[j];
          for (size_t d = 0; d < dv; ++d) {
            dP[j] += static_cast<double>(G[i * dv + d]) * V[j * dv + d];
            mdP[j] += std::fabs(static_cast<double>(G[i * dv + d]) * V[j * dv + d]);
          }
          dot += ref.w[j] * dP[j];
          mdot += ref.w[j] * mdP[j];
        }
        for (size_t j = 0; j < lk; ++j) {
          dS[i * lk + j] = ref.w[j] * (dP[j] - dot);
          mdS[i * lk + j] = (ref.w[j] + 1e-6) * (mdP[j] + mdot);
          tame = tame && mdP[j] <= kTame && mdS[i * lk + j] <= kTame;  // finite inputs can still overflow
        }
      }
      if (!tame || delta > 1e-3) continue;
      const double rel = 1e-4 + 8 * delta + kEps * static_cast<double>(lq + lk + dk + dv + 8);
      auto check = [&](const char* what, const std::vector<float>& got, size_t base, size_t rows, size_t cols,
                       auto&& value_and_bound) -> bool {
        for (size_t r = 0; r < rows; ++r) {
          for (size_t c = 0; c < cols; ++c) {
            const auto [ref, bound] = value_and_bound(r, c);
            if (!(bound * std::max(1.0, 1.0 / std::fabs(scale)) <= kTame)) continue;  // float32 may overflow here
            const float x = got[base + r * cols + c];
            if (!std::isfinite(x) || !(std::fabs(x - ref) <= rel * bound + 1e-30)) {
              std::ostringstream os;
              os << "backward: batch item " << b << ": " << what << "[" << r << "][" << c << "] = " << FloatStr(x)
                 << ", reference " << ref << " (tolerance " << rel * bound << ")";
              Finding(os.str());
              return false;
            }
          }
        }
        return true;
      };
      const bool ok =
          check("grad_value", grads.grad_value.data, b * lk * dv, lk, dv, [&](size_t j, size_t d) {
            double acc = 0, m = 0;
            for (size_t i = 0; i < lq; ++i) {
              acc += P[i * lk + j] * G[i * dv + d];
              m += (P[i * lk + j] + 1e-6) * std::fabs(static_cast<double>(G[i * dv + d]));
            }
            return std::pair<double, double>(acc, m);
          }) &&
          check("grad_query", grads.grad_query.data, b * lq * dk, lq, dk, [&](size_t i, size_t c) {
            double acc = 0, m = 0;
            for (size_t j = 0; j < lk; ++j) {
              acc += scale * dS[i * lk + j] * K[j * dk + c];
              m += std::fabs(scale) * mdS[i * lk + j] * std::fabs(static_cast<double>(K[j * dk + c]));
            }
            return std::pair<double, double>(acc, m);
          }) &&
          check("grad_key", grads.grad_key.data, b * lk * dk, lk, dk, [&](size_t j, size_t c) {
            double acc = 0, m = 0;
            for (size_t i = 0; i < lq; ++i) {
              acc += scale * dS[i * lk + j] * Q[i * dk + c];
              m += std::fabs(scale) * mdS[i * lk + j] * std::fabs(static_cast<double>(Q[i * dk + c]));
            }
            return std::pair<double, double>(acc, m);
          });
      if (!ok) return;
    }
  }

  void CheckSdpaRows(const TensorBuf& q, const TensorBuf& k, const TensorBuf& v, const MaskBuf& mask,
                     const attnlab::SdpaOptions& o, const attnlab::AttentionResult& res, size_t nbatch) {
    const size_t rank = q.shape.size();
    const size_t lq = static_cast<size_t>(q.shape[rank - 2]), dk = static_cast<size_t>(q.shape[rank - 1]);
    const size_t lk = static_cast<size_t>(k.shape[rank - 2]), dv = static_cast<size_t>(v.shape[rank - 1]);
    const double scale = o.has_scale ? o.scale : dk > 0 ? 1.0f / std::sqrt(static_cast<float>(dk)) : 1.0f;
    const bool broadcast = mask.kind != Mask::Kind::kNone && mask.shape.size() == 2 && mask.shape.size() != rank;
    for (size_t b = 0; b < nbatch && !Failed(); ++b) {
      const size_t kbase = b * lk * dk, vbase = b * lk * dv;
      bool kv_all_finite = true;
      std::vector<char> k_fin(lk, 1), k_nan(lk, 0), v_fin(lk, 1);
      std::vector<double> vabs_all(dv, 0.0);
      for (size_t j = 0; j < lk; ++j) {
        for (size_t d = 0; d < dk; ++d) {
          const float x = k.at(kbase + j * dk + d);
          if (!std::isfinite(x)) k_fin[j] = 0;
          if (std::isnan(x)) k_nan[j] = 1;
        }
        for (size_t d = 0; d < dv; ++d) {
          const float x = v.at(vbase + j * dv + d);
          if (!std::isfinite(x)) v_fin[j] = 0;
          vabs_all[d] += std::fabs(static_cast<double>(x));
        }
        kv_all_finite = kv_all_finite && k_fin[j] && v_fin[j];
      }
      for (size_t i = 0; i < lq && !Failed(); ++i) {
        const size_t row = b * lq + i;
        const float* qr = q.data.get() + row * dk;
        bool q_fin = true, q_nan = false;
        for (size_t d = 0; d < dk; ++d) {
          q_fin = q_fin && std::isfinite(qr[d]);
          q_nan = q_nan || std::isnan(qr[d]);
        }
        RowInput in;
        in.lk = lk;
        in.dot.assign(lk, 0.0);
        in.absdot.assign(lk, 0.0);
        in.m.assign(lk, 0.0);
        in.visible.assign(lk, 1);
        in.scale = scale;
        in.coef = static_cast<double>(dk) + 4;
        const size_t mrow = (broadcast ? i : row) * lk;
        bool mask_nan = false, mask_posinf = false;
        for (size_t j = 0; j < lk; ++j) {
          in.visible[j] = !o.is_causal || j <= i;
          double dot = 0, ad = 0;
          for (size_t d = 0; d < dk; ++d) {
            const double x = qr[d], y = k.at(kbase + j * dk + d);
            dot += x * y;
            ad += std::fabs(x * y);
          }
          in.dot[j] = dot;
          in.absdot[j] = std::isnan(ad) ? kInfD : ad;
          if (mask.kind != Mask::Kind::kNone) in.m[j] = mask.Additive(mrow + j, /*masked_when=*/false);
          if (in.visible[j]) {
            mask_nan = mask_nan || std::isnan(in.m[j]);
            mask_posinf = mask_posinf || in.m[j] == kInfD;
          }
        }
        const RowRef ref = AttendRow(in);
        const bool mask_ok = !mask_nan && !mask_posinf;
        bool unmasked_kv_finite = true, unmasked_k_finite = true;
        std::vector<double> vabs(dv, 0.0), vweighted(dv, 0.0);
        std::vector<char> v_nan_col(dv, 0);
        const double tol_w = 1e-5 + 4 * ref.delta;
        for (size_t j = 0; j < lk; ++j) {
          if (!ref.unmasked[j]) continue;
          unmasked_kv_finite = unmasked_kv_finite && k_fin[j] && v_fin[j];
          unmasked_k_finite = unmasked_k_finite && k_fin[j];
          for (size_t d = 0; d < dv; ++d) {
            const float x = v.at(vbase + j * dv + d);
            vabs[d] += std::fabs(static_cast<double>(x));
            vweighted[d] += (ref.w[j] + tol_w) * std::fabs(static_cast<double>(x));
            if (std::isnan(x)) v_nan_col[d] = 1;
          }
        }
        bool vtame_all = true, vtame = true;
        for (size_t d = 0; d < dv; ++d) {
          vtame_all = vtame_all && vabs_all[d] <= kTame;
          vtame = vtame && vabs[d] <= kTame;
        }
        const bool lenient_clean = q_fin && kv_all_finite && mask_ok && ref.tame_visible && vtame_all;
        const bool strict_clean = q_fin && unmasked_kv_finite && mask_ok && ref.tame_unmasked && vtame;
        const float* wrow = o.need_weights ? res.weights.data.data() + row * lk : nullptr;
        const float* orow = res.output.data.data() + row * dv;
        std::string where = "SDPA batch item " + std::to_string(b) + ", query row " + std::to_string(i) + ": ";
        if (lenient_clean || (opts_.strict_nan && strict_clean)) {
          const bool compare = ref.delta <= 1e-2;
          if (wrow) {
            const std::string e = CheckWeightsRow(wrow, lk, ref, tol_w, compare);
            if (!e.empty()) return Finding(where + e);
          }
          for (size_t d = 0; d < dv; ++d) {
            const double ref_o = [&] {
              double acc = 0;
              for (size_t j = 0; j < lk; ++j) {
                if (ref.unmasked[j]) acc += ref.w[j] * v.at(vbase + j * dv + d);
              }
              return acc;
            }();
            const double x = orow[d];
            if (ref.fully_masked ? x != 0.0 : !std::isfinite(x)) {
              return Finding(where + "output[" + std::to_string(d) + "] = " + FloatStr(orow[d]) +
                             (ref.fully_masked ? ", expected 0 (fully masked row)" : ", expected a finite value"));
            }
            const double tol_o = (2e-5 + 4 * ref.delta + kEps * (static_cast<double>(lk) + 4)) * vweighted[d] + 1e-30;
            if (compare && !(std::fabs(x - ref_o) <= tol_o)) {
              std::ostringstream os;
              os << where << "output[" << d << "] = " << FloatStr(orow[d]) << ", reference " << ref_o << " (tolerance "
                 << tol_o << ")";
              return Finding(os.str());
            }
          }
        }
        // A NaN in a visible value row reaches the output column (IEEE), whatever the mode.
        if (q_fin && mask_ok && unmasked_k_finite && ref.tame_unmasked && !ref.fully_masked) {
          for (size_t d = 0; d < dv; ++d) {
            if (v_nan_col[d] && !std::isnan(orow[d])) {
              return Finding(where + "value holds NaN in column " + std::to_string(d) +
                             " of a key this row attends, but output[" + std::to_string(d) + "] = " +
                             FloatStr(orow[d]));
            }
          }
        }
        if (opts_.strict_nan) {
          bool nan_src = q_nan || mask_nan;
          for (size_t j = 0; j < lk; ++j) nan_src = nan_src || (ref.unmasked[j] && k_nan[j]);
          const bool posinf_src = mask_posinf;
          // A row that attends no key (all masked, or Lk = 0) is 0 whatever its query holds.
          if ((nan_src || posinf_src) && !ref.fully_masked) {
            const char* why = q_nan ? "query row holds NaN" : mask_nan ? "mask row holds NaN" : posinf_src && !nan_src
                                                                                               ? "mask row holds +inf"
                                                                                               : "an attended key holds NaN";
            if (wrow && !AllNaN(wrow, lk)) {
              return Finding(where + why + ", but the weight row is not all NaN (strict NaN policy)");
            }
            if (!AllNaN(orow, dv)) return Finding(where + why + ", but the output row is not all NaN (strict NaN policy)");
          }
        }
      }
    }
  }

  // ----------------------------------------------------------------------------------------------- MHA
  struct Params {
    // PyTorch layouts, float64: wq (E, E), wk (E, kdim), wv (E, vdim), wo (E, E), biases (E) (zeros when absent).
    std::vector<double> wq, wk, wv, wo, bq, bk, bv, bo, bias_k, bias_v;
    bool finite = true;
  };

  static bool SameBits(const std::map<std::string, attnlab::Tensor>& a, const std::map<std::string, attnlab::Tensor>& b) {
    if (a.size() != b.size()) return false;
    for (const auto& [name, t] : a) {
      const auto it = b.find(name);
      if (it == b.end() || it->second.shape != t.shape || it->second.data.size() != t.data.size()) return false;
      if (!BitsEqual(t.data, it->second.data)) return false;
    }
    return true;
  }

  void RunMha() {
    const uint8_t c1 = r_.U8(), c2 = r_.U8();
    attnlab::MhaConfig c;
    if (c1 < 240) {
      c.num_heads = 1 + c1 % 4;
      c.embed_dim = c.num_heads * (1 + (c1 / 4) % 4);
    } else {
      c.embed_dim = Dim(r_);
      c.num_heads = Dim(r_);
    }
    c.bias = !(c2 & 1);
    c.add_bias_kv = c2 & 2;
    c.add_zero_attn = c2 & 4;
    c.batch_first = c2 & 8;
    auto side_dim = [&]() -> int64_t {
      const uint8_t b = r_.U8();
      if (b < 224) return 1 + b % 8;
      switch (b % 8) {
        case 0: return -1;
        case 1: return 0;
        case 2: return -2;
        case 3: return c.embed_dim;
        default: return HostileDim(r_.U8());
      }
    };
    if (c2 & 16) c.kdim = side_dim();
    if (c2 & 32) c.vdim = side_dim();
    const uint64_t seed = r_.U8();
    {
      std::ostringstream os;
      os << "MHA embed_dim " << c.embed_dim << ", num_heads " << c.num_heads << ", bias " << c.bias
         << ", add_bias_kv " << c.add_bias_kv << ", add_zero_attn " << c.add_zero_attn << ", kdim " << c.kdim
         << ", vdim " << c.vdim << ", batch_first " << c.batch_first << ", seed " << seed;
      case_ = os.str();
    }
    const int64_t e = c.embed_dim, h = c.num_heads;
    const int64_t kdim = c.kdim == -1 ? e : c.kdim, vdim = c.vdim == -1 ? e : c.vdim;
    bool valid = e > 0 && h > 0 && e % h == 0 && (c.kdim == -1 || c.kdim > 0) && (c.vdim == -1 || c.vdim > 0);
    valid = valid && ModelNumel({4, e, e}).ok && ModelNumel({e, kdim}).ok && ModelNumel({e, vdim}).ok;
    if (valid && static_cast<double>(e) * static_cast<double>(2 * e + kdim + vdim + 8) > 1e5) return;  // too big

    std::unique_ptr<attnlab::MultiHeadAttention> mha;
    if (!Invoke("MultiHeadAttention(config)", valid,
                [&] { mha = std::make_unique<attnlab::MultiHeadAttention>(c, seed); })) {
      return;
    }
    // Parameter names, order and shapes are PyTorch's.
    std::vector<std::pair<std::string, Shape>> expected_shapes;
    const bool packed = kdim == e && vdim == e;
    if (packed) {
      expected_shapes.push_back({"in_proj_weight", {3 * e, e}});
    } else {
      expected_shapes.push_back({"q_proj_weight", {e, e}});
      expected_shapes.push_back({"k_proj_weight", {e, kdim}});
      expected_shapes.push_back({"v_proj_weight", {e, vdim}});
    }
    if (c.bias) expected_shapes.push_back({"in_proj_bias", {3 * e}});
    if (c.add_bias_kv) {
      expected_shapes.push_back({"bias_k", {1, 1, e}});
      expected_shapes.push_back({"bias_v", {1, 1, e}});
    }
    expected_shapes.push_back({"out_proj.weight", {e, e}});
    if (c.bias) expected_shapes.push_back({"out_proj.bias", {e}});
    if (mha->ParameterShapes() != expected_shapes) return Finding("ParameterShapes() differs from PyTorch's names/shapes");
    if (mha->config().kdim != kdim || mha->config().vdim != vdim) return Finding("config() does not resolve kdim/vdim");

    const int ops = 1 + r_.U8() % 3;
    const std::string base = case_;
    for (int op = 0; op < ops && !Failed(); ++op) {
      const uint8_t which = r_.U8();
      case_ = base + "; operation " + std::to_string(op) + ": ";
      if (which % 4 == 3) {
        MhaLoad(*mha, expected_shapes);
      } else {
        MhaForward(*mha, c, kdim, vdim);
      }
    }
  }

  void MhaLoad(attnlab::MultiHeadAttention& mha, const std::vector<std::pair<std::string, Shape>>& shapes) {
    const uint8_t variant = r_.U8() % 6;
    const size_t victim = r_.U8() % shapes.size();
    std::vector<std::pair<std::string, TensorBuf>> entries;
    for (size_t i = 0; i < shapes.size(); ++i) {
      if (variant == 1 && i == victim) continue;  // missing
      TensorBuf t;
      t.shape = shapes[i].second;
      if (variant == 3 && i == victim) {  // wrong shape
        Shape* s[1] = {&t.shape};
        const uint8_t how = r_.U8();
        if (how % 3 == 0 && !t.shape.empty()) {
          t.shape[r_.U8() % t.shape.size()] = Dim(r_);
        } else if (how % 3 == 1) {
          t.shape.push_back(1);
        } else {
          PerturbShapes(r_, s, 1);
          if (t.shape == shapes[i].second && !t.shape.empty()) t.shape.pop_back();
        }
      }
      if (variant == 4 && i == victim) t.null_ptr = true;
      entries.push_back({shapes[i].first, std::move(t)});
    }
    if (variant == 5) entries.clear();
    if (variant == 2) {
      static const char* kNames[] = {"in_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight",
                                     "in_proj_bias",   "bias_k",        "bias_v",        "out_proj.weight",
                                     "out_proj.bias",  "",              "in_proj_weight ", "weight"};
      const std::string name = kNames[r_.U8() % 12];
      bool known = false;
      for (const auto& s : shapes) known = known || s.first == name;
      if (!known) {
        TensorBuf t;
        t.shape = {Dim(r_)};
        entries.push_back({name, std::move(t)});
      }
    }
    bool valid = true;
    std::map<std::string, attnlab::TensorView> dict;
    std::string desc = "LoadStateDict {";
    for (auto& [name, t] : entries) {
      t.Fill(r_);
      dict[name] = t.View();
      desc += "\"" + name + "\": " + DescribeTensor("", t) + "; ";
    }
    case_ += desc + "}";
    // The model: exactly the names of ParameterShapes with their shapes, data for every element.
    valid = dict.size() == shapes.size();
    for (const auto& [name, shape] : shapes) {
      bool found = false;
      for (const auto& [n2, t] : entries) {
        if (n2 == name) {
          found = true;
          valid = valid && t.shape == shape && t.ModelValid();
        }
      }
      valid = valid && found;
    }
    for (const auto& [name, t] : entries) {
      if (valid && !t.allocated) return;  // too big for the fuzzer to allocate (a legitimate, large module)
    }
    const auto before = mha.StateDict();
    const bool ok = Invoke("LoadStateDict", valid, [&] { mha.LoadStateDict(dict); });
    if (Failed()) return;
    const auto after = mha.StateDict();
    if (!ok) {
      if (!SameBits(before, after)) Finding("a rejected LoadStateDict changed the parameters");
      return;
    }
    std::map<std::string, attnlab::Tensor> loaded;
    for (const auto& [name, t] : entries) {
      loaded[name] = attnlab::Tensor{std::vector<float>(t.data.get(), t.data.get() + t.n()), t.shape};
    }
    if (!SameBits(loaded, after)) Finding("StateDict() after LoadStateDict differs from what was loaded");
  }

  static Params ReadParams(const attnlab::MultiHeadAttention& mha) {
    const attnlab::MhaConfig& c = mha.config();
    const size_t e = static_cast<size_t>(c.embed_dim), kdim = static_cast<size_t>(c.kdim),
                 vdim = static_cast<size_t>(c.vdim);
    const auto sd = mha.StateDict();
    Params p;
    auto get = [&](const char* name, size_t offset, size_t count) {
      std::vector<double> out(count, 0.0);
      const auto it = sd.find(name);
      if (it == sd.end()) return out;
      for (size_t i = 0; i < count; ++i) {
        out[i] = it->second.data[offset + i];
        p.finite = p.finite && std::isfinite(out[i]);
      }
      return out;
    };
    if (sd.count("in_proj_weight")) {
      p.wq = get("in_proj_weight", 0, e * e);
      p.wk = get("in_proj_weight", e * e, e * e);
      p.wv = get("in_proj_weight", 2 * e * e, e * e);
    } else {
      p.wq = get("q_proj_weight", 0, e * e);
      p.wk = get("k_proj_weight", 0, e * kdim);
      p.wv = get("v_proj_weight", 0, e * vdim);
    }
    p.bq = get("in_proj_bias", 0, e);
    p.bk = get("in_proj_bias", e, e);
    p.bv = get("in_proj_bias", 2 * e, e);
    p.bias_k = get("bias_k", 0, e);
    p.bias_v = get("bias_v", 0, e);
    p.wo = get("out_proj.weight", 0, e * e);
    p.bo = get("out_proj.bias", 0, e);
    return p;
  }

  void MhaForward(attnlab::MultiHeadAttention& mha, const attnlab::MhaConfig& c, int64_t kdim, int64_t vdim) {
    const uint8_t fb = r_.U8();
    const bool batched = !(fb & 1);
    attnlab::MhaForwardOptions o;
    o.need_weights = !(fb & 2);
    o.average_attn_weights = !(fb & 4);
    const int64_t n = batched ? BatchDim(r_) : 1, l = Dim(r_), s = Dim(r_);
    const int64_t e = c.embed_dim, h = c.num_heads;
    auto layout = [&](int64_t len, int64_t feat) -> Shape {
      if (!batched) return {len, feat};
      return c.batch_first ? Shape{n, len, feat} : Shape{len, n, feat};
    };
    TensorBuf q, k, v;
    q.shape = layout(l, e);
    k.shape = layout(s, kdim);
    v.shape = layout(s, vdim);
    Shape* shapes[3] = {&q.shape, &k.shape, &v.shape};
    PerturbShapes(r_, shapes, 3);
    MaskBuf kpm, am;
    DecodeMask(r_, kpm, {batched ? Shape{n, s} : Shape{s}});
    // N * num_heads wraps (defined, unsigned) for hostile N: then the shape is simply a wrong one.
    const int64_t nh = static_cast<int64_t>(static_cast<uint64_t>(n) * static_cast<uint64_t>(h));
    DecodeMask(r_, am, {Shape{l, s}, Shape{nh, l, s}});
    uint8_t nulls = 0;
    if (fb & 8) nulls = r_.U8();
    q.null_ptr = nulls & 1;
    k.null_ptr = nulls & 2;
    v.null_ptr = nulls & 4;
    kpm.null_ptr = nulls & 8;
    am.null_ptr = nulls & 16;
    q.Fill(r_);
    k.Fill(r_);
    v.Fill(r_);
    kpm.Fill(r_);
    am.Fill(r_);
    {
      std::ostringstream os;
      os << "Forward " << DescribeTensor("query", q) << "; " << DescribeTensor("key", k) << "; "
         << DescribeTensor("value", v) << "; key_padding_mask " << kpm.Describe() << "; attn_mask " << am.Describe()
         << "; need_weights " << o.need_weights << "; average_attn_weights " << o.average_attn_weights;
      case_ += os.str();
    }

    // The model (torch.nn.MultiheadAttention's shape rules).
    const size_t rank = q.shape.size();
    bool valid = (rank == 2 || rank == 3) && k.shape.size() == rank && v.shape.size() == rank && q.ModelValid() &&
                 k.ModelValid() && v.ModelValid() && kpm.ModelValid() && am.ModelValid();
    int64_t N = 0, L = 0, S = 0, s_all = 0;
    Shape w_shape;
    if (valid) {
      const bool bt = rank == 3;
      auto seq = [&](const Shape& t) { return !bt ? t[0] : c.batch_first ? t[1] : t[0]; };
      auto bsz = [&](const Shape& t) { return !bt ? int64_t{1} : c.batch_first ? t[0] : t[1]; };
      N = bsz(q.shape);
      L = seq(q.shape);
      S = seq(k.shape);
      valid = bsz(k.shape) == N && bsz(v.shape) == N && seq(v.shape) == S && q.shape.back() == e &&
              k.shape.back() == kdim && v.shape.back() == vdim;
      if (valid && kpm.kind != Mask::Kind::kNone) valid = kpm.shape == (bt ? Shape{N, S} : Shape{S});
      if (valid && am.kind != Mask::Kind::kNone) {
        const __int128 nh = static_cast<__int128>(N) * h;
        valid = am.shape == Shape{L, S} ||
                (am.shape.size() == 3 && static_cast<__int128>(am.shape[0]) == nh && am.shape[1] == L && am.shape[2] == S);
      }
      s_all = S + (c.add_bias_kv ? 1 : 0) + (c.add_zero_attn ? 1 : 0);
      if (valid) {
        w_shape = o.average_attn_weights ? Shape{N, L, s_all} : Shape{N, h, L, s_all};
        if (!bt) w_shape.erase(w_shape.begin());
        valid = (!o.need_weights || ModelNumel(w_shape).ok) && ModelNumel({N, s_all, e}).ok;
      }
    }
    if (TooBigToAllocate({&q, &k, &v}) || (kpm.kind != Mask::Kind::kNone && kpm.numel.ok && !kpm.allocated) ||
        (am.kind != Mask::Kind::kNone && am.numel.ok && !am.allocated)) {
      return;  // see RunSdpa
    }
    if (valid) {
      if (!q.allocated || !k.allocated || !v.allocated || (kpm.kind != Mask::Kind::kNone && !kpm.allocated) ||
          (am.kind != Mask::Kind::kNone && !am.allocated)) {
        return;
      }
      const double nd = static_cast<double>(N), ld = static_cast<double>(L), sd = static_cast<double>(s_all),
                   ed = static_cast<double>(e);
      const double work = nd * (ld * ed * 2 * ed + sd * ed * static_cast<double>(kdim + vdim) + ld * sd * 2 * ed +
                                (o.need_weights ? ld * sd * static_cast<double>(h) * 16 : 0.0));
      if (work > kMaxWork) return;
    }
    attnlab::AttentionResult res;
    auto call = [&] {
      attnlab::MhaForwardOptions oo = o;
      oo.key_padding_mask = kpm.View();
      oo.attn_mask = am.View();
      return mha.Forward(q.View(), k.View(), v.View(), oo);
    };
    if (!Invoke("Forward", valid, [&] { res = call(); })) return;
    if (res.output.shape != q.shape || res.output.data.size() != q.numel.n) {
      return Finding("output shape " + ShapeStr(res.output.shape) + ", expected " + ShapeStr(q.shape));
    }
    if (o.need_weights ? (res.weights.shape != w_shape || res.weights.data.size() != ModelNumel(w_shape).n)
                       : (!res.weights.shape.empty() || !res.weights.data.empty())) {
      return Finding("weights shape " + ShapeStr(res.weights.shape) + ", expected " +
                     (o.need_weights ? ShapeStr(w_shape) : std::string("none")));
    }
    {
      const attnlab::AttentionResult again = call();
      if (!BitsEqual(again.output.data, res.output.data) || !BitsEqual(again.weights.data, res.weights.data)) {
        return Finding("a repeated Forward is not bit-identical");
      }
    }
    if (static_cast<double>(N) * static_cast<double>(std::max<int64_t>(L, 1)) > 1e5) return;  // see RunSdpa
    CheckMhaRows(mha, c, kdim, vdim, q, k, v, kpm, am, o, res, N, L, S, rank == 3);
  }

  void CheckMhaRows(const attnlab::MultiHeadAttention& mha, const attnlab::MhaConfig& c, int64_t kdim_, int64_t vdim_,
                    const TensorBuf& q, const TensorBuf& k, const TensorBuf& v, const MaskBuf& kpm,
                    const MaskBuf& am, const attnlab::MhaForwardOptions& o, const attnlab::AttentionResult& res,
                    int64_t N_, int64_t L_, int64_t S_, bool batched) {
    const Params p = ReadParams(mha);
    const size_t e = static_cast<size_t>(c.embed_dim), H = static_cast<size_t>(c.num_heads), hd = e / H;
    const size_t kdim = static_cast<size_t>(kdim_), vdim = static_cast<size_t>(vdim_);
    const size_t N = static_cast<size_t>(N_), L = static_cast<size_t>(L_), S = static_cast<size_t>(S_);
    const size_t extra_k = c.add_bias_kv ? 1 : 0;
    const size_t s_all = S + extra_k + (c.add_zero_attn ? 1 : 0);
    const bool bf = c.batch_first || !batched;
    auto tok = [&](size_t b, size_t t, size_t len) { return bf ? b * len + t : t * N + b; };
    const double scale = 1.0f / std::sqrt(static_cast<float>(hd));
    // Projection of one token: value and abs bound; `finite` tracks non-finite inputs.
    auto project = [&](const float* x, size_t in, const std::vector<double>& w, const std::vector<double>& bias,
                       std::vector<double>& out, std::vector<double>& aout) {
      out.assign(e, 0.0);
      aout.assign(e, 0.0);
      for (size_t oo = 0; oo < e; ++oo) {
        double acc = bias[oo], a = std::fabs(bias[oo]);
        for (size_t i = 0; i < in; ++i) {
          acc += x[i] * w[oo * in + i];
          a += std::fabs(x[i] * w[oo * in + i]);
        }
        out[oo] = acc;
        aout[oo] = std::isnan(a) ? kInfD : a;
      }
    };
    auto row_finite = [](const float* x, size_t n, bool* has_nan) {
      bool fin = true;
      for (size_t i = 0; i < n; ++i) {
        fin = fin && std::isfinite(x[i]);
        if (has_nan && std::isnan(x[i])) *has_nan = true;
      }
      return fin;
    };
    const bool broadcast_am = am.kind != Mask::Kind::kNone && am.shape.size() == 2;
    for (size_t b = 0; b < N && !Failed(); ++b) {
      // Projected keys and values of item b (s_all rows), with abs bounds and finiteness of the source tokens.
      std::vector<std::vector<double>> kp(s_all), akp(s_all), vp(s_all), avp(s_all);
      std::vector<char> k_fin(s_all, 1), v_fin(s_all, 1), k_nan(s_all, 0), v_nan(s_all, 0);
      bool kv_all_finite = true;
      for (size_t j = 0; j < S; ++j) {
        const float* kt = k.data.get() + tok(b, j, S) * kdim;
        const float* vt = v.data.get() + tok(b, j, S) * vdim;
        bool kn = false, vn = false;
        k_fin[j] = row_finite(kt, kdim, &kn);
        v_fin[j] = row_finite(vt, vdim, &vn);
        k_nan[j] = kn;
        v_nan[j] = vn;
        kv_all_finite = kv_all_finite && k_fin[j] && v_fin[j];
        project(kt, kdim, p.wk, p.bk, kp[j], akp[j]);
        project(vt, vdim, p.wv, p.bv, vp[j], avp[j]);
      }
      for (size_t j = S; j < s_all; ++j) {
        const bool bias_row = j == S && c.add_bias_kv;
        kp[j].assign(e, 0.0);
        vp[j].assign(e, 0.0);
        if (bias_row) {
          kp[j] = p.bias_k;
          vp[j] = p.bias_v;
        }
        akp[j] = kp[j];
        avp[j] = vp[j];
        for (double& x : akp[j]) x = std::fabs(x);
        for (double& x : avp[j]) x = std::fabs(x);
      }
      for (size_t i = 0; i < L && !Failed(); ++i) {
        const float* qt = q.data.get() + tok(b, i, L) * e;
        bool q_nan = false;
        const bool q_fin = row_finite(qt, e, &q_nan);
        std::vector<double> qp, aqp;
        project(qt, e, p.wq, p.bq, qp, aqp);
        bool proj_tame = true;
        for (size_t d = 0; d < e; ++d) proj_tame = proj_tame && aqp[d] <= kTame;
        std::vector<RowRef> refs(H);
        std::vector<char> head_nan_src(H, 0), head_value_nan(H, 0);
        bool masks_ok = true, lenient_tame = proj_tame, strict_tame = proj_tame, unmasked_kv_finite = true,
             unmasked_k_finite = true;
        std::vector<double> ctx(e, 0.0), actx(e, 0.0), dctx(e, 0.0);
        for (size_t hh = 0; hh < H; ++hh) {
          RowInput in;
          in.lk = s_all;
          in.dot.assign(s_all, 0.0);
          in.absdot.assign(s_all, 0.0);
          in.m.assign(s_all, 0.0);
          in.visible.assign(s_all, 1);
          in.scale = scale;
          in.coef = static_cast<double>(e + kdim + hd + 10);
          bool mask_nan = false, mask_posinf = false;
          for (size_t j = 0; j < s_all; ++j) {
            double dot = 0, ad = 0;
            bool key_tame = true;  // a projected key beyond float32 is ±inf there, and 0 · inf = NaN
            for (size_t d = hh * hd; d < (hh + 1) * hd; ++d) {
              dot += qp[d] * kp[j][d];
              ad += aqp[d] * akp[j][d];
              key_tame = key_tame && akp[j][d] <= kTame;
            }
            if (!key_tame) ad = kInfD;
            in.dot[j] = dot;
            in.absdot[j] = std::isnan(ad) ? kInfD : ad;
            if (j < S) {
              double rb = 0, kb = 0;
              if (am.kind != Mask::Kind::kNone) {
                const size_t base = broadcast_am ? 0 : (b * H + hh) * L * S;
                rb = am.Additive(base + i * S + j, /*masked_when=*/true);
              }
              if (kpm.kind != Mask::Kind::kNone) kb = kpm.Additive(b * S + j, /*masked_when=*/true);
              in.m[j] = rb + kb;
              mask_nan = mask_nan || std::isnan(in.m[j]);
              mask_posinf = mask_posinf || in.m[j] == kInfD;
            }
          }
          refs[hh] = AttendRow(in);
          const RowRef& ref = refs[hh];
          masks_ok = masks_ok && !mask_nan && !mask_posinf;
          lenient_tame = lenient_tame && ref.tame_visible;
          strict_tame = strict_tame && ref.tame_unmasked;
          bool k_nan_unmasked = false;
          for (size_t j = 0; j < s_all; ++j) {
            if (!ref.unmasked[j]) continue;
            unmasked_kv_finite = unmasked_kv_finite && k_fin[j] && v_fin[j];
            unmasked_k_finite = unmasked_k_finite && k_fin[j];
            k_nan_unmasked = k_nan_unmasked || k_nan[j];
            head_value_nan[hh] = head_value_nan[hh] || v_nan[j];
          }
          head_nan_src[hh] = q_nan || mask_nan || mask_posinf || k_nan_unmasked;
          const double tol_w = 1e-5 + 4 * ref.delta;
          for (size_t d = hh * hd; d < (hh + 1) * hd; ++d) {
            double acc = 0, a = 0, a_all = 0;
            for (size_t j = 0; j < s_all; ++j) {
              a_all += avp[j][d];
              if (!ref.unmasked[j]) continue;
              acc += ref.w[j] * vp[j][d];
              a += (ref.w[j] + tol_w) * avp[j][d];
              strict_tame = strict_tame && avp[j][d] <= kTame;  // the float projection itself must not overflow
            }
            ctx[d] = acc;
            actx[d] = a;
            dctx[d] = (2e-5 + 4 * ref.delta + kEps * static_cast<double>(vdim + s_all + 8)) * a;
            lenient_tame = lenient_tame && a_all <= kTame;
            strict_tame = strict_tame && a <= kTame;
          }
        }
        // Output token and its tolerance.
        std::vector<double> out(e), tol(e);
        for (size_t oo = 0; oo < e; ++oo) {
          double acc = p.bo[oo], a = std::fabs(p.bo[oo]), err = 0;
          for (size_t cc = 0; cc < e; ++cc) {
            acc += ctx[cc] * p.wo[oo * e + cc];
            a += actx[cc] * std::fabs(p.wo[oo * e + cc]);
            err += dctx[cc] * std::fabs(p.wo[oo * e + cc]);
          }
          out[oo] = acc;
          tol[oo] = 4 * err + (1e-5 + kEps * static_cast<double>(e + 4)) * a + 1e-30;
          lenient_tame = lenient_tame && a <= kTame;
          strict_tame = strict_tame && a <= kTame;
        }
        const bool lenient_clean = p.finite && q_fin && kv_all_finite && masks_ok && lenient_tame;
        const bool strict_clean = p.finite && q_fin && unmasked_kv_finite && masks_ok && strict_tame;
        const float* orow = res.output.data.data() + tok(b, i, L) * e;
        const std::string where = "MHA item " + std::to_string(b) + ", query position " + std::to_string(i) + ": ";
        // Weights of head hh / the averaged row.
        auto wrow = [&](size_t hh) -> const float* {
          if (!o.need_weights) return nullptr;
          if (o.average_attn_weights) return res.weights.data.data() + (b * L + i) * s_all;
          return res.weights.data.data() + ((b * H + hh) * L + i) * s_all;
        };
        if (lenient_clean || (opts_.strict_nan && strict_clean)) {
          double max_delta = 0;
          for (const RowRef& ref : refs) max_delta = std::max(max_delta, ref.delta);
          const bool compare = max_delta <= 1e-2;
          if (o.need_weights && !o.average_attn_weights) {
            for (size_t hh = 0; hh < H; ++hh) {
              const std::string err = CheckWeightsRow(wrow(hh), s_all, refs[hh], 1e-5 + 4 * refs[hh].delta, compare);
              if (!err.empty()) return Finding(where + "head " + std::to_string(hh) + ": " + err);
            }
          } else if (o.need_weights) {
            const float* w = wrow(0);
            double sum = 0, expect_sum = 0;
            for (const RowRef& ref : refs) expect_sum += ref.fully_masked ? 0.0 : 1.0 / static_cast<double>(H);
            for (size_t j = 0; j < s_all; ++j) {
              double ref_w = 0, tol_w = 1e-6;
              for (const RowRef& ref : refs) {
                ref_w += ref.w[j] / static_cast<double>(H);
                tol_w += (1e-5 + 4 * ref.delta) / static_cast<double>(H);
              }
              if (!(w[j] >= 0.0f && w[j] <= 1.0f + 1e-6f)) {
                return Finding(where + "averaged weight[" + std::to_string(j) + "] = " + FloatStr(w[j]) + " outside [0, 1]");
              }
              if (compare && !(std::fabs(w[j] - ref_w) <= tol_w)) {
                std::ostringstream os;
                os << where << "averaged weight[" << j << "] = " << FloatStr(w[j]) << ", reference " << ref_w
                   << " (tolerance " << tol_w << ")";
                return Finding(os.str());
              }
              sum += w[j];
            }
            if (!(std::fabs(sum - expect_sum) <= 1e-5 + kEps * static_cast<double>(s_all))) {
              std::ostringstream os;
              os << where << "averaged weights sum to " << sum << ", expected " << expect_sum
                 << " (the share of heads that are not fully masked)";
              return Finding(os.str());
            }
          }
          for (size_t oo = 0; oo < e; ++oo) {
            if (!std::isfinite(orow[oo])) {
              return Finding(where + "output[" + std::to_string(oo) + "] = " + FloatStr(orow[oo]) + ", expected finite");
            }
            if (compare && !(std::fabs(orow[oo] - out[oo]) <= tol[oo])) {
              std::ostringstream os;
              os << where << "output[" << oo << "] = " << FloatStr(orow[oo]) << ", reference " << out[oo]
                 << " (tolerance " << tol[oo] << ")";
              return Finding(os.str());
            }
          }
        }
        // NaN in a value token that some head attends reaches the whole output token (IEEE), whatever the mode.
        if (p.finite && q_fin && masks_ok && unmasked_k_finite && strict_tame) {
          for (size_t hh = 0; hh < H; ++hh) {
            if (head_value_nan[hh] && !refs[hh].fully_masked && !AllNaN(orow, e)) {
              return Finding(where + "a value token attended by head " + std::to_string(hh) +
                             " holds NaN, but the output token is not all NaN");
            }
          }
        }
        if (opts_.strict_nan && p.finite) {
          bool any = false;
          for (size_t hh = 0; hh < H; ++hh) {
            if (!head_nan_src[hh] || refs[hh].fully_masked) continue;  // a head that attends nothing stays 0
            any = true;
            const float* w = wrow(hh);
            if (w && !AllNaN(w, s_all)) {
              return Finding(where + "head " + std::to_string(hh) +
                             " has a NaN source (query, mask or attended key) but its weight row is not all NaN "
                             "(strict NaN policy)");
            }
          }
          if (any && !AllNaN(orow, e)) {
            return Finding(where + "a head has a NaN source but the output token is not all NaN (strict NaN policy)");
          }
        }
      }
    }
  }

  Reader r_;
  Options opts_;
  std::string finding_;
  std::string case_;
  std::string target_name_;
};

// Decodes and runs one input; "" when every invariant held, else the first finding with the decoded case.
inline std::string RunOne(const uint8_t* data, size_t size, const Options& opts) {
  return Session(data, size, opts).Run();
}

}  // namespace attnlab_fuzz

#endif  // ATTNLAB_TESTS_FUZZ_FUZZ_TARGET_H_
