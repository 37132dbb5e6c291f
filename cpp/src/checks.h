// Argument validation shared by the public entry points: every failure throws std::invalid_argument with
// "<argument>: expected <what>, got <what>".
#ifndef ATTNLAB_SRC_CHECKS_H_
#define ATTNLAB_SRC_CHECKS_H_

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/attention.h"

namespace attnlab {

[[noreturn]] void Fail(const std::string& argument, const std::string& expected, const std::string& got);

// "[2, 5, 7]".
std::string ShapeString(const Shape& shape);

// Number of elements of `shape`; checks that every dimension is >= 0 and that the tensor's bytes fit in
// memory's address range.
size_t CheckedNumel(const std::string& argument, const Shape& shape);

// Checks the shape as above and that data is non-null when the tensor is not empty; returns the numel.
size_t CheckTensor(const std::string& argument, const TensorView& tensor);

// Checks a mask's data pointer for its kind; returns the numel.
size_t CheckMask(const std::string& argument, const Mask& mask);

// A complete state dict: every (name, shape) of `expected` present with that shape and data, no other name.
void CheckStateDict(const std::vector<std::pair<std::string, Shape>>& expected,
                    const std::map<std::string, TensorView>& state_dict);

// Additive form of a mask: float masks are used in place; bool masks become 0 / -inf in `storage`, where a
// byte equal to `masked_when` (true or false) means masked out. Returns null for Kind::kNone.
const float* AdditiveMask(const Mask& mask, size_t numel, bool masked_when, std::vector<float>& storage);

}  // namespace attnlab

#endif  // ATTNLAB_SRC_CHECKS_H_
