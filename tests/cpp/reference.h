// Independent double-precision oracle (Eigen) for scaled dot-product attention and
// torch.nn.MultiheadAttention.forward (eval mode), following tests/fixtures/torch/README.md.
// It shares no code with the library; it only reads the public value types (TensorView, Mask, options).
#ifndef ATTNLAB_TESTS_CPP_REFERENCE_H_
#define ATTNLAB_TESTS_CPP_REFERENCE_H_

#include <Eigen/Dense>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "attnlab/attention.h"

namespace attnlab_test {

struct RefResult {
  std::vector<double> output;
  attnlab::Shape output_shape;
  std::vector<double> weights;  // empty when weights were not requested
  attnlab::Shape weights_shape;
};

namespace ref_internal {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

inline int64_t Product(const attnlab::Shape& shape, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= shape[i];
  return n;
}

// rows x cols block of a row-major buffer starting at `offset`.
inline Eigen::MatrixXd LoadMatrix(const float* data, int64_t offset, int64_t rows, int64_t cols) {
  Eigen::MatrixXd m(rows, cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) m(r, c) = data[offset + r * cols + c];
  }
  return m;
}

inline void StoreMatrix(const Eigen::MatrixXd& m, std::vector<double>* out, int64_t offset) {
  for (int64_t r = 0; r < m.rows(); ++r) {
    for (int64_t c = 0; c < m.cols(); ++c) (*out)[offset + r * m.cols() + c] = m(r, c);
  }
}

// Row softmax. A row whose every logit is -inf (or that has no entries) becomes all zeros.
inline Eigen::MatrixXd SoftmaxRowsOrZero(const Eigen::MatrixXd& logits) {
  Eigen::MatrixXd w = Eigen::MatrixXd::Zero(logits.rows(), logits.cols());
  for (int64_t r = 0; r < logits.rows(); ++r) {
    double max = kNegInf;
    for (int64_t c = 0; c < logits.cols(); ++c) max = std::max(max, logits(r, c));
    if (max == kNegInf) continue;
    double sum = 0.0;
    for (int64_t c = 0; c < logits.cols(); ++c) {
      w(r, c) = std::exp(logits(r, c) - max);
      sum += w(r, c);
    }
    w.row(r) /= sum;
  }
  return w;
}

// softmax(q kᵀ · scale + bias) v, where bias (Lq x Lk) holds additive terms (-inf = masked).
inline Eigen::MatrixXd Attend(const Eigen::MatrixXd& q, const Eigen::MatrixXd& k, const Eigen::MatrixXd& v,
                              double scale, const Eigen::MatrixXd& bias, Eigen::MatrixXd* weights) {
  if (k.rows() == 0) {
    *weights = Eigen::MatrixXd::Zero(q.rows(), 0);
    return Eigen::MatrixXd::Zero(q.rows(), v.cols());
  }
  const Eigen::MatrixXd logits = (q * k.transpose()) * scale + bias;
  *weights = SoftmaxRowsOrZero(logits);
  return *weights * v;
}

// Adds one mask element to an additive bias: bool `masked` → -inf, float → added.
inline double MaskTerm(const attnlab::Mask& mask, int64_t index, bool bool_true_means_masked) {
  if (mask.kind == attnlab::Mask::Kind::kBool) {
    const bool is_true = mask.bool_data[index] != 0;
    return is_true == bool_true_means_masked ? kNegInf : 0.0;
  }
  if (mask.kind == attnlab::Mask::Kind::kFloat) return mask.float_data[index];
  return 0.0;
}

}  // namespace ref_internal

