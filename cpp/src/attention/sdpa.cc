// ScaledDotProductAttention: validation, mask broadcasting, the past ‖ new keys, one dispatched kernel call.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "attnlab/attention.h"
#include "cpp/src/attention/kernels.h"
#include "cpp/src/checks.h"

namespace attnlab {
namespace {

Shape BatchDims(const Shape& shape) { return Shape(shape.begin(), shape.end() - 2); }

Shape WithLast2(Shape shape, int64_t rows, int64_t cols) {
  shape.push_back(rows);
  shape.push_back(cols);
  return shape;
}

bool HasPast(const SdpaOptions& o) {
  return o.past_key.data || !o.past_key.shape.empty() || o.past_value.data || !o.past_value.shape.empty();
}

// Everything a call computes from its arguments before the kernel runs.
struct Prepared {
  SdpaArgs args;
  Shape batch_dims;  // query's
  int64_t lq = 0, lk_total = 0, dv = 0;
  std::vector<float> mask_storage;   // a bool mask's additive form, or a mask expanded along Lk
  std::vector<size_t> mask_strides;  // per batch dimension of query; 0 where the mask broadcasts
  std::vector<size_t> mask_offsets;  // per problem (FinishMask)
  size_t mask_rows_to_expand = 0;    // rows of a mask broadcast over Lk, expanded by FinishMask
  bool has_past = false;
  Tensor present_key, present_value;
};

// key/value (and their past) against query: shapes, grouped heads. Returns the key/value batch dims.
Shape CheckKeyValue(const TensorView& query, const TensorView& key, const TensorView& value, bool enable_gqa) {
  const size_t rank = query.shape.size();
  for (const auto& [name, tensor, rows, cols] :
       {std::tuple<const char*, const TensorView&, const char*, const char*>{"key", key, "Lk", "dk"},
        {"value", value, "Lk", "dv"}}) {
    if (tensor.shape.size() != rank) {
      Fail(name, "rank " + std::to_string(rank) + " (*batch, " + rows + ", " + cols + ") like query",
           "rank " + std::to_string(tensor.shape.size()) + " " + ShapeString(tensor.shape));
    }
    CheckTensor(name, tensor);
  }
  const Shape q_batch = BatchDims(query.shape), k_batch = BatchDims(key.shape);
  if (BatchDims(value.shape) != k_batch) {
    Fail("value", "batch dimensions " + ShapeString(k_batch) + " (those of key)", ShapeString(BatchDims(value.shape)));
  }
  if (!enable_gqa || q_batch.empty()) {
    if (k_batch != q_batch) {
      Fail("key",
           "batch dimensions " + ShapeString(q_batch) + " (those of query" +
               (q_batch.empty() ? ")" : "; enable_gqa lets the last one divide query's)"),
           ShapeString(k_batch));
    }
    return k_batch;
  }
  const int64_t hq = q_batch.back(), hkv = k_batch.back();
  if (!std::equal(q_batch.begin(), q_batch.end() - 1, k_batch.begin()) || hkv < 0 ||
      (hkv == 0 ? hq != 0 : hq % hkv != 0)) {
    Fail("key",
         "batch dimensions " + ShapeString(Shape(q_batch.begin(), q_batch.end() - 1)) +
             " then a number of heads dividing query's " + std::to_string(hq) + " (enable_gqa)",
         ShapeString(k_batch));
  }
  return k_batch;
}

void CheckPast(const SdpaOptions& o, const TensorView& key, const TensorView& value) {
  const Shape kv_batch = BatchDims(key.shape);
  const int64_t dk = key.shape.back(), dv = value.shape.back();
  int64_t lpast = -1;
  for (const auto& [name, past, d, dname] :
       {std::tuple<const char*, const TensorView&, int64_t, const char*>{"past_key", o.past_key, dk, "dk"},
        {"past_value", o.past_value, dv, "dv"}}) {
    const Shape want = WithLast2(kv_batch, lpast < 0 ? -1 : lpast, d);
    const std::string expected = "shape (*batchKV, Lpast, " + std::string(dname) + ") = " + ShapeString(kv_batch) +
                                 " + [" + (lpast < 0 ? "Lpast" : std::to_string(lpast)) + ", " + std::to_string(d) +
                                 "] (past_key and past_value come together)";
    if (past.shape.size() != want.size() || BatchDims(past.shape) != kv_batch || past.shape.back() != d ||
        (lpast >= 0 && past.shape.end()[-2] != lpast)) {
      Fail(name, expected, past.shape.empty() && !past.data ? "none" : ShapeString(past.shape));
    }
    CheckTensor(name, past);
    lpast = past.shape.end()[-2];
  }
}

// past ‖ new along the rows of each of `problems` problems: past (problems, lpast, d), now (problems, lk, d).
Tensor Concat(const TensorView& past, const TensorView& now, size_t problems, const char* name) {
  const int64_t lpast = past.shape.end()[-2], lk = now.shape.end()[-2], d = now.shape.back();
  Shape shape = now.shape;
  if (lk > std::numeric_limits<int64_t>::max() - lpast) {
    Fail(name, "past and new rows whose sum fits in int64", std::to_string(lpast) + " + " + std::to_string(lk));
  }
  shape.end()[-2] = lpast + lk;
  Tensor t{std::vector<float>(CheckedNumel(name, shape)), shape};
  if (problems == 0 || t.data.empty()) return t;  // (an empty batch may have any row count: no row sizes to form)
  const size_t a = static_cast<size_t>(lpast * d), b = static_cast<size_t>(lk * d);
  for (size_t p = 0; p < problems; ++p) {
    std::copy(past.data + p * a, past.data + (p + 1) * a, t.data.data() + p * (a + b));
    std::copy(now.data + p * b, now.data + (p + 1) * b, t.data.data() + p * (a + b) + a);
  }
  return t;
}

// The mask broadcast to (*batch, Lq, Lk) (NumPy rules) as BiasArgs: per-problem offsets, a row stride of 0 when
// it is broadcast over Lq; expanded (copied) only when broadcast over Lk.
void BroadcastMask(const Mask& mask, const Shape& batch_dims, int64_t lq, int64_t lk, Prepared& out) {
  const size_t numel = CheckMask("attn_mask", mask);
  if (mask.kind == Mask::Kind::kNone) return;
  const Shape full = WithLast2(batch_dims, lq, lk);
  Shape m = mask.shape;
  while (m.size() > full.size() && m.front() == 1) m.erase(m.begin());
  bool fits = m.size() <= full.size();
  for (size_t d = 0; fits && d < m.size(); ++d) {
    const int64_t f = full[full.size() - m.size() + d];
    fits = m[d] == 1 || m[d] == f;
  }
  if (!fits) {
    Fail("attn_mask", "a shape that broadcasts to (*batch, Lq, Lk) = " + ShapeString(full), ShapeString(mask.shape));
  }
  m.insert(m.begin(), full.size() - m.size(), 1);  // right-aligned, rank of full
  BiasArgs& b = out.args.bias;
  b.row_bias = AdditiveMask(mask, numel, /*masked_when=*/false, out.mask_storage);  // true = may attend
  if (m.back() != lk) {  // (…, 1) broadcast over the keys: FinishMask expands each row to lk columns
    out.mask_rows_to_expand = numel;
    m.back() = lk;
  }
  b.mask_cols = static_cast<size_t>(lk);
  b.row_stride_zero = m.end()[-2] != lq || lq == 1;
  // Offsets of each (flattened) batch problem: strides of the mask's own layout, 0 where it broadcasts.
  const size_t rank = batch_dims.size();
  std::vector<size_t> stride(rank);
  size_t s = static_cast<size_t>(m.end()[-2]) * static_cast<size_t>(lk);  // wraps only when no kernel will run
  for (size_t d = rank; d-- > 0;) {
    stride[d] = m[d] == 1 ? 0 : s;
    s *= static_cast<size_t>(m[d]);
  }
  out.mask_strides = std::move(stride);
}

// A broadcast mask's rows expanded along Lk and its per-problem offsets (BroadcastMask's strides), made only right
// before a kernel runs: an empty call with huge sizes (nothing to compute; Lq = 0 with Lk = 2^61) must not allocate
// Lk columns per row or one offset per problem.
void FinishMask(Prepared& prep) {
  BiasArgs& b = prep.args.bias;
  if (!b.row_bias) return;
  if (prep.mask_rows_to_expand > 0) {
    const size_t rows = prep.mask_rows_to_expand, lk = b.mask_cols;
    std::vector<float> expanded(
        CheckedNumel("attn_mask", {static_cast<int64_t>(rows), static_cast<int64_t>(lk)}));  // (rows, Lk)
    for (size_t r = 0; r < rows; ++r) std::fill_n(expanded.begin() + r * lk, lk, b.row_bias[r]);
    prep.mask_storage = std::move(expanded);
    b.row_bias = prep.mask_storage.data();
    prep.mask_rows_to_expand = 0;
  }
  const size_t batch = prep.args.batch, rank = prep.batch_dims.size();
  prep.mask_offsets.assign(batch, 0);
  for (size_t p = 0; p < batch; ++p) {
    size_t rest = p, offset = 0;
    for (size_t d = rank; d-- > 0;) {
      const size_t dim = static_cast<size_t>(prep.batch_dims[d]);
      offset += rest % dim * prep.mask_strides[d];
      rest /= dim;
    }
    prep.mask_offsets[p] = offset;
  }
  b.row_bias_offsets = prep.mask_offsets.data();
}

// The sizes that query, key and value agree on (checked by CheckSdpaShapes).
struct SdpaDims {
  Shape kv_batch;
  int64_t lq = 0, dk = 0, lk = 0, dv = 0;
};

// query (*batch, Lq, dk), key (*kv_batch, Lk, dk), value (*kv_batch, Lk, dv).
SdpaDims CheckSdpaShapes(const TensorView& query, const TensorView& key, const TensorView& value, bool enable_gqa) {
  const size_t rank = query.shape.size();
  if (rank < 2) {
    Fail("query", "a tensor of rank >= 2 (*batch, Lq, dk)", "rank " + std::to_string(rank));
  }
  CheckTensor("query", query);
  SdpaDims d;
  d.kv_batch = CheckKeyValue(query, key, value, enable_gqa);
  d.lq = query.shape[rank - 2];
  d.dk = query.shape[rank - 1];
  d.lk = key.shape[rank - 2];
  d.dv = value.shape[rank - 1];
  if (key.shape[rank - 1] != d.dk) {
    Fail("key", "last dimension dk = " + std::to_string(d.dk) + " (that of query)",
         std::to_string(key.shape[rank - 1]) + " in shape " + ShapeString(key.shape));
  }
  if (value.shape[rank - 2] != d.lk) {
    Fail("value", "Lk = " + std::to_string(d.lk) + " rows (those of key)",
         std::to_string(value.shape[rank - 2]) + " in shape " + ShapeString(value.shape));
  }
  return d;
}

// scale, causal_align, the window, softcap and return_scores, each in its range.
void CheckSdpaOptions(const SdpaOptions& o) {
  if (o.has_scale && !std::isfinite(o.scale)) Fail("scale", "a finite number", std::to_string(o.scale));
  if (o.causal_align != CausalAlign::kUpperLeft && o.causal_align != CausalAlign::kLowerRight) {
    Fail("causal_align", "kUpperLeft or kLowerRight", std::to_string(static_cast<int>(o.causal_align)));
  }
  for (const auto& [name, w] :
       {std::pair<const char*, int64_t>{"window_left", o.window_left}, {"window_right", o.window_right}}) {
    if (w < -1) Fail(name, "-1 (unbounded) or a size >= 0", std::to_string(w));
  }
  if (!(o.softcap == 0.0f || (o.softcap > 0.0f && std::isfinite(o.softcap)))) {
    Fail("softcap", "0 (off) or a finite number > 0", std::to_string(o.softcap));
  }
  const int stage = static_cast<int>(o.return_scores);
  if (stage < 0 || stage > static_cast<int>(ScoresStage::kMasked)) {
    Fail("return_scores", "kNone, kScaled, kSoftcapped or kMasked", std::to_string(stage));
  }
}

// kv_lengths: one length in 0 … Lk (past included) per item of the first batch dimension, or none.
void CheckKvLengths(const SdpaOptions& o, const Shape& batch_dims, int64_t lk_total) {
  if (!o.kv_lengths && !o.num_kv_lengths) return;
  const size_t items = batch_dims.empty() ? 1 : static_cast<size_t>(batch_dims[0]);
  if (!o.kv_lengths || o.num_kv_lengths != items) {
    Fail("kv_lengths", std::to_string(items) + " lengths (one per item of the first batch dimension)",
         o.kv_lengths ? std::to_string(o.num_kv_lengths) : "a null pointer");
  }
  for (size_t i = 0; i < items; ++i) {
    if (o.kv_lengths[i] < 0 || o.kv_lengths[i] > lk_total) {
      Fail("kv_lengths", "lengths in 0 .. Lk = " + std::to_string(lk_total),
           std::to_string(o.kv_lengths[i]) + " at index " + std::to_string(i));
    }
  }
}

// The kernels' sizes and options (checked), the broadcast mask, and the keys and values: past ‖ new when there is a
// past (present_key / present_value), else the caller's.
void FillSdpaArgs(const TensorView& query, const TensorView& key, const TensorView& value, const SdpaOptions& o,
                  const SdpaDims& d, Prepared& out) {
  const int64_t lpast = out.has_past ? o.past_key.shape.end()[-2] : 0, lk_total = d.lk + lpast;
  const Shape batch_dims = BatchDims(query.shape);
  const size_t batch = CheckedNumel("query", batch_dims), kv_problems = CheckedNumel("key", d.kv_batch);
  SdpaArgs& args = out.args;
  out.batch_dims = batch_dims;
  out.lq = d.lq;
  out.lk_total = lk_total;
  out.dv = d.dv;
  args.q = query.data;
  args.batch = batch;
  args.kv_group = batch > 0 && kv_problems > 0 ? batch / kv_problems : 1;  // no query head: no group
  args.lq = static_cast<size_t>(d.lq);
  args.lk = static_cast<size_t>(lk_total);
  args.dk = static_cast<size_t>(d.dk);
  args.dv = static_cast<size_t>(d.dv);
  // dk = 0 makes every logit 0; 1/sqrt(0) would turn them into NaN.
  args.scale = o.has_scale ? o.scale : d.dk > 0 ? 1.0f / std::sqrt(static_cast<float>(d.dk)) : 1.0f;
  args.causal = o.is_causal;
  args.lower_right = o.causal_align == CausalAlign::kLowerRight;
  args.past = static_cast<size_t>(lpast);
  if (o.kv_lengths) {
    args.kv_lengths = o.kv_lengths;
    args.kv_lengths_group = batch_dims.empty() || batch_dims[0] == 0 ? 1 : batch / static_cast<size_t>(batch_dims[0]);
  }
  // |key - position| never exceeds lq + lk: larger windows are unbounded in effect (and cannot overflow).
  args.window_left = std::min(o.window_left, d.lq + lk_total);
  args.window_right = std::min(o.window_right, d.lq + lk_total);
  args.softcap = o.softcap;
  args.scores_stage = static_cast<int>(o.return_scores);
  BroadcastMask(o.attn_mask, batch_dims, d.lq, lk_total, out);
  if (out.has_past) {
    out.present_key = Concat(o.past_key, key, kv_problems, "present_key");
    out.present_value = Concat(o.past_value, value, kv_problems, "present_value");
    args.k = out.present_key.data.data();
    args.v = out.present_value.data.data();
  } else {
    args.k = key.data;
    args.v = value.data;
  }
}

// Validates the arguments (shapes, options, past, kv_lengths: in this order, as the messages promise) and fills
// in everything of SdpaArgs but out, weights and scores.
void PrepareSdpa(const TensorView& query, const TensorView& key, const TensorView& value, const SdpaOptions& o,
                 Prepared& out) {
  const SdpaDims d = CheckSdpaShapes(query, key, value, o.enable_gqa);
  CheckSdpaOptions(o);
  out.has_past = HasPast(o);
  if (out.has_past) CheckPast(o, key, value);
  const int64_t lk_total = d.lk + (out.has_past ? o.past_key.shape.end()[-2] : 0);
  CheckedNumel("query", BatchDims(query.shape));
  CheckedNumel("key", d.kv_batch);
  CheckKvLengths(o, BatchDims(query.shape), lk_total);
  FillSdpaArgs(query, key, value, o, d, out);
}

}  // namespace

AttentionResult ScaledDotProductAttention(const TensorView& query, const TensorView& key, const TensorView& value,
                                          const SdpaOptions& options) {
  Prepared prep;
  PrepareSdpa(query, key, value, options, prep);
  SdpaArgs& args = prep.args;
  AttentionResult result;
  const Shape out_shape = WithLast2(prep.batch_dims, prep.lq, prep.dv);
  const Shape w_shape = WithLast2(prep.batch_dims, prep.lq, prep.lk_total);
  // Every size check before the first result allocation.
  const size_t out_numel = CheckedNumel("output", out_shape);
  const size_t w_numel = options.need_weights ? CheckedNumel("weights", w_shape) : 0;
  const size_t s_numel = args.scores_stage ? CheckedNumel("scores", w_shape) : 0;
  result.output = Tensor{std::vector<float>(out_numel), out_shape};
  args.out = result.output.data.data();
  if (options.need_weights) {
    result.weights = Tensor{std::vector<float>(w_numel), w_shape};
    args.weights = result.weights.data.data();
  }
  if (args.scores_stage) {
    result.scores = Tensor{std::vector<float>(s_numel), w_shape};
    args.scores = result.scores.data.data();
  }
  if (prep.has_past) {
    result.present_key = std::move(prep.present_key);
    result.present_value = std::move(prep.present_value);
  }
  if (out_numel == 0 && w_numel == 0 && s_numel == 0) return result;  // nothing to compute
  FinishMask(prep);
  SdpaForward(args);
  return result;
}

SdpaGradients ScaledDotProductAttentionBackward(const TensorView& query, const TensorView& key, const TensorView& value,
                                                const TensorView& grad_output, const SdpaOptions& options) {
  Prepared prep;
  PrepareSdpa(query, key, value, options, prep);
  SdpaArgs& args = prep.args;
  args.scores_stage = 0;  // (return_scores is ignored here)
  const Shape out_shape = WithLast2(prep.batch_dims, prep.lq, prep.dv);
  if (grad_output.shape != out_shape) {
    Fail("grad_output", "the output's shape (*batch, Lq, dv) = " + ShapeString(out_shape),
         ShapeString(grad_output.shape));
  }
  CheckTensor("grad_output", grad_output);
  SdpaGradients grads;
  grads.grad_query = Tensor{std::vector<float>(CheckedNumel("query", query.shape)), query.shape};
  // Gradients of the keys and values attended (past ‖ new with a past), split afterwards.
  Tensor grad_k{std::vector<float>(prep.has_past ? prep.present_key.data.size() : CheckedNumel("key", key.shape)),
                prep.has_past ? prep.present_key.shape : key.shape};
  Tensor grad_v{std::vector<float>(prep.has_past ? prep.present_value.data.size() : CheckedNumel("value", value.shape)),
                prep.has_past ? prep.present_value.shape : value.shape};
  if (!grads.grad_query.data.empty() || !grad_k.data.empty() || !grad_v.data.empty()) {
    SdpaBackwardArgs backward;
    backward.forward = &args;
    backward.grad_out = grad_output.data;
    backward.grad_q = grads.grad_query.data.data();
    backward.grad_k = grad_k.data.data();
    backward.grad_v = grad_v.data.data();
    FinishMask(prep);
    SdpaBackward(backward);
  }
  if (!prep.has_past) {
    grads.grad_key = std::move(grad_k);
    grads.grad_value = std::move(grad_v);
    return grads;
  }
  // Split past ‖ new back into the two inputs' gradients.
  const size_t problems = CheckedNumel("key", BatchDims(key.shape));
  for (const auto& [whole, past_shape, now_shape, past_out, now_out] :
       {std::tuple<const Tensor&, const Shape&, const Shape&, Tensor&, Tensor&>{
            grad_k, options.past_key.shape, key.shape, grads.grad_past_key, grads.grad_key},
        {grad_v, options.past_value.shape, value.shape, grads.grad_past_value, grads.grad_value}}) {
    past_out = Tensor{std::vector<float>(CheckedNumel("past", past_shape)), past_shape};
    now_out = Tensor{std::vector<float>(CheckedNumel("key", now_shape)), now_shape};
    const size_t a = past_out.data.size() / std::max<size_t>(problems, 1);
    const size_t b = now_out.data.size() / std::max<size_t>(problems, 1);
    for (size_t p = 0; p < problems && a + b > 0; ++p) {
      std::copy_n(whole.data.begin() + p * (a + b), a, past_out.data.begin() + p * a);
      std::copy_n(whole.data.begin() + p * (a + b) + a, b, now_out.data.begin() + p * b);
    }
  }
  return grads;
}

const char* ActiveTargetName() { return ChosenTargetName(); }

}  // namespace attnlab
