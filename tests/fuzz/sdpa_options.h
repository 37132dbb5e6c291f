// The SDPA call of the fuzz target: its arguments (query, key, value, attn_mask and the options of issue 19:
// enable_gqa, causal_align, kv_lengths, window, softcap, return_scores, past_key / past_value), how bytes decode
// into them, the model of the documented argument rules (attention.h, docs/api.md) and, for a valid call, its
// geometry: which key/value head and item a query batch row reads, which keys row i sees, where its mask elements
// are (NumPy broadcasting).
//
// Byte format (appended to the original one so that every older input keeps its meaning): bit 16 of the SDPA
// flags byte says that the option block follows the scale. Option block: g (bit 0 enable_gqa; bits 1-3 a K/V head
// count: unchanged, Hq/2, Hq/3, Hq/4, 1, Hq+1, 0, any; bit 4 lower-right alignment; bit 5 kv_lengths; bit 6 window;
// bit 7 past), h (bits 0-1 softcap: none, ordinary, special, any value; bits 2-3 return_scores stage), then when
// set: past (length byte, shape-mode byte), kv_lengths (count-mode byte, one byte per length), window (two
// bytes), softcap (one or more bytes). After the mask's own bytes, one byte reshapes a mask to a broadcastable
// shape (and a second says which dimensions become 1). Past data follow the mask's data.
#ifndef ATTNLAB_TESTS_FUZZ_SDPA_OPTIONS_H_
#define ATTNLAB_TESTS_FUZZ_SDPA_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attnlab/attention.h"
#include "tests/fuzz/input.h"
#include "tests/fuzz/oracle.h"

namespace attnlab_fuzz {

struct SdpaCase {
  TensorBuf q, k, v, past_key, past_value;
  MaskBuf mask;
  attnlab::SdpaOptions o;                     // scalars only; Options() adds the views
  bool ext = false;                           // the option block was present
  bool key_past = false, value_past = false;  // given (non-null data or a non-empty shape)
  bool kv_given = false, kv_null = false;
  std::vector<int32_t> kv_lengths;  // kv_count of them when given (at most 64 allocated)
  size_t kv_count = 0;

  attnlab::SdpaOptions Options() const;
  std::string Describe() const;
};

// Reads the option block (after the scale; `f` is the flags byte) and adjusts key/value shapes (K/V heads).
void DecodeSdpaOptions(Reader& r, SdpaCase& c, uint8_t f);
// After DecodeMask: one byte (and a second) that may reshape a mask into a broadcastable (or wrong) one.
void ReshapeMask(Reader& r, SdpaCase& c, const Shape& full);
// Fills the past tensors (after FillInputs) and describes the case.
void FillPast(Reader& r, SdpaCase& c);

// The geometry of a valid call.
struct SdpaGeom {
  Shape qb;  // query's batch dims
  size_t rank = 0, nbatch = 0, lq = 0, lk = 0, lpast = 0, lkt = 0, dk = 0, dv = 0, hq = 1, hkv = 1, group = 1;
  size_t per_item = 1;  // query batch rows per item of the first batch dim
  double scale = 1.0;
  std::vector<size_t> mask_stride;  // per dim of (*batch, Lq, Lkt): stride into the mask (0: broadcast)
  bool lower_right = false, causal = false;
  int64_t wl = -1, wr = -1;
  const int32_t* kv = nullptr;

  size_t KvIndex(size_t b) const { return rank >= 3 ? (b / hq) * hkv + (b % hq) / group : b; }
  size_t Item(size_t b) const { return b / per_item; }
  int64_t Lv(size_t b) const { return kv ? kv[Item(b)] : static_cast<int64_t>(lkt); }
  // Whether query row i of batch row b sees key j (causal, window, kv_lengths; not the attn_mask).
  bool Visible(size_t b, size_t i, size_t j) const;
  size_t MaskIndex(size_t b, size_t i, size_t j) const;
  const float* Key(const SdpaCase& c, size_t b, size_t j) const;    // key j (past ‖ new) read by batch row b
  const float* Value(const SdpaCase& c, size_t b, size_t j) const;  // likewise
};

// The model: whether the call is valid; when it is, its result shapes and geometry.
struct SdpaModel {
  bool valid = false;
  Shape out_shape, w_shape, pk_shape, pv_shape;
  SdpaGeom g;
};
SdpaModel ModelSdpa(const SdpaCase& c);
// Options whose kernels may not have landed in the library under test (a transition: sdpa.cc rejects each by name,
// "<option>: expected its default (not implemented yet)", until its kernel lands; "attn_mask broadcasting": masks
// other than (Lq, Lk) and (*batch, Lq, Lk) rejected). A call that sets one is modelled as if the option worked, and
// may also be rejected with exactly that message (PendingRejections).
const std::vector<std::string>& PendingSdpaOptions();
// The message prefixes of the rejections a valid call `c` may meet while its options are pending.
std::vector<std::string> PendingRejections(const SdpaCase& c);

// The oracle's input for query row i of batch row b of a valid call (sdpa_check.cc): dots with every key
// (past ‖ new) of its K/V head, which keys it sees, its mask elements, the softcap.
RowInput SdpaRow(const SdpaCase& c, const SdpaGeom& g, size_t b, size_t i);
// The same call without enable_gqa: key, value and the past with each K/V head repeated for the query heads that
// read it (no attn_mask: the caller passes the original's).
SdpaCase RepeatKvHeads(const SdpaCase& c, const SdpaGeom& g);

}  // namespace attnlab_fuzz

#endif  // ATTNLAB_TESTS_FUZZ_SDPA_OPTIONS_H_
