// ScaledDotProductAttention: validation, mask normalisation, one dispatched kernel call.
#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "attnlab/attention.h"
#include "cpp/src/checks.h"
#include "cpp/src/kernels.h"

namespace attnlab {
namespace {

Shape BatchDims(const Shape& shape) { return Shape(shape.begin(), shape.end() - 2); }

// Validates the arguments and fills in everything of SdpaArgs but out and weights. mask_storage holds a bool
// mask's additive form.
SdpaArgs PrepareSdpa(const TensorView& query, const TensorView& key, const TensorView& value,
                     const SdpaOptions& options, std::vector<float>& mask_storage) {
  const size_t rank = query.shape.size();
  if (rank < 2) {
    Fail("query", "a tensor of rank >= 2 (*batch, Lq, dk)", "rank " + std::to_string(rank));
  }
  CheckTensor("query", query);
  for (const auto& [name, tensor, rows, cols] :
       {std::tuple<const char*, const TensorView&, const char*, const char*>{"key", key, "Lk", "dk"},
        {"value", value, "Lk", "dv"}}) {
    if (tensor.shape.size() != rank) {
      Fail(name, "rank " + std::to_string(rank) + " (*batch, " + rows + ", " + cols + ") like query",
           "rank " + std::to_string(tensor.shape.size()) + " " + ShapeString(tensor.shape));
    }
    CheckTensor(name, tensor);
    if (BatchDims(tensor.shape) != BatchDims(query.shape)) {
      Fail(name, "batch dimensions " + ShapeString(BatchDims(query.shape)) + " (those of query)",
           ShapeString(BatchDims(tensor.shape)));
    }
  }
  const int64_t lq = query.shape[rank - 2], dk = query.shape[rank - 1];
  const int64_t lk = key.shape[rank - 2], dv = value.shape[rank - 1];
  if (key.shape[rank - 1] != dk) {
    Fail("key", "last dimension dk = " + std::to_string(dk) + " (that of query)",
         std::to_string(key.shape[rank - 1]) + " in shape " + ShapeString(key.shape));
  }
  if (value.shape[rank - 2] != lk) {
    Fail("value", "Lk = " + std::to_string(lk) + " rows (those of key)",
         std::to_string(value.shape[rank - 2]) + " in shape " + ShapeString(value.shape));
  }
  // Issue 19 options whose kernels are still being written: rejected by name until they land.
  const bool past = options.past_key.data || !options.past_key.shape.empty() || options.past_value.data ||
                    !options.past_value.shape.empty();
  for (const auto& [name, used] :
       {std::pair<const char*, bool>{"causal_align", options.causal_align != CausalAlign::kUpperLeft},
        {"enable_gqa", options.enable_gqa},
        {"kv_lengths", options.kv_lengths != nullptr || options.num_kv_lengths != 0},
        {"window_left", options.window_left != -1},
        {"window_right", options.window_right != -1},
        {"softcap", options.softcap != 0.0f},
        {"return_scores", options.return_scores != ScoresStage::kNone},
        {"past_key", past}}) {
    if (used) Fail(name, "its default (not implemented yet)", "a non-default value");
  }
  if (options.has_scale && !std::isfinite(options.scale)) {
    Fail("scale", "a finite number", std::to_string(options.scale));
  }

  const Shape batch_dims = BatchDims(query.shape);
  const size_t batch = CheckedNumel("query", batch_dims);
  SdpaArgs args;
  args.q = query.data;
  args.k = key.data;
  args.v = value.data;
  args.batch = batch;
  args.lq = static_cast<size_t>(lq);
  args.lk = static_cast<size_t>(lk);
  args.dk = static_cast<size_t>(dk);
  args.dv = static_cast<size_t>(dv);
  // dk = 0 makes every logit 0; 1/sqrt(0) would turn them into NaN.
  args.scale = options.has_scale ? options.scale : dk > 0 ? 1.0f / std::sqrt(static_cast<float>(dk)) : 1.0f;
  args.causal = options.is_causal;

  const Mask& mask = options.attn_mask;
  const size_t mask_numel = CheckMask("attn_mask", mask);
  if (mask.kind != Mask::Kind::kNone) {
    Shape full = batch_dims;
    full.push_back(lq);
    full.push_back(lk);
    const Shape broadcast{lq, lk};
    if (mask.shape != broadcast && mask.shape != full) {
      Fail("attn_mask", "shape (Lq, Lk) = " + ShapeString(broadcast) + " or (*batch, Lq, Lk) = " + ShapeString(full),
           ShapeString(mask.shape));
    }
    // SDPA bool masks: true = may attend.
    args.bias.row_bias = AdditiveMask(mask, mask_numel, /*masked_when=*/false, mask_storage);
    args.bias.row_bias_batch_stride = mask.shape == broadcast ? 0 : args.lq * args.lk;
    args.bias.mask_cols = args.lk;
  }
  return args;
}

}  // namespace

AttentionResult ScaledDotProductAttention(const TensorView& query, const TensorView& key, const TensorView& value,
                                          const SdpaOptions& options) {
  std::vector<float> mask_storage;
  SdpaArgs args = PrepareSdpa(query, key, value, options, mask_storage);
  const Shape batch_dims = BatchDims(query.shape);
  const int64_t lq = query.shape.end()[-2], lk = key.shape.end()[-2], dv = value.shape.back();
  AttentionResult result;
  Shape out_shape = batch_dims;
  out_shape.push_back(lq);
  out_shape.push_back(dv);
  Shape w_shape = batch_dims;
  w_shape.push_back(lq);
  w_shape.push_back(lk);
  // Every size check before the first allocation: a rejected call allocates nothing.
  const size_t out_numel = CheckedNumel("output", out_shape);
  const size_t w_numel = options.need_weights ? CheckedNumel("weights", w_shape) : 0;
  result.output.data.resize(out_numel);
  result.output.shape = out_shape;
  args.out = result.output.data.data();
  if (options.need_weights) {
    result.weights.data.resize(w_numel);
    result.weights.shape = w_shape;
    args.weights = result.weights.data.data();
  }
  if (out_numel == 0 && w_numel == 0) return result;  // nothing to compute, however many batch items
  SdpaForward(args);
  return result;
}

SdpaGradients ScaledDotProductAttentionBackward(const TensorView& query, const TensorView& key, const TensorView& value,
                                                const TensorView& grad_output, const SdpaOptions& options) {
  std::vector<float> mask_storage;
  SdpaArgs args = PrepareSdpa(query, key, value, options, mask_storage);
  Shape out_shape = BatchDims(query.shape);
  out_shape.push_back(query.shape.end()[-2]);
  out_shape.push_back(value.shape.back());
  if (grad_output.shape != out_shape) {
    Fail("grad_output", "the output's shape (*batch, Lq, dv) = " + ShapeString(out_shape),
         ShapeString(grad_output.shape));
  }
  CheckTensor("grad_output", grad_output);
  SdpaGradients grads;
  grads.grad_query = Tensor{std::vector<float>(CheckedNumel("query", query.shape)), query.shape};
  grads.grad_key = Tensor{std::vector<float>(CheckedNumel("key", key.shape)), key.shape};
  grads.grad_value = Tensor{std::vector<float>(CheckedNumel("value", value.shape)), value.shape};
  if (grads.grad_query.data.empty() && grads.grad_key.data.empty() && grads.grad_value.data.empty()) return grads;
  SdpaBackwardArgs backward;
  backward.forward = &args;
  backward.grad_out = grad_output.data;
  backward.grad_q = grads.grad_query.data.data();
  backward.grad_k = grads.grad_key.data.data();
  backward.grad_v = grads.grad_value.data.data();
  SdpaBackward(backward);
  return grads;
}

const char* ActiveTargetName() { return ChosenTargetName(); }

}  // namespace attnlab
