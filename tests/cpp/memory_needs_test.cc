// attnlab/memory_needs.h: the sizes each call reports match what the call really returns and keeps.
#include "attnlab/memory_needs.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "test_util.h"

namespace {

using attnlab::MemoryNeeds;
using attnlab::Shape;

double PartBytes(const MemoryNeeds& needs, const std::string& what) {
  for (const auto& part : needs) {
    if (part.what == what) return part.bytes;
  }
  FAIL("no memory part named '" << what << "'");
  return 0;
}

double Bytes(const attnlab::Tensor& t) { return 4.0 * static_cast<double>(t.data.size()); }

// What a module really holds: the bytes of its state dict's tensors.
template <class StateDict>
double StateDictBytes(const StateDict& state_dict) {
  double bytes = 0;
  for (const auto& [name, tensor] : state_dict) bytes += Bytes(tensor);
  return bytes;
}

double TotalBytes(const MemoryNeeds& needs) {
  double bytes = 0;
  for (const auto& part : needs) bytes += part.bytes;
  return bytes;
}

}  // namespace

TEST_CASE("SDPA memory needs equal the sizes of its results", "[memory_needs]") {
  attnlab_test::Rng rng(7);
  const Shape qs{2, 3, 5, 4}, ks{2, 3, 7, 4}, vs{2, 3, 7, 6};
  const auto q = attnlab_test::RandomVector(rng, 2 * 3 * 5 * 4);
  const auto k = attnlab_test::RandomVector(rng, 2 * 3 * 7 * 4);
  const auto v = attnlab_test::RandomVector(rng, 2 * 3 * 7 * 6);
  const auto result = attnlab::ScaledDotProductAttention({q.data(), qs}, {k.data(), ks}, {v.data(), vs});
  const MemoryNeeds needs = attnlab::SdpaMemoryNeeds(qs, ks, vs, /*need_weights=*/true);
  CHECK(PartBytes(needs, "output (*batch, Lq, dv)") == Bytes(result.output));
  CHECK(PartBytes(needs, "weights (*batch, Lq, Lk)") == Bytes(result.weights));
  CHECK(attnlab::SdpaMemoryNeeds(qs, ks, vs, /*need_weights=*/false).size() == 1);

  const auto grads = attnlab::ScaledDotProductAttentionBackward({q.data(), qs}, {k.data(), ks}, {v.data(), vs},
                                                                {result.output.data.data(), result.output.shape});
  const MemoryNeeds backward = attnlab::SdpaBackwardMemoryNeeds(qs, ks, vs);
  CHECK(PartBytes(backward, "gradQuery, gradKey, gradValue") ==
        Bytes(grads.grad_query) + Bytes(grads.grad_key) + Bytes(grads.grad_value));
  CHECK(PartBytes(backward, "weights and their gradient (*batch, Lq, Lk)") == 2 * Bytes(result.weights));
}

TEST_CASE("SDPA memory needs of shapes the call rejects list only what can be derived", "[memory_needs]") {
  CHECK(attnlab::SdpaMemoryNeeds({4}, {4}, {4}, true).empty());
  // Absurd shapes give huge sizes, not an overflow.
  const int64_t big = 2147483647;
  const MemoryNeeds needs = attnlab::SdpaMemoryNeeds({big, big, 1}, {big, big, 1}, {big, big, 1}, true);
  const double b = static_cast<double>(big);
  CHECK(PartBytes(needs, "weights (*batch, Lq, Lk)") == 4.0 * b * b * b);
}

TEST_CASE("MHA memory needs cover its parameters, output and weights", "[memory_needs]") {
  attnlab::MhaConfig config;
  config.embed_dim = 8;
  config.num_heads = 2;
  config.add_bias_kv = true;
  config.batch_first = true;
  attnlab::MultiHeadAttention mha(config, 1);
  const double parameter_bytes = StateDictBytes(mha.StateDict());
  const double reported = TotalBytes(attnlab::MhaParameterMemoryNeeds(config));
  CHECK(reported >= parameter_bytes);

  attnlab_test::Rng rng(3);
  const Shape qs{2, 5, 8}, ks{2, 6, 8};
  const auto q = attnlab_test::RandomVector(rng, 2 * 5 * 8);
  const auto k = attnlab_test::RandomVector(rng, 2 * 6 * 8);
  attnlab::MhaForwardOptions options;
  options.average_attn_weights = false;
  const auto result = mha.Forward({q.data(), qs}, {k.data(), ks}, {k.data(), ks}, options);
  const MemoryNeeds needs = attnlab::MhaForwardMemoryNeeds(config, qs, ks, ks, true, false);
  CHECK(PartBytes(needs, "weights (N, H, L, S')") == Bytes(result.weights));  // S' = 6 + bias_kv
  CHECK(PartBytes(needs, "output") == 2 * Bytes(result.output));              // the result and its out-projection input
  CHECK(attnlab::MhaForwardMemoryNeeds(config, {2, 5, 7}, ks, ks, true, false).empty());  // wrong E: rejected
}

