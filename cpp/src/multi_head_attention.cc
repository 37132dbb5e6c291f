// MultiHeadAttention: parameters by PyTorch state-dict names, validation, one dispatched kernel call.
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/attention.h"
#include "cpp/src/checks.h"
#include "cpp/src/kernels.h"
#include "cpp/src/rng.h"

namespace attnlab {
namespace {

}  // namespace

struct MultiHeadAttention::Impl {
  MhaConfig config;
  size_t e = 0, kdim = 0, vdim = 0;
  bool packed_in_proj = true;  // kdim == vdim == embed_dim: one in_proj_weight (3E, E)
  // PyTorch layouts: w_q (E, E), w_k (E, kdim), w_v (E, vdim), w_o (E, E); biases (E).
  std::vector<float> w_q, w_k, w_v, w_o, b_q, b_k, b_v, b_o, bias_k, bias_v;
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
    w_q_packed = PackB(w_q.data(), e, e, e, /*transposed=*/true, w_q_t);
    w_k_packed = PackB(w_k.data(), kdim, kdim, e, /*transposed=*/true, w_k_t);
    w_v_packed = PackB(w_v.data(), vdim, vdim, e, /*transposed=*/true, w_v_t);
    w_o_packed = PackB(w_o.data(), e, e, e, /*transposed=*/true, w_o_t);
  }
};

MultiHeadAttention::MultiHeadAttention(const MhaConfig& config, uint64_t seed) : impl_(nullptr) {
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

  auto impl = std::make_unique<Impl>();
  impl->config = config;
  impl->config.kdim = kdim;
  impl->config.vdim = vdim;
  impl->e = static_cast<size_t>(e);
  impl->kdim = static_cast<size_t>(kdim);
  impl->vdim = static_cast<size_t>(vdim);
  impl->packed_in_proj = kdim == e && vdim == e;

  // PyTorch's _reset_parameters: xavier_uniform_ on in_proj_weight (3E, E) as one matrix or on each of
  // q/k/v_proj_weight, zero in_proj_bias and out_proj.bias, out_proj.weight as nn.Linear
  // (kaiming_uniform_(a=√5) = U(±1/√E)), xavier_normal_ on bias_k/bias_v (1, 1, E).
  Rng rng(seed);
  const size_t ue = impl->e;
  auto fill_uniform = [&](std::vector<float>& w, size_t n, double bound) {
    w.resize(n);
    for (float& x : w) x = rng.Uniform(bound);
  };
  if (impl->packed_in_proj) {
    const double bound = std::sqrt(6.0 / (ue + 3.0 * ue));
    fill_uniform(impl->w_q, ue * ue, bound);
    fill_uniform(impl->w_k, ue * ue, bound);
    fill_uniform(impl->w_v, ue * ue, bound);
  } else {
    fill_uniform(impl->w_q, ue * ue, std::sqrt(6.0 / (2.0 * ue)));
    fill_uniform(impl->w_k, ue * impl->kdim, std::sqrt(6.0 / (ue + impl->kdim)));
    fill_uniform(impl->w_v, ue * impl->vdim, std::sqrt(6.0 / (ue + impl->vdim)));
  }
  fill_uniform(impl->w_o, ue * ue, 1.0 / std::sqrt(static_cast<double>(ue)));
  if (config.bias) {
    impl->b_q.assign(ue, 0.0f);
    impl->b_k.assign(ue, 0.0f);
    impl->b_v.assign(ue, 0.0f);
    impl->b_o.assign(ue, 0.0f);
  }
  if (config.add_bias_kv) {
    const double stddev = std::sqrt(2.0 / (2.0 * ue));
    impl->bias_k.resize(ue);
    impl->bias_v.resize(ue);
    for (float& x : impl->bias_k) x = rng.Normal(stddev);
    for (float& x : impl->bias_v) x = rng.Normal(stddev);
  }
  impl->Pack();
  impl_ = impl.release();
}

MultiHeadAttention::~MultiHeadAttention() { delete impl_; }
MultiHeadAttention::MultiHeadAttention(MultiHeadAttention&& other) noexcept : impl_(other.impl_) {
  other.impl_ = nullptr;
}
MultiHeadAttention& MultiHeadAttention::operator=(MultiHeadAttention&& other) noexcept {
  std::swap(impl_, other.impl_);
  return *this;
}

const MhaConfig& MultiHeadAttention::config() const { return impl_->config; }

std::vector<std::pair<std::string, Shape>> MultiHeadAttention::ParameterShapes() const {
  const int64_t e = impl_->config.embed_dim, kdim = impl_->config.kdim, vdim = impl_->config.vdim;
  std::vector<std::pair<std::string, Shape>> shapes;
  if (impl_->packed_in_proj) {
    shapes.push_back({"in_proj_weight", {3 * e, e}});
  } else {
    shapes.push_back({"q_proj_weight", {e, e}});
    shapes.push_back({"k_proj_weight", {e, kdim}});
    shapes.push_back({"v_proj_weight", {e, vdim}});
  }
  if (impl_->config.bias) shapes.push_back({"in_proj_bias", {3 * e}});
  if (impl_->config.add_bias_kv) {
    shapes.push_back({"bias_k", {1, 1, e}});
    shapes.push_back({"bias_v", {1, 1, e}});
  }
  shapes.push_back({"out_proj.weight", {e, e}});
  if (impl_->config.bias) shapes.push_back({"out_proj.bias", {e}});
  return shapes;
}

