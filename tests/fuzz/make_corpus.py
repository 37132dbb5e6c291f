#!/usr/bin/env python3
"""Writes the seed corpus of the attnlab fuzzer (tests/fuzz/corpus/*.bin) in the byte format that
tests/fuzz/input.h decodes (read by the sessions, tests/fuzz/*_session.cc). Each seed is a meaningful case;
the fuzzer mutates from there.

    python3 tests/fuzz/make_corpus.py          # rewrites tests/fuzz/corpus/
"""
import math
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, 'corpus')

# Value(): bytes < 224 are (b - 112) / 16; specials from 224 (input.cc SpecialValue).
SPECIAL = {'nan': 224, 'inf': 225, '-inf': 226, '-0': 228, 1e30: 229, -1e30: 230, 'max': 231,
           '-max': 232, 1e-40: 233, -1e-40: 234, 'tiny': 235, 1e-30: 237, 1e10: 238, -1e10: 239, 1e20: 240, 1e37: 242,
           100.0: 244, -100.0: 245, 88.7: 248, 104.0: 250, -104.0: 251}
HOSTILE = {-1: 0, -7: 1, 'min': 2, 'max': 3, 2**31: 4, 2**32: 5, 2**40: 6, 2**61 - 1: 7, 2**61: 8, 2**62: 9,
           16: 10, 17: 11, 129: 12, 2**29: 13, 33: 14, 1000: 15}


def value(x):
    if not isinstance(x, str) and -7 <= x < 7 and x * 16 == int(x * 16):
        return [int(x * 16) + 112]
    return [SPECIAL[x]]


def values(xs):
    out = []
    for x in xs:
        out += value(x)
    return out


def dim(d):
    if isinstance(d, int) and 0 <= d <= 8:
        return [d]
    return [240 + HOSTILE[d]]


def batch_dim(d):
    if isinstance(d, int) and 0 <= d <= 3:
        return [d]
    return [240 + HOSTILE[d]]


def mask_byte(kind, sel):  # kind 0 none, 1 bool, 2 float; sel 0/1 = first/second valid shape
    return [kind + 3 * sel]


def mask_value(x):
    if x == 0:
        return [0]
    if x == '-inf':
        return [96]
    return [208] + value(x)


def rnd(rng, n, lo=-2.0, hi=2.0):
    return [round(rng.uniform(lo, hi) * 16) / 16 for _ in range(n)]


# The option block of issue 19 (sdpa_options.h): K/V head codes and softcap encodings.
HEADS = {'half': 1, 'third': 2, 'q_x4': 3, 'one': 4, 'not_divisor': 5, 'zero': 6, 'q_x2': 7}
SOFTCAP_SPECIAL = {'nan': 0, 'inf': 1, '-inf': 2, 0.0: 3, 1e30: 5, 'max': 7, 1e-40: 9, 'tiny': 11, 1e-30: 13}


def softcap_bytes(c):
    """(mode, bytes): ordinary multiples of 1/8 up to 16, specials, or any Value (negative ones)."""
    if isinstance(c, (int, float)) and 0 < c <= 16 and c * 8 == int(c * 8):
        return 1, [int(c * 8) - 1]
    if c in SOFTCAP_SPECIAL:
        return 2, [SOFTCAP_SPECIAL[c]]
    return 3, value(c)


