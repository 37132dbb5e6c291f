// Mirrors cpp/src/model/analysis_encoders.cc and the head values / head outputs of an encoder–decoder's three kinds
// of head (seq2seq.cc, block-inl.h's cross-attention stage): head importance by ablation (zero, mean) and by the
// head masks' gradients, attribution by occlusion and by the input gradient, and activation patching of BERT, RoBERTa,
// ViT, Marian and T5 checkpoints against PyTorch (the analysis.json of tests/fixtures/encoders/<case>/ and
// tests/fixtures/seq2seq/<case>/, gen_analysis_encoders.py) on every target; properties against the forward itself;
// each bad argument named.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnlab/transformer.h"
#include "encoder_fixture.h"
#include "hwy_targets.h"
#include "model_fixture.h"
#include "seq2seq_fixture.h"
#include "test_util.h"
#include "validation.h"

namespace attnlab_test {
namespace {

using attnlab::Tensor;
using attnlab::Transformer;
using attnlab::TransformerForwardOptions;

struct EncoderAnalysisFixture {
  CheckpointFixture model;
  nlohmann::json json;
  std::map<std::string, FixtureTensor> t;  // every tensor of analysis.json by its key
  int64_t position = 0, target = 0;
  Tolerance tol;

  bool Seq2Seq() const { return t.count("decoder_input_ids") > 0; }
  bool Vision() const { return t.count("pixel_values") > 0; }
};

std::vector<EncoderAnalysisFixture> LoadFixtures() {
  std::vector<EncoderAnalysisFixture> out;
  for (const std::string& root : {kEncoderFixtureDir, kSeq2SeqFixtureDir}) {
    for (const std::string& dir : ModelFixtureDirs(root)) {
      std::ifstream in(dir + "/analysis.json");
      if (!in) continue;
      EncoderAnalysisFixture f;
      f.json = nlohmann::json::parse(in);
      f.model = root == kEncoderFixtureDir ? CheckpointFixture(LoadEncoderFixture(dir))
                                           : CheckpointFixture(LoadSeq2SeqFixture(dir));
      for (const auto& [key, value] : f.json.items()) {
        if (value.is_object() && value.contains("shape")) f.t[key] = ParseFixtureTensor(value);
      }
      f.position = f.json.at("position").get<int64_t>();
      f.target = f.json.at("target").get<int64_t>();
      f.tol =
          Tolerance{f.json.at("tolerance").at("atol").get<double>(), f.json.at("tolerance").at("rtol").get<double>()};
      out.push_back(std::move(f));
    }
  }
  return out;
}

Transformer Loaded(const EncoderAnalysisFixture& f) {
  return LoadedCheckpoint(f.model.Config(), f.model.checkpoint, attnlab::WeightStorage::kFloat32);
}

// The fixture's inputs as a ModelInput (rows [0, rows) of them; `ids` replaces the token ids when non-null; `pixels`
// must outlive the result), the batch's attention mask when `with_mask`.
struct Input {
  Transformer::ModelInput in;
  attnlab::PixelsView pixels;
  std::vector<uint8_t> mask;
};

void Fill(const EncoderAnalysisFixture& f, int64_t rows, const FixtureTensor* ids, bool with_mask, Input& out) {
  if (f.Vision()) {
    const FixtureTensor& px = ids ? *ids : f.t.at("pixel_values");
    out.pixels = {px.values.data(), px.shape};
    out.pixels.shape[0] = rows;
    out.in.pixels = &out.pixels;
  } else {
    const FixtureTensor& tokens = ids ? *ids : f.t.at("input_ids");
    out.in.tokens = {tokens.ints.data(), {rows, tokens.shape[1]}};
  }
  if (with_mask && f.t.count("attention_mask")) {
    const FixtureTensor& m = f.t.at("attention_mask");
    out.mask.assign(m.ints.begin(), m.ints.end());
    out.in.options.attention_mask = out.mask.data();
    out.in.options.attention_mask_shape = m.shape;
  }
}

// Patching's and attribution's decoder inputs (row 0 of the batch's: shift_right(labels[0])).
void WithDecoderRow(const EncoderAnalysisFixture& f, Input& x) {
  if (!f.Seq2Seq()) return;
  x.in.options.decoder_input_ids = f.t.at("decoder_input_ids").ints.data();
  x.in.options.decoder_input_ids_shape = {1, f.t.at("decoder_input_ids").shape[1]};
}

void CheckScalarClose(const std::string& what, double actual, const FixtureTensor& expected, Tolerance tol) {
  INFO(what << ": " << actual << " vs " << expected.values.at(0));
  CHECK(std::fabs(actual - expected.values.at(0)) <= tol.atol + tol.rtol * std::fabs(expected.values.at(0)));
}

// The gradient methods' tolerance: relative, and absolute at a thousandth of the reference's largest value (their
// values run from 1e-7 to 0.4 between fixtures; the fixture's atol would pass the smallest unread).
Tolerance GradientTolerance(const FixtureTensor& expected) {
  double largest = 0;
  for (double v : expected.values) largest = std::max(largest, std::fabs(v));
  return Tolerance{1e-3 * largest, 1e-3};
}

void CheckGradientImportance(Transformer& model, const EncoderAnalysisFixture& f, const Input& batch,
                             const attnlab::TokensView& y) {
  const Transformer::HeadImportanceResult r =
      model.HeadImportance(batch.in, y, Transformer::ImportanceMethod::kGradient);
  CheckScalarClose("loss, gradient", r.loss, f.t.at("loss"), f.tol);
  for (const auto& [kind, got] : {std::pair{"", &r.importance}, std::pair{"decoder_", &r.decoder_importance},
                                  std::pair{"cross_", &r.cross_importance}}) {
    const std::string key = std::string(kind) + "gradient_importance";
    if (!f.Seq2Seq() && *kind) {
      CHECK(got->data.empty());
      continue;
    }
    CheckTensorClose(key, *got, f.t.at(key), GradientTolerance(f.t.at(key)));
  }
}

void CheckImportance(Transformer& model, const EncoderAnalysisFixture& f) {
  Input batch;
  Fill(f, f.Vision() ? f.t.at("pixel_values").shape[0] : f.t.at("input_ids").shape[0], nullptr, true, batch);
  const FixtureTensor& labels = f.t.at("labels");
  const attnlab::TokensView y{labels.ints.data(), labels.shape};
  if (f.t.count("gradient_importance")) CheckGradientImportance(model, f, batch, y);
  for (const auto& [key, ablation] : {std::pair{"ablation_zero", Transformer::Ablation::kZero},
                                      std::pair{"ablation_mean", Transformer::Ablation::kMean}}) {
    const Transformer::HeadImportanceResult r =
        model.HeadImportance(batch.in, y, Transformer::ImportanceMethod::kAblation, ablation);
    CheckScalarClose(std::string("loss, ") + key, r.loss, f.t.at("loss"), f.tol);
    CheckTensorClose(key, r.importance, f.t.at(key), f.tol);
    if (!f.Seq2Seq()) {
      CHECK(r.decoder_importance.data.empty());
      continue;
    }
    CheckTensorClose(std::string("decoder_") + key, r.decoder_importance, f.t.at(std::string("decoder_") + key), f.tol);
    CheckTensorClose(std::string("cross_") + key, r.cross_importance, f.t.at(std::string("cross_") + key), f.tol);
  }
}

void CheckAgainstFixture(const EncoderAnalysisFixture& f) {
  Transformer model = Loaded(f);
  CheckImportance(model, f);
  Input one, corrupted;
  Fill(f, 1, nullptr, false, one);
  Fill(f, 1, &f.t.at("corrupted"), false, corrupted);
  WithDecoderRow(f, one);
  WithDecoderRow(f, corrupted);
  CheckTensorClose("occlusion",
                   model.Attribution(one.in, f.position, f.target, Transformer::AttributionMethod::kOcclusion),
                   f.t.at("occlusion"), f.tol);
  for (const auto& [key, method] : {std::pair{"gradient", Transformer::AttributionMethod::kGradient},
                                    std::pair{"gradient_x_input", Transformer::AttributionMethod::kGradientXInput}}) {
    if (f.t.count(key)) {
      CheckTensorClose(key, model.Attribution(one.in, f.position, f.target, method), f.t.at(key),
                       GradientTolerance(f.t.at(key)));
    }
  }
  const Transformer::PatchingResult p = model.PatchHeads(one.in, corrupted.in, f.position, f.target);
  CheckTensorClose("patch_effect", p.effect, f.t.at("patch_effect"), f.tol);
  CheckScalarClose("patch_clean_logit", p.clean_logit, f.t.at("patch_clean_logit"), f.tol);
  CheckScalarClose("patch_corrupted_logit", p.corrupted_logit, f.t.at("patch_corrupted_logit"), f.tol);
  if (f.Seq2Seq()) {
    CheckTensorClose("decoder_patch_effect", p.decoder_effect, f.t.at("decoder_patch_effect"), f.tol);
    CheckTensorClose("cross_patch_effect", p.cross_effect, f.t.at("cross_patch_effect"), f.tol);
  }
}

TEST_CASE("encoder analysis: ablation, occlusion and patching match PyTorch on every target",
          "[model][analysis][encoder]") {
  const std::vector<EncoderAnalysisFixture> fixtures = LoadFixtures();
  REQUIRE(fixtures.size() == 5);
  // the gradient methods' references: every fixture but marian's (post-norm encoder–decoders refuse them)
  for (const EncoderAnalysisFixture& f : fixtures) {
    CHECK(f.t.count("gradient_importance") + f.t.count("gradient") + f.t.count("gradient_x_input") ==
          (f.model.name == "marian_mt_f32" ? 0 : 3));
  }
  for (const EncoderAnalysisFixture& f : fixtures) {
    INFO("fixture " << f.model.name);
    ForEachTarget([&](const std::string&) { CheckAgainstFixture(f); });
  }
}

const EncoderAnalysisFixture& Named(const std::vector<EncoderAnalysisFixture>& all, const std::string& name) {
  for (const EncoderAnalysisFixture& f : all) {
    if (f.model.name == name) return f;
  }
  FAIL("no fixture " << name);
  return all.front();
}

TEST_CASE("encoder–decoder head values: every kind's own outputs fed back give the same logits, a self-patch 0",
          "[model][analysis][encoder]") {
  const std::vector<EncoderAnalysisFixture> all = LoadFixtures();
  for (const char* name : {"marian_mt_f32", "t5_v10_f32"}) {
    INFO(name);
    const EncoderAnalysisFixture& f = Named(all, name);
    Transformer model = Loaded(f);
    Input one;
    Fill(f, 1, nullptr, false, one);
    WithDecoderRow(f, one);
    TransformerForwardOptions o = one.in.options;
    o.output_head_outputs = true;
    const attnlab::TransformerOutput clean = model.Forward(one.in.tokens, o);
    const attnlab::TransformerConfig& c = model.config();
    REQUIRE(clean.encoder_head_outputs.size() == static_cast<size_t>(c.num_layers));
    REQUIRE(clean.head_outputs.size() == static_cast<size_t>(c.decoder_layers));
    REQUIRE(clean.cross_head_outputs.size() == static_cast<size_t>(c.decoder_layers));
    // (each layer's (1, T, H, hd) as H buffers (1, T, hd): encoder, decoder, cross)
    std::vector<std::vector<float>> own;
    for (const auto* list : {&clean.encoder_head_outputs, &clean.head_outputs, &clean.cross_head_outputs}) {
      for (const Tensor& layer : *list) {
        const size_t heads = static_cast<size_t>(layer.shape[2]), hd = static_cast<size_t>(layer.shape[3]);
        for (size_t h = 0; h < heads; ++h) {
          std::vector<float>& v = own.emplace_back();
          for (size_t r = 0; r < layer.data.size() / (heads * hd); ++r) {
            v.insert(v.end(), layer.data.begin() + (r * heads + h) * hd, layer.data.begin() + (r * heads + h + 1) * hd);
          }
        }
      }
    }
    TransformerForwardOptions fed = one.in.options;
    for (const std::vector<float>& v : own) fed.head_values.push_back(v.data());
    CHECK(model.Forward(one.in.tokens, fed).logits.data == clean.logits.data);
    // another source's cross-attention values change the logits (they are read)
    std::vector<float> zeros(own.back().size(), 0.0f);
    fed.head_values.back() = zeros.data();
    CHECK(model.Forward(one.in.tokens, fed).logits.data != clean.logits.data);
    fed.head_values.pop_back();
    ExpectInvalidArgument([&] { model.Forward(one.in.tokens, fed); }, {"headValues"});
    const Transformer::PatchingResult p = model.PatchHeads(one.in, one.in, f.position, f.target);
    for (const Tensor* e : {&p.effect, &p.decoder_effect, &p.cross_effect}) {
      CHECK(e->data == std::vector<float>(e->data.size(), 0.0f));
    }
  }
}

TEST_CASE("encoder analysis: zero ablation is the loss of a forward with that kind's head mask",
          "[model][analysis][encoder]") {
  const std::vector<EncoderAnalysisFixture> all = LoadFixtures();
  const EncoderAnalysisFixture& f = Named(all, "t5_v10_f32");
  Transformer model = Loaded(f);
  Input batch;
  Fill(f, f.t.at("input_ids").shape[0], nullptr, true, batch);
  const FixtureTensor& labels = f.t.at("labels");
  const Transformer::HeadImportanceResult r =
      model.HeadImportance(batch.in, {labels.ints.data(), labels.shape}, Transformer::ImportanceMethod::kAblation);
  const attnlab::TransformerConfig& c = model.config();
  // cross-attention head (Ld − 1, H − 1) zeroed: the test's own forward of shift_right(labels)
  std::vector<float> mask(static_cast<size_t>(c.decoder_layers * c.num_heads), 1.0f);
  mask.back() = 0.0f;
  TransformerForwardOptions o = batch.in.options;
  o.decoder_input_ids = f.t.at("decoder_input_ids").ints.data();
  o.decoder_input_ids_shape = f.t.at("decoder_input_ids").shape;
  const Tensor clean = model.Forward(batch.in.tokens, o).logits;
  o.cross_attn_head_mask = mask.data();
  o.cross_attn_head_mask_shape = {c.decoder_layers, c.num_heads};
  const Tensor masked = model.Forward(batch.in.tokens, o).logits;
  // the loss of each: rows with a label (row 1 has 2 of 4), each row's mean cross-entropy
  auto loss = [&](const Tensor& logits) {
    const size_t t_len = static_cast<size_t>(labels.shape[1]), v = static_cast<size_t>(c.vocab_size);
    double total = 0;
    for (size_t b = 0; b < 2; ++b) {
      double sum = 0;
      size_t n = 0;
      for (size_t t = 0; t < t_len; ++t) {
        const int32_t y = labels.ints[b * t_len + t];
        if (y == -100) continue;
        const float* row = logits.data.data() + (b * t_len + t) * v;
        double z = 0;
        for (size_t j = 0; j < v; ++j) z += std::exp(static_cast<double>(row[j]));
        sum += std::log(z) - row[y], ++n;
      }
      total += sum / static_cast<double>(n);
    }
    return total / 2;
  };
  CHECK(r.cross_importance.data.back() == Approx(loss(masked) - loss(clean)).margin(1e-6));
  CHECK(r.loss == Approx(loss(clean)).margin(1e-6));
}

// Row 0's mean cross-entropy of logits (1, T, V) or (1, C) against labels row 0 (−100 ignored).
double RowLoss(const Tensor& logits, const int32_t* labels) {
  const size_t v = static_cast<size_t>(logits.shape.back()), t_len = logits.data.size() / v;
  double sum = 0;
  size_t n = 0;
  for (size_t t = 0; t < t_len; ++t) {
    if (labels[t] == -100) continue;
    const float* row = logits.data.data() + t * v;
    double z = 0;
    for (size_t j = 0; j < v; ++j) z += std::exp(static_cast<double>(row[j]));
    sum += std::log(z) - row[labels[t]], ++n;
  }
  return sum / static_cast<double>(n);
}

TEST_CASE("encoder analysis: the gradient importance of one row is |a central difference| on each kind's head mask",
          "[model][analysis][encoder]") {
  const std::vector<EncoderAnalysisFixture> all = LoadFixtures();
  for (const char* name : {"vit_cls_f32", "t5_v10_f32"}) {
    INFO(name);
    const EncoderAnalysisFixture& f = Named(all, name);
    Transformer model = Loaded(f);
    Input one;
    Fill(f, 1, nullptr, false, one);
    const FixtureTensor& labels = f.t.at("labels");
    const attnlab::Shape row_shape = f.Seq2Seq() ? attnlab::Shape{1, labels.shape[1]} : attnlab::Shape{1};
    const Transformer::HeadImportanceResult r =
        model.HeadImportance(one.in, {labels.ints.data(), row_shape}, Transformer::ImportanceMethod::kGradient);
    WithDecoderRow(f, one);  // (shift_right(labels row 0), HeadImportance's default)
    const Tensor* kinds[3] = {&r.importance, &r.decoder_importance, &r.cross_importance};
    for (size_t k = 0; k < (f.Seq2Seq() ? 3 : 1); ++k) {
      // the kind's largest head, its ξ moved by ±h in the forward's head mask
      const std::vector<float>& g = kinds[k]->data;
      const size_t at = static_cast<size_t>(std::max_element(g.begin(), g.end()) - g.begin());
      std::vector<float> mask(g.size(), 1.0f);
      TransformerForwardOptions o = one.in.options;
      (k == 0 ? o.head_mask : k == 1 ? o.decoder_head_mask : o.cross_attn_head_mask) = mask.data();
      (k == 0   ? o.head_mask_shape
       : k == 1 ? o.decoder_head_mask_shape
                : o.cross_attn_head_mask_shape) = kinds[k]->shape;
      constexpr float kH = 1e-2f;
      auto loss_at = [&](float xi) {
        mask[at] = xi;
        const Tensor logits = f.Vision() ? model.Forward(one.pixels, o).logits : model.Forward(one.in.tokens, o).logits;
        return RowLoss(logits, labels.ints.data());
      };
      const double fd = (loss_at(1 + kH) - loss_at(1 - kH)) / (2 * kH);
      INFO("kind " << k << ", head " << at << ": " << g[at] << " vs " << fd);
      CHECK(g[at] > 1e-3f);
      CHECK(std::fabs(g[at] - std::fabs(fd)) <= 1e-4 + 2e-2 * std::fabs(fd));
    }
  }
}

TEST_CASE("encoder analysis: each bad argument is named", "[model][analysis][encoder][validation]") {
  const std::vector<EncoderAnalysisFixture> all = LoadFixtures();
  const EncoderAnalysisFixture& bert = Named(all, "bert_mlm_f32");
  Transformer model = Loaded(bert);
  Input one, two;
  Fill(bert, 1, nullptr, false, one);
  Fill(bert, 2, nullptr, false, two);
  const FixtureTensor& labels = bert.t.at("labels");
  const attnlab::TokensView y{labels.ints.data(), labels.shape};
  using M = Transformer::AttributionMethod;
  ExpectInvalidArgument([&] { model.Attribution(two.in, 4, 0, M::kGradient); }, {"tokens", "batch size 1"});
  ExpectInvalidArgument([&] { model.Attribution(one.in, 7, 0, M::kGradientXInput); }, {"position"});
  ExpectInvalidArgument([&] { model.Attribution(one.in, 0, 24, M::kGradient); }, {"target"});
  ExpectInvalidArgument([&] { model.HeadImportance(two.in, y, Transformer::ImportanceMethod::kGradient); },
                        {"labels", "shape"});
  ExpectInvalidArgument([&] { model.Attribution(two.in, 4, 0, M::kOcclusion); }, {"tokens", "batch size 1"});
  ExpectInvalidArgument([&] { model.Attribution(one.in, 7, 0, M::kOcclusion); }, {"position"});
  ExpectInvalidArgument([&] { model.Attribution(one.in, 0, 24, M::kOcclusion); }, {"target"});
  ExpectInvalidArgument([&] { model.HeadImportance(two.in, y, Transformer::ImportanceMethod::kAblation); },
                        {"labels", "shape"});
  const std::vector<int32_t> bad(labels.ints.size(), 24), none(labels.ints.size(), -100);
  ExpectInvalidArgument(
      [&] {
        model.HeadImportance(one.in, {bad.data(), {1, 7}}, Transformer::ImportanceMethod::kAblation);
      },
      {"labels", "-100"});
  ExpectInvalidArgument(
      [&] {
        model.HeadImportance(one.in, {none.data(), {1, 7}}, Transformer::ImportanceMethod::kAblation,
                             Transformer::Ablation::kMean);
      },
      {"labels", "at least one"});
  Input with_mask = one;
  with_mask.in.options.output_hidden_states = true;
  ExpectInvalidArgument([&] { model.PatchHeads(with_mask.in, one.in, 0, 0); }, {"options"});
  const std::vector<int32_t> short_ids(6, 3);
  Input shorter = one;
  shorter.in.tokens = {short_ids.data(), {1, 6}};
  ExpectInvalidArgument([&] { model.PatchHeads(one.in, shorter.in, 0, 0); }, {"corrupted", "shape"});
  // an encoder–decoder's clean and corrupted share their decoder inputs
  const EncoderAnalysisFixture& marian = Named(all, "marian_mt_f32");
  Transformer mt = Loaded(marian);
  Input a, b;
  Fill(marian, 1, nullptr, false, a);
  Fill(marian, 1, nullptr, false, b);
  WithDecoderRow(marian, a);
  WithDecoderRow(marian, b);
  b.in.options.decoder_input_ids = marian.t.at("decoder_input_ids").ints.data() + 4;  // (row 1's)
  ExpectInvalidArgument([&] { mt.PatchHeads(a.in, b.in, 0, 0); }, {"decoderInputIds"});
  // a post-norm encoder–decoder's gradient methods are refused (no head-mask gradients in its backward yet)
  ExpectInvalidArgument([&] { mt.Attribution(a.in, 0, 0, M::kGradient); }, {"marian"});
  // a base model has no logit
  const Seq2SeqFixture base_fixture = LoadSeq2SeqFixture(kSeq2SeqFixtureDir + "/t5_base_f32");
  Transformer base = LoadedCheckpoint(base_fixture.Config(), base_fixture.checkpoint, attnlab::WeightStorage::kFloat32);
  ExpectInvalidArgument([&] { base.PatchHeads(a.in, a.in, 0, 0); }, {"task", "'base'"});
}

}  // namespace
}  // namespace attnlab_test
