// The SDPA call of the fuzz target: decoding of the issue-19 options, the model, the geometry (sdpa_options.h).
#include "tests/fuzz/sdpa_options.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace attnlab_fuzz {

namespace {

int64_t WindowValue(Reader& r) {
  const uint8_t b = r.U8();
  if (b < 200) return b % 10 - 1;
  static const int64_t kTable[8] = {
      -2, -7, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), 16, 129, int64_t{1} << 40, 0};
  return kTable[(b - 200) % 8];
}

// Lk_total as the decoder sees it (shapes may still be invalid): clamped to something small enough to index.
int64_t DecodedLkt(const SdpaCase& c, int64_t lpast) {
  const Shape& k = c.k.shape;
  const int64_t lk = k.size() >= 2 ? k[k.size() - 2] : 0;
  if (lk < 0 || lk > (1 << 20) || lpast < 0 || lpast > (1 << 20)) return 8;
  return lk + lpast;
}

bool Given(const TensorBuf& t) { return t.ptr() != nullptr || !t.shape.empty(); }

}  // namespace

void DecodeSdpaOptions(Reader& r, SdpaCase& c, uint8_t f) {
  if (!(f & 16)) return;
  c.ext = true;
  const uint8_t g = r.U8(), h = r.U8();
  c.o.enable_gqa = g & 1;
  if (const int code = (g >> 1) & 7; code != 0 && c.q.shape.size() >= 3) {
    int64_t& hq = c.q.shape[c.q.shape.size() - 3];
    int64_t hkv = hq;
    const bool small = hq >= 0 && hq <= 1024;
    switch (code) {
      case 1:
        if (hq % 2 == 0) hkv = hq / 2;
        break;
      case 2:
        if (hq % 3 == 0) hkv = hq / 3;
        break;
      case 3:  // four query heads per K/V head
        if (small) hq *= 4;
        break;
      case 4:
        hkv = 1;
        break;
      case 5:  // not a divisor (unless Hq = 0)
        hkv = small ? hq + 1 : 0;
        break;
      case 6:
        hkv = 0;
        break;
      default:  // two query heads per K/V head
        if (small) hq *= 2;
        break;
    }
    for (Shape* s : {&c.k.shape, &c.v.shape}) {
      if (s->size() >= 3) (*s)[s->size() - 3] = hkv;
    }
  }
  if (g & 16) c.o.causal_align = attnlab::CausalAlign::kLowerRight;
  int64_t lpast = 0;
  if (g & 128) {
    const uint8_t lb = r.U8(), pm = r.U8();
    lpast = lb < 224 ? lb % 9 : Dim(r);
    c.past_key.shape = c.k.shape;
    c.past_value.shape = c.v.shape;
    if (!c.past_key.shape.empty()) c.past_key.shape[c.past_key.shape.size() - (c.k.shape.size() >= 2 ? 2 : 1)] = lpast;
    if (!c.past_value.shape.empty())
      c.past_value.shape[c.past_value.shape.size() - (c.v.shape.size() >= 2 ? 2 : 1)] = lpast;
    c.key_past = c.value_past = true;
    switch (pm % 8) {
      case 4:  // past_key without past_value
        c.value_past = false;
        c.past_value.shape.clear();
        break;
      case 5:  // past lengths differ
        if (c.past_value.shape.size() >= 2) c.past_value.shape[c.past_value.shape.size() - 2] += 1;
        break;
      case 6:  // past_key's dk differs
        if (!c.past_key.shape.empty()) c.past_key.shape.back() += 1;
        break;
      case 7:  // past batch differs from key's
        if (c.past_key.shape.size() >= 3) c.past_key.shape[0] += 1;
        break;
      default:
        break;
    }
    c.past_key.null_ptr = (pm >> 5) == 7;
    c.past_value.null_ptr = (pm >> 5) == 6;
  }
  const int64_t lkt = DecodedLkt(c, lpast);
  if (g & 32) {
    const uint8_t kb = r.U8();
    const Shape& q = c.q.shape;
    const int64_t want = q.size() > 2 ? q[0] : 1;
    int64_t count = want >= 0 && want <= 64 ? want : 64;
    if (kb % 8 == 7) count = count + 1;
    if (kb % 8 == 6) count = count == 0 ? 1 : count - 1;
    c.kv_given = true;
    c.kv_null = kb % 8 == 5;
    c.kv_count = static_cast<size_t>(count);
    c.kv_lengths.assign(c.kv_count + 1, 0);  // + 1: data() is never null
    if (!c.kv_null) {
      for (size_t i = 0; i < c.kv_count; ++i) {
        const uint8_t b = r.U8();
        int64_t x;
        if (b < 128) {
          x = b % (lkt + 1);
        } else if (b < 192) {
          x = lkt;
        } else if (b < 232) {
          x = 0;
        } else {
          const int64_t table[8] = {-1,
                                    lkt + 1,
                                    std::numeric_limits<int32_t>::min(),
                                    std::numeric_limits<int32_t>::max(),
                                    -2,
                                    lkt + 2,
                                    int64_t{1} << 30,
                                    1};
          x = table[(b - 232) % 8];
        }
        c.kv_lengths[i] = static_cast<int32_t>(x);
      }
    }
  }
  if (g & 64) {
    c.o.window_left = WindowValue(r);
    c.o.window_right = WindowValue(r);
  }
  switch (h & 3) {
    case 1:
      c.o.softcap = static_cast<float>(r.U8() % 128 + 1) / 8.0f;
      break;
    case 2:
      c.o.softcap = SpecialValue(r, r.U8());
      break;
    case 3:
      c.o.softcap = Value(r);
      break;
    default:
      break;
  }
  c.o.return_scores = static_cast<attnlab::ScoresStage>((h >> 2) & 3);
}