void MultiHeadAttention::LoadStateDict(const std::map<std::string, TensorView>& state_dict) {
  CheckStateDict(ParameterShapes(), state_dict);
  // Everything is valid: copy.
  Impl& m = *impl_;
  const size_t e = m.e;
  auto get = [&](const char* name, size_t offset, size_t count) {
    const float* p = state_dict.at(name).data + offset;
    return std::vector<float>(p, p + count);
  };
  if (m.packed_in_proj) {
    m.w_q = get("in_proj_weight", 0, e * e);
    m.w_k = get("in_proj_weight", e * e, e * e);
    m.w_v = get("in_proj_weight", 2 * e * e, e * e);
  } else {
    m.w_q = get("q_proj_weight", 0, e * e);
    m.w_k = get("k_proj_weight", 0, e * m.kdim);
    m.w_v = get("v_proj_weight", 0, e * m.vdim);
  }
  if (m.config.bias) {
    m.b_q = get("in_proj_bias", 0, e);
    m.b_k = get("in_proj_bias", e, e);
    m.b_v = get("in_proj_bias", 2 * e, e);
    m.b_o = get("out_proj.bias", 0, e);
  }
  if (m.config.add_bias_kv) {
    m.bias_k = get("bias_k", 0, e);
    m.bias_v = get("bias_v", 0, e);
  }
  m.w_o = get("out_proj.weight", 0, e * e);
  m.Pack();
  m.saved.valid = false;  // its intermediates belong to the old parameters
}

std::map<std::string, Tensor> MultiHeadAttention::StateDict() const {
  const Impl& m = *impl_;
  auto concat = [](std::initializer_list<const std::vector<float>*> parts) {
    std::vector<float> all;
    for (const auto* p : parts) all.insert(all.end(), p->begin(), p->end());
    return all;
  };
  std::map<std::string, std::vector<float>> data;
  if (m.packed_in_proj) {
    data["in_proj_weight"] = concat({&m.w_q, &m.w_k, &m.w_v});
  } else {
    data["q_proj_weight"] = m.w_q;
    data["k_proj_weight"] = m.w_k;
    data["v_proj_weight"] = m.w_v;
  }
  if (m.config.bias) {
    data["in_proj_bias"] = concat({&m.b_q, &m.b_k, &m.b_v});
    data["out_proj.bias"] = m.b_o;
  }
  if (m.config.add_bias_kv) {
    data["bias_k"] = m.bias_k;
    data["bias_v"] = m.bias_v;
  }
  data["out_proj.weight"] = m.w_o;
  std::map<std::string, Tensor> dict;
  for (const auto& [name, shape] : ParameterShapes()) dict[name] = Tensor{std::move(data[name]), shape};
  return dict;
}

