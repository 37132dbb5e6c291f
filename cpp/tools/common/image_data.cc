// The ViT trainer's data: prepare.mjs's files, normalisation and the seeded batch stream (image_data.h).
#include "cpp/tools/common/image_data.h"

#include <algorithm>
#include <stdexcept>

#include "cpp/tools/common/files.h"
#include "nlohmann/json.hpp"

namespace attnlab::tools {
namespace {

std::vector<uint8_t> Bytes(const std::string& path) {
  const std::string s = ReadFile(path);
  return std::vector<uint8_t>(s.begin(), s.end());
}

ImageSplit ReadSplit(const std::string& dir, const std::string& name, int64_t side) {
  ImageSplit s{Bytes(dir + "/" + name + ".images.u8"), Bytes(dir + "/" + name + ".labels.u8")};
  if (s.pixels.size() != s.labels.size() * static_cast<size_t>(side * side)) {
    throw std::runtime_error(dir + "/" + name + ".images.u8: " + std::to_string(s.pixels.size()) + " bytes, not " +
                             std::to_string(s.labels.size()) + " images of " + std::to_string(side) + "²");
  }
  return s;
}

}  // namespace

ImageData ReadImageData(const std::string& dir) {
  ImageData d;
  d.preprocessor_config = ReadFile(dir + "/preprocessor_config.json");
  d.labels_json = ReadFile(dir + "/labels.json");
  const nlohmann::json pre = nlohmann::json::parse(d.preprocessor_config);
  d.side = pre.at("size").at("height").get<int64_t>();
  d.mean = pre.at("image_mean").at(0).get<double>();
  d.std = pre.at("image_std").at(0).get<double>();
  d.classes = static_cast<int64_t>(nlohmann::json::parse(d.labels_json).at("id2label").size());
  for (const char* name : {"train", "validation", "test"}) d.splits[name] = ReadSplit(dir, name, d.side);
  for (const auto& [name, s] : d.splits) {
    for (uint8_t label : s.labels) {
      if (label >= d.classes) throw std::runtime_error(dir + "/" + name + ".labels.u8: label out of range");
    }
  }
  return d;
}

ImageBatch SliceBatch(const ImageData& d, const ImageSplit& split, size_t first, size_t count) {
  const size_t plane = static_cast<size_t>(d.side * d.side);
  ImageBatch b;
  b.shape = {static_cast<int64_t>(count), 1, d.side, d.side};
  b.pixels.resize(count * plane);
  b.labels.resize(count);
  const float scale = static_cast<float>(1.0 / (255.0 * d.std)), offset = static_cast<float>(d.mean / d.std);
  for (size_t i = 0; i < count; ++i) {
    const uint8_t* image = split.pixels.data() + (first + i) * plane;
    for (size_t p = 0; p < plane; ++p) b.pixels[i * plane + p] = image[p] * scale - offset;
    b.labels[i] = split.labels[first + i];
  }
  return b;
}

ImageStream::ImageStream(const ImageData& d, size_t batch, uint64_t seed, int shift, bool flip)
    : d_(d), train_(d.splits.at("train")), batch_(batch), shift_(shift), flip_(flip), rng_(seed) {
  if (batch == 0 || batch > train_.size()) throw std::invalid_argument("--batch: in [1, the training images]");
  order_.resize(train_.size());
  next_ = order_.size();  // (the first Next() shuffles)
}

// One image, shifted by (dy, dx) ∈ [−shift, shift]² (zero padding in pixel space) and maybe mirrored, normalised
// into out (side²).
void ImageStream::Place(const uint8_t* image, float* out) {
  const int64_t side = d_.side, span = 2 * shift_ + 1;
  const int64_t dy = static_cast<int64_t>(rng_.Below(span)) - shift_,
                dx = static_cast<int64_t>(rng_.Below(span)) - shift_;
  const bool mirror = flip_ && rng_.Below(2) == 1;
  const float scale = static_cast<float>(1.0 / (255.0 * d_.std)), zero = static_cast<float>(-d_.mean / d_.std);
  for (int64_t y = 0; y < side; ++y) {
    for (int64_t x = 0; x < side; ++x) {
      const int64_t sy = y - dy, sx0 = x - dx, sx = mirror ? side - 1 - sx0 : sx0;
      const bool inside = sy >= 0 && sy < side && sx >= 0 && sx < side;
      out[y * side + x] = inside ? image[sy * side + sx] * scale + zero : zero;
    }
  }
}

ImageBatch ImageStream::Next() {
  const size_t plane = static_cast<size_t>(d_.side * d_.side);
  ImageBatch b;
  b.shape = {static_cast<int64_t>(batch_), 1, d_.side, d_.side};
  b.pixels.resize(batch_ * plane);
  b.labels.resize(batch_);
  for (size_t i = 0; i < batch_; ++i) {
    if (next_ == order_.size()) {  // a new epoch: Fisher–Yates over every training image
      for (uint32_t k = 0; k < order_.size(); ++k) order_[k] = k;
      for (size_t k = order_.size(); k > 1; --k) std::swap(order_[k - 1], order_[rng_.Below(k)]);
      next_ = 0;
      ++epoch_;
    }
    const uint32_t at = order_[next_++];
    Place(train_.pixels.data() + at * plane, b.pixels.data() + i * plane);
    b.labels[i] = train_.labels[at];
  }
  return b;
}

}  // namespace attnlab::tools
