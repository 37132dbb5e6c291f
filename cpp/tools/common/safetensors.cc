// The tools' safetensors codec (safetensors.h).
#include "cpp/tools/common/safetensors.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cpp/src/ops/packing.h"
#include "cpp/tools/common/files.h"

namespace attnlab::tools {
namespace {

size_t ElementSize(const std::string& dtype) { return dtype == "F32" ? 4 : dtype == "F16" || dtype == "BF16" ? 2 : 0; }

// One header entry's tensor, widened to float32; `data` is the byte block after the header.
Tensor ReadTensor(const std::string& path, const std::string& name, const nlohmann::json& entry,
                  const std::string& data) {
  const std::string dtype = entry.at("dtype");
  const size_t elem = ElementSize(dtype);
  if (elem == 0) throw std::runtime_error(path + ": dtype " + dtype + " of " + name + " (F32, F16 or BF16 only)");
  Tensor t;
  t.shape = entry.at("shape").get<Shape>();
  size_t count = 1;
  for (const int64_t d : t.shape) count *= static_cast<size_t>(d);
  const size_t begin = entry.at("data_offsets").at(0), end = entry.at("data_offsets").at(1);
  if (begin > end || end > data.size() || end - begin != count * elem) {
    throw std::runtime_error(path + ": data_offsets of " + name + " do not match its shape or the file");
  }
  t.data.resize(count);
  const auto* p = reinterpret_cast<const uint8_t*>(data.data() + begin);
  if (elem == 4) {
    std::memcpy(t.data.data(), p, count * 4);  // (little-endian hosts)
    return t;
  }
  const Dtype16 d16 = dtype == "F16" ? Dtype16::kF16 : Dtype16::kBF16;
  for (size_t i = 0; i < count; ++i)
    t.data[i] = Bits16ToFloat(static_cast<uint16_t>(p[2 * i] | (p[2 * i + 1] << 8)), d16);
  return t;
}

std::string JsonString(const std::string& s) { return nlohmann::json(s).dump(); }

// The header as the house writes it: __metadata__ first, then each tensor's dtype, shape and data_offsets in that
// key order (a JSON library would sort the keys), padded with spaces to a multiple of 8 bytes with the length.
std::string Header(const std::map<std::string, Tensor>& tensors, StDtype dtype,
                   const std::map<std::string, std::string>& metadata) {
  std::string header = "{", meta;
  for (const auto& [key, value] : metadata)
    meta += (meta.empty() ? "" : ",") + JsonString(key) + ":" + JsonString(value);
  if (!metadata.empty()) header += "\"__metadata__\":{" + meta + "}";
  const char* name = dtype == StDtype::kF32 ? "F32" : dtype == StDtype::kF16 ? "F16" : "BF16";
  const size_t elem = dtype == StDtype::kF32 ? 4 : 2;
  size_t offset = 0;
  for (const auto& [key, t] : tensors) {
    std::string shape;
    for (int64_t d : t.shape) shape += (shape.empty() ? "" : ",") + std::to_string(d);
    const size_t bytes = t.data.size() * elem;
    header += (header.size() > 1 ? "," : "") + JsonString(key) + ":{\"dtype\":\"" + name + "\",\"shape\":[" + shape +
              "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + bytes) + "]}";
    offset += bytes;
  }
  header += "}";
  while ((header.size() + 8) % 8) header += ' ';
  return header;
}

}  // namespace

Safetensors ReadSafetensors(const std::string& path) {
  const std::string bytes = ReadFile(path);
  if (bytes.size() < 8) throw std::runtime_error(path + ": too short for a safetensors file");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<uint8_t>(bytes[i]);
  if (n > bytes.size() - 8) throw std::runtime_error(path + ": header length past the end of the file");
  const nlohmann::json header = nlohmann::json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<long>(n),
                                                      nullptr, /*allow_exceptions=*/false);
  if (!header.is_object()) throw std::runtime_error(path + ": the header is not a JSON object");
  const std::string data = bytes.substr(8 + n);
  Safetensors out;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      for (auto m = it.value().begin(); m != it.value().end(); ++m) {
        out.metadata[m.key()] = m.value().is_string() ? m.value().get<std::string>() : m.value().dump();
      }
    } else {
      out.tensors[it.key()] = ReadTensor(path, it.key(), it.value(), data);
    }
  }
  return out;
}

void WriteSafetensors(const std::string& path, const std::map<std::string, Tensor>& tensors, StDtype dtype,
                      const std::map<std::string, std::string>& metadata) {
  const std::string header = Header(tensors, dtype, metadata);
  std::ofstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot write " + path);
  const uint64_t n = header.size();
  unsigned char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
  f.write(reinterpret_cast<const char*>(len), 8);
  f << header;
  for (const auto& [name, t] : tensors) {
    if (dtype == StDtype::kF32) {
      f.write(reinterpret_cast<const char*>(t.data.data()), static_cast<std::streamsize>(t.data.size() * 4));
      continue;
    }
    std::vector<unsigned char> buf(t.data.size() * 2);
    for (size_t i = 0; i < t.data.size(); ++i) {
      const uint16_t h = dtype == StDtype::kF16 ? F16FromFloat(t.data[i]) : BF16FromFloat(t.data[i]);
      buf[2 * i] = static_cast<unsigned char>(h);
      buf[2 * i + 1] = static_cast<unsigned char>(h >> 8);
    }
    f.write(reinterpret_cast<const char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
  }
  if (!f) throw std::runtime_error("write failed: " + path);
}

uint16_t F16FromFloat(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) return static_cast<uint16_t>(sign | (abs > 0x7F800000u ? 0x7E00u : 0x7C00u));  // NaN, inf
  if (abs >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds to ≥ 65520: inf
  if (abs < 0x38800000u) {                                               // below 2^-14: subnormal half (or 0)
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);           // below 2^-25: ±0
    const uint32_t mant = (abs & 0x7FFFFFu) | 0x800000u;
    // value = mant · 2^(e − 150) = (mant · 2^(e − 126)) half units of 2^-24: shift right by 126 − e (14 … 24).
    const int shift = 126 - static_cast<int>(abs >> 23);
    const uint32_t q = mant >> shift, rem = mant & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    return static_cast<uint16_t>(sign | (q + (rem > halfway || (rem == halfway && (q & 1)))));
  }
  const uint32_t q = (abs - 0x38000000u) >> 13, rem = abs & 0x1FFFu;  // rebias 127 → 15
  return static_cast<uint16_t>(sign | (q + (rem > 0x1000u || (rem == 0x1000u && (q & 1)))));
}

