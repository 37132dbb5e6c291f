// The ViT trainer's data (cpp/tools/train_vit.cc): the splits scripts/vit/prepare.mjs writes (<split>.images.u8,
// n × side² grey pixels; <split>.labels.u8; preprocessor_config.json's mean and std), normalised as Hugging Face's
// ViTImageProcessor does ((x / 255 − mean) / std), and the seeded batch stream over the training split: a fresh
// permutation each epoch (the tools' one RNG, attnlab::Xoshiro256), optionally each image shifted by up to
// `shift` pixels (zero padding) and mirrored left–right with probability ½.
#ifndef ATTNLAB_TOOLS_COMMON_IMAGE_DATA_H_
#define ATTNLAB_TOOLS_COMMON_IMAGE_DATA_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "attnlab/transformer.h"
#include "cpp/src/rng.h"

namespace attnlab::tools {

struct ImageSplit {
  std::vector<uint8_t> pixels;  // (n, side, side)
  std::vector<uint8_t> labels;  // (n)
  size_t size() const { return labels.size(); }
};

struct ImageData {
  int64_t side = 0, classes = 0;
  double mean = 0, std = 1;                      // of the train split's pixels / 255 (preprocessor_config.json)
  std::map<std::string, ImageSplit> splits;      // train, validation, test
  std::string preprocessor_config, labels_json;  // the files as written by prepare.mjs
};

// Reads DIR (std::runtime_error naming a missing or inconsistent file).
ImageData ReadImageData(const std::string& dir);

// A batch: pixels (B, 1, side, side) normalised, labels (B) class ids.
struct ImageBatch {
  std::vector<float> pixels;
  std::vector<int32_t> labels;
  Shape shape;  // (B, 1, side, side)
  PixelsView View() const { return {pixels.data(), shape}; }
  TokensView Labels() const { return {labels.data(), {static_cast<int64_t>(labels.size())}}; }
};

// Images [first, first + count) of a split, as they are.
ImageBatch SliceBatch(const ImageData& d, const ImageSplit& split, size_t first, size_t count);

class ImageStream {
 public:
  ImageStream(const ImageData& d, size_t batch, uint64_t seed, int shift, bool flip);
  ImageBatch Next();
  int64_t epoch() const { return epoch_; }

 private:
  void Place(const uint8_t* image, float* out);
  const ImageData& d_;
  const ImageSplit& train_;
  size_t batch_, next_ = 0;
  int shift_;
  bool flip_;
  int64_t epoch_ = 0;
  std::vector<uint32_t> order_;
  Xoshiro256 rng_;
};

}  // namespace attnlab::tools

#endif  // ATTNLAB_TOOLS_COMMON_IMAGE_DATA_H_
