// The SDPA session: decodes one ScaledDotProductAttention call, runs it against the model of the argument rules
// and checks shapes, determinism and every clean row against the float64 oracle (and the NaN policy).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "attnlab/attention.h"
#include "tests/fuzz/oracle.h"
#include "tests/fuzz/sdpa_options.h"
#include "tests/fuzz/session.h"

namespace attnlab_fuzz {

void Session::RunSdpa() {
  const uint8_t sb = r_.U8();
  const size_t nb = sb % 3;
  Shape batch;
  for (size_t i = 0; i < nb; ++i) batch.push_back(BatchDim(r_));
  const int64_t lq = Dim(r_), lk = Dim(r_), dk = Dim(r_), dv = Dim(r_);
  SdpaCase c;
  TensorBuf &q = c.q, &k = c.k, &v = c.v;
  q.shape = batch;
  q.shape.insert(q.shape.end(), {lq, dk});
  k.shape = batch;
  k.shape.insert(k.shape.end(), {lk, dk});
  v.shape = batch;
  v.shape.insert(v.shape.end(), {lk, dv});
  Shape* shapes[3] = {&q.shape, &k.shape, &v.shape};
  PerturbShapes(r_, shapes, 3);
  const uint8_t f = r_.U8();
  attnlab::SdpaOptions& o = c.o;
  o.is_causal = f & 1;
  o.has_scale = f & 2;
  o.need_weights = !(f & 4);
  uint8_t nulls = 0;
  if (f & 8) nulls = r_.U8();
  if (o.has_scale) o.scale = ScaleValue(r_);
  DecodeSdpaOptions(r_, c, f);
  {
    // Lk of the mask counts the past's keys.
    const int64_t lpast =
        c.key_past && c.past_key.shape.size() >= 2 ? c.past_key.shape[c.past_key.shape.size() - 2] : 0;
    const int64_t lkt = lpast >= 0 && lpast <= 64 && lk >= 0 && lk <= (1 << 20) ? lk + lpast : lk;
    Shape full = batch;
    int64_t lqm = lq;
    if (c.ext && q.shape.size() >= 2) {  // the option block may have changed query's heads
      full.assign(q.shape.begin(), q.shape.end() - 2);
      lqm = q.shape[q.shape.size() - 2];
    }
    full.insert(full.end(), {lqm, lkt});
    DecodeMask(r_, c.mask, {Shape{lqm, lkt}, full});
    ReshapeMask(r_, c, full);
  }
  FillInputs(nulls, {&q, &k, &v}, {&c.mask});
  FillPast(r_, c);
  case_ = c.Describe();

  const SdpaModel model = ModelSdpa(c);
  const bool valid = model.valid;
  const SdpaGeom& g = model.g;
  // The library may read any argument whose shape is valid, even in a call it then rejects: such an argument must
  // be real memory. The fuzzer only allocates small ones, so it skips calls with a big, validly shaped argument.
  if (TooBigToAllocate({&q, &k, &v, &c.past_key, &c.past_value}) ||
      (c.mask.kind != Mask::Kind::kNone && c.mask.numel.ok && !c.mask.allocated)) {
    return;
  }
  const bool scores = o.return_scores != attnlab::ScoresStage::kNone;
  if (valid) {
    // Skip valid calls too big for the fuzzer (it allocates inputs; large ones are legitimate, not hostile).
    if (!q.allocated || !k.allocated || !v.allocated || (c.mask.kind != Mask::Kind::kNone && !c.mask.allocated) ||
        (c.key_past && !c.past_key.allocated) || (c.value_past && !c.past_value.allocated)) {
      return;
    }
    const double lqd = static_cast<double>(g.lq), lkd = static_cast<double>(g.lkt);
    // Also the outputs: empty inputs may legitimately ask for a huge output (e.g. dk = 0, Lq = 2^40).
    // Only work the call really needs (inputs, outputs, logits; weights and scores cost more: the reference and
    // the checks visit each). Loops over empty rows or items are not counted: they are the library's to avoid.
    const double work = static_cast<double>(g.nbatch) *
                            (lqd * lkd * static_cast<double>(g.dk + g.dv + 2) + lkd * static_cast<double>(g.dk) +
                             lqd * static_cast<double>(g.dv) + (o.need_weights || scores ? lqd * lkd * 16 : 0.0)) +
                        static_cast<double>(ModelNumel(model.pk_shape).n + ModelNumel(model.pv_shape).n);
    if (work > kMaxWork) return;
  }

  attnlab::AttentionResult res;
  tolerated_ = PendingRejections(c);
  if (!Invoke("ScaledDotProductAttention", valid,
              [&] { res = attnlab::ScaledDotProductAttention(q.View(), k.View(), v.View(), c.Options()); })) {
    return;
  }
  auto check_shape = [&](const char* what, const attnlab::Tensor& t, bool wanted, const Shape& shape) {
    if (wanted ? (t.shape != shape || t.data.size() != ModelNumel(shape).n) : (!t.shape.empty() || !t.data.empty())) {
      Finding(std::string(what) + " shape " + ShapeStr(t.shape) + " (" + std::to_string(t.data.size()) +
              " values), expected " + (wanted ? ShapeStr(shape) : std::string("none")));
    }
  };
  check_shape("output", res.output, true, model.out_shape);
  check_shape("weights", res.weights, o.need_weights, model.w_shape);
  check_shape("scores", res.scores, scores, model.w_shape);
  check_shape("present_key", res.present_key, c.key_past, model.pk_shape);
  check_shape("present_value", res.present_value, c.value_past, model.pv_shape);
  if (Failed()) return;
  // Determinism: a second call is bit-identical.
  {
    const attnlab::AttentionResult again =
        attnlab::ScaledDotProductAttention(q.View(), k.View(), v.View(), c.Options());
    if (!BitsEqual(again.output.data, res.output.data) || !BitsEqual(again.weights.data, res.weights.data) ||
        !BitsEqual(again.scores.data, res.scores.data) || !BitsEqual(again.present_key.data, res.present_key.data) ||
        !BitsEqual(again.present_value.data, res.present_value.data)) {
      Finding("a repeated call is not bit-identical");
      return;
    }
  }
  // Row by row checks visit every (item, row): not for absurd counts of empty rows. They (and the backward
  // reference) also allocate per-dimension buffers: not for the huge dimensions of an empty call.
  if (static_cast<double>(g.nbatch) * static_cast<double>(std::max<size_t>(g.lq, 1)) > 1e5) return;
  for (const TensorBuf* t : {&q, &k, &v, &c.past_key, &c.past_value}) {
    for (const int64_t d : t->shape) {
      if (d > int64_t{1} << 20) return;
    }
  }
  if (static_cast<double>(g.lkt) > 1 << 20) return;
  CheckSdpaPresent(c, g, res);
  if (!Failed()) CheckSdpaRows(c, g, res);
  if (!Failed()) CheckSdpaScores(c, g, res);
  if (!Failed()) CheckSdpaGqa(c, g, res);
  if (!Failed()) RunSdpaBackward(c, g, model.out_shape);
}

}  // namespace attnlab_fuzz
