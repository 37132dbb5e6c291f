// Looking past the weights for encoders and encoder–decoders (attnlab/transformer.h, docs/api.md): head importance
// by the head masks' gradients (one backward of the training path: encoder_train.cc, seq2seq_train.cc, with no
// parameter gradient) or by ablation against labels, attribution by the input gradient (e_j: the encoder's block-0
// input), occlusion of a token (by padTokenId) or of an image patch (by zeros), and activation
// patching, over each kind of head an encoder–decoder has (its encoder's, its decoder's self-attention, its
// cross-attention). The forwards are Transformer::Forward's with head masks or head values; the helpers shared with
// the decoders' methods are analysis.cc's.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "attnlab/transformer.h"
#include "cpp/src/checks.h"
#include "cpp/src/model/transformer_impl.h"

namespace attnlab {
namespace {

using ModelInput = Transformer::ModelInput;

// An encoder's or encoder–decoder's input with a head, checked: only attention_mask, token_type_ids and
// decoder_input_ids set (`what` names the method in messages).
void CheckModelInput(const TransformerConfig& c, const ModelInput& in, const std::string& what) {
  if (c.task == Task::kCausalLm) Fail("task", "an encoder or encoder–decoder for " + what, "a decoder");
  if (c.task == Task::kBase) {
    Fail("task", "a model with a head (masked-lm, classification, seq2seq-lm) for " + what, "'base' (no logits)");
  }
  const TransformerForwardOptions& o = in.options;
  if (o.head_mask || o.decoder_head_mask || o.cross_attn_head_mask || o.decoder_attention_mask || o.cache ||
      o.occlude || !o.head_values.empty() || o.output_head_outputs || o.last_logits_only ||
      !o.output_attentions.empty() || o.output_hidden_states) {
    Fail("options", "attentionMask, tokenTypeIds and decoderInputIds only for " + what, "other forward options");
  }
}

// The forward of `in` with `o`'s analysis options (head masks, head values, head outputs) added.
TransformerOutput RunInput(Transformer& model, const ModelInput& in, TransformerForwardOptions o) {
  o.attention_mask = in.options.attention_mask;
  o.attention_mask_shape = in.options.attention_mask_shape;
  o.token_type_ids = in.options.token_type_ids;
  o.token_type_ids_shape = in.options.token_type_ids_shape;
  o.decoder_input_ids = in.options.decoder_input_ids;
  o.decoder_input_ids_shape = in.options.decoder_input_ids_shape;
  return in.pixels ? model.Forward(*in.pixels, o) : model.Forward(in.tokens, o);
}

// One kind of head: its layers, its first entry in the forward's head_values, the head outputs a forward with
// output_head_outputs gives it, and which rows its mean ablation averages over (null: all).
struct HeadKind {
  size_t layers = 0, offset = 0;
  const std::vector<Tensor>* outputs = nullptr;
  const uint8_t* keep = nullptr;
};

// The kinds of `c`'s heads, their outputs in `out`: an encoder's one; an encoder–decoder's encoder, decoder
// (self-attention) and cross-attention heads. `keep`: the encoder's rows to average over (its attention mask).
std::vector<HeadKind> KindsOf(const TransformerConfig& c, const TransformerOutput& out, const uint8_t* keep) {
  const size_t layers = static_cast<size_t>(c.num_layers), dec = static_cast<size_t>(c.decoder_layers),
               heads = static_cast<size_t>(c.num_heads);
  if (dec == 0) return {HeadKind{layers, 0, &out.head_outputs, keep}};
  return {HeadKind{layers, 0, &out.encoder_head_outputs, keep},
          HeadKind{dec, layers * heads, &out.head_outputs, nullptr},
          HeadKind{dec, (layers + dec) * heads, &out.cross_head_outputs, nullptr}};
}

// Options whose head_values set entry i of `kind` (a head) to `values` and leave every other head alone.
TransformerForwardOptions WithHeadValues(const TransformerConfig& c, const HeadKind& kind, size_t i,
                                         const float* values) {
  TransformerForwardOptions o;
  o.head_values.assign(static_cast<size_t>((c.num_layers + 2 * c.decoder_layers) * c.num_heads), nullptr);
  if (c.decoder_layers == 0) o.head_values.resize(static_cast<size_t>(c.num_layers * c.num_heads));
  o.head_values[kind.offset + i] = values;
  return o;
}

// Options whose head mask of kind k (0 encoder, 1 decoder, 2 cross) is `mask` (kind.layers · H).
TransformerForwardOptions WithHeadMask(const TransformerConfig& c, size_t k, const HeadKind& kind,
                                       const std::vector<float>& mask) {
  TransformerForwardOptions o;
  const Shape shape{static_cast<int64_t>(kind.layers), c.num_heads};
  const float*& field = k == 0 ? o.head_mask : k == 1 ? o.decoder_head_mask : o.cross_attn_head_mask;
  Shape& field_shape = k == 0 ? o.head_mask_shape : k == 1 ? o.decoder_head_mask_shape : o.cross_attn_head_mask_shape;
  field = mask.data();
  field_shape = shape;
  return o;
}

// Hugging Face's shift_right(labels) (B, T): decoderStartTokenId, then labels[:, :-1] with −100 as padTokenId.
std::vector<int32_t> ShiftRight(const TransformerConfig& c, const TokensView& labels) {
  if (labels.shape.size() != 2 || !labels.data) {
    Fail("labels", "token ids (B, T) (the decoder's inputs default to shift_right(labels))",
         "shape " + ShapeString(labels.shape));
  }
  CheckTargets(labels, labels.shape, c.vocab_size, "labels");
  const size_t batch = static_cast<size_t>(labels.shape[0]), t_len = static_cast<size_t>(labels.shape[1]);
  std::vector<int32_t> ids(batch * t_len);
  for (size_t i = 0; i < ids.size(); ++i) {
    const int32_t previous = i % t_len == 0 ? static_cast<int32_t>(c.decoder_start_token_id) : labels.data[i - 1];
    ids[i] = previous == -100 ? static_cast<int32_t>(c.pad_token_id) : previous;
  }
  return ids;
}

// Labels against the logits (B, T, V) or (B, C): shape (B, T) or (B), ids in [0, V) or −100, at least one counted.
// Returns {B, T} (T = 1 for classification).
std::pair<size_t, size_t> CheckLabels(const TokensView& labels, const Shape& logits) {
  const Shape expected(logits.begin(), logits.end() - 1);
  if (labels.shape != expected) {
    Fail("labels",
         "shape " + ShapeString(expected) + (expected.size() == 1 ? " (B: class ids)" : " (B, T: the logits')"),
         "shape " + ShapeString(labels.shape));
  }
  CheckTargets(labels, expected, logits.back(), "labels");
  return {static_cast<size_t>(logits[0]), expected.size() == 2 ? static_cast<size_t>(logits[1]) : 1};
}

}  // namespace

double Transformer::InputGradients(const ModelInput& input, const TokensView& labels, const GradientOptions& options,
                                   LossAndGrad& out) {
  const TransformerConfig& c = impl_->config;
  if (c.decoder_layers > 0 && c.post_norm) {  // (the post-norm blocks' backward does not give head-mask gradients)
    Fail("method", "ablation or occlusion for a post-norm encoder-decoder (arch '" + c.arch + "')",
         "a gradient method, which has no PyTorch reference for it yet");
  }
  TrainBatch batch;
  batch.tokens = input.tokens;
  batch.pixels = input.pixels;
  batch.options = input.options;
  batch.labels = labels;
  return c.decoder_layers > 0 ? Seq2SeqGradients(batch, options, &out) : EncoderGradients(batch, options, &out);
}

Transformer::HeadImportanceResult Transformer::GradientHeadImportance(const ModelInput& input,
                                                                      const TokensView& labels) {
  const TransformerConfig& c = impl_->config;
  GradientOptions o;
  o.objective = Objective::kRowMeanCrossEntropy;
  o.head_mask_gradient = true;
  LossAndGrad g;
  HeadImportanceResult result;
  result.loss = static_cast<float>(InputGradients(input, labels, o, g));
  const size_t batch = static_cast<size_t>(labels.shape[0]);
  const size_t t_len = labels.shape.size() == 2 ? static_cast<size_t>(labels.shape[1]) : 1;
  const double rows = static_cast<double>(RowsWithTargets(labels, batch, t_len));
  const Tensor* grads[3] = {&g.head_mask_grad, &g.decoder_head_mask_grad, &g.cross_head_mask_grad};
  Tensor* importance[3] = {&result.importance, &result.decoder_importance, &result.cross_importance};
  for (size_t k = 0; k < (c.decoder_layers > 0 ? 3 : 1); ++k) {  // (B, L, H) → mean over rows of |·|: (L, H)
    const size_t per_row = grads[k]->data.size() / batch;
    importance[k]->shape = {grads[k]->shape[1], grads[k]->shape[2]};
    importance[k]->data.assign(per_row, 0.0f);
    for (size_t i = 0; i < per_row; ++i) {
      double sum = 0;
      for (size_t b = 0; b < batch; ++b) sum += std::abs(static_cast<double>(grads[k]->data[b * per_row + i]));
      importance[k]->data[i] = static_cast<float>(sum / rows);
    }
  }
  return result;
}

Transformer::HeadImportanceResult Transformer::HeadImportance(const ModelInput& input, const TokensView& labels,
                                                              ImportanceMethod method, Ablation ablation) {
  const TransformerConfig& c = impl_->config;
  CheckModelInput(c, input, "head importance");
  if (method == ImportanceMethod::kGradient) return GradientHeadImportance(input, labels);
  ModelInput in = input;
  std::vector<int32_t> shifted;
  if (c.decoder_layers > 0 && !in.options.decoder_input_ids && in.options.decoder_input_ids_shape.empty()) {
    shifted = ShiftRight(c, labels);
    in.options.decoder_input_ids = shifted.data();
    in.options.decoder_input_ids_shape = labels.shape;
  }
  TransformerForwardOptions base;
  base.output_head_outputs = ablation == Ablation::kMean;
  const TransformerOutput clean = RunInput(*this, in, base);
  const auto [batch, t_len] = CheckLabels(labels, clean.logits.shape);
  const double loss = RowMeanLoss(clean.logits, labels, batch, t_len);
  HeadImportanceResult result;
  result.loss = static_cast<float>(loss);
  const std::vector<HeadKind> kinds = KindsOf(c, clean, in.options.attention_mask);
  const size_t heads = static_cast<size_t>(c.num_heads);
  for (size_t k = 0; k < kinds.size(); ++k) {
    Tensor& importance = k == 0 ? result.importance : k == 1 ? result.decoder_importance : result.cross_importance;
    importance.shape = {static_cast<int64_t>(kinds[k].layers), c.num_heads};
    const std::vector<std::vector<float>> means = ablation == Ablation::kMean
                                                      ? MeanHeadOutputs(*kinds[k].outputs, kinds[k].keep)
                                                      : std::vector<std::vector<float>>{};
    std::vector<float> mask(kinds[k].layers * heads, 1.0f);
    for (size_t i = 0; i < mask.size(); ++i) {
      mask[i] = 0.0f;
      const TransformerOutput ablated =
          RunInput(*this, in,
                   ablation == Ablation::kZero ? WithHeadMask(c, k, kinds[k], mask)
                                               : WithHeadValues(c, kinds[k], i, means[i].data()));
      mask[i] = 1.0f;
      importance.data.push_back(static_cast<float>(RowMeanLoss(ablated.logits, labels, batch, t_len) - loss));
    }
  }
  return result;
}

namespace {

// The batch size of an input (its tokens', or its pixels').
int64_t BatchOf(const ModelInput& in) {
  const Shape& shape = in.pixels ? in.pixels->shape : in.tokens.shape;
  return shape.empty() ? 0 : shape[0];
}

// Where the logit of `target` at `position` lies in logits (1, T, V) or (1, C) (position 0), checked.
size_t LogitAt(const Shape& logits, int64_t position, int64_t target) {
  const bool per_token = logits.size() == 3;
  CheckLogitIndex(position, target, per_token ? static_cast<size_t>(logits[1]) : 1, logits.back());
  return static_cast<size_t>(position * logits.back() + target);
}

// A batch-1 tensor (`data` (1, ...), or null) as `rows` copies: the data, and the shape with B = rows.
template <typename T>
std::vector<T> Repeated(const T* data, Shape shape, size_t rows, Shape& batch_shape) {  // (shape: a copy)
  batch_shape = shape;
  if (!data || shape.empty()) return {};
  batch_shape[0] = static_cast<int64_t>(rows);
  const size_t n = CheckedNumel("input", shape);
  std::vector<T> out;
  for (size_t r = 0; r < rows; ++r) out.insert(out.end(), data, data + n);
  return out;
}

// `rows` copies of a batch-1 input (ids or pixels for the caller to edit, row by row, in place; the attention mask,
// token types and decoder inputs repeated) and the input that reads them (not movable: it points into the copies).
struct Copies {
  Copies(const ModelInput& in, size_t rows) : input(in) {
    TransformerForwardOptions& o = input.options;
    ids = Repeated(in.tokens.data, in.tokens.shape, rows, input.tokens.shape);
    input.tokens.data = ids.data();
    if (in.pixels) {
      pixels = Repeated(in.pixels->data, in.pixels->shape, rows, pixel_view.shape);
      pixel_view.data = pixels.data();
      input.pixels = &pixel_view;
    }
    mask = Repeated(o.attention_mask, o.attention_mask_shape, rows, o.attention_mask_shape);
    o.attention_mask = o.attention_mask ? mask.data() : nullptr;
    types = Repeated(o.token_type_ids, o.token_type_ids_shape, rows, o.token_type_ids_shape);
    o.token_type_ids = o.token_type_ids ? types.data() : nullptr;
    decoder = Repeated(o.decoder_input_ids, o.decoder_input_ids_shape, rows, o.decoder_input_ids_shape);
    o.decoder_input_ids = o.decoder_input_ids ? decoder.data() : nullptr;
  }
  Copies(const Copies&) = delete;
  Copies& operator=(const Copies&) = delete;

