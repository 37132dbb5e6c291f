// Every invalid SDPA option of issue 19 (enable_gqa head counts, kv_lengths, window, softcap, past_key /
// past_value, attn_mask broadcasting) throws std::invalid_argument naming it, with expected and got, in the forward
// and the backward; afterwards the library still works. Each case sets only the option under test, so that the
// message names it whichever check comes first.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnlab/attention.h"
#include "reference.h"
#include "test_util.h"
#include "validation.h"

namespace attnlab_test {
namespace {

using attnlab::Mask;
using attnlab::SdpaOptions;
using attnlab::TensorView;

// Valid inputs: query (2, 4, 3, 4): 2 items, 4 heads, Lq 3, dk 4; key/value (2, 4, 5, ·), dv 6; the same with 2
// K/V heads (key2/value2) and a past of 2 positions; grad_output (2, 4, 3, 6).
struct Inputs {
  std::vector<float> query, key, value, key2, value2, past_key, past_value, grad;
  Inputs() {
    Rng rng(7);
    query = RandomVector(rng, 2 * 4 * 3 * 4);
    key = RandomVector(rng, 2 * 4 * 5 * 4);
    value = RandomVector(rng, 2 * 4 * 5 * 6);
    key2 = RandomVector(rng, 2 * 2 * 5 * 4);
    value2 = RandomVector(rng, 2 * 2 * 5 * 6);
    past_key = RandomVector(rng, 2 * 4 * 2 * 4);
    past_value = RandomVector(rng, 2 * 4 * 2 * 6);
    grad = RandomVector(rng, 2 * 4 * 3 * 6);
  }
  TensorView Query() const { return {query.data(), {2, 4, 3, 4}}; }
  TensorView Key() const { return {key.data(), {2, 4, 5, 4}}; }
  TensorView Value() const { return {value.data(), {2, 4, 5, 6}}; }
  TensorView Grad() const { return {grad.data(), {2, 4, 3, 6}}; }
  SdpaOptions WithPast() const {
    SdpaOptions o;
    o.past_key = {past_key.data(), {2, 4, 2, 4}};
    o.past_value = {past_value.data(), {2, 4, 2, 6}};
    return o;
  }
};

// A valid causal call still matches the float64 reference.
void CheckStillWorks(const Inputs& in) {
  SdpaOptions o;
  o.is_causal = true;
  const RefResult ref = ReferenceSdpa(in.Query(), in.Key(), in.Value(), o);
  const attnlab::AttentionResult r = attnlab::ScaledDotProductAttention(in.Query(), in.Key(), in.Value(), o);
  CHECK(r.output.shape == ref.output_shape);
  CheckAllClose("output after an error", r.output.data, ref.output);
  CheckAllClose("weights after an error", r.weights.data, ref.weights);
}

// The call with `o` (and key/value `k`, `v`) must throw naming one of `names`, in the forward and the backward.
void ExpectOptionError(const Inputs& in, const std::vector<std::string>& names, const SdpaOptions& o,
                       const TensorView& k, const TensorView& v) {
  ExpectInvalidArgument([&] { attnlab::ScaledDotProductAttention(in.Query(), k, v, o); }, names);
  ExpectInvalidArgument([&] { attnlab::ScaledDotProductAttentionBackward(in.Query(), k, v, in.Grad(), o); }, names);
  CheckStillWorks(in);
}

void ExpectOptionError(const Inputs& in, const std::vector<std::string>& names, const SdpaOptions& o) {
  ExpectOptionError(in, names, o, in.Key(), in.Value());
}

}  // namespace

TEST_CASE("sdpa options validation: K/V heads that do not divide the query heads, or GQA shapes without enable_gqa",
          "[validation][sdpa][options]") {
  Inputs in;
  std::vector<float> k3(2 * 3 * 5 * 4, 0.5f), v3(2 * 3 * 5 * 6, 0.5f);
  SdpaOptions gqa;
  gqa.enable_gqa = true;
  ExpectOptionError(in, {"key", "enable_gqa"}, gqa, {k3.data(), {2, 3, 5, 4}}, {v3.data(), {2, 3, 5, 6}});
  std::vector<float> none;
  ExpectOptionError(in, {"key", "enable_gqa"}, gqa, {none.data(), {2, 0, 5, 4}}, {none.data(), {2, 0, 5, 6}});
  // Two K/V heads without enable_gqa.
  ExpectOptionError(in, {"key"}, SdpaOptions{}, {in.key2.data(), {2, 2, 5, 4}}, {in.value2.data(), {2, 2, 5, 6}});
  // Only the heads (the last batch dimension) may differ: not the items.
  ExpectOptionError(in, {"key", "enable_gqa"}, gqa, {in.key2.data(), {1, 4, 5, 4}}, {in.value2.data(), {1, 4, 5, 6}});
}

TEST_CASE("sdpa options validation: kv_lengths count, range and null data", "[validation][sdpa][options]") {
  Inputs in;
  const std::vector<int32_t> three{1, 1, 1}, over{3, 6}, negative{-1, 2}, fine{3, 5};
  SdpaOptions o;
  o.kv_lengths = three.data();
  o.num_kv_lengths = 3;  // one per item of the first batch dimension: 2
  ExpectOptionError(in, {"kv_lengths", "num_kv_lengths"}, o);
  o.num_kv_lengths = 2;
  o.kv_lengths = over.data();  // 6 > Lk = 5
  ExpectOptionError(in, {"kv_lengths"}, o);
  o.kv_lengths = negative.data();
  ExpectOptionError(in, {"kv_lengths"}, o);
  o.kv_lengths = nullptr;  // a count without data
  ExpectOptionError(in, {"kv_lengths", "num_kv_lengths"}, o);
}

TEST_CASE("sdpa options validation: window entries below -1", "[validation][sdpa][options]") {
  Inputs in;
  SdpaOptions o;
  o.window_left = -2;
  ExpectOptionError(in, {"window_left"}, o);
  o.window_left = -1;
  o.window_right = std::numeric_limits<int64_t>::min();
  ExpectOptionError(in, {"window_right"}, o);
}

TEST_CASE("sdpa options validation: softcap negative, NaN or infinite", "[validation][sdpa][options]") {
  Inputs in;
  for (const float c : {-1.0f, -1e-40f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                        -std::numeric_limits<float>::infinity()}) {
    INFO("softcap " << c);
    SdpaOptions o;
    o.softcap = c;
    ExpectOptionError(in, {"softcap"}, o);
  }
}

TEST_CASE("sdpa options validation: past_key / past_value shapes and pairing", "[validation][sdpa][options]") {
  Inputs in;
  const std::vector<std::string> past{"past_key", "past_value"};
  SdpaOptions o = in.WithPast();
  o.past_value = {};  // past_key without past_value
  ExpectOptionError(in, past, o);
  o = in.WithPast();
  o.past_key = {};
  ExpectOptionError(in, past, o);
  o = in.WithPast();
  o.past_key.shape = {2, 4, 2, 3};  // dk 3 != 4
  ExpectOptionError(in, past, o);
  o = in.WithPast();
  o.past_value.shape = {2, 4, 1, 6};  // Lpast 1 != past_key's 2
  ExpectOptionError(in, past, o);
  o = in.WithPast();
  o.past_key.shape = {1, 4, 2, 4};  // batch (1, 4) != key's (2, 4)
  o.past_value.shape = {1, 4, 2, 6};
  ExpectOptionError(in, past, o);
  o = in.WithPast();
  o.past_key.shape = {2, 4, 8};  // rank 3
  ExpectOptionError(in, past, o);
  o = in.WithPast();
  o.past_key.data = nullptr;  // no data for 64 elements
  ExpectOptionError(in, past, o);
}

TEST_CASE("sdpa options validation: attn_mask that does not broadcast to (*batch, Lq, Lk)",
          "[validation][sdpa][options]") {
  Inputs in;
  // (*batch, Lq, Lk) = (2, 4, 3, 5).
  for (const attnlab::Shape& shape : std::vector<attnlab::Shape>{
           {4}, {3, 4}, {2, 4, 3, 4}, {3, 3, 5}, {2, 2, 3, 5}, {2, 1, 1, 1, 5}, {4, 5}, {2, 4, 3, 5, 1}}) {
    INFO("attn_mask shape " << ShapeToString(shape));
    std::vector<uint8_t> mask(static_cast<size_t>(NumElements(shape)), 1);
    SdpaOptions o;
    o.attn_mask = Mask::Bool(mask.data(), shape);
    ExpectOptionError(in, {"attn_mask"}, o);
  }
}

}  // namespace attnlab_test
