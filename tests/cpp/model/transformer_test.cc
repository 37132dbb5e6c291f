// Mirrors cpp/src/model/transformer.cc: whole GPT-2 and Llama-family checkpoints (tests/fixtures/models/, made by
// PyTorch references that follow Hugging Face's modeling files) on every target: logits, every layer's attention,
// hidden states, padding, head masks, decoding through the cache step by step, greedy generation; the state dict;
// results independent of the thread count; every bad argument named.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "attnlab/memory_needs.h"
#include "attnlab/threads.h"
#include "attnlab/transformer.h"
#include "hwy_targets.h"
#include "model_fixture.h"
#include "test_util.h"

namespace attnlab_test {
namespace {

using attnlab::Transformer;
using attnlab::TransformerForwardOptions;

const std::string kModelFixtureDir = ATTNLAB_FIXTURE_DIR "/../models";

Transformer LoadedModel(const ModelFixture& f) {
  Transformer model(f.config, /*seed=*/7);
  std::map<std::string, attnlab::TensorView> state;
  for (const auto& [name, tensor] : f.checkpoint) state[name] = tensor.View();
  model.LoadStateDict(state);
  return model;
}

attnlab::TokensView TokensOf(const FixtureTensor& ids) { return attnlab::TokensView{ids.ints.data(), ids.shape}; }

std::vector<int64_t> AllLayers(const Transformer& model) {
  std::vector<int64_t> layers(static_cast<size_t>(model.config().num_layers));
  for (size_t l = 0; l < layers.size(); ++l) layers[l] = static_cast<int64_t>(l);
  return layers;
}

void CheckForwardCase(Transformer& model, const ModelForwardCase& c, Tolerance tol) {
  INFO("forward case " << c.name);
  std::vector<uint8_t> mask(c.attention_mask.ints.begin(), c.attention_mask.ints.end());
  TransformerForwardOptions options;
  if (c.has_attention_mask) {
    options.attention_mask = mask.data();
    options.attention_mask_shape = c.attention_mask.shape;
  }
  if (c.has_head_mask) {
    options.head_mask = c.head_mask.values.data();
    options.head_mask_shape = c.head_mask.shape;
  }
  options.output_attentions = AllLayers(model);
  options.output_hidden_states = true;
  const attnlab::TransformerOutput out = model.Forward(TokensOf(c.input_ids), options);
  CheckTensorClose("logits", out.logits, c.logits, tol);
  CheckLayerOutputs(out, c.attentions, c.hidden_states, tol);
}

void CheckDecoding(Transformer& model, const ModelFixture& f) {
  attnlab::TransformerKVCache cache = model.CreateKVCache(1, f.config.context_length);
  for (size_t i = 0; i < f.decode_steps.size(); ++i) {
    const auto [t0, t1] = f.decode_steps[i];
    INFO("decode step " << i << ": tokens " << t0 << " to " << t1);
    const std::vector<int32_t> ids(f.decode_ids.ints.begin() + t0, f.decode_ids.ints.begin() + t1);
    TransformerForwardOptions options;
    options.cache = &cache;
    options.output_attentions = AllLayers(model);
    const attnlab::TransformerOutput out = model.Forward({ids.data(), {1, t1 - t0}}, options);
    CHECK(cache.Length() == t1);
    CheckTensorClose("logits", out.logits, f.decode_logits[i], f.tol);
    for (size_t l = 0; l < out.attentions.size(); ++l) {
      CheckTensorClose("attentions[" + std::to_string(l) + "]", out.attentions[l], f.decode_attentions[i][l], f.tol);
    }
  }
}

// Argmax decoding through the cache (the first largest logit, as torch.argmax).
std::vector<int32_t> Greedy(Transformer& model, const std::vector<int32_t>& prompt, int64_t new_tokens) {
  attnlab::TransformerKVCache cache = model.CreateKVCache(1, model.config().context_length);
  TransformerForwardOptions options;
  options.cache = &cache;
  options.last_logits_only = true;
  std::vector<int32_t> step = prompt, out;
  for (int64_t i = 0; i < new_tokens; ++i) {
    const attnlab::TransformerOutput o = model.Forward({step.data(), {1, static_cast<int64_t>(step.size())}}, options);
    const size_t v = static_cast<size_t>(model.config().vocab_size);
    REQUIRE(o.logits.shape == attnlab::Shape{1, 1, static_cast<int64_t>(v)});
    const float* last = o.logits.data.data();
    out.push_back(static_cast<int32_t>(std::max_element(last, last + v) - last));
    step = {out.back()};
  }
  return out;
}

TEST_CASE("transformer: Hugging Face checkpoints give PyTorch's logits, attentions and hidden states on every target",
          "[model]") {
  const std::vector<std::string> dirs = ModelFixtureDirs(kModelFixtureDir);
  REQUIRE(dirs.size() >= 6);
  for (const std::string& dir : dirs) {
    const ModelFixture f = LoadModelFixture(dir);
    INFO("fixture " << f.name);
    ForEachTarget([&](const std::string&) {
      Transformer model = LoadedModel(f);
      for (const ModelForwardCase& c : f.forward) CheckForwardCase(model, c, f.tol);
      CheckDecoding(model, f);
      CHECK(Greedy(model, f.greedy_prompt, f.greedy_new_tokens) == f.greedy_tokens);
    });
  }
}

// The fixture's checkpoint loaded tensor by tensor as its 16-bit bits (LoadTensor16) into a model of that storage.
Transformer LoadedSixteen(const ModelFixture& f, attnlab::WeightStorage storage) {
  Transformer model(f.config, /*seed=*/0, /*initialise=*/false, storage);
  std::vector<std::pair<std::string, attnlab::Shape>> shapes;
  for (const auto& [name, tensor] : f.checkpoint) shapes.emplace_back(name, tensor.shape);
  model.CheckStateDict(shapes);
  for (const auto& [name, tensor] : f.checkpoint) {
    if (tensor.bits.empty()) {
      model.LoadTensor(name, tensor.View());  // (buffers: ignored)
    } else {
      model.LoadTensor16(name, tensor.bits.data(), tensor.shape, storage);
    }
  }
  return model;
}

// Forward with everything returned, on the fixture's first and last forward case.
std::vector<std::vector<float>> Everything(Transformer& model, const ModelFixture& f) {
  std::vector<std::vector<float>> out;
  for (const ModelForwardCase* c : {&f.forward.front(), &f.forward.back()}) {
    TransformerForwardOptions options;
    options.output_attentions = AllLayers(model);
    options.output_hidden_states = true;
    const attnlab::TransformerOutput o = model.Forward(TokensOf(c->input_ids), options);
    out.push_back(o.logits.data);
    for (const attnlab::Tensor& t : o.attentions) out.push_back(t.data);
    for (const attnlab::Tensor& t : o.hidden_states) out.push_back(t.data);
  }
  return out;
}

TEST_CASE(
    "transformer: F16 and BF16 checkpoints kept in 16 bits give float32 storage's results bit for bit, on every "
    "target",
    "[model]") {
  int sixteen_bit_fixtures = 0;
  for (const std::string& dir : ModelFixtureDirs(kModelFixtureDir)) {
    const ModelFixture f = LoadModelFixture(dir);
    std::set<std::string> dtypes;
    for (const auto& [name, tensor] : f.checkpoint) {
      if (tensor.is_float()) dtypes.insert(tensor.dtype);
    }
    const std::string dtype = *dtypes.begin();
    if (dtypes.size() != 1 || (dtype != "F16" && dtype != "BF16")) continue;
    ++sixteen_bit_fixtures;
    const attnlab::WeightStorage storage =
        dtype == "F16" ? attnlab::WeightStorage::kF16 : attnlab::WeightStorage::kBF16;
    INFO("fixture " << f.name << " (" << dtype << ")");
    ForEachTarget([&](const std::string&) {
      Transformer sixteen = LoadedSixteen(f, storage);
      Transformer wide = LoadedModel(f);
      CHECK(sixteen.storage() == storage);
      CHECK(wide.storage() == attnlab::WeightStorage::kFloat32);
      CHECK(Everything(sixteen, f) == Everything(wide, f));
      for (const ModelForwardCase& c : f.forward) CheckForwardCase(sixteen, c, f.tol);
      CheckDecoding(sixteen, f);
      CHECK(Greedy(sixteen, f.greedy_prompt, f.greedy_new_tokens) == f.greedy_tokens);
      for (const auto& [name, shape] : wide.ParameterShapes())
        CHECK(sixteen.Parameter(name).data == wide.Parameter(name).data);
    });
    // Training widens every matrix exactly first: the same step as the float32 model's.
    Transformer sixteen = LoadedSixteen(f, storage);
    Transformer wide = LoadedModel(f);
    const attnlab::TokensView tokens = TokensOf(f.forward.front().input_ids);
    const Transformer::AdamWOptions adamw{1e-3f};
    const Transformer::StepResult a = sixteen.TrainStep(tokens, tokens, adamw);
    const Transformer::StepResult b = wide.TrainStep(tokens, tokens, adamw);
    CHECK(a.loss == b.loss);
    CHECK(a.grad_norm == b.grad_norm);
    CHECK(sixteen.storage() == attnlab::WeightStorage::kFloat32);
    CHECK(Everything(sixteen, f) == Everything(wide, f));
    // A float32 tensor loaded into a 16-bit model widens its matrix only, exactly.
    Transformer mixed = LoadedSixteen(f, storage), reference = LoadedModel(f);
    const std::string matrix = mixed.ParameterShapes()[2].first;  // (a block's first matrix or norm)
    const attnlab::Tensor w = reference.Parameter(matrix);
    mixed.LoadTensor(matrix, attnlab::TensorView{w.data.data(), w.shape});
    CHECK(Everything(mixed, f) == Everything(reference, f));
  }
  CHECK(sixteen_bit_fixtures >= 3);
}

// The fixture loaded tensor by tensor in pieces of `rows` rows (LoadTensorRows, or LoadTensor16Rows in 16-bit
// storage), a tied head last (it is compared with the embedding).
Transformer LoadedInPieces(const ModelFixture& f, int64_t rows, attnlab::WeightStorage storage) {
  Transformer model(f.config, /*seed=*/0, /*initialise=*/false, storage);
  std::vector<std::string> names;
  for (const auto& [name, tensor] : f.checkpoint) {
    if (tensor.is_float() && !model.CanonicalName(name).empty()) names.push_back(name);
  }
  std::stable_partition(names.begin(), names.end(), [&](const std::string& n) { return model.TiedTo(n).empty(); });
  for (const std::string& name : names) {
    const CheckpointTensor& t = f.checkpoint.at(name);
    const int64_t n = t.shape[0], width = static_cast<int64_t>(t.values.size()) / std::max<int64_t>(n, 1);
    for (int64_t first = 0; first < n; first += rows) {
      attnlab::Shape shape = t.shape;
      shape[0] = std::min(rows, n - first);
      if (storage == attnlab::WeightStorage::kFloat32) {
        model.LoadTensorRows(name, attnlab::TensorView{t.values.data() + first * width, shape}, first);
      } else {
        model.LoadTensor16Rows(name, t.bits.data() + first * width, shape, storage, first);
      }
    }
  }
  return model;
}

TEST_CASE("transformer: a tensor loaded in pieces of whole rows is the tensor loaded whole; bad pieces are named",
          "[model]") {
  for (const std::string& dir : ModelFixtureDirs(kModelFixtureDir)) {
    const ModelFixture f = LoadModelFixture(dir);
    INFO("fixture " << f.name);
    Transformer whole = LoadedModel(f);
    const bool sixteen = std::all_of(f.checkpoint.begin(), f.checkpoint.end(), [](const auto& kv) {
      return !kv.second.is_float() || kv.second.dtype == "F16" || kv.second.dtype == "BF16";
    });
    for (const int64_t rows : {int64_t{1}, int64_t{3}}) {
      Transformer pieces = LoadedInPieces(f, rows, attnlab::WeightStorage::kFloat32);
      for (const auto& [name, shape] : whole.ParameterShapes())
        CHECK(pieces.Parameter(name).data == whole.Parameter(name).data);
      if (!sixteen) continue;
      const bool f16 = std::any_of(f.checkpoint.begin(), f.checkpoint.end(),
                                   [](const auto& kv) { return kv.second.dtype == "F16"; });
      const attnlab::WeightStorage storage = f16 ? attnlab::WeightStorage::kF16 : attnlab::WeightStorage::kBF16;
      Transformer narrow = LoadedInPieces(f, rows, storage);
      CHECK(narrow.storage() == storage);
      for (const auto& [name, shape] : whole.ParameterShapes())
        CHECK(narrow.Parameter(name).data == whole.Parameter(name).data);
    }
  }
  const ModelFixture f = LoadModelFixture(ModelFixtureDirs(kModelFixtureDir).front());
  Transformer model = LoadedModel(f);
  const auto [name, shape] = model.ParameterShapes().front();
  const attnlab::Tensor rows = model.Parameter(name);
  const attnlab::TensorView two{rows.data.data(), {2, shape[1]}};
  CHECK_THROWS_WITH(model.LoadTensorRows(name, two, shape[0] - 1), Catch::Contains(name) && Catch::Contains("row"));
  CHECK_THROWS_WITH(model.LoadTensorRows(name, two, -1), Catch::Contains(name) && Catch::Contains("row"));
  CHECK_THROWS_WITH(model.LoadTensorRows(name, attnlab::TensorView{rows.data.data(), {2, shape[1] - 1}}, 0),
                    Catch::Contains(name) && Catch::Contains("shape"));
  if (model.config().tie_embeddings) {
    const std::string head = "lm_head.weight";
    REQUIRE(model.TiedTo(head) == name);
    model.LoadTensorRows(head, two, 0);  // (equal to the embedding's rows)
    std::vector<float> changed(rows.data.begin(), rows.data.begin() + 2 * shape[1]);
    changed[1] += 0.5f;
    CHECK_THROWS_WITH(model.LoadTensorRows(head, attnlab::TensorView{changed.data(), {2, shape[1]}}, 0),
                      Catch::Contains(head) && Catch::Contains("equal to"));
  }
}

TEST_CASE("transformer: 16-bit storage halves the matrices' memory; its misuse is named", "[model]") {
  const ModelFixture f = LoadModelFixture(ModelFixtureDirs(kModelFixtureDir).front());
  double wide = 0, sixteen = 0;
  for (const auto& part : attnlab::TransformerParameterMemoryNeeds(f.config)) wide += part.bytes;
  for (const auto& part : attnlab::TransformerParameterMemoryNeeds(f.config, attnlab::WeightStorage::kF16)) {
    sixteen += part.bytes;
  }
  CHECK(sixteen < 0.75 * wide);
  // Loading stages pieces of at most kLoadPieceBytes, initialising a whole tensor: for GPT-2 small's 154 MB
  // embedding, five pieces' bytes instead.
  attnlab::TransformerConfig gpt2 = f.config;
  gpt2.vocab_size = 50257;
  gpt2.embed_dim = 768;
  gpt2.num_heads = gpt2.num_kv_heads = 12;
  gpt2.head_dim = 64;
  gpt2.hidden_dim = 4 * 768;
  const auto last = [](const attnlab::MemoryNeeds& needs) { return needs.back(); };
  const attnlab::MemoryPart init = last(attnlab::TransformerParameterMemoryNeeds(gpt2));
  const attnlab::MemoryPart load =
      last(attnlab::TransformerParameterMemoryNeeds(gpt2, attnlab::WeightStorage::kF16, /*loading=*/true));
  CHECK(init.bytes == 50257.0 * 768 * 4);
  CHECK(load.bytes == 5.0 * attnlab::kLoadPieceBytes);
  CHECK(init.what != load.what);
  CHECK_THROWS_WITH(Transformer(f.config, 0, /*initialise=*/true, attnlab::WeightStorage::kF16),
                    Catch::Contains("storage"));
  Transformer model(f.config, 0, /*initialise=*/false, attnlab::WeightStorage::kF16);
  const auto [name, shape] = model.ParameterShapes().front();
  const std::vector<uint16_t> bits(static_cast<size_t>(shape[0] * shape[1]));
  CHECK_THROWS_WITH(model.LoadTensor16(name, bits.data(), {shape[0], shape[1] + 1}, attnlab::WeightStorage::kF16),
                    Catch::Contains(name) && Catch::Contains("shape"));
  CHECK_THROWS_WITH(model.LoadTensor16(name, bits.data(), shape, attnlab::WeightStorage::kFloat32),
                    Catch::Contains("dtype"));
  CHECK_THROWS_WITH(model.LoadTensor16(name, nullptr, shape, attnlab::WeightStorage::kF16), Catch::Contains(name));
}

TEST_CASE("transformer: last_logits_only gives each item's last row of the full logits", "[model]") {
  const ModelFixture f = LoadModelFixture(ModelFixtureDirs(kModelFixtureDir).front());
  Transformer model = LoadedModel(f);
  const ModelForwardCase& c = f.forward.front();
  const attnlab::TransformerOutput full = model.Forward(TokensOf(c.input_ids));
  TransformerForwardOptions options;
  options.last_logits_only = true;
  const attnlab::TransformerOutput last = model.Forward(TokensOf(c.input_ids), options);
  const int64_t b = c.input_ids.shape[0], t = c.input_ids.shape[1], v = f.config.vocab_size;
  REQUIRE(last.logits.shape == attnlab::Shape{b, 1, v});
  std::vector<float> expected;
  for (int64_t i = 0; i < b; ++i) {
    const auto row = full.logits.data.begin() + ((i + 1) * t - 1) * v;
    expected.insert(expected.end(), row, row + v);
  }
  CheckAllClose("last logits", last.logits.data, expected, f.tol);
}

TEST_CASE("transformer: the state dict gives back each loaded tensor under Hugging Face's bare name", "[model]") {
  for (const std::string& dir : ModelFixtureDirs(kModelFixtureDir)) {
    const ModelFixture f = LoadModelFixture(dir);
    INFO("fixture " << f.name);
    Transformer model = LoadedModel(f);
    const std::map<std::string, attnlab::Tensor> state = model.StateDict();
    const auto shapes = model.ParameterShapes();
    REQUIRE(state.size() == shapes.size());
    for (const auto& [name, shape] : shapes) {
      INFO(name);
      REQUIRE(state.count(name) == 1);
      CHECK(state.at(name).shape == shape);
      const std::string gpt2_name = "transformer." + name;
      const auto it = f.checkpoint.count(name) ? f.checkpoint.find(name) : f.checkpoint.find(gpt2_name);
      REQUIRE(it != f.checkpoint.end());
      CHECK(BitIdentical(state.at(name).data, it->second.values));
    }
    Transformer copy(f.config, 99);
    std::map<std::string, attnlab::TensorView> views;
    for (const auto& [name, t] : state) views[name] = attnlab::TensorView{t.data.data(), t.shape};
    copy.LoadStateDict(views);
    const std::vector<int32_t> ids = {1, 2, 3, 4};
    CHECK(
        BitIdentical(copy.Forward({ids.data(), {1, 4}}).logits.data, model.Forward({ids.data(), {1, 4}}).logits.data));
  }
}

TEST_CASE("transformer: results do not depend on the thread count", "[model][threads]") {
  const ModelFixture f = LoadModelFixture(ModelFixtureDirs(kModelFixtureDir).front());
  Transformer model = LoadedModel(f);
  const std::vector<int32_t> ids = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8};
  TransformerForwardOptions options;
  options.output_attentions = AllLayers(model);
  attnlab::SetThreadCount(1);
  const attnlab::TransformerOutput one = model.Forward({ids.data(), {2, 6}}, options);
  for (size_t threads : {2, 3}) {
    attnlab::SetThreadCount(threads);
    const attnlab::TransformerOutput many = model.Forward({ids.data(), {2, 6}}, options);
    CHECK(BitIdentical(one.logits.data, many.logits.data));
    CHECK(BitIdentical(one.attentions[0].data, many.attentions[0].data));
  }
  attnlab::SetThreadCount(1);
}

}  // namespace
}  // namespace attnlab_test
