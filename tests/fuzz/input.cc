// Fuzz input decoding (input.h).
#include "tests/fuzz/input.h"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace attnlab_fuzz {

int64_t HostileDim(uint8_t k) {
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

int64_t Dim(Reader& r) {
  const uint8_t b = r.U8();
  return b < 240 ? b % 9 : HostileDim(b - 240);
}

int64_t BatchDim(Reader& r) {
  const uint8_t b = r.U8();
  return b < 240 ? b % 4 : HostileDim(b - 240);
}

float SpecialValue(Reader& r, uint8_t k) {
  const float inf = std::numeric_limits<float>::infinity();
  const float flt_max = std::numeric_limits<float>::max();
  switch (k % 32) {
    case 0:
      return std::numeric_limits<float>::quiet_NaN();
    case 1:
      return inf;
    case 2:
      return -inf;
    case 3:
      return 0.0f;
    case 4:
      return -0.0f;
    case 5:
      return 1e30f;
    case 6:
      return -1e30f;
    case 7:
      return flt_max;
    case 8:
      return -flt_max;
    case 9:
      return 1e-40f;  // denormal
    case 10:
      return -1e-40f;
    case 11:
      return std::numeric_limits<float>::denorm_min();
    case 12:
      return std::numeric_limits<float>::min();
    case 13:
      return 1e-30f;
    case 14:
      return 1e10f;
    case 15:
      return -1e10f;
    case 16:
      return 1e20f;
    case 17:
      return -1e20f;
    case 18:
      return 1e37f;
    case 19:
      return 65504.0f;
    case 20:
      return 100.0f;
    case 21:
      return -100.0f;
    case 22:
      return 1000.0f;
    case 23:
      return -1000.0f;
    case 24:
      return 88.7f;
    case 25:
      return -88.7f;
    case 26:
      return 104.0f;
    case 27:
      return -104.0f;
    case 28:
      return 0.5f;
    case 29:
      return 1.0f / 3.0f;
    case 30: {  // any bit pattern (signalling NaNs, NaN payloads, …)
      const uint32_t bits = r.U32();
      float f;
      std::memcpy(&f, &bits, sizeof f);
      return f;
    }
    default:
      return -std::numeric_limits<float>::quiet_NaN();
  }
}

float Value(Reader& r) {
  const uint8_t b = r.U8();
  if (b < 224) return (static_cast<int>(b) - 112) / 16.0f;
  return SpecialValue(r, b - 224);
}

float MaskValue(Reader& r) {
  const uint8_t b = r.U8();
  if (b < 96) return 0.0f;
  if (b < 160) return -std::numeric_limits<float>::infinity();
  if (b < 208) return (static_cast<int>(b) - 184) / 8.0f;
  return Value(r);
}

float ScaleValue(Reader& r) {
  const uint8_t b = r.U8();
  if (b < 160) return (static_cast<int>(b) - 32) / 64.0f;
  return Value(r);
}

Numel ModelNumel(const Shape& shape) {
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

std::string ShapeStr(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

std::string FloatStr(float x) {
  if (std::isnan(x)) return std::signbit(x) ? "-nan" : "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(x));
  return buf;
}

void TensorBuf::Fill(Reader& r) {
  numel = ModelNumel(shape);
  if (numel.ok && numel.n <= kMaxAlloc) {
    allocated = true;
    data.reset(new float[numel.n]);
    for (uint64_t i = 0; i < numel.n; ++i) data[i] = Value(r);
  } else {
    data.reset(new float[16]());
  }
}

void MaskBuf::Fill(Reader& r) {
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

Mask MaskBuf::View() const {
  switch (kind) {
    case Mask::Kind::kBool:
      return Mask::Bool(null_ptr ? nullptr : bools.get(), shape);
    case Mask::Kind::kFloat:
      return Mask::Float(null_ptr ? nullptr : floats.get(), shape);
    default:
      return Mask::None();
  }
}

namespace {

// " {v0, v1, …}" of the n values item(i) writes when the buffer was allocated and holds at most 256; else "".
template <class Item>
std::string ListValues(bool allocated, uint64_t n, const Item& item) {
  if (!allocated || n > 256) return "";
  std::string s = " {";
  for (uint64_t i = 0; i < n; ++i) s += (i ? ", " : "") + item(i);
  return s + "}";
}

}  // namespace

std::string MaskBuf::Describe() const {
  if (kind == Mask::Kind::kNone) return "none";
  return std::string(kind == Mask::Kind::kBool ? "bool " : "float ") + ShapeStr(shape) +
         (null_ptr ? " (null data)" : "") + ListValues(allocated, numel.n, [&](uint64_t i) {
           return kind == Mask::Kind::kBool ? std::to_string(bools[i]) : FloatStr(floats[i]);
         });
}

std::string DescribeTensor(const char* name, const TensorBuf& t) {
  return std::string(name) + " " + ShapeStr(t.shape) + (t.null_ptr ? " (null data)" : "") +
         ListValues(t.allocated, t.numel.n, [&](uint64_t i) { return FloatStr(t.data[i]); });
}

void PerturbShapes(Reader& r, Shape* const* shapes, size_t count) {
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

void DecodeMask(Reader& r, MaskBuf& m, const std::vector<Shape>& valid) {
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

}  // namespace attnlab_fuzz
