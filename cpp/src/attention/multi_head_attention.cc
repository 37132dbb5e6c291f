// MultiHeadAttention: parameters by PyTorch state-dict names, construction, one dispatched kernel call per
// Forward and Backward (decoding with a KV cache: kv_cache.cc; argument validation: mha_prepare.cc).
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "attnlab/attention.h"
#include "cpp/src/attention/kernels.h"
#include "cpp/src/attention/multi_head_attention_impl.h"
#include "cpp/src/checks.h"
#include "cpp/src/rng.h"

namespace attnlab {
namespace {

// One state-dict entry: its name and shape, and the parameters it concatenates, with their element counts
// (in_proj_weight = [w_q; w_k; w_v]). The one description of the state dict: ParameterShapes, LoadStateDict,
// StateDict and Backward's grad_params all walk it.
struct StateSlot {
  const char* name;
  Shape shape;
  std::vector<std::pair<std::vector<float> MhaParams::*, size_t>> parts;
};

// PyTorch's names and order for configuration c (kdim, vdim and num_kv_heads resolved). With grouped-query heads
// (num_kv_heads < num_heads) the same names with Ekv = num_kv_heads * head_dim key/value features: separate
// q/k/v_proj_weight ((E, E), (Ekv, kdim), (Ekv, vdim): PyTorch packs in_proj_weight only for equal shapes),
// in_proj_bias = [b_q; b_k; b_v] (E + 2 Ekv), bias_k/bias_v (1, 1, Ekv).
std::vector<StateSlot> StateSlots(const MhaConfig& c) {
  const int64_t e = c.embed_dim, ekv = e / c.num_heads * c.num_kv_heads;
  const size_t ue = static_cast<size_t>(e), uk = static_cast<size_t>(c.kdim), uv = static_cast<size_t>(c.vdim);
  const size_t ukv = static_cast<size_t>(ekv);
  std::vector<StateSlot> slots;
  if (c.kdim == e && c.vdim == e && ekv == e) {
    slots.push_back({"in_proj_weight",
                     {3 * e, e},
                     {{&MhaParams::w_q, ue * ue}, {&MhaParams::w_k, ue * ue}, {&MhaParams::w_v, ue * ue}}});
  } else {
    slots.push_back({"q_proj_weight", {e, e}, {{&MhaParams::w_q, ue * ue}}});
    slots.push_back({"k_proj_weight", {ekv, c.kdim}, {{&MhaParams::w_k, ukv * uk}}});
    slots.push_back({"v_proj_weight", {ekv, c.vdim}, {{&MhaParams::w_v, ukv * uv}}});
  }
  if (c.bias) {
    slots.push_back(
        {"in_proj_bias", {e + 2 * ekv}, {{&MhaParams::b_q, ue}, {&MhaParams::b_k, ukv}, {&MhaParams::b_v, ukv}}});
  }
  if (c.add_bias_kv) {
    slots.push_back({"bias_k", {1, 1, ekv}, {{&MhaParams::bias_k, ukv}}});
    slots.push_back({"bias_v", {1, 1, ekv}, {{&MhaParams::bias_v, ukv}}});
  }
  slots.push_back({"out_proj.weight", {e, e}, {{&MhaParams::w_o, ue * ue}}});
  if (c.bias) slots.push_back({"out_proj.bias", {e}, {{&MhaParams::b_o, ue}}});
  return slots;
}

// The state dict of `params` (or of gradients in the same layout): each slot's parts concatenated.
std::map<std::string, Tensor> JoinSlots(const std::vector<StateSlot>& slots, const MhaParams& params) {
  std::map<std::string, Tensor> dict;
  for (const StateSlot& slot : slots) {
    Tensor& t = dict[slot.name];
    t.shape = slot.shape;
    for (const auto& part : slot.parts) {
      const std::vector<float>& data = params.*part.first;
      t.data.insert(t.data.end(), data.begin(), data.end());
    }
  }
  return dict;
}

}  // namespace

MultiHeadAttention::MultiHeadAttention(const MhaConfig& config, uint64_t seed) {
  if (config.embed_dim <= 0) Fail("embed_dim", "a positive integer", std::to_string(config.embed_dim));
  if (config.num_heads <= 0) Fail("num_heads", "a positive integer", std::to_string(config.num_heads));
  if (config.embed_dim % config.num_heads != 0) {
    Fail("embed_dim", "a multiple of num_heads = " + std::to_string(config.num_heads),
         std::to_string(config.embed_dim));
  }
  for (const auto& [name, dim] : {std::pair<const char*, int64_t>{"kdim", config.kdim}, {"vdim", config.vdim}}) {
    if (dim != -1 && dim <= 0) Fail(name, "a positive integer (or -1 for embed_dim)", std::to_string(dim));
  }
  const int64_t kv_heads = config.num_kv_heads == -1 ? config.num_heads : config.num_kv_heads;
  if (kv_heads <= 0 || config.num_heads % kv_heads != 0) {
    Fail("num_kv_heads", "a positive divisor of num_heads = " + std::to_string(config.num_heads),
         std::to_string(config.num_kv_heads));
  }
  const int64_t e = config.embed_dim;
  const int64_t kdim = config.kdim == -1 ? e : config.kdim;
  const int64_t vdim = config.vdim == -1 ? e : config.vdim;
  CheckedNumel("embed_dim", {4, e, e});
  CheckedNumel("kdim", {e, kdim});
  CheckedNumel("vdim", {e, vdim});

  impl_ = std::make_unique<Impl>();
  Impl& m = *impl_;
  m.config = config;
  m.config.kdim = kdim;
  m.config.vdim = vdim;
  m.config.num_kv_heads = kv_heads;
  m.e = static_cast<size_t>(e);
  m.kdim = static_cast<size_t>(kdim);
  m.vdim = static_cast<size_t>(vdim);
  m.ekv = static_cast<size_t>(e / config.num_heads * kv_heads);
  static std::atomic<uint64_t> next_id{1};
  m.id = next_id++;

  // PyTorch's _reset_parameters: xavier_uniform_ on in_proj_weight (3E, E) as one matrix or on each of
  // q/k/v_proj_weight, zero in_proj_bias and out_proj.bias, out_proj.weight as nn.Linear
  // (kaiming_uniform_(a=√5) = U(±1/√E)), xavier_normal_ on bias_k/bias_v (1, 1, E). Grouped-query heads: the same
  // with k/v_proj_weight (Ekv, kdim/vdim) and bias_k/bias_v (1, 1, Ekv).
  Rng rng(seed);
  const size_t ue = m.e, ukv = m.ekv;
  MhaParams& p = m.params;
  auto fill_uniform = [&](std::vector<float>& w, size_t n, double bound) {
    w.resize(n);
    for (float& x : w) x = rng.Uniform(bound);
  };
  if (kdim == e && vdim == e && ukv == ue) {
    const double bound = std::sqrt(6.0 / (ue + 3.0 * ue));
    fill_uniform(p.w_q, ue * ue, bound);
    fill_uniform(p.w_k, ue * ue, bound);
    fill_uniform(p.w_v, ue * ue, bound);
  } else {
    fill_uniform(p.w_q, ue * ue, std::sqrt(6.0 / (2.0 * ue)));
    fill_uniform(p.w_k, ukv * m.kdim, std::sqrt(6.0 / (ukv + m.kdim)));
    fill_uniform(p.w_v, ukv * m.vdim, std::sqrt(6.0 / (ukv + m.vdim)));
  }
  fill_uniform(p.w_o, ue * ue, 1.0 / std::sqrt(static_cast<double>(ue)));
  if (config.bias) {
    p.b_q.assign(ue, 0.0f);
    p.b_k.assign(ukv, 0.0f);
    p.b_v.assign(ukv, 0.0f);
    p.b_o.assign(ue, 0.0f);
  }
  if (config.add_bias_kv) {
    const double stddev = std::sqrt(2.0 / (2.0 * ukv));
    p.bias_k.resize(ukv);
    p.bias_v.resize(ukv);
    for (float& x : p.bias_k) x = rng.Normal(stddev);
    for (float& x : p.bias_v) x = rng.Normal(stddev);
  }
  m.Pack();
}

MultiHeadAttention::~MultiHeadAttention() = default;
MultiHeadAttention::MultiHeadAttention(MultiHeadAttention&&) noexcept = default;
MultiHeadAttention& MultiHeadAttention::operator=(MultiHeadAttention&&) noexcept = default;

const MhaConfig& MultiHeadAttention::config() const { return impl_->config; }

std::vector<std::pair<std::string, Shape>> MultiHeadAttention::ParameterShapes() const {
  std::vector<std::pair<std::string, Shape>> shapes;
  for (const StateSlot& slot : StateSlots(impl_->config)) shapes.push_back({slot.name, slot.shape});
  return shapes;
}

void MultiHeadAttention::LoadStateDict(const std::map<std::string, TensorView>& state_dict) {
  CheckStateDict(ParameterShapes(), state_dict);
  // Everything is valid: split each entry into its parameters.
  Impl& m = *impl_;
  for (const StateSlot& slot : StateSlots(m.config)) {
    const float* src = state_dict.at(slot.name).data;
    for (const auto& [field, count] : slot.parts) {
      (m.params.*field).assign(src, src + count);
      src += count;
    }
  }
  m.Pack();
  m.saved.valid = false;  // its intermediates belong to the old parameters
  ++m.params_version;     // and so do the keys and values in its KV caches
}

std::map<std::string, Tensor> MultiHeadAttention::StateDict() const {
  return JoinSlots(StateSlots(impl_->config), impl_->params);
}

AttentionResult MultiHeadAttention::Forward(const TensorView& query, const TensorView& key, const TensorView& value,
                                            const MhaForwardOptions& options) {
  if (options.kv_cache) return ForwardWithCache(query, key, value, options);
  Impl& m = *impl_;
  std::vector<float> kpm_storage, mask_storage;
  Shape w_shape;
  MhaArgs args = PrepareMha(m.config, query, key, value, options, kpm_storage, mask_storage, w_shape);
  m.SetParameters(args);
  AttentionResult result = AllocateMhaResult(query.shape, w_shape, options.need_weights, args);
  if (!options.requires_grad) {
    MhaForward(args);
    return result;
  }
  Impl::Saved& saved = m.saved;
  saved.valid = false;
  const size_t s_all = args.s + (args.biases.bias_k ? 1 : 0) + (args.add_zero_attn ? 1 : 0);
  saved.query.assign(query.data, query.data + result.output.data.size());
  saved.key.assign(key.data, key.data + CheckedNumel("key", key.shape));
  saved.value.assign(value.data, value.data + CheckedNumel("value", value.shape));
  const size_t s_rows = args.n * s_all * m.ekv, l_rows = args.n * args.l * m.e;
  saved.q.resize(l_rows);
  saved.k.resize(s_rows);
  saved.v.resize(s_rows);
  saved.ctx.resize(l_rows);
  saved.weights.resize(args.n * args.heads * args.l * s_all);
  saved.buffers = MhaSaved{saved.q.data(), saved.k.data(), saved.v.data(), saved.ctx.data(), saved.weights.data()};
  args.query = saved.query.data();
  args.key = saved.key.data();
  args.value = saved.value.data();
  args.saved = &saved.buffers;
  MhaForward(args);
  saved.args = args;
  saved.args.out = nullptr;
  saved.args.weights = nullptr;
  saved.args.bias = BiasArgs();  // masks are only needed forward: the saved weights hold their effect
  saved.output_shape = result.output.shape;
  saved.query_shape = query.shape;
  saved.key_shape = key.shape;
  saved.value_shape = value.shape;
  saved.valid = true;
  return result;
}

MhaGradients MultiHeadAttention::Backward(const TensorView& grad_output) {
  Impl& m = *impl_;
  const Impl::Saved& saved = m.saved;
  if (!saved.valid) {
    throw std::logic_error(
        "backward: expected a preceding forward with requires_grad = true (after the last load_state_dict), got "
        "none");
  }
  if (grad_output.shape != saved.output_shape) {
    Fail("grad_output", "the output's shape " + ShapeString(saved.output_shape), ShapeString(grad_output.shape));
  }
  CheckTensor("grad_output", grad_output);
  MhaGradients grads;
  grads.grad_query = Tensor{std::vector<float>(saved.query.size()), saved.query_shape};
  grads.grad_key = Tensor{std::vector<float>(saved.key.size()), saved.key_shape};
  grads.grad_value = Tensor{std::vector<float>(saved.value.size()), saved.value_shape};
  // Zero-filled gradients of exactly the parameters this configuration has (absent ones stay empty: null).
  const std::vector<StateSlot> slots = StateSlots(m.config);
  MhaParams g;
  for (const StateSlot& slot : slots) {
    for (const auto& [field, count] : slot.parts) (g.*field).assign(count, 0.0f);
  }
  MhaArgs forward = saved.args;
  forward.saved = const_cast<MhaSaved*>(&saved.buffers);
  MhaBackwardArgs args;
  args.forward = &forward;
  args.w_q = m.params.w_q.data();
  args.w_k = m.params.w_k.data();
  args.w_v = m.params.w_v.data();
  args.w_o = m.params.w_o.data();
  args.grad_out = grad_output.data;
  args.grad_query = grads.grad_query.data.data();
  args.grad_key = grads.grad_key.data.data();
  args.grad_value = grads.grad_value.data.data();
  args.grad_w_q = g.w_q.data();
  args.grad_w_k = g.w_k.data();
  args.grad_w_v = g.w_v.data();
  args.grad_w_o = g.w_o.data();
  args.grad_biases = BiasParamsOf<float>(g);
  MhaBackward(args);
  grads.grad_params = JoinSlots(slots, g);
  return grads;
}

}  // namespace attnlab