TEST_CASE("GQA MHA and KV cache memory needs: parameters, a decoding step's weights, the cache", "[memory_needs]") {
  attnlab::MhaConfig config;
  config.embed_dim = 16;
  config.num_heads = 8;
  config.num_kv_heads = 2;  // Ekv = 4
  config.batch_first = true;
  attnlab::MultiHeadAttention mha(config, 1);
  const double parameter_bytes = StateDictBytes(mha.StateDict());
  const double reported = TotalBytes(attnlab::MhaParameterMemoryNeeds(config));
  // 16·16 + 2·4·16 + 16·16 weights, 16 + 2·4 + 16 biases, and room for bias_k/bias_v (1, 1, 4) (not in this config).
  CHECK(reported == parameter_bytes + 2 * 4 * 4.0);

  attnlab::KVCache cache = mha.CreateKVCache(2, 10);
  CHECK(PartBytes(attnlab::KVCacheMemoryNeeds(config, 2, 10),
                  "kvCache keys and values (batchSize, numKVHeads, maxLength, headDim)") == 2.0 * 2 * 2 * 10 * 2 * 4);
  attnlab_test::Rng rng(3);
  const auto x = attnlab_test::RandomVector(rng, 2 * 3 * 16);
  attnlab::MhaForwardOptions options;
  options.kv_cache = &cache;
  options.average_attn_weights = false;
  mha.Forward({x.data(), {2, 3, 16}}, {x.data(), {2, 3, 16}}, {x.data(), {2, 3, 16}}, options);
  const Shape step{2, 1, 16};
  const MemoryNeeds needs = attnlab::MhaForwardMemoryNeeds(config, step, step, step, true, false, cache.length());
  const auto result = mha.Forward({x.data(), step}, {x.data(), step}, {x.data(), step}, options);
  CHECK(result.weights.shape == Shape{2, 8, 1, 4});
  CHECK(PartBytes(needs, "weights (N, H, L, S')") == Bytes(result.weights));
  CHECK(PartBytes(needs, "projected key and value") == 2.0 * 2 * 1 * 4 * 4);  // only the new token's, Ekv wide
}

TEST_CASE("TinyTransformer memory needs cover its logits and weights", "[memory_needs]") {
  attnlab::TinyTransformerConfig config;
  config.vocab_size = 11;
  config.embed_dim = 8;
  config.num_heads = 2;
  attnlab::TinyTransformer model(config, 5);
  const std::vector<int32_t> tokens{1, 2, 3, 4, 5, 6};
  const auto out = model.Forward({tokens.data(), {2, 3}});
  // (the tiny model is a Transformer configuration: its needs are the Transformer's)
  const MemoryNeeds needs = attnlab::TinyTransformerStepMemoryNeeds(config, {2, 3}, false);
  CHECK(PartBytes(needs, "logits (B, T, vocabSize)") == Bytes(out.logits));
  CHECK(PartBytes(needs, "attentions (1 x (B, H, T, P + T))") == Bytes(out.weights));
  const MemoryNeeds with_grad = attnlab::TinyTransformerStepMemoryNeeds(config, {2, 3}, true);
  CHECK(PartBytes(with_grad, "logits and their gradient (B, T, vocabSize)") == Bytes(out.logits));
  CHECK(PartBytes(with_grad, "gradients returned (every parameter's shape)") == StateDictBytes(model.StateDict()));
  const double parameter_bytes = StateDictBytes(model.StateDict());
  const double reported = TotalBytes(attnlab::TinyTransformerParameterMemoryNeeds(config));
  CHECK(reported >= parameter_bytes);  // (matrices packed in whole panels of columns)
  attnlab::TinyTransformerConfig odd = config;
  odd.embed_dim = 7;  // (refused by the constructor, which names it: nothing counted here)
  CHECK(attnlab::TinyTransformerParameterMemoryNeeds(odd).empty());
}

TEST_CASE("SDPA memory needs with options count the past, the scores and the present key/value", "[memory_needs]") {
  attnlab_test::Rng rng(8);
  const Shape qs{2, 4, 3, 4}, ks{2, 2, 2, 4}, vs{2, 2, 2, 6}, pks{2, 2, 5, 4}, pvs{2, 2, 5, 6};
  const auto q = attnlab_test::RandomVector(rng, 2 * 4 * 3 * 4);
  const auto k = attnlab_test::RandomVector(rng, 2 * 2 * 2 * 4);
  const auto v = attnlab_test::RandomVector(rng, 2 * 2 * 2 * 6);
  const auto pk = attnlab_test::RandomVector(rng, 2 * 2 * 5 * 4);
  const auto pv = attnlab_test::RandomVector(rng, 2 * 2 * 5 * 6);
  attnlab::SdpaOptions options;
  options.enable_gqa = true;
  options.return_scores = attnlab::ScoresStage::kMasked;
  options.past_key = {pk.data(), pks};
  options.past_value = {pv.data(), pvs};
  const auto result = attnlab::ScaledDotProductAttention({q.data(), qs}, {k.data(), ks}, {v.data(), vs}, options);
  attnlab::SdpaOptions shapes_only = options;  // what the JS layer asks before anything is copied
  shapes_only.past_key.data = nullptr;
  shapes_only.past_value.data = nullptr;
  const MemoryNeeds needs = attnlab::SdpaMemoryNeeds(qs, ks, vs, shapes_only);
  CHECK(PartBytes(needs, "output (*batch, Lq, dv)") == Bytes(result.output));
  CHECK(PartBytes(needs, "weights (*batch, Lq, Lk)") == Bytes(result.weights));
  CHECK(PartBytes(needs, "scores (*batch, Lq, Lk)") == Bytes(result.scores));
  CHECK(PartBytes(needs, "present key and value (past ‖ new)") ==
        Bytes(result.present_key) + Bytes(result.present_value));

  const auto grads = attnlab::ScaledDotProductAttentionBackward(
      {q.data(), qs}, {k.data(), ks}, {v.data(), vs}, {result.output.data.data(), result.output.shape}, options);
  const MemoryNeeds backward = attnlab::SdpaBackwardMemoryNeeds(qs, ks, vs, shapes_only);
  CHECK(PartBytes(backward, "weights and their gradient (*batch, Lq, Lk)") == 2 * Bytes(result.weights));
  CHECK(PartBytes(backward, "gradPastKey, gradPastValue") == Bytes(grads.grad_past_key) + Bytes(grads.grad_past_value));
}