void ReshapeMask(Reader& r, SdpaCase& c, const Shape& full) {
  if (!c.ext || c.mask.kind == Mask::Kind::kNone) return;
  const uint8_t mb = r.U8();
  if (mb % 4 == 0) return;
  const uint8_t ones = r.U8();
  Shape s(full.begin() + static_cast<ptrdiff_t>((mb / 4) % (full.size() + 1)), full.end());
  for (size_t i = 0; i < s.size() && i < 7; ++i) {
    if (ones & (1u << i)) s[s.size() - 1 - i] = 1;
  }
  if (mb % 4 == 3) s.insert(s.begin(), (ones & 128) ? 2 : 1);  // a leading 1 broadcasts; a leading 2 does not
  c.mask.shape = s;
}

void FillPast(Reader& r, SdpaCase& c) {
  if (c.key_past) c.past_key.Fill(r);
  if (c.value_past) c.past_value.Fill(r);
}

attnlab::SdpaOptions SdpaCase::Options() const {
  attnlab::SdpaOptions oo = o;
  oo.attn_mask = mask.View();
  if (kv_given) {
    oo.kv_lengths = kv_null ? nullptr : kv_lengths.data();
    oo.num_kv_lengths = kv_count;
  }
  if (key_past) oo.past_key = past_key.View();
  if (value_past) oo.past_value = past_value.View();
  return oo;
}

std::string SdpaCase::Describe() const {
  std::ostringstream os;
  os << "SDPA " << DescribeTensor("query", q) << "; " << DescribeTensor("key", k) << "; " << DescribeTensor("value", v)
     << "; attn_mask " << mask.Describe() << "; is_causal " << o.is_causal << "; scale "
     << (o.has_scale ? FloatStr(o.scale) : "default") << "; need_weights " << o.need_weights;
  if (!ext) return os.str();
  os << "; enable_gqa " << o.enable_gqa << "; causal_align "
     << (o.causal_align == attnlab::CausalAlign::kLowerRight ? "lower-right" : "upper-left") << "; window ["
     << o.window_left << ", " << o.window_right << "]; softcap " << FloatStr(o.softcap) << "; return_scores "
     << static_cast<int>(o.return_scores);
  if (kv_given) {
    os << "; kv_lengths (" << kv_count << ")";
    if (kv_null) {
      os << " null";
    } else {
      os << " {";
      for (size_t i = 0; i < kv_count; ++i) os << (i ? ", " : "") << kv_lengths[i];
      os << "}";
    }
  }
  if (key_past) os << "; past_" << DescribeTensor("key", past_key);
  if (value_past) os << "; past_" << DescribeTensor("value", past_value);
  return os.str();
}

bool SdpaGeom::Visible(size_t b, size_t i, size_t j) const {
  const int64_t lv = Lv(b), jj = static_cast<int64_t>(j);
  if (jj >= lv) return false;
  const int64_t p =
      static_cast<int64_t>(i) + (lower_right ? lv - static_cast<int64_t>(lq) : static_cast<int64_t>(lpast));
  if (causal && jj > p) return false;
  if (wl >= 0 && p - jj > wl) return false;  // (differences of small numbers: windows may be huge)
  if (wr >= 0 && jj - p > wr) return false;
  return true;
}

