// Fuzz input decoding: a byte reader (bytes past the end read as 0), decoders of dimensions (mostly small, 1/16
// hostile or tile-crossing) and values (ordinary, or specials: NaN, ±inf, huge, denormal, any bit pattern), the
// buffers the fuzzer owns and the model of the library's size rules. tests/fuzz/make_corpus.py writes seeds in
// this format.
#ifndef ATTNLAB_TESTS_FUZZ_INPUT_H_
#define ATTNLAB_TESTS_FUZZ_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "attnlab/attention.h"

namespace attnlab_fuzz {

using attnlab::Mask;
using attnlab::Shape;

constexpr uint64_t kMaxAlloc = 1 << 14;  // elements per tensor the fuzzer allocates

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
int64_t HostileDim(uint8_t k);
// 0..8 mostly; 1/16 of the time a hostile or tile-crossing dimension.
int64_t Dim(Reader& r);
// Batch dimensions: 0..3 mostly.
int64_t BatchDim(Reader& r);
// Special value k % 32 (k = 30: any bit pattern, read from r).
float SpecialValue(Reader& r, uint8_t k);
// Ordinary values in [-7, 7) in steps of 1/16 (7/8 of bytes), else a special one.
float Value(Reader& r);
// Float mask elements: 0, -inf, small, or any Value.
float MaskValue(Reader& r);
// SDPA scale: ordinary in [-0.5, 2), else any Value (NaN, inf, huge, denormal, 0, …).
float ScaleValue(Reader& r);

// The model of the documented size rules (checks.cc's contract): dims >= 0, the bytes of a float32 tensor
// addressable, an empty tensor's dims too.
struct Numel {
  bool ok = false;
  uint64_t n = 0;
};
Numel ModelNumel(const Shape& shape);

std::string ShapeStr(const Shape& s);
std::string FloatStr(float x);

// A float32 tensor the fuzzer owns. Allocated to exactly its element count (so that ASan sees any read past it)
// when the shape is valid and small; otherwise a 16-float dummy the library must never read past.
struct TensorBuf {
  Shape shape;
  Numel numel;
  bool allocated = false;
  bool null_ptr = false;
  std::unique_ptr<float[]> data;

  void Fill(Reader& r);
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

  void Fill(Reader& r);
  Mask View() const;
  bool ModelValid() const { return kind == Mask::Kind::kNone || (numel.ok && !(null_ptr && numel.n > 0)); }
  // Additive value of element i: bool elements are 0 or -inf, `masked_when` saying which byte value masks.
  double Additive(size_t i, bool masked_when) const {
    if (kind == Mask::Kind::kFloat) return floats[i];
    if (kind == Mask::Kind::kBool)
      return ((bools[i] != 0) == masked_when) ? -std::numeric_limits<double>::infinity() : 0.0;
    return 0.0;
  }
  std::string Describe() const;
};

std::string DescribeTensor(const char* name, const TensorBuf& t);

// Randomly edits shapes: set a dimension, drop one or insert one. 3/4 of inputs edit nothing.
void PerturbShapes(Reader& r, Shape* const* shapes, size_t count);

// A mask decoder: kind (none / bool / float) and a shape that is one of the `valid` ones, a perturbed one, or
// random.
void DecodeMask(Reader& r, MaskBuf& m, const std::vector<Shape>& valid);

}  // namespace attnlab_fuzz

#endif  // ATTNLAB_TESTS_FUZZ_INPUT_H_
