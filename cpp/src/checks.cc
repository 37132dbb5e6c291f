#include "cpp/src/checks.h"

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

namespace attnlab {

void Fail(const std::string& argument, const std::string& expected, const std::string& got) {
  throw std::invalid_argument(argument + ": expected " + expected + ", got " + got);
}

std::string ShapeString(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

size_t CheckedNumel(const std::string& argument, const Shape& shape) {
  // Bytes of float32 data must be addressable (wasm32: 4 GiB); dims above that are hostile or mistaken.
  const uint64_t max_elements = static_cast<uint64_t>(std::numeric_limits<ptrdiff_t>::max()) / sizeof(float);
  uint64_t numel = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      Fail(argument, "non-negative dimensions", "shape " + ShapeString(shape));
    }
    const uint64_t dim = static_cast<uint64_t>(shape[i]);
    if (dim != 0 && numel > max_elements / dim) {
      Fail(argument, "at most " + std::to_string(max_elements) + " elements", "shape " + ShapeString(shape));
    }
    numel *= dim;
  }
  for (size_t i = 0; i < shape.size() && numel == 0; ++i) {
    // An empty tensor with a huge other dimension still describes sizes we must not allocate from.
    if (static_cast<uint64_t>(shape[i]) > max_elements) {
      Fail(argument, "dimensions of at most " + std::to_string(max_elements), "shape " + ShapeString(shape));
    }
  }
  return static_cast<size_t>(numel);
}

size_t CheckTensor(const std::string& argument, const TensorView& tensor) {
  const size_t numel = CheckedNumel(argument, tensor.shape);
  if (numel > 0 && tensor.data == nullptr) {
    Fail(argument, "data for " + std::to_string(numel) + " elements", "a null data pointer");
  }
  return numel;
}

size_t CheckMask(const std::string& argument, const Mask& mask) {
  if (mask.kind == Mask::Kind::kNone) return 0;
  const size_t numel = CheckedNumel(argument, mask.shape);
  const bool has_data = mask.kind == Mask::Kind::kBool ? mask.bool_data != nullptr : mask.float_data != nullptr;
  if (numel > 0 && !has_data) {
    Fail(argument,
         std::string(mask.kind == Mask::Kind::kBool ? "bool" : "float") + " data for " + std::to_string(numel) +
             " elements",
         "a null data pointer");
  }
  return numel;
}

void CheckStateDict(const std::vector<std::pair<std::string, Shape>>& expected,
                    const std::map<std::string, TensorView>& state_dict) {
  std::string names;
  for (const auto& entry : expected) names += (names.empty() ? "" : ", ") + entry.first;
  for (const auto& entry : state_dict) {
    bool known = false;
    for (const auto& e : expected) known = known || e.first == entry.first;
    if (!known) Fail(entry.first, "one of the state-dict entries " + names, "an unknown entry");
  }
  for (const auto& [name, shape] : expected) {
    const auto it = state_dict.find(name);
    if (it == state_dict.end()) Fail(name, "a state-dict entry of shape " + ShapeString(shape), "none (missing)");
    if (it->second.shape != shape) Fail(name, "shape " + ShapeString(shape), ShapeString(it->second.shape));
    CheckTensor(name, it->second);
  }
}

const float* AdditiveMask(const Mask& mask, size_t numel, bool masked_when, std::vector<float>& storage) {
  switch (mask.kind) {
    case Mask::Kind::kNone:
      return nullptr;
    case Mask::Kind::kFloat:
      return mask.float_data;
    case Mask::Kind::kBool:
      break;
  }
  storage.resize(numel);
  for (size_t i = 0; i < numel; ++i) {
    const bool masked = (mask.bool_data[i] != 0) == masked_when;
    storage[i] = masked ? -std::numeric_limits<float>::infinity() : 0.0f;
  }
  return storage.data();
}

}  // namespace attnlab