size_t SdpaGeom::MaskIndex(size_t b, size_t i, size_t j) const {
  const size_t n = mask_stride.size();
  size_t idx = i * mask_stride[n - 2] + j * mask_stride[n - 1];
  for (size_t d = qb.size(); d-- > 0;) {
    const size_t dim = static_cast<size_t>(qb[d]);
    idx += (b % dim) * mask_stride[d];
    b /= dim;
  }
  return idx;
}

const float* SdpaGeom::Key(const SdpaCase& c, size_t b, size_t j) const {
  const size_t kb = KvIndex(b);
  return j < lpast ? c.past_key.data.get() + (kb * lpast + j) * dk : c.k.data.get() + (kb * lk + j - lpast) * dk;
}

const float* SdpaGeom::Value(const SdpaCase& c, size_t b, size_t j) const {
  const size_t kb = KvIndex(b);
  return j < lpast ? c.past_value.data.get() + (kb * lpast + j) * dv : c.v.data.get() + (kb * lk + j - lpast) * dv;
}

const std::vector<std::string>& PendingSdpaOptions() {
  // Remove an entry once its kernel has landed; remove the list (and Session::tolerated_) once all have.
  static const std::vector<std::string> kPending = {};  // every option has landed (a186a5d)
  return kPending;
}