// softmax(Q Kᵀ · scale + mask) V with F.scaled_dot_product_attention's conventions (bool true = may attend),
// causal top-left aligned, fully masked rows → zeros. Weights are always computed.
inline RefResult ReferenceSdpa(const attnlab::TensorView& query, const attnlab::TensorView& key,
                               const attnlab::TensorView& value, const attnlab::SdpaOptions& options) {
  using namespace ref_internal;
  const size_t rank = query.shape.size();
  const attnlab::Shape batch(query.shape.begin(), query.shape.end() - 2);
  const int64_t num_batch = Product(query.shape, 0, rank - 2);
  const int64_t lq = query.shape[rank - 2], dk = query.shape[rank - 1];
  const int64_t lk = key.shape[rank - 2], dv = value.shape[rank - 1];
  const double scale = options.has_scale ? static_cast<double>(options.scale) : 1.0 / std::sqrt(double(dk));
  const attnlab::Mask& mask = options.attn_mask;
  const bool mask_broadcast = mask.kind != attnlab::Mask::Kind::kNone && mask.shape.size() == 2;

  RefResult r;
  r.output_shape = batch;
  r.output_shape.insert(r.output_shape.end(), {lq, dv});
  r.weights_shape = batch;
  r.weights_shape.insert(r.weights_shape.end(), {lq, lk});
  r.output.assign(num_batch * lq * dv, 0.0);
  r.weights.assign(num_batch * lq * lk, 0.0);
  for (int64_t b = 0; b < num_batch; ++b) {
    const Eigen::MatrixXd q = LoadMatrix(query.data, b * lq * dk, lq, dk);
    const Eigen::MatrixXd k = LoadMatrix(key.data, b * lk * dk, lk, dk);
    const Eigen::MatrixXd v = LoadMatrix(value.data, b * lk * dv, lk, dv);
    Eigen::MatrixXd bias = Eigen::MatrixXd::Zero(lq, lk);
    const int64_t mask_offset = mask_broadcast ? 0 : b * lq * lk;
    for (int64_t i = 0; i < lq; ++i) {
      for (int64_t j = 0; j < lk; ++j) {
        double term = MaskTerm(mask, mask_offset + i * lk + j, /*bool_true_means_masked=*/false);
        if (options.is_causal && j > i) term = kNegInf;
        bias(i, j) = term;
      }
    }
    Eigen::MatrixXd w;
    const Eigen::MatrixXd out = Attend(q, k, v, scale, bias, &w);
    StoreMatrix(out, &r.output, b * lq * dv);
    StoreMatrix(w, &r.weights, b * lq * lk);
  }
  if (!options.need_weights) {
    r.weights.clear();
    r.weights_shape.clear();
  }
  return r;
}

