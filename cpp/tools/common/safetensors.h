// The tools' safetensors codec (train_poems, model_bench): F32, F16 and BF16 tensors widened to float32 on reading
// (by the library's exact F16ToFloat / BF16ToFloat of cpp/src/ops/packing.h), written from float32 as F32 or rounded
// to nearest even as F16 or BF16; the header's __metadata__ kept both ways. The layout: an 8-byte little-endian header
// length n, n bytes of JSON {"__metadata__": {…}, name: {"dtype", "shape", "data_offsets"}, …} padded with spaces so
// that the data starts 8-byte aligned, then the tensors' little-endian bytes in the header's order.
#ifndef ATTNLAB_TOOLS_COMMON_SAFETENSORS_H_
#define ATTNLAB_TOOLS_COMMON_SAFETENSORS_H_

#include <cstdint>
#include <map>
#include <string>

#include "attnlab/attention.h"
#include "attnlab/transformer.h"

namespace attnlab::tools {

enum class StDtype { kF32, kF16, kBF16 };

struct Safetensors {
  std::map<std::string, attnlab::Tensor> tensors;
  std::map<std::string, std::string> metadata;  // the header's __metadata__ (string values only, as the format says)
};

// Reads a file of F32, F16 and BF16 tensors. Throws std::runtime_error naming the file on anything else, on an
// entry whose data_offsets do not match its shape or lie outside the file, and on a malformed header.
Safetensors ReadSafetensors(const std::string& path);

// Writes `tensors` (in name order) as `dtype`, with `metadata` first in the header (omitted when empty).
// Throws std::runtime_error when the file cannot be written.
void WriteSafetensors(const std::string& path, const std::map<std::string, attnlab::Tensor>& tensors, StDtype dtype,
                      const std::map<std::string, std::string>& metadata = {{"format", "pt"}});

// Loads tensors (as ReadSafetensors gives them) into the model (Transformer::LoadStateDict).
void LoadInto(attnlab::Transformer& model, const std::map<std::string, attnlab::Tensor>& tensors);

// float32 → IEEE binary16 bits, rounded to nearest even (overflow to ±inf; NaN stays NaN, quiet).
uint16_t F16FromFloat(float f);
// float32 → bfloat16 bits, rounded to nearest even (as torch's cast; NaN stays NaN, quiet).
uint16_t BF16FromFloat(float f);

// Exhaustive check of F16FromFloat against the library's F16ToFloat: every half converts to a float and back
// unchanged (NaNs stay NaNs), and every float halfway between two neighbouring finite halves rounds to the one with
// an even mantissa, the floats just above and below it to the nearer one. Returns the number of failures.
int64_t CheckF16Conversion();

// BF16FromFloat on every bfloat16: each converts to a float and back unchanged (NaNs stay NaNs), and the float halfway
// to the next one up rounds to the even one. Returns the number of failures.
int64_t CheckBF16Conversion();

// The codec against PyTorch: tests/fixtures/hf/dtypes.safetensors (scripts/make_hf_fixtures.py) holds F16 and BF16
// tensors `f16`, `bf16` of many bit patterns beside torch's float32 conversions `f16_as_f32`, `bf16_as_f32`. Reads
// it, checks every widened value against torch's (bit for bit; NaN for NaN) and every non-NaN float32 converted back
// against the stored bits; then writes the tensors as F32, F16 and BF16 with a metadata entry to `scratch`, reads
// each back and checks values, shapes and metadata. Returns the number of failures.
int64_t CheckCodec(const std::string& dtypes_path, const std::string& scratch);

}  // namespace attnlab::tools

#endif  // ATTNLAB_TOOLS_COMMON_SAFETENSORS_H_
