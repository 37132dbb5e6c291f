// An encoder's forward arguments (transformer_impl.h's PrepareEncoder): token types checked, RoBERTa's position ids
// counted from the ids, a vision model's pixels checked, the heads' and patch projection's weights as kernel
// arguments, lastHiddenState and pooledOutput allocated.
#include <algorithm>
#include <string>
#include <vector>

#include "cpp/src/checks.h"
#include "cpp/src/model/encoder_kernels.h"
#include "cpp/src/model/transformer_impl.h"

namespace attnlab {
namespace {

const float* OrNull(const std::vector<float>& v) { return v.empty() ? nullptr : v.data(); }

// tokenTypeIds (B, T), each in [0, typeVocabSize).
void CheckTokenTypes(const TransformerConfig& c, const TokensView& tokens, const TransformerForwardOptions& options) {
  if (!options.token_type_ids) return;
  if (c.type_vocab_size == 0) Fail("tokenTypeIds", "null for a model without token types", "token types");
  if (options.token_type_ids_shape != tokens.shape) {
    Fail("tokenTypeIds", "shape " + ShapeString(tokens.shape) + " (the tokens')",
         "shape " + ShapeString(options.token_type_ids_shape));
  }
  const size_t n = CheckedNumel("tokenTypeIds", tokens.shape);
  for (size_t i = 0; i < n; ++i) {
    const int32_t type = options.token_type_ids[i];
    if (type < 0 || type >= c.type_vocab_size) {
      Fail("tokenTypeIds", "types in [0, " + std::to_string(c.type_vocab_size) + ")",
           std::to_string(type) + " at index " + std::to_string(i));
    }
  }
}

// RoBERTa's create_position_ids_from_input_ids: pad + the number of non-pad ids up to t, pad at a pad.
std::vector<int32_t> PaddingOffsetPositions(const TokensView& tokens, int64_t pad) {
  const size_t batch = static_cast<size_t>(tokens.shape[0]), t_len = static_cast<size_t>(tokens.shape[1]);
  std::vector<int32_t> positions(batch * t_len);
  for (size_t b = 0; b < batch; ++b) {
    int32_t count = 0;
    for (size_t t = 0; t < t_len; ++t) {
      const int32_t id = tokens.data[b * t_len + t];
      if (id != pad) ++count;
      positions[b * t_len + t] = static_cast<int32_t>(pad) + (id != pad ? count : 0);
    }
  }
  return positions;
}

}  // namespace

Tensor ZeroTensor(Shape shape) {
  Tensor t;
  t.data.resize(CheckedNumel("output", shape));
  t.shape = std::move(shape);
  return t;
}

namespace {

// A vision model's embeddings: its pixels, the patch projection and [CLS].
void PreparePatches(const TransformerConfig& c, const Weights& w, const PixelsView& pixels, EncoderArgs& e) {
  e.pixels = pixels.data;
  e.channels = static_cast<size_t>(c.num_channels);
  e.image = static_cast<size_t>(c.image_size);
  e.patch = static_cast<size_t>(c.patch_size);
  e.patch_embed = LinearOf(w.patch, w.patch_bias);
  e.cls_token = OrNull(w.cls_token);
}

}  // namespace

Shape LogitsShape(const TransformerConfig& c, size_t batch, size_t t_len, bool last_only) {
  const int64_t b = static_cast<int64_t>(batch);
  if (c.task == Task::kBase) return {};
  if (c.task == Task::kSequenceClassification || c.task == Task::kImageClassification) return {b, c.num_labels};
  return {b, t_len == 0 ? 0 : last_only ? 1 : static_cast<int64_t>(t_len), c.vocab_size};
}

Shape CheckPixels(const TransformerConfig& c, const PixelsView& pixels) {
  if (c.image_size == 0) Fail("pixelValues", "token ids for arch '" + c.arch + "' (a text model)", "pixel values");
  const Shape image{c.num_channels, c.image_size, c.image_size};
  if (pixels.shape.size() != 4 || !std::equal(image.begin(), image.end(), pixels.shape.begin() + 1)) {
    Fail("pixelValues",
         "shape [B, " + std::to_string(c.num_channels) + ", " + std::to_string(c.image_size) + ", " +
             std::to_string(c.image_size) + "] (numChannels, imageSize, imageSize)",
         "shape " + ShapeString(pixels.shape));
  }
  CheckTensor("pixelValues", TensorView{pixels.data, pixels.shape});
  return {pixels.shape[0], c.context_length};
}

const EncoderArgs* PrepareEncoder(const TransformerConfig& c, const Weights& w, const TokensView& tokens,
                                  const PixelsView* pixels, const TransformerForwardOptions& options, EncoderCall& call,
                                  TransformerOutput& out) {
  CheckTokenTypes(c, tokens, options);
  if (c.task == Task::kCausalLm) return nullptr;
  if (options.last_logits_only) Fail("lastLogitsOnly", "false for an encoder", "true");
  EncoderArgs& e = call.args;
  e.task = c.task;
  e.post_norm = c.post_norm;
  e.token_types = options.token_type_ids;
  e.type_embed = OrNull(w.token_types);
  if (c.pad_offset_positions) call.position_ids = PaddingOffsetPositions(tokens, c.pad_token_id);
  e.position_ids = call.position_ids.empty() ? nullptr : call.position_ids.data();
  e.embed_norm = NormArgs{OrNull(w.embed_norm_weight), OrNull(w.embed_norm_bias)};
  e.pooler = LinearOf(w.pooler, w.pooler_bias);
  e.cls_dense = LinearOf(w.cls_dense, w.cls_dense_bias);
  e.head_dense = LinearOf(w.head_dense, w.head_dense_bias);
  e.head_norm = NormArgs{OrNull(w.head_norm_weight), OrNull(w.head_norm_bias)};
  e.head_act = c.head_act;
  if (pixels) PreparePatches(c, w, *pixels, e);
  const int64_t batch = tokens.shape[0], t_len = tokens.shape[1];
  out.last_hidden_state = ZeroTensor({batch, t_len, c.embed_dim});
  e.last_hidden = out.last_hidden_state.data.data();
  if (c.pooler) {
    out.pooled_output = ZeroTensor({batch, c.embed_dim});
    e.pooled = out.pooled_output.data.data();
  }
  return &call.args;
}

}  // namespace attnlab