  std::vector<int32_t> ids, types, decoder;
  std::vector<uint8_t> mask;
  std::vector<float> pixels;
  PixelsView pixel_view;
  ModelInput input;
};

// Occlusion of input j of a batch-1 input: token j replaced by padTokenId, or a vision model's patch j (row-major
// over the (imageSize / patchSize)² grid) set to 0 in every channel, in row r of `copies`.
void Occlude(const TransformerConfig& c, Copies& copies, size_t r, size_t j) {
  if (!copies.input.pixels) {
    const size_t t_len = static_cast<size_t>(copies.input.tokens.shape[1]);
    copies.ids[r * t_len + j] = static_cast<int32_t>(c.pad_token_id);
    return;
  }
  const size_t image = static_cast<size_t>(c.image_size), p = static_cast<size_t>(c.patch_size);
  const size_t grid = image / p, y0 = j / grid * p, x0 = j % grid * p;
  for (size_t ch = 0; ch < static_cast<size_t>(c.num_channels); ++ch) {
    float* plane = copies.pixels.data() + (r * static_cast<size_t>(c.num_channels) + ch) * image * image;
    for (size_t y = y0; y < y0 + p; ++y) std::fill(plane + y * image + x0, plane + y * image + x0 + p, 0.0f);
  }
}

// What occlusion goes over: a text model's tokens (an encoder–decoder's source tokens), a vision model's patches.
size_t OccludedInputs(const TransformerConfig& c, const ModelInput& in) {
  if (!in.pixels) return static_cast<size_t>(in.tokens.shape[1]);
  const size_t grid = static_cast<size_t>(c.image_size / c.patch_size);
  return grid * grid;
}

}  // namespace

Tensor Transformer::Attribution(const ModelInput& input, int64_t position, int64_t target, AttributionMethod method) {
  const TransformerConfig& c = impl_->config;
  CheckModelInput(c, input, "attribution");
  if (BatchOf(input) != 1)
    Fail(input.pixels ? "pixelValues" : "tokens", "batch size 1", std::to_string(BatchOf(input)));
  if (method != AttributionMethod::kOcclusion) return GradientAttribution(input, position, target, method);
  const TransformerOutput clean = RunInput(*this, input, {});
  const size_t at = LogitAt(clean.logits.shape, position, target), inputs = OccludedInputs(c, input);
  constexpr size_t kChunk = 16;
  Tensor result;
  result.shape = {static_cast<int64_t>(inputs)};
  if (input.pixels) result.shape = {c.image_size / c.patch_size, c.image_size / c.patch_size};
  for (size_t j0 = 0; j0 < inputs; j0 += kChunk) {
    const size_t rows = std::min(inputs, j0 + kChunk) - j0;
    Copies copies(input, rows);
    for (size_t r = 0; r < rows; ++r) Occlude(c, copies, r, j0 + r);
    const TransformerOutput out = RunInput(*this, copies.input, {});
    const size_t row = out.logits.data.size() / rows;
    for (size_t r = 0; r < rows; ++r) result.data.push_back(clean.logits.data[at] - out.logits.data[r * row + at]);
  }
  return result;
}

Tensor Transformer::GradientAttribution(const ModelInput& input, int64_t position, int64_t target,
                                        AttributionMethod method) {
  const TransformerConfig& c = impl_->config;
  const TransformerForwardOptions& in = input.options;
  if (c.decoder_layers > 0 && !in.decoder_input_ids) Fail("decoderInputIds", "the decoder's input ids", "none");
  GradientOptions o;
  o.objective = Objective::kLogit;
  o.position = position;
  o.target = target;
  o.input_gradient = true;
  LossAndGrad g;  // (an encoder–decoder's labels: its decoder inputs, shaped and checked, not read under kLogit)
  InputGradients(input, TokensView{in.decoder_input_ids, in.decoder_input_ids_shape}, o, g);
  const size_t inputs = OccludedInputs(c, input), first = input.pixels ? 1 : 0, e = static_cast<size_t>(c.embed_dim);
  Tensor result;
  result.shape = {static_cast<int64_t>(inputs)};
  if (input.pixels) result.shape = {c.image_size / c.patch_size, c.image_size / c.patch_size};
  for (size_t j = first; j < first + inputs; ++j) {  // (a vision model's patch j is token 1 + j, after [CLS])
    double sum = 0;
    for (size_t f = j * e; f < (j + 1) * e; ++f) {
      const double d = g.input_grad.data[f];
      sum += method == AttributionMethod::kGradient ? d * d : d * g.input.data[f];
    }
    result.data.push_back(static_cast<float>(method == AttributionMethod::kGradient ? std::sqrt(sum) : sum));
  }
  return result;
}

namespace {

// Two batch-1 inputs of one shape with equal decoder inputs (patching's clean and corrupted).
void CheckPair(const ModelInput& clean, const ModelInput& corrupted) {
  const char* name = clean.pixels ? "pixelValues" : "tokens";
  if (BatchOf(clean) != 1) Fail(std::string("clean ") + name, "batch size 1", std::to_string(BatchOf(clean)));
  const Shape& a = clean.pixels ? clean.pixels->shape : clean.tokens.shape;
  const Shape& b = corrupted.pixels ? corrupted.pixels->shape : corrupted.tokens.shape;
  if (a != b || !clean.pixels != !corrupted.pixels) {
    Fail("corrupted", "the shape of clean, " + ShapeString(a), "shape " + ShapeString(b));
  }
  const TransformerForwardOptions &x = clean.options, &y = corrupted.options;
  const size_t n = x.decoder_input_ids_shape.empty() ? 0 : CheckedNumel("decoderInputIds", x.decoder_input_ids_shape);
  const bool same = x.decoder_input_ids_shape == y.decoder_input_ids_shape &&
                    (n == 0 || (x.decoder_input_ids && y.decoder_input_ids &&
                                std::equal(x.decoder_input_ids, x.decoder_input_ids + n, y.decoder_input_ids)));
  if (!same) Fail("decoderInputIds", "the same decoder inputs for clean and corrupted", "different ones");
}

}  // namespace

Transformer::PatchingResult Transformer::PatchHeads(const ModelInput& clean, const ModelInput& corrupted,
                                                    int64_t position, int64_t target) {
  const TransformerConfig& c = impl_->config;
  CheckModelInput(c, clean, "activation patching");
  CheckModelInput(c, corrupted, "activation patching");
  CheckPair(clean, corrupted);
  TransformerForwardOptions o;
  o.output_head_outputs = true;
  const TransformerOutput source = RunInput(*this, clean, o);
  const size_t at = LogitAt(source.logits.shape, position, target);
  PatchingResult result;
  result.clean_logit = source.logits.data[at];
  result.corrupted_logit = RunInput(*this, corrupted, {}).logits.data[at];
  const std::vector<HeadKind> kinds = KindsOf(c, source, nullptr);
  const size_t heads = static_cast<size_t>(c.num_heads);
  for (size_t k = 0; k < kinds.size(); ++k) {
    Tensor& effect = k == 0 ? result.effect : k == 1 ? result.decoder_effect : result.cross_effect;
    effect.shape = {static_cast<int64_t>(kinds[k].layers), c.num_heads};
    for (size_t i = 0; i < kinds[k].layers * heads; ++i) {
      const std::vector<float> values = HeadColumns((*kinds[k].outputs)[i / heads], i % heads);
      const TransformerOutput patched = RunInput(*this, corrupted, WithHeadValues(c, kinds[k], i, values.data()));
      effect.data.push_back(patched.logits.data[at] - result.corrupted_logit);
    }
  }
  return result;
}

}  // namespace attnlab