// torch.nn.MultiheadAttention.forward in eval mode (README "kind mha"); `state_dict` uses PyTorch's names.
// Fully masked (query, head) rows get zero weights and zero attention output. Grouped-query heads
// (config.num_kv_heads < num_heads): k/v_proj_weight (Ekv, kdim/vdim), in_proj_bias [b_q (E); b_k (Ekv); b_v (Ekv)],
// bias_k/bias_v (Ekv), Ekv = num_kv_heads * head_dim, and query head h reads key/value head h / (H / num_kv_heads).
inline RefResult ReferenceMha(const attnlab::MhaConfig& config,
                              const std::map<std::string, attnlab::Tensor>& state_dict,
                              const attnlab::TensorView& query, const attnlab::TensorView& key,
                              const attnlab::TensorView& value, const attnlab::MhaForwardOptions& options) {
  using namespace ref_internal;
  const int64_t e = config.embed_dim, h = config.num_heads, hd = e / h;
  const int64_t hkv = config.num_kv_heads < 0 ? h : config.num_kv_heads, ekv = hkv * hd, group = h / hkv;
  const int64_t kdim = config.kdim < 0 ? e : config.kdim;
  const int64_t vdim = config.vdim < 0 ? e : config.vdim;
  const bool batched = query.shape.size() == 3;
  const bool bf = config.batch_first;
  const int64_t n = !batched ? 1 : bf ? query.shape[0] : query.shape[1];
  const int64_t l = !batched ? query.shape[0] : bf ? query.shape[1] : query.shape[0];
  const int64_t s = !batched ? key.shape[0] : bf ? key.shape[1] : key.shape[0];
  const int64_t extra = (config.add_bias_kv ? 1 : 0) + (config.add_zero_attn ? 1 : 0);
  const int64_t s_total = s + extra;

  auto param = [&](const std::string& name) -> const attnlab::Tensor& {
    auto it = state_dict.find(name);
    if (it == state_dict.end()) throw std::runtime_error("reference: missing parameter " + name);
    return it->second;
  };
  Eigen::MatrixXd wq, wk, wv;
  if (state_dict.count("in_proj_weight")) {
    const float* w = param("in_proj_weight").data.data();
    wq = LoadMatrix(w, 0, e, e);
    wk = LoadMatrix(w, e * e, e, e);
    wv = LoadMatrix(w, 2 * e * e, e, e);
  } else {
    wq = LoadMatrix(param("q_proj_weight").data.data(), 0, e, e);
    wk = LoadMatrix(param("k_proj_weight").data.data(), 0, ekv, kdim);
    wv = LoadMatrix(param("v_proj_weight").data.data(), 0, ekv, vdim);
  }
  Eigen::RowVectorXd bq = Eigen::RowVectorXd::Zero(e), bo = bq;
  Eigen::RowVectorXd bk = Eigen::RowVectorXd::Zero(ekv), bv = bk;
  if (state_dict.count("in_proj_bias")) {
    const float* b = param("in_proj_bias").data.data();
    for (int64_t i = 0; i < e; ++i) bq(i) = b[i];
    for (int64_t i = 0; i < ekv; ++i) {
      bk(i) = b[e + i];
      bv(i) = b[e + ekv + i];
    }
  }
  const Eigen::MatrixXd wo = LoadMatrix(param("out_proj.weight").data.data(), 0, e, e);
  if (state_dict.count("out_proj.bias")) {
    for (int64_t i = 0; i < e; ++i) bo(i) = param("out_proj.bias").data[i];
  }

  // Element (item, position, feature) of an input in the configured layout.
  auto load_input = [&](const attnlab::TensorView& x, int64_t item, int64_t len, int64_t dim) {
    Eigen::MatrixXd m(len, dim);
    for (int64_t t = 0; t < len; ++t) {
      const int64_t row = !batched ? t : bf ? item * len + t : t * n + item;
      for (int64_t c = 0; c < dim; ++c) m(t, c) = x.data[row * dim + c];
    }
    return m;
  };

  RefResult r;
  r.output.assign(n * l * e, 0.0);
  r.output_shape = query.shape;
  const bool average = options.average_attn_weights;
  std::vector<double> per_head(n * h * l * s_total, 0.0);
  const attnlab::Mask& am = options.attn_mask;
  const attnlab::Mask& kpm = options.key_padding_mask;
  const bool am_3d = am.kind != attnlab::Mask::Kind::kNone && am.shape.size() == 3;

  for (int64_t b = 0; b < n; ++b) {
    const Eigen::MatrixXd q = (load_input(query, b, l, e) * wq.transpose()).rowwise() + bq;
    Eigen::MatrixXd k = Eigen::MatrixXd::Zero(s_total, ekv), v = Eigen::MatrixXd::Zero(s_total, ekv);
    k.topRows(s) = (load_input(key, b, s, kdim) * wk.transpose()).rowwise() + bk;
    v.topRows(s) = (load_input(value, b, s, vdim) * wv.transpose()).rowwise() + bv;
    if (config.add_bias_kv) {
      for (int64_t c = 0; c < ekv; ++c) {
        k(s, c) = param("bias_k").data[c];
        v(s, c) = param("bias_v").data[c];
      }
    }
    // add_zero_attn's row (the last one) stays zero in every head.
    Eigen::MatrixXd concat(l, e);
    for (int64_t head = 0; head < h; ++head) {
      Eigen::MatrixXd bias = Eigen::MatrixXd::Zero(l, s_total);  // appended positions are never masked
      for (int64_t i = 0; i < l; ++i) {
        for (int64_t j = 0; j < s; ++j) {
          const int64_t am_index = am_3d ? ((b * h + head) * l + i) * s + j : i * s + j;
          // Added in float32, as attnlab and PyTorch 2 add the two masks (an overflowed sum is ±inf).
          bias(i, j) = static_cast<float>(MaskTerm(am, am_index, /*bool_true_means_masked=*/true)) +
                       static_cast<float>(MaskTerm(kpm, b * s + j, /*bool_true_means_masked=*/true));
        }
      }
      Eigen::MatrixXd w;
      const int64_t kv_col = head / group * hd;
      concat.middleCols(head * hd, hd) = Attend(q.middleCols(head * hd, hd), k.middleCols(kv_col, hd),
                                                v.middleCols(kv_col, hd), 1.0 / std::sqrt(double(hd)), bias, &w);
      StoreMatrix(w, &per_head, (b * h + head) * l * s_total);
    }
    const Eigen::MatrixXd out = (concat * wo.transpose()).rowwise() + bo;
    for (int64_t t = 0; t < l; ++t) {
      const int64_t row = !batched ? t : bf ? b * l + t : t * n + b;
      for (int64_t c = 0; c < e; ++c) r.output[row * e + c] = out(t, c);
    }
  }

  if (options.need_weights) {
    if (average) {
      r.weights.assign(n * l * s_total, 0.0);
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t head = 0; head < h; ++head) {
          for (int64_t i = 0; i < l * s_total; ++i)
            r.weights[b * l * s_total + i] += per_head[(b * h + head) * l * s_total + i] / double(h);
        }
      }
      r.weights_shape = {l, s_total};
    } else {
      r.weights = per_head;
      r.weights_shape = {h, l, s_total};
    }
    if (batched) r.weights_shape.insert(r.weights_shape.begin(), n);
  }
  return r;
}

}  // namespace attnlab_test

#endif  // ATTNLAB_TESTS_CPP_REFERENCE_H_
