// PrepareMha and AllocateMhaResult: validation of MultiHeadAttention::Forward's arguments and its result buffers
// (multi_head_attention_impl.h).
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "attnlab/attention.h"
#include "cpp/src/attention/kernels.h"
#include "cpp/src/attention/multi_head_attention_impl.h"
#include "cpp/src/checks.h"

namespace attnlab {

namespace {

// Sizes of one forward in the configured layout: batch n, queries l, new keys s, and the keys the heads attend
// (mask columns): the cached ones after this step, or the new ones.
struct MhaSizes {
  bool batched, cached;
  int64_t n, l, s, keys;
};

// Ranks, batch sizes, lengths and feature sizes of query, key and value.
MhaSizes CheckMhaInputs(const MhaConfig& c, const TensorView& query, const TensorView& key, const TensorView& value,
                        int64_t cache_past) {
  const size_t rank = query.shape.size();
  if (rank != 3 && rank != 2) {
    Fail("query", c.batch_first ? "rank 3 (N, L, E) or rank 2 (L, E)" : "rank 3 (L, N, E) or rank 2 (L, E)",
         "rank " + std::to_string(rank) + " " + ShapeString(query.shape));
  }
  const bool batched = rank == 3;
  CheckTensor("query", query);
  const std::pair<const char*, const TensorView&> kv[] = {{"key", key}, {"value", value}};
  for (const auto& [name, tensor] : kv) {
    if (tensor.shape.size() != rank) {
      Fail(name, "rank " + std::to_string(rank) + (batched ? " (batched, like query)" : " (unbatched, like query)"),
           "rank " + std::to_string(tensor.shape.size()) + " " + ShapeString(tensor.shape));
    }
    CheckTensor(name, tensor);
  }
  auto seq_len = [&](const TensorView& t) { return !batched ? t.shape[0] : c.batch_first ? t.shape[1] : t.shape[0]; };
  auto batch_size = [&](const TensorView& t) { return !batched ? 1 : c.batch_first ? t.shape[0] : t.shape[1]; };
  const int64_t n = batch_size(query), l = seq_len(query), s = seq_len(key);
  for (const auto& [name, tensor] : kv) {
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
  const bool cached = cache_past >= 0;
  return MhaSizes{batched, cached, n, l, s, cached ? cache_past + s : s};
}

// key_padding_mask (N, keys) and attn_mask (L, keys) or (N·H, L, keys) as additive biases.
BiasArgs MhaBiases(const MhaConfig& c, const MhaSizes& z, const MhaForwardOptions& options,
                   std::vector<float>& kpm_storage, std::vector<float>& mask_storage) {
  BiasArgs bias;
  const std::string dims = z.cached ? "cached length after this step" : "S";
  const Mask& kpm = options.key_padding_mask;
  const size_t kpm_numel = CheckMask("key_padding_mask", kpm);
  if (kpm.kind != Mask::Kind::kNone) {
    const Shape expected = z.batched ? Shape{z.n, z.keys} : Shape{z.keys};
    if (kpm.shape != expected) {
      Fail("key_padding_mask",
           "shape " + std::string(z.batched ? "(N, " + dims + ") = " : "(" + dims + ") = ") + ShapeString(expected),
           ShapeString(kpm.shape));
    }
    bias.key_bias = AdditiveMask(kpm, kpm_numel, /*masked_when=*/true, kpm_storage);
    bias.key_bias_batch_stride = static_cast<size_t>(z.keys);
  }
  const Mask& mask = options.attn_mask;
  const size_t mask_numel = CheckMask("attn_mask", mask);
  if (mask.kind != Mask::Kind::kNone) {
    // N * num_heads saturates instead of overflowing (absurd batch sizes; the mask's own shape passed its checks).
    const int64_t h = c.num_heads;
    const int64_t nh = z.n > std::numeric_limits<int64_t>::max() / h ? std::numeric_limits<int64_t>::max() : z.n * h;
    const Shape two_d{z.l, z.keys}, three_d{nh, z.l, z.keys};
    if (mask.shape != two_d && mask.shape != three_d) {
      Fail("attn_mask",
           "shape (L, " + dims + ") = " + ShapeString(two_d) + " or (" + (z.batched ? "N*num_heads" : "num_heads") +
               ", L, " + dims + ") = " + ShapeString(three_d),
           ShapeString(mask.shape));
    }
    bias.row_bias = AdditiveMask(mask, mask_numel, /*masked_when=*/true, mask_storage);
    bias.row_bias_batch_stride = mask.shape == two_d ? 0 : static_cast<size_t>(z.l) * static_cast<size_t>(z.keys);
  }
  bias.mask_cols = static_cast<size_t>(z.keys);
  return bias;
}

}  // namespace

MhaArgs PrepareMha(const MhaConfig& c, const TensorView& query, const TensorView& key, const TensorView& value,
                   const MhaForwardOptions& options, std::vector<float>& kpm_storage, std::vector<float>& mask_storage,
                   Shape& weights_shape, int64_t cache_past) {
  const MhaSizes z = CheckMhaInputs(c, query, key, value, cache_past);
  const int64_t h = c.num_heads;
  MhaArgs args;
  args.bias = MhaBiases(c, z, options, kpm_storage, mask_storage);

  const int64_t s_all = z.cached ? z.keys : z.s + (c.add_bias_kv ? 1 : 0) + (c.add_zero_attn ? 1 : 0);
  weights_shape = options.average_attn_weights ? Shape{z.n, z.l, s_all} : Shape{z.n, h, z.l, s_all};
  if (!z.batched) weights_shape.erase(weights_shape.begin());
  CheckedNumel("output", query.shape);
  if (options.need_weights) CheckedNumel("weights", weights_shape);
  CheckedNumel("key", {z.n, s_all, c.embed_dim});                            // projected key/value buffers (E >= Ekv)
  if (options.requires_grad) CheckedNumel("weights", {z.n, h, z.l, s_all});  // saved per-head weights

  args.query = query.data;
  args.key = key.data;
  args.value = value.data;
  args.n = static_cast<size_t>(z.n);
  args.l = static_cast<size_t>(z.l);
  args.s = static_cast<size_t>(z.s);
  args.e = static_cast<size_t>(c.embed_dim);
  args.heads = static_cast<size_t>(h);
  args.kv_heads = static_cast<size_t>(c.num_kv_heads);
  args.kdim = static_cast<size_t>(c.kdim);
  args.vdim = static_cast<size_t>(c.vdim);
  args.batch_first = c.batch_first || !z.batched;
  args.add_zero_attn = c.add_zero_attn;
  args.average_weights = options.average_attn_weights;
  return args;
}

AttentionResult AllocateMhaResult(const Shape& query_shape, const Shape& weights_shape, bool need_weights,
                                  MhaArgs& args) {
  AttentionResult result;
  result.output.shape = query_shape;
  result.output.data.resize(CheckedNumel("output", query_shape));
  if (need_weights) {
    result.weights.data.resize(CheckedNumel("weights", weights_shape));
    result.weights.shape = weights_shape;
    args.weights = result.weights.data.data();
  }
  args.out = result.output.data.data();
  return result;
}

}  // namespace attnlab