def sdpa(batch, lq, lk, dk, dv, *, causal=False, scale=None, need_weights=True, mask=None, q=None, k=None, v=None,
         seed=1, nulls=None, perturb=None, target=0, gqa=False, heads=None, lower_right=False, past=None,
         past_mode=0, kv_lengths=None, window=None, softcap=None, scores=0, mask_bcast=None, past_k=None,
         past_v=None):
    """mask: (kind, sel, elements) with kind 'bool' / 'float', sel 0 = (Lq, Lk), 1 = (*batch, Lq, Lk) (Lk with the
    past's keys). The issue-19 options (any of them) append the option block: gqa (enable_gqa), heads (a key of
    HEADS), lower_right, past (its length), past_mode, kv_lengths (list), window ((left, right)), softcap,
    scores (1 scaled, 2 softcapped, 3 masked), mask_bcast ((mode, ones): sdpa_options.h ReshapeMask)."""
    rng = random.Random(seed)
    out = [target, 0, len(batch)]
    for d in batch:
        out += batch_dim(d)
    out += dim(lq) + dim(lk) + dim(dk) + dim(dv)
    out += perturb or [0]
    ext = gqa or heads or lower_right or past is not None or kv_lengths is not None or window or softcap is not None \
        or scores or mask_bcast
    f = (1 if causal else 0) | (2 if scale is not None else 0) | (0 if need_weights else 4) | (8 if nulls else 0)
    f |= 16 if ext else 0
    out.append(f)
    if nulls:
        out.append(nulls)
    if scale is not None:
        if isinstance(scale, str):
            out += [200] + value(scale)
        else:
            b = round(scale * 64) + 32
            assert 0 <= b < 160
            out.append(b)
    qbatch, kbatch = list(batch), list(batch)
    lpast = past or 0
    if ext:
        code = HEADS[heads] if heads else 0
        if code and len(batch) >= 1:
            hq = batch[-1]
            hkv = {1: hq // 2, 2: hq // 3, 3: hq, 4: 1, 5: hq + 1, 6: 0, 7: hq}[code]
            qbatch[-1] = hq * {3: 4, 7: 2}.get(code, 1)
            kbatch[-1] = hkv
        g = (1 if gqa else 0) | (code << 1) | (16 if lower_right else 0) | (32 if kv_lengths is not None else 0)
        g |= (64 if window else 0) | (128 if past is not None else 0)
        cap_mode, cap = softcap_bytes(softcap) if softcap is not None else (0, [])
        out += [g, cap_mode | (scores << 2)]
        if past is not None:
            out += [past, past_mode]
        if kv_lengths is not None:
            out += [0] + list(kv_lengths)  # lengths 0 .. Lk_total: byte L decodes as L
        if window:
            out += [window[0] + 1, window[1] + 1]
        out += cap
    if mask is None:
        out += mask_byte(0, 0)
    else:
        kind, sel, elems = mask
        out += mask_byte(1 if kind == 'bool' else 2, sel)
        if ext:
            out += list(mask_bcast) if mask_bcast else [0]
    nq = math.prod(d if isinstance(d, int) and d >= 0 else 0 for d in qbatch) if qbatch else 1
    nk = math.prod(d if isinstance(d, int) and d >= 0 else 0 for d in kbatch) if kbatch else 1
    n = lambda nb, a, b: min(nb * a * b, 64)  # hostile shapes: the library must reject them before reading
    out += values(q if q is not None else rnd(rng, n(nq, lq, dk)))
    out += values(k if k is not None else rnd(rng, n(nk, lk, dk)))
    out += values(v if v is not None else rnd(rng, n(nk, lk, dv)))
    if mask is not None:
        kind, sel, elems = mask
        for x in elems:
            out += [x] if kind == 'bool' else mask_value(x)
    if past is not None:
        out += values(past_k if past_k is not None else rnd(rng, n(nk, lpast, dk)))
        if past_mode % 8 != 4:
            out += values(past_v if past_v is not None else rnd(rng, n(nk, lpast, dv)))
    return bytes(out)


def mha_header(heads, head_dim, *, bias=True, add_bias_kv=False, add_zero_attn=False, batch_first=False, kdim=None,
               vdim=None, seed=0, ops=1, target=0, kv_heads=None):
    """kv_heads: the num_kv_heads byte (< 224: index into [-1] + the divisors of heads; 224 + i: a wrong count),
    which makes the input an ext one (kind byte 7: also decoding sessions through a KV cache, op 2)."""
    out = [target, 1 if kv_heads is None else 7, (heads - 1) + 4 * (head_dim - 1)]
    flags = (0 if bias else 1) | (2 if add_bias_kv else 0) | (4 if add_zero_attn else 0) | (8 if batch_first else 0)
    flags |= (16 if kdim else 0) | (32 if vdim else 0)
    out.append(flags)
    if kdim:
        out.append(kdim - 1)
    if vdim:
        out.append(vdim - 1)
    if kv_heads is not None:
        out.append(kv_heads)
    out += [seed, ops - 1]
    return out


def mha_cache(e, *, items, max_length, lens, need_weights=True, average=True, wrong_batch=False, kdim=None,
              vdim=None, seed=4):
    """A decoding session (mha_cache_session.cc): items 1 or 2, steps of lens[s] (0-2) new tokens."""
    rng = random.Random(seed)
    assert items in (1, 2) and 1 <= len(lens) <= 4
    cb = ((items - 1) << 1) | ((len(lens) - 1) << 2) | (0 if need_weights else 16) | (0 if average else 32)
    cb |= 192 if wrong_batch else 0
    out = [2, cb] + dim(max_length) + list(lens)
    total = sum(lens)
    for f in (e, kdim or e, vdim or e):
        out += values(rnd(rng, items * total * f))
    return out


def mha_forward(e, heads, n, l, s, *, kdim=None, vdim=None, batched=True, need_weights=True, average=True,
                kpm=None, am=None, q=None, k=None, v=None, seed=2):
    """kpm/am: (kind, sel, elements)."""
    rng = random.Random(seed)
    kdim = kdim or e
    vdim = vdim or e
    out = [0]  # operation: forward
    out.append((0 if batched else 1) | (0 if need_weights else 2) | (0 if average else 4))
    if batched:
        out += batch_dim(n)
    else:
        n = 1
    out += dim(l) + dim(s) + [0]
    for m in (kpm, am):
        out += mask_byte(0, 0) if m is None else mask_byte(1 if m[0] == 'bool' else 2, m[1])
    out += values(q if q is not None else rnd(rng, n * l * e))
    out += values(k if k is not None else rnd(rng, n * s * kdim))
    out += values(v if v is not None else rnd(rng, n * s * vdim))
    for m in (kpm, am):
        if m is not None:
            for x in m[2]:
                out += [x] if m[0] == 'bool' else mask_value(x)
    return out


def mha_load(shapes, *, variant=0, victim=0, extra=(), seed=3):
    """variant 0 valid, 1 missing `victim`, 2 unknown entry (extra = [name index, dim] then its values)."""
    rng = random.Random(seed)
    out = [3, variant, victim] + list(extra[:2])
    for i, shape in enumerate(shapes):
        if variant == 1 and i == victim:
            continue
        out += values(rnd(rng, math.prod(shape), -1, 1))
    return out + list(extra[2:])


def model_seed(a, b, d=0, *, how=0, mistake=0, t=0, ids=()):
    """A whole-model session (model_session.cc): configuration bytes a, b (and d for Llama), storage/mistake bytes,
    one modest F16/BF16 value byte per parameter element (k & 7 != 7), then the tokens byte t and the ids."""
    llama = a & 1
    V, ctx, H, hd, L = 1 + (a >> 1) % 16, 1 + (a >> 5) % 8, 1 + b % 3, 2 * (1 + (b >> 2) % 2), 1 + (b >> 3) % 2
    E = H * hd
    if llama:
        kv, hidden, tied, bias = (1 if b & 32 else H), 1 + (b >> 6) % 4, d & 1, (d >> 1) % 3
        block = 2 * E + E * H * hd + 2 * E * kv * hd + H * hd * E + 3 * E * hidden
        block += ((H + 2 * kv) * hd if bias else 0) + (E if bias == 2 else 0)
        n = V * E + L * block + E + (0 if tied else V * E)
    else:
        n = V * E + ctx * E + L * (4 * E + 3 * E * E + 3 * E + E * E + E + 8 * E * E + 4 * E + E) + 2 * E
    head = [0, 21, a, b] + ([d] if llama else []) + [how, mistake]
    return bytes(head + [(i * 37) % 256 & ~7 | 1 for i in range(n)] + [t] + list(ids))


def seq2seq_seed(a, b, *, shape, how, rest, marian=0):
    """An encoder-decoder training session (seq2seq_session.cc): T5 configuration bytes a, b, the relative buckets'
    and distance's bytes, the Marian byte (bit 7: Marian of T5's sizes; bits 0-1 its activation, bit 2 the scaled
    embedding, bits 3-6 the pad id), the shape byte (B - 1 in bit 0, S in bits 1-3, T in bits 4-6) and the how byte
    (7: an id = V, 6: a label = V, 5: every label -100; bit 3: decoder inputs given, bits 4-5 both: of another
    shape), then the ids, mask bytes, labels and decoder inputs (`rest`)."""
    return bytes([0, 23, a, b, 1, 3, marian, shape, how] + list(rest))


def encoder_train_seed(a, b, k):
    """An encoder training session (encoder_train_session.cc): configuration bytes a (heads, layers, BERT or ViT) and
    b (activation, vocabulary or image, head), the batch byte k (B, T, which mistake, lr, a padded first key), then
    the bytes of the ids or pixels and the labels."""
    return bytes([0, 25, a, b, k] + [(i * 53) % 256 for i in range(160)])


def main():
    os.makedirs(CORPUS, exist_ok=True)
    for f in os.listdir(CORPUS):
        os.remove(os.path.join(CORPUS, f))
    seeds = {}
    # SDPA
    seeds['sdpa_tiny'] = sdpa([], 3, 3, 4, 4, q=[1, 0, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0], k=[1, 0, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0],
                              v=[1, 0, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0])
    seeds['sdpa_batched_causal_float_mask'] = sdpa(
        [2, 2], 3, 4, 2, 3, causal=True, mask=('float', 1, [0, '-inf', 0, 1.5] * 6))
    seeds['sdpa_bool_mask_fully_masked_row_no_weights'] = sdpa(
        [2], 2, 3, 2, 2, need_weights=False, mask=('bool', 0, [1, 0, 1, 0, 0, 0]))
    seeds['sdpa_bool_mask_fully_masked_row_weights'] = sdpa(
        [2], 2, 3, 2, 2, mask=('bool', 0, [1, 0, 1, 0, 0, 0]))
    seeds['sdpa_nan_query_row'] = sdpa([2], 2, 3, 2, 2, q=[0.5, 1, 'nan', 1, 0.25, 0.5, 1, -1])
    seeds['sdpa_nan_key_row'] = sdpa([2], 2, 3, 2, 2, k=[0.5, 1, 'nan', 1, 0.25, 0.5, 1, -1, 0, 1, 2, 3])
    seeds['sdpa_nan_value_hidden_by_causal'] = sdpa(
        [], 3, 3, 2, 2, causal=True, v=[1, 2, 3, 4, 5, 'nan'])
    seeds['sdpa_nan_and_posinf_in_float_mask'] = sdpa(
        [], 3, 3, 2, 2, mask=('float', 0, [0, 0, 0, 0, 'nan', 0, 'inf', 0, 0]))
    seeds['sdpa_huge_and_denormal_values'] = sdpa(
        [], 2, 3, 2, 2, q=[1e30, -1e30, 1e-40, 1], k=[1e-30, 1, 'max', 0, 1e-40, -1e-40], v=[1e10, -1e10, 1, 1e20, 0, 1])
    seeds['sdpa_logits_overflow'] = sdpa([], 1, 2, 1, 1, q=[1e30], k=[1e30, -1e30], v=[1, 2])
    seeds['sdpa_query_block_boundary_17'] = sdpa([], 17, 17, 1, 1, causal=True)
    seeds['sdpa_key_tile_boundary_129'] = sdpa([], 2, 129, 1, 1, need_weights=False,
                                               mask=('float', 0, [0] * 200 + ['-inf'] * 58))
    seeds['sdpa_empty'] = sdpa([0], 0, 0, 0, 0)
    seeds['sdpa_zero_dk'] = sdpa([], 2, 3, 0, 2)
    seeds['sdpa_zero_lk'] = sdpa([2], 2, 0, 2, 2)
    seeds['sdpa_scale_zero'] = sdpa([], 2, 2, 2, 2, scale=0.0)
    seeds['sdpa_scale_nan'] = sdpa([], 2, 2, 2, 2, scale='nan')
    seeds['sdpa_scale_negative'] = sdpa([], 2, 2, 2, 2, scale=-0.5)
    seeds['sdpa_null_query_data'] = sdpa([], 2, 2, 2, 2, nulls=1)
    seeds['sdpa_query_shape_perturbed'] = sdpa([], 2, 3, 2, 2, perturb=[192, 0, 0, 7], mask=('bool', 0, [1] * 6))
    seeds['sdpa_huge_empty_dim'] = sdpa([], 0, 2, 2**61 - 1, 1)
    seeds['sdpa_negative_dim'] = sdpa([], -1, 2, 2, 2)
    # SDPA options of issue 19 (ONNX Attention / PyTorch 2.5): each kind of case ONNX's conformance suite has.
    seeds['sdpa_gqa_causal_lower_right'] = sdpa([1, 2], 2, 4, 2, 2, gqa=True, heads='half', causal=True,
                                                lower_right=True)
    seeds['sdpa_gqa_x4_decode_step_with_past'] = sdpa([1, 2], 1, 1, 4, 4, gqa=True, heads='q_x4', causal=True,
                                                      lower_right=True, past=5, need_weights=False)
    seeds['sdpa_gqa_three_heads_backward'] = sdpa([2, 3], 3, 3, 2, 2, gqa=True, heads='third', causal=True)
    seeds['sdpa_past_upper_left_causal_offset'] = sdpa([2], 2, 2, 2, 3, causal=True, past=3, scores=3)
    seeds['sdpa_past_empty'] = sdpa([1], 2, 2, 2, 2, causal=True, past=0)
    seeds['sdpa_kv_lengths_zero_and_full_lower_right'] = sdpa([2, 1], 3, 4, 2, 2, kv_lengths=[0, 4], causal=True,
                                                              lower_right=True)
    seeds['sdpa_kv_lengths_nan_beyond_valid_length'] = sdpa(
        [], 2, 4, 2, 2, kv_lengths=[2], k=[1, 0, 0, 1, 'nan', 1, 'inf', 0], v=[1, 2, 3, 4, 'nan', 0, 0, 'nan'])
    seeds['sdpa_kv_lengths_with_past_and_window'] = sdpa([2], 2, 2, 2, 2, past=3, kv_lengths=[4, 5], window=(1, 0),
                                                         lower_right=True)
    seeds['sdpa_window_left_right'] = sdpa([], 5, 5, 2, 2, window=(1, 1))
    seeds['sdpa_window_nan_outside_window'] = sdpa([], 4, 4, 1, 1, window=(0, 0), causal=True, k=[1, 2, 'nan', 1],
                                                   v=[1, 'nan', 2, 3])
    seeds['sdpa_lower_right_negative_offset_rows_masked'] = sdpa([2], 5, 3, 2, 2, causal=True, lower_right=True)
    seeds['sdpa_softcap_neg_inf_mask_scores_masked'] = sdpa(
        [], 2, 3, 2, 2, softcap=2.0, scores=3, mask=('float', 0, [0, '-inf', 1.5, '-inf', '-inf', '-inf']))
    seeds['sdpa_softcap_scores_softcapped'] = sdpa([2], 3, 3, 2, 2, softcap=0.5, scores=2, scale=1.5)
    seeds['sdpa_softcap_tiny_denormal'] = sdpa([], 2, 2, 2, 2, softcap=1e-40, scores=2)
    seeds['sdpa_softcap_huge'] = sdpa([], 2, 2, 2, 2, softcap=1e30, scores=2)
    seeds['sdpa_scores_scaled_causal_no_weights'] = sdpa([], 3, 3, 2, 2, causal=True, scores=1, need_weights=False)
    seeds['sdpa_mask_broadcast_lk_only'] = sdpa([2, 2], 2, 3, 2, 2, mask=('bool', 1, [1, 0, 1]), mask_bcast=(13, 0))
    seeds['sdpa_mask_broadcast_b_1_1_lk'] = sdpa([2, 2], 2, 3, 2, 2, mask=('float', 1, [0, '-inf', 0.5] * 2),
                                                 mask_bcast=(1, 6))
    seeds['sdpa_mask_leading_one'] = sdpa([2], 2, 2, 2, 2, mask=('bool', 1, [1, 1, 0, 1] * 2), mask_bcast=(3, 0))
    seeds['sdpa_invalid_gqa_not_divisor'] = sdpa([1, 2], 2, 2, 2, 2, gqa=True, heads='not_divisor')
    seeds['sdpa_invalid_gqa_heads_without_enable'] = sdpa([1, 2], 2, 2, 2, 2, heads='half')
    seeds['sdpa_invalid_window'] = sdpa([], 2, 2, 2, 2, window=(199, 0))  # byte 200: -2
    seeds['sdpa_invalid_kv_length'] = sdpa([], 2, 2, 2, 2, kv_lengths=[232])  # byte 232: -1
    seeds['sdpa_invalid_softcap_negative'] = sdpa([], 2, 2, 2, 2, softcap=-1.0)
    seeds['sdpa_invalid_past_value_missing'] = sdpa([1], 2, 2, 2, 2, past=2, past_mode=4)
    seeds['sdpa_invalid_mask_not_broadcastable'] = sdpa([2], 2, 2, 2, 2, mask=('bool', 1, [1] * 8),
                                                        mask_bcast=(3, 128))
    # MHA
    shapes_basic = [(12, 4), (12,), (4, 4), (4,)]
    seeds['mha_basic_batch_first'] = bytes(
        mha_header(2, 2, batch_first=True) + mha_forward(4, 2, 2, 3, 4))
    seeds['mha_seq_first_load_then_forward'] = bytes(
        mha_header(2, 2, ops=2) + mha_load(shapes_basic) + mha_forward(4, 2, 2, 3, 2))
    seeds['mha_bias_kv_zero_attn_masks'] = bytes(
        mha_header(2, 2, add_bias_kv=True, add_zero_attn=True, batch_first=True) +
        mha_forward(4, 2, 2, 2, 3, kpm=('bool', 0, [0, 0, 1, 1, 1, 1]),
                    am=('float', 1, [0, '-inf', 0.5] * 8), average=False))
    seeds['mha_kdim_vdim_unbatched_per_head'] = bytes(
        mha_header(2, 2, kdim=3, vdim=5, bias=False) +
        mha_forward(4, 2, 1, 3, 2, kdim=3, vdim=5, batched=False, average=False))
    seeds['mha_load_missing_entry'] = bytes(
        mha_header(1, 2, ops=2) + mha_load(shapes_basic, variant=1, victim=2) + mha_forward(2, 1, 1, 2, 2))
    seeds['mha_load_unknown_entry'] = bytes(mha_header(1, 2) + mha_load([(6, 2), (6,), (2, 2), (2,)], variant=2, extra=[11, 2, 120, 100]))
    seeds['mha_nan_value_under_key_padding'] = bytes(
        mha_header(1, 2, batch_first=True) +
        mha_forward(2, 1, 1, 2, 2, kpm=('bool', 0, [0, 1]), v=[0.5, 1, 'nan', 0]))
    seeds['mha_fully_padded_item'] = bytes(
        mha_header(2, 1, batch_first=True) + mha_forward(2, 2, 2, 2, 2, kpm=('bool', 0, [1, 1, 0, 0])))
    seeds['mha_no_weights_online_path'] = bytes(
        mha_header(4, 2, batch_first=True) + mha_forward(8, 4, 1, 3, 5, need_weights=False))
    seeds['mha_empty_source'] = bytes(mha_header(2, 2) + mha_forward(4, 2, 2, 2, 0))
    seeds['mha_invalid_config'] = bytes([0, 1, 255, 0, 0] + [240] + [2])  # embed_dim -1
    seeds['mha_nan_query_token'] = bytes(
        mha_header(2, 1) + mha_forward(2, 2, 2, 1, 2, q=['nan', 0, 1, 1]))
    # MHA with grouped-query heads and KV-cache decoding (issue 19)
    seeds['mha_gqa_forward_per_head'] = bytes(
        mha_header(4, 2, batch_first=True, kv_heads=2) + mha_forward(8, 4, 2, 3, 4, average=False))
    seeds['mha_gqa_one_kv_head_kdim'] = bytes(
        mha_header(2, 2, kdim=3, kv_heads=1) + mha_forward(4, 2, 1, 2, 3, kdim=3))
    seeds['mha_gqa_kv_cache_decode'] = bytes(
        mha_header(4, 2, batch_first=True, kv_heads=1) + mha_cache(8, items=2, max_length=6, lens=[2, 1, 1]))
    seeds['mha_kv_cache_seq_first_per_head'] = bytes(
        mha_header(2, 2, kv_heads=0) + mha_cache(4, items=1, max_length=5, lens=[1, 1, 1, 2], average=False))
    seeds['mha_kv_cache_step_past_max_length'] = bytes(
        mha_header(2, 1, batch_first=True, kv_heads=2) + mha_cache(2, items=1, max_length=2, lens=[2, 1]))
    seeds['mha_kv_cache_wrong_batch_size'] = bytes(
        mha_header(2, 1, batch_first=True, kv_heads=1) + mha_cache(2, items=2, max_length=4, lens=[1, 1],
                                                                    wrong_batch=True))
    seeds['mha_kv_cache_rejects_bias_kv'] = bytes(
        mha_header(2, 1, add_bias_kv=True, kv_heads=1) + mha_cache(2, items=1, max_length=4, lens=[1]))
    seeds['mha_invalid_num_kv_heads'] = bytes(mha_header(4, 1, kv_heads=224) + mha_forward(4, 4, 1, 1, 1))
    seeds['mha_invalid_num_kv_heads_not_divisor'] = bytes(mha_header(4, 1, kv_heads=226) + mha_forward(4, 4, 1, 1, 1))
    # whole models: GPT-2 in F16, Llama with GQA, biases, a window and an untied head in BF16, a wrong shape, an id = V
    seeds['model_gpt2_f16_forward'] = model_seed(0b01000110, 0b00001001, t=0b011, ids=[1, 2, 3])
    seeds['model_llama_gqa_bf16_forward'] = model_seed(0b01100111, 0b01101010, 0b00010100, how=1, t=0b101,
                                                       ids=[0, 1, 2, 3, 4, 5])
    seeds['model_bad_state_dict_shape'] = model_seed(0b00100010, 0b00000000, mistake=1)
    seeds['model_token_id_out_of_range'] = model_seed(0b00100010, 0b00000000, t=0b00111010, ids=[0, 0, 0])
    seeds['seq2seq_t5_relu_tied_train'] = seq2seq_seed(0b00111011, 0b10000101, shape=0b00110111, how=0,
                                                      rest=[(i * 29) % 256 | 1 for i in range(64)])
    seeds['seq2seq_t5_gated_decoder_given_train'] = seq2seq_seed(0b01010111, 0b01001010, shape=0b00100100, how=8,
                                                                 rest=[(i * 53) % 256 | 1 for i in range(64)])
    seeds['seq2seq_t5_every_label_ignored'] = seq2seq_seed(0b00111011, 0b10000101, shape=0b00110111, how=5,
                                                          rest=[(i * 29) % 256 | 1 for i in range(64)])
    # a Marian (swish, scaled embedding, pad id 1) of the first seed's sizes
    seeds['seq2seq_marian_swish_scaled_train'] = seq2seq_seed(0b00111011, 0b10000101, shape=0b00110111, how=0,
                                                              rest=[(i * 29) % 256 | 1 for i in range(64)],
                                                              marian=0b10001100)
    # encoder training: a masked-LM BERT with ReLU, a ViT whose pooler is off the loss path with a padded first key,
    # a classifier's label out of range
    seeds['encoder_train_bert_mlm_relu'] = encoder_train_seed(0b010, 0b00100010, 0b00000011)
    seeds['encoder_train_vit_pooler_padded_key'] = encoder_train_seed(0b101, 0b00100001, 0b10000001)
    seeds['encoder_train_label_out_of_range'] = encoder_train_seed(0b000, 0b00000000, 0b01100010)
    for name, data in seeds.items():
        with open(os.path.join(CORPUS, name + '.bin'), 'wb') as f:
            f.write(data)
    print(f'wrote {len(seeds)} seeds to {CORPUS}')


if __name__ == '__main__':
    main()