namespace {

bool Pending(const char* option) {
  for (const std::string& p : PendingSdpaOptions()) {
    if (p == option) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> PendingRejections(const SdpaCase& c) {
  const attnlab::SdpaOptions& o = c.o;
  const bool past = Given(c.past_key) || Given(c.past_value);
  const bool kv = c.kv_given && !(c.kv_null && c.kv_count == 0);
  const std::pair<const char*, bool> used[] = {{"causal_align", o.causal_align != attnlab::CausalAlign::kUpperLeft},
                                               {"enable_gqa", o.enable_gqa},
                                               {"kv_lengths", kv},
                                               {"window_left", o.window_left != -1},
                                               {"window_right", o.window_right != -1},
                                               {"softcap", o.softcap != 0.0f},
                                               {"return_scores", o.return_scores != attnlab::ScoresStage::kNone},
                                               {"past_key", past}};
  std::vector<std::string> out;
  for (const auto& [name, is_used] : used) {
    if (is_used && Pending(name)) out.push_back(std::string(name) + ": expected its default (not implemented yet)");
  }
  if (c.mask.kind != Mask::Kind::kNone && Pending("attn_mask broadcasting")) {
    out.push_back("attn_mask: expected shape (Lq, Lk)");
  }
  // Without grouped-query kernels, K/V heads that differ from query's fail the batch check first.
  const Shape &q = c.q.shape, &k = c.k.shape;
  if (o.enable_gqa && Pending("enable_gqa") && q.size() >= 2 && k.size() == q.size() &&
      Shape(q.begin(), q.end() - 2) != Shape(k.begin(), k.end() - 2)) {
    out.push_back("key: expected batch dimensions");
  }
  return out;
}

SdpaModel ModelSdpa(const SdpaCase& c) {
  SdpaModel m;
  const Shape &q = c.q.shape, &k = c.k.shape, &v = c.v.shape;
  const attnlab::SdpaOptions& o = c.o;
  if (q.size() < 2 || !c.q.ModelValid() || !c.k.ModelValid() || !c.v.ModelValid() || !c.mask.ModelValid()) return m;
  const size_t rank = q.size();
  if (k.size() != rank || v.size() != rank) return m;
  const Shape qb(q.begin(), q.end() - 2), kb(k.begin(), k.end() - 2);
  if (Shape(v.begin(), v.end() - 2) != kb) return m;
  for (size_t d = 0; d + 1 < qb.size(); ++d) {
    if (kb[d] != qb[d]) return m;
  }
  if (!qb.empty() && kb.back() != qb.back()) {
    if (!o.enable_gqa || kb.back() <= 0 || qb.back() % kb.back() != 0) return m;
  }
  if (k[rank - 1] != q[rank - 1] || v[rank - 2] != k[rank - 2]) return m;
  if (o.has_scale && !std::isfinite(o.scale)) return m;
  // The past: both or neither, shapes (*batchKV, Lpast, dk) and (*batchKV, Lpast, dv).
  const bool kp = Given(c.past_key) || c.key_past, vp = Given(c.past_value) || c.value_past;
  int64_t lpast = 0;
  if (kp != vp) return m;
  if (kp) {
    const Shape &pk = c.past_key.shape, &pv = c.past_value.shape;
    if (!c.past_key.ModelValid() || !c.past_value.ModelValid() || pk.size() != rank || pv.size() != rank) return m;
    if (Shape(pk.begin(), pk.end() - 2) != kb || Shape(pv.begin(), pv.end() - 2) != kb) return m;
    if (pk[rank - 1] != k[rank - 1] || pv[rank - 1] != v[rank - 1] || pk[rank - 2] != pv[rank - 2]) return m;
    lpast = pk[rank - 2];
    if (lpast > std::numeric_limits<int64_t>::max() - k[rank - 2]) return m;
  }
  const int64_t lkt = k[rank - 2] + lpast;
  if (c.kv_given && !(c.kv_null && c.kv_count == 0)) {
    if (c.kv_null || static_cast<int64_t>(c.kv_count) != (rank > 2 ? q[0] : 1)) return m;
    for (size_t i = 0; i < c.kv_count; ++i) {
      if (c.kv_lengths[i] < 0 || c.kv_lengths[i] > lkt) return m;
    }
  }
  if (o.window_left < -1 || o.window_right < -1) return m;
  if (!std::isfinite(o.softcap) || o.softcap < 0) return m;
  Shape full = qb;
  full.insert(full.end(), {q[rank - 2], lkt});
  if (c.mask.kind != Mask::Kind::kNone) {
    const Shape& ms = c.mask.shape;
    for (size_t i = 0; i < ms.size(); ++i) {
      const int64_t md = ms[ms.size() - 1 - i];
      if (i < full.size() ? (md != 1 && md != full[full.size() - 1 - i]) : md != 1) return m;
    }
  }
  m.out_shape = qb;
  m.out_shape.insert(m.out_shape.end(), {q[rank - 2], v[rank - 1]});
  m.w_shape = full;
  if (!ModelNumel(m.out_shape).ok || !ModelNumel(full).ok) {
    if (!ModelNumel(m.out_shape).ok || o.need_weights || o.return_scores != attnlab::ScoresStage::kNone) return m;
  }
  if (kp) {
    m.pk_shape = kb;
    m.pk_shape.insert(m.pk_shape.end(), {lkt, k[rank - 1]});
    m.pv_shape = kb;
    m.pv_shape.insert(m.pv_shape.end(), {lkt, v[rank - 1]});
    if (!ModelNumel(m.pk_shape).ok || !ModelNumel(m.pv_shape).ok) return m;
  }
  m.valid = true;
  // Geometry (only meaningful for calls whose dims are small; the session checks before using it).
  SdpaGeom& g = m.g;
  g.qb = qb;
  g.rank = rank;
  g.nbatch = static_cast<size_t>(ModelNumel(qb).n);
  g.lq = static_cast<size_t>(q[rank - 2]);
  g.lk = static_cast<size_t>(k[rank - 2]);
  g.lpast = static_cast<size_t>(lpast);
  g.lkt = static_cast<size_t>(lkt);
  g.dk = static_cast<size_t>(q[rank - 1]);
  g.dv = static_cast<size_t>(v[rank - 1]);
  if (rank >= 3) {
    g.hq = static_cast<size_t>(qb.back());
    g.hkv = static_cast<size_t>(kb.back());
    g.group = g.hkv > 0 ? g.hq / g.hkv : 1;
    g.per_item = qb[0] > 0 ? g.nbatch / static_cast<size_t>(qb[0]) : 1;
  }
  g.scale = o.has_scale ? o.scale : g.dk > 0 ? 1.0f / std::sqrt(static_cast<float>(g.dk)) : 1.0f;
  g.causal = o.is_causal;
  g.lower_right = o.causal_align == attnlab::CausalAlign::kLowerRight;
  g.wl = o.window_left;
  g.wr = o.window_right;
  g.kv = c.kv_given && !c.kv_null && c.kv_count > 0 ? c.kv_lengths.data() : nullptr;
  if (c.mask.kind != Mask::Kind::kNone) {
    const Shape& ms = c.mask.shape;
    g.mask_stride.assign(full.size(), 0);
    size_t stride = 1;
    for (size_t i = 0; i < ms.size(); ++i) {
      const int64_t md = ms[ms.size() - 1 - i];
      if (i < full.size() && md != 1) g.mask_stride[full.size() - 1 - i] = stride;
      stride *= static_cast<size_t>(md);
    }
  }
  return m;
}

}  // namespace attnlab_fuzz