AttentionResult MultiHeadAttention::Forward(const TensorView& query, const TensorView& key, const TensorView& value,
                                            const MhaForwardOptions& options) {
  Impl& m = *impl_;
  const MhaConfig& c = m.config;
  const size_t rank = query.shape.size();
  if (rank != 3 && rank != 2) {
    Fail("query", c.batch_first ? "rank 3 (N, L, E) or rank 2 (L, E)" : "rank 3 (L, N, E) or rank 2 (L, E)",
         "rank " + std::to_string(rank) + " " + ShapeString(query.shape));
  }
  const bool batched = rank == 3;
  CheckTensor("query", query);
  for (const auto& [name, tensor] :
       {std::pair<const char*, const TensorView&>{"key", key}, std::pair<const char*, const TensorView&>{"value", value}}) {
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
  for (const auto& [name, tensor] :
       {std::pair<const char*, const TensorView&>{"key", key}, std::pair<const char*, const TensorView&>{"value", value}}) {
    if (batch_size(tensor) != n) {
      Fail(name, "batch size N = " + std::to_string(n) + " (that of query, " +
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
  std::vector<float> kpm_storage, mask_storage;
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
  // Every size check before the first allocation: a rejected call allocates nothing.
  Shape w_shape = options.average_attn_weights ? Shape{n, l, s_all} : Shape{n, h, l, s_all};
  if (!batched) w_shape.erase(w_shape.begin());
  const size_t out_numel = CheckedNumel("output", query.shape);
  const size_t w_numel = options.need_weights ? CheckedNumel("weights", w_shape) : 0;
  CheckedNumel("key", {n, s_all, c.embed_dim});  // projected key/value buffers
  if (options.requires_grad) CheckedNumel("weights", {n, h, l, s_all});  // saved per-head weights
  AttentionResult result;
  result.output.shape = query.shape;
  result.output.data.resize(out_numel);
  if (options.need_weights) {
    result.weights.data.resize(w_numel);
    result.weights.shape = w_shape;
    args.weights = result.weights.data.data();
  }

  args.query = query.data;
  args.key = key.data;
  args.value = value.data;
  args.n = static_cast<size_t>(n);
  args.l = static_cast<size_t>(l);
  args.s = static_cast<size_t>(s);
  args.e = m.e;
  args.heads = static_cast<size_t>(h);
  args.kdim = m.kdim;
  args.vdim = m.vdim;
  args.batch_first = c.batch_first || !batched;
  args.wq_t = m.w_q_packed;
  args.wk_t = m.w_k_packed;
  args.wv_t = m.w_v_packed;
  args.wo_t = m.w_o_packed;
  if (c.bias) {
    args.bq = m.b_q.data();
    args.bk = m.b_k.data();
    args.bv = m.b_v.data();
    args.bo = m.b_o.data();
  }
  if (c.add_bias_kv) {
    args.bias_k = m.bias_k.data();
    args.bias_v = m.bias_v.data();
  }
  args.add_zero_attn = c.add_zero_attn;
  args.out = result.output.data.data();
  args.average_weights = options.average_attn_weights;
  if (!options.requires_grad) {
    MhaForward(args);
    return result;
  }
  Impl::Saved& saved = m.saved;
  saved.valid = false;
  saved.query.assign(query.data, query.data + result.output.data.size());
  saved.key.assign(key.data, key.data + CheckedNumel("key", key.shape));
  saved.value.assign(value.data, value.data + CheckedNumel("value", value.shape));
  const size_t s_rows = static_cast<size_t>(n * s_all) * m.e, l_rows = static_cast<size_t>(n * l) * m.e;
  saved.q.resize(l_rows);
  saved.k.resize(s_rows);
  saved.v.resize(s_rows);
  saved.ctx.resize(l_rows);
  saved.weights.resize(CheckedNumel("weights", {n, h, l, s_all}));
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
  const size_t e = m.e;
  MhaGradients grads;
  grads.grad_query = Tensor{std::vector<float>(saved.query.size()), saved.query_shape};
  grads.grad_key = Tensor{std::vector<float>(saved.key.size()), saved.key_shape};
  grads.grad_value = Tensor{std::vector<float>(saved.value.size()), saved.value_shape};
  std::vector<float> g_wq(e * e), g_wk(e * m.kdim), g_wv(e * m.vdim), g_wo(e * e), g_bq, g_bk, g_bv, g_bo, g_bias_k,
      g_bias_v;
  MhaArgs forward = saved.args;
  forward.saved = const_cast<MhaSaved*>(&saved.buffers);
  MhaBackwardArgs args;
  args.forward = &forward;
  args.w_q = m.w_q.data();
  args.w_k = m.w_k.data();
  args.w_v = m.w_v.data();
  args.w_o = m.w_o.data();
  args.grad_out = grad_output.data;
  args.grad_query = grads.grad_query.data.data();
  args.grad_key = grads.grad_key.data.data();
  args.grad_value = grads.grad_value.data.data();
  args.grad_w_q = g_wq.data();
  args.grad_w_k = g_wk.data();
  args.grad_w_v = g_wv.data();
  args.grad_w_o = g_wo.data();
  if (m.config.bias) {
    for (auto* g : {&g_bq, &g_bk, &g_bv, &g_bo}) g->assign(e, 0.0f);
    args.grad_b_q = g_bq.data();
    args.grad_b_k = g_bk.data();
    args.grad_b_v = g_bv.data();
    args.grad_b_o = g_bo.data();
  }
  if (m.config.add_bias_kv) {
    g_bias_k.assign(e, 0.0f);
    g_bias_v.assign(e, 0.0f);
    args.grad_bias_k = g_bias_k.data();
    args.grad_bias_v = g_bias_v.data();
  }
  MhaBackward(args);

  std::map<std::string, std::vector<float>> data;
  if (m.packed_in_proj) {
    std::vector<float> packed = g_wq;
    packed.insert(packed.end(), g_wk.begin(), g_wk.end());
    packed.insert(packed.end(), g_wv.begin(), g_wv.end());
    data["in_proj_weight"] = std::move(packed);
  } else {
    data["q_proj_weight"] = std::move(g_wq);
    data["k_proj_weight"] = std::move(g_wk);
    data["v_proj_weight"] = std::move(g_wv);
  }
  if (m.config.bias) {
    std::vector<float> packed = g_bq;
    packed.insert(packed.end(), g_bk.begin(), g_bk.end());
    packed.insert(packed.end(), g_bv.begin(), g_bv.end());
    data["in_proj_bias"] = std::move(packed);
    data["out_proj.bias"] = std::move(g_bo);
  }
  if (m.config.add_bias_kv) {
    data["bias_k"] = std::move(g_bias_k);
    data["bias_v"] = std::move(g_bias_v);
  }
  data["out_proj.weight"] = std::move(g_wo);
  for (const auto& [name, shape] : ParameterShapes()) grads.grad_params[name] = Tensor{std::move(data[name]), shape};
  return grads;
}

}  // namespace attnlab