uint16_t BF16FromFloat(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN: quiet
  return static_cast<uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);  // carries into the exponent: to inf
}

int64_t CheckF16Conversion() {
  int64_t bad = 0;
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const float f = F16ToFloat(static_cast<uint16_t>(h));
    const uint16_t back = F16FromFloat(f);
    const bool nan = (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu);
    if (nan ? !(std::isnan(f) && (back & 0x7C00u) == 0x7C00u && (back & 0x3FFu)) : back != h) ++bad;
    const uint32_t mag = h & 0x7FFFu;
    if (mag >= 0x7BFFu) continue;  // the next half up is inf (or h is inf/NaN)
    const float lo = f, hi = F16ToFloat(static_cast<uint16_t>(h + 1));
    const double mid = (static_cast<double>(lo) + hi) / 2;  // exact in float: halves have 11 significant bits
    const float m = static_cast<float>(mid);
    const uint16_t even = (h & 1) ? static_cast<uint16_t>(h + 1) : static_cast<uint16_t>(h);
    if (F16FromFloat(m) != even) ++bad;
    if (F16FromFloat(std::nextafter(m, lo)) != h) ++bad;
    if (F16FromFloat(std::nextafter(m, hi)) != static_cast<uint16_t>(h + 1)) ++bad;
  }
  return bad;
}

int64_t CheckBF16Conversion() {
  int64_t bad = 0;
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const float f = BF16ToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      bad += !std::isnan(BF16ToFloat(BF16FromFloat(f)));
      continue;
    }
    bad += BF16FromFloat(f) != h;
    if ((h & 0x7FFFu) >= 0x7F7Fu) continue;  // the next one up is inf (or h is inf)
    uint32_t bits = (h << 16) | 0x8000u;     // halfway to h + 1 (same sign, larger magnitude)
    float mid;
    std::memcpy(&mid, &bits, 4);
    bad += BF16FromFloat(mid) != ((h & 1) ? h + 1 : h);
  }
  return bad;
}

namespace {

bool SameValue(float a, float b) { return std::isnan(a) ? std::isnan(b) : std::memcmp(&a, &b, 4) == 0; }

// `widened` (read from a 16-bit tensor) against torch's float32 `reference`, and `encode` back to the 16-bit bits.
int64_t CheckAgainst(const Tensor& widened, const Tensor& reference, uint16_t (*encode)(float)) {
  int64_t bad = widened.data.size() != reference.data.size();
  for (size_t i = 0; bad == 0 && i < widened.data.size(); ++i) {
    const float f = reference.data[i];
    bad += !SameValue(widened.data[i], f);
    if (!std::isnan(f)) bad += !SameValue((encode == F16FromFloat ? F16ToFloat : BF16ToFloat)(encode(f)), f);
  }
  return bad;
}

// Writes `tensors` as `dtype` to `path`, reads them back: `expect` (each value as `dtype` holds it) and metadata.
int64_t CheckRoundTrip(const std::map<std::string, Tensor>& tensors, StDtype dtype, const std::string& path,
                       float (*expect)(float)) {
  const std::map<std::string, std::string> metadata = {{"format", "pt"}, {"writer", "attnlab \"tools\""}};
  WriteSafetensors(path, tensors, dtype, metadata);
  const Safetensors back = ReadSafetensors(path);
  int64_t bad = back.metadata != metadata || back.tensors.size() != tensors.size();
  for (const auto& [name, t] : tensors) {
    const auto it = back.tensors.find(name);
    if (it == back.tensors.end() || it->second.shape != t.shape) {
      ++bad;
      continue;
    }
    for (size_t i = 0; i < t.data.size(); ++i) bad += !SameValue(it->second.data[i], expect(t.data[i]));
  }
  return bad;
}

}  // namespace

int64_t CheckCodec(const std::string& dtypes_path, const std::string& scratch) {
  const Safetensors in = ReadSafetensors(dtypes_path);
  const auto& t = in.tensors;
  int64_t bad = CheckAgainst(t.at("f16"), t.at("f16_as_f32"), F16FromFloat);
  bad += CheckAgainst(t.at("bf16"), t.at("bf16_as_f32"), BF16FromFloat);
  bad += CheckRoundTrip(t, StDtype::kF32, scratch, [](float f) { return f; });
  bad += CheckRoundTrip(t, StDtype::kF16, scratch, [](float f) { return F16ToFloat(F16FromFloat(f)); });
  bad += CheckRoundTrip(t, StDtype::kBF16, scratch, [](float f) { return BF16ToFloat(BF16FromFloat(f)); });
  std::remove(scratch.c_str());
  return bad;
}

void LoadInto(Transformer& model, const std::map<std::string, Tensor>& tensors) {
  std::map<std::string, TensorView> views;
  for (const auto& [name, t] : tensors) views[name] = TensorView{t.data.data(), t.shape};
  model.LoadStateDict(views);
}

}  // namespace attnlab::tools
