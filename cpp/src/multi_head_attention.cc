// MultiHeadAttention: parameters by PyTorch state-dict names, validation, one dispatched kernel call.
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
#include "cpp/src/checks.h"
#include "cpp/src/kernels.h"
#include "cpp/src/rng.h"

namespace attnlab {
namespace {

// The parameters in PyTorch's layouts: w_q (E, E), w_k (E, kdim), w_v (E, vdim), w_o (E, E); biases (E);
// bias_k, bias_v (E). Backward's gradients have the same layout.
struct MhaParams {
  std::vector<float> w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, bias_k, bias_v;
};

// One state-dict entry: its name and shape, and the parameters it concatenates, with their element counts
// (in_proj_weight = [w_q; w_k; w_v]). The one description of the state dict: ParameterShapes, LoadStateDict,
// StateDict and Backward's grad_params all walk it.
struct StateSlot {
  const char* name;
  Shape shape;
  std::vector<std::pair<std::vector<float> MhaParams::*, size_t>> parts;
};

// PyTorch's names and order for configuration c (kdim, vdim resolved).
std::vector<StateSlot> StateSlots(const MhaConfig& c) {
  const int64_t e = c.embed_dim;
  const size_t ue = static_cast<size_t>(e), uk = static_cast<size_t>(c.kdim), uv = static_cast<size_t>(c.vdim);
  std::vector<StateSlot> slots;
  if (c.kdim == e && c.vdim == e) {
    slots.push_back({"in_proj_weight",
                     {3 * e, e},
                     {{&MhaParams::w_q, ue * ue}, {&MhaParams::w_k, ue * ue}, {&MhaParams::w_v, ue * ue}}});
  } else {
    slots.push_back({"q_proj_weight", {e, e}, {{&MhaParams::w_q, ue * ue}}});
    slots.push_back({"k_proj_weight", {e, c.kdim}, {{&MhaParams::w_k, ue * uk}}});
    slots.push_back({"v_proj_weight", {e, c.vdim}, {{&MhaParams::w_v, ue * uv}}});
  }
  if (c.bias) {
    slots.push_back({"in_proj_bias", {3 * e}, {{&MhaParams::b_q, ue}, {&MhaParams::b_k, ue}, {&MhaParams::b_v, ue}}});
  }
  if (c.add_bias_kv) {
    slots.push_back({"bias_k", {1, 1, e}, {{&MhaParams::bias_k, ue}}});
    slots.push_back({"bias_v", {1, 1, e}, {{&MhaParams::bias_v, ue}}});
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

float* DataOrNull(std::vector<float>& v) { return v.empty() ? nullptr : v.data(); }

// Validates Forward's arguments against configuration c (kdim, vdim resolved) and fills in every size, the
// layout and the masks of MhaArgs (not the parameters, out or weights); weights_shape gets the returned weights'
// shape. The mask storages hold bool masks' additive form. Every size check comes before the first allocation:
// a rejected call allocates nothing.
MhaArgs PrepareMha(const MhaConfig& c, const TensorView& query, const TensorView& key, const TensorView& value,
                   const MhaForwardOptions& options, std::vector<float>& kpm_storage, std::vector<float>& mask_storage,
                   Shape& weights_shape) {
  const size_t rank = query.shape.size();
  if (rank != 3 && rank != 2) {
    Fail("query", c.batch_first ? "rank 3 (N, L, E) or rank 2 (L, E)" : "rank 3 (L, N, E) or rank 2 (L, E)",
         "rank " + std::to_string(rank) + " " + ShapeString(query.shape));
  }
  const bool batched = rank == 3;
  CheckTensor("query", query);
  for (const auto& [name, tensor] : {std::pair<const char*, const TensorView&>{"key", key},
                                     std::pair<const char*, const TensorView&>{"value", value}}) {
    if (tensor.shape.size() != rank) {
      Fail(name, "rank " + std::to_string(rank) + (batched ? " (batched, like query)" : " (unbatched, like query)"),
           "rank " + std::to_string(tensor.shape.size()) + " " + ShapeString(tensor.shape));
    }
    CheckTensor(name, tensor);
  }
  // Sequence length and batch size of a tensor in the configured layout.
  auto seq_len = [&](const TensorView& t) { return !batched ? t.shape[0] : c.batch_first ? t.shape[1] : t.shape[0]; };
  auto batch_size = [&](const TensorView& t) { return !batched ? 1 : c.batch_first ? t.shape[0] : t.shape[1]; };
  const int64_t n = batch_size(query), l = seq_len(query), s = seq_len(key);
  for (const auto& [name, tensor] : {std::pair<const char*, const TensorView&>{"key", key},
                                     std::pair<const char*, const TensorView&>{"value", value}}) {
    if (batch_size(tensor) != n) {
      Fail(name,
           "batch size N = " + std::to_string(n) + " (that of query, " +
               (c.batch_first ? "dimension 0" : "dimension 1") + ")",
           std::to_string(batch_size(tensor)) + " in shape " + ShapeString(tensor.shape));
    }
  }
  if (seq_len(value) != s) {
    Fail("value", "source length S = " + std::to_string(s) + " (that of key)",
         std::to_string(seq_len(value)) + " in shape " + ShapeString(value.shape));
  }
  for (const auto& [name, tensor, dim, dim_name] :
       {std::tuple<const char*, const TensorView&, int64_t, const char*>{"query", query, c.embed_dim, "embed_dim"},
        {"key", key, c.kdim, "kdim"},
        {"value", value, c.vdim, "vdim"}}) {
    if (tensor.shape.back() != dim) {
      Fail(name, std::string("last dimension ") + dim_name + " = " + std::to_string(dim),
           std::to_string(tensor.shape.back()) + " in shape " + ShapeString(tensor.shape));
    }
  }

  const int64_t h = c.num_heads;
  MhaArgs args;
  const Mask& kpm = options.key_padding_mask;
  const size_t kpm_numel = CheckMask("key_padding_mask", kpm);
  if (kpm.kind != Mask::Kind::kNone) {
    const Shape expected = batched ? Shape{n, s} : Shape{s};
    if (kpm.shape != expected) {
      Fail("key_padding_mask", "shape " + std::string(batched ? "(N, S) = " : "(S) = ") + ShapeString(expected),
           ShapeString(kpm.shape));
    }
    args.bias.key_bias = AdditiveMask(kpm, kpm_numel, /*masked_when=*/true, kpm_storage);
    args.bias.key_bias_batch_stride = static_cast<size_t>(s);
  }
  const Mask& mask = options.attn_mask;
  const size_t mask_numel = CheckMask("attn_mask", mask);
  if (mask.kind != Mask::Kind::kNone) {
    // N * num_heads saturates instead of overflowing (absurd batch sizes; the mask's own shape passed its checks).
    const int64_t nh = n > std::numeric_limits<int64_t>::max() / h ? std::numeric_limits<int64_t>::max() : n * h;
    const Shape two_d{l, s}, three_d{nh, l, s};
    if (mask.shape != two_d && mask.shape != three_d) {
      Fail("attn_mask",
           "shape (L, S) = " + ShapeString(two_d) + " or (" + (batched ? "N*num_heads" : "num_heads") +
               ", L, S) = " + ShapeString(three_d),
           ShapeString(mask.shape));
    }
    args.bias.row_bias = AdditiveMask(mask, mask_numel, /*masked_when=*/true, mask_storage);
    args.bias.row_bias_batch_stride = mask.shape == two_d ? 0 : static_cast<size_t>(l) * static_cast<size_t>(s);
  }
  args.bias.mask_cols = static_cast<size_t>(s);

  const int64_t s_all = s + (c.add_bias_kv ? 1 : 0) + (c.add_zero_attn ? 1 : 0);
  weights_shape = options.average_attn_weights ? Shape{n, l, s_all} : Shape{n, h, l, s_all};
  if (!batched) weights_shape.erase(weights_shape.begin());
  CheckedNumel("output", query.shape);
  if (options.need_weights) CheckedNumel("weights", weights_shape);
  CheckedNumel("key", {n, s_all, c.embed_dim});                          // projected key/value buffers
  if (options.requires_grad) CheckedNumel("weights", {n, h, l, s_all});  // saved per-head weights

  args.query = query.data;
  args.key = key.data;
  args.value = value.data;
  args.n = static_cast<size_t>(n);
  args.l = static_cast<size_t>(l);
  args.s = static_cast<size_t>(s);
  args.e = static_cast<size_t>(c.embed_dim);
  args.heads = static_cast<size_t>(h);
  args.kdim = static_cast<size_t>(c.kdim);
  args.vdim = static_cast<size_t>(c.vdim);
  args.batch_first = c.batch_first || !batched;
  args.add_zero_attn = c.add_zero_attn;
  args.average_weights = options.average_attn_weights;
  return args;
}

}  // namespace

struct MultiHeadAttention::Impl {
  MhaConfig config;  // kdim and vdim resolved
  size_t e = 0, kdim = 0, vdim = 0;
  MhaParams params;
  // Wᵀ (in_features, E), packed once per load for the kernels' GEMM.
  std::vector<float> w_q_t, w_k_t, w_v_t, w_o_t;
  PackedB w_q_packed, w_k_packed, w_v_packed, w_o_packed;

  // What the last Forward with requires_grad left for Backward: copies of its inputs, its intermediates and
  // its arguments (pointing at those copies).
  struct Saved {
    bool valid = false;
    std::vector<float> query, key, value, q, k, v, ctx, weights;
    MhaSaved buffers;
    MhaArgs args;
    Shape output_shape;
    Shape query_shape, key_shape, value_shape;
  } saved;

  void Pack() {
    w_q_packed = PackB(params.w_q.data(), e, e, e, /*transposed=*/true, w_q_t);
    w_k_packed = PackB(params.w_k.data(), kdim, kdim, e, /*transposed=*/true, w_k_t);
    w_v_packed = PackB(params.w_v.data(), vdim, vdim, e, /*transposed=*/true, w_v_t);
    w_o_packed = PackB(params.w_o.data(), e, e, e, /*transposed=*/true, w_o_t);
  }

  // The parameters' part of MhaArgs.
  void SetParameters(MhaArgs& args) {
    args.wq_t = w_q_packed;
    args.wk_t = w_k_packed;
    args.wv_t = w_v_packed;
    args.wo_t = w_o_packed;
    args.bq = DataOrNull(params.b_q);
    args.bk = DataOrNull(params.b_k);
    args.bv = DataOrNull(params.b_v);
    args.bo = DataOrNull(params.b_o);
    args.bias_k = DataOrNull(params.bias_k);
    args.bias_v = DataOrNull(params.bias_v);
  }
};

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
  m.e = static_cast<size_t>(e);
  m.kdim = static_cast<size_t>(kdim);
  m.vdim = static_cast<size_t>(vdim);

  // PyTorch's _reset_parameters: xavier_uniform_ on in_proj_weight (3E, E) as one matrix or on each of
  // q/k/v_proj_weight, zero in_proj_bias and out_proj.bias, out_proj.weight as nn.Linear
  // (kaiming_uniform_(a=√5) = U(±1/√E)), xavier_normal_ on bias_k/bias_v (1, 1, E).
  Rng rng(seed);
  const size_t ue = m.e;
  MhaParams& p = m.params;
  auto fill_uniform = [&](std::vector<float>& w, size_t n, double bound) {
    w.resize(n);
    for (float& x : w) x = rng.Uniform(bound);
  };
  if (kdim == e && vdim == e) {
    const double bound = std::sqrt(6.0 / (ue + 3.0 * ue));
    fill_uniform(p.w_q, ue * ue, bound);
    fill_uniform(p.w_k, ue * ue, bound);
    fill_uniform(p.w_v, ue * ue, bound);
  } else {
    fill_uniform(p.w_q, ue * ue, std::sqrt(6.0 / (2.0 * ue)));
    fill_uniform(p.w_k, ue * m.kdim, std::sqrt(6.0 / (ue + m.kdim)));
    fill_uniform(p.w_v, ue * m.vdim, std::sqrt(6.0 / (ue + m.vdim)));
  }
  fill_uniform(p.w_o, ue * ue, 1.0 / std::sqrt(static_cast<double>(ue)));
  if (config.bias) {
    p.b_q.assign(ue, 0.0f);
    p.b_k.assign(ue, 0.0f);
    p.b_v.assign(ue, 0.0f);
    p.b_o.assign(ue, 0.0f);
  }
  if (config.add_bias_kv) {
    const double stddev = std::sqrt(2.0 / (2.0 * ue));
    p.bias_k.resize(ue);
    p.bias_v.resize(ue);
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
}

std::map<std::string, Tensor> MultiHeadAttention::StateDict() const {
  return JoinSlots(StateSlots(impl_->config), impl_->params);
}

AttentionResult MultiHeadAttention::Forward(const TensorView& query, const TensorView& key, const TensorView& value,
                                            const MhaForwardOptions& options) {
  Impl& m = *impl_;
  std::vector<float> kpm_storage, mask_storage;
  Shape w_shape;
  MhaArgs args = PrepareMha(m.config, query, key, value, options, kpm_storage, mask_storage, w_shape);
  m.SetParameters(args);
  AttentionResult result;
  result.output.shape = query.shape;
  result.output.data.resize(CheckedNumel("output", query.shape));
  if (options.need_weights) {
    result.weights.data.resize(CheckedNumel("weights", w_shape));
    result.weights.shape = w_shape;
    args.weights = result.weights.data.data();
  }
  args.out = result.output.data.data();
  if (!options.requires_grad) {
    MhaForward(args);
    return result;
  }
  Impl::Saved& saved = m.saved;
  saved.valid = false;
  const size_t s_all = args.s + (args.bias_k ? 1 : 0) + (args.add_zero_attn ? 1 : 0);
  saved.query.assign(query.data, query.data + result.output.data.size());
  saved.key.assign(key.data, key.data + CheckedNumel("key", key.shape));
  saved.value.assign(value.data, value.data + CheckedNumel("value", value.shape));
  const size_t s_rows = args.n * s_all * m.e, l_rows = args.n * args.l * m.e;
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
  args.grad_b_q = DataOrNull(g.b_q);
  args.grad_b_k = DataOrNull(g.b_k);
  args.grad_b_v = DataOrNull(g.b_v);
  args.grad_b_o = DataOrNull(g.b_o);
  args.grad_bias_k = DataOrNull(g.bias_k);
  args.grad_bias_v = DataOrNull(g.bias_v);
  MhaBackward(args);
  grads.grad_params = JoinSlots(slots, g);
  return grads;
}

}  // namespace attnlab
