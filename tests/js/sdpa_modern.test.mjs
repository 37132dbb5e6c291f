// The modern SDPA options (docs/api.md, "Modern attention"; web/src/sdpa_options.mjs) on random cases, in every wasm
// variant, against the float64 reference (reference.mjs): GQA, both causal alignments, kvLengths, windows, softcap,
// every scores stage, pastKey/pastValue → presentKey/presentValue, masks of every rank, 2-D to 5-D inputs, with and
// without weights; and the backward pass with the same options against central differences of the reference.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { init } from '../../dist/index.mjs';
import { VARIANTS, assertClose, tensor } from './helpers.mjs';
import { sdpaRef, size } from './reference.mjs';
import { makeRng } from './rng.mjs';

const kTol = { atol: 2e-5, rtol: 2e-4 };

/** A bool mask of `shape` (1 = may attend) with about `p` of it masked; a float one with -Infinity there. */
function randomMask(shape, seed, { float = false, p = 0.25 } = {}) {
  const rng = makeRng(seed);
  const n = size(shape);
  if (!float)
    return {
      data: Uint8Array.from({ length: n }, () => (rng.bool(p) ? 0 : 1)),
      shape,
    };
  return {
    data: Float32Array.from({ length: n }, () => (rng.bool(p) ? -Infinity : Math.fround(rng() - 0.5))),
    shape,
  };
}

// [name, query shape, key shape, value shape, options (pastKey/pastValue given as shapes)]
const kCases = [
  ['GQA 8/2, lower-right causal, Lq < Lk', [2, 8, 5, 16], [2, 2, 7, 16], [2, 2, 7, 12], { isCausal: 'lower-right' }],
  [
    'GQA 4/2, kvLengths, window [2, 1] upper-left, full float mask',
    [2, 4, 6, 8],
    [2, 2, 9, 8],
    [2, 2, 9, 8],
    {
      kvLengths: [7, 3],
      window: [2, 1],
      attnMask: randomMask([2, 4, 6, 9], 5, { float: true }),
    },
  ],
  [
    'MQA 6/1, softcap 5, rank-3 float mask (H, Lq, Lk), masked scores',
    [2, 6, 4, 8],
    [2, 1, 5, 8],
    [2, 1, 5, 8],
    {
      softcap: 5,
      attnMask: randomMask([6, 4, 5], 6, { float: true }),
      returnScores: 'masked',
      scale: 0.7,
    },
  ],
  [
    'decode: 1 query over a past of 9 + 1, GQA 6/3, lower-right, scaled scores',
    [2, 6, 1, 8],
    [2, 3, 1, 8],
    [2, 3, 1, 4],
    {
      isCausal: 'lower-right',
      pastKey: [2, 3, 9, 8],
      pastValue: [2, 3, 9, 4],
      enableGQA: true,
      returnScores: 'scaled',
    },
  ],
  [
    'past + upper-left causal with Lq 3 != 2 new keys, window [1, -1], rank-1 bool mask',
    [1, 2, 3, 8],
    [1, 2, 2, 8],
    [1, 2, 2, 8],
    {
      isCausal: true,
      pastKey: [1, 2, 4, 8],
      pastValue: [1, 2, 4, 8],
      window: [1, -1],
      attnMask: randomMask([6], 7),
    },
  ],
  [
    '5-D batch, kvLengths [0, 5] (item 0 fully masked), softcapped scores',
    [2, 3, 4, 5, 8],
    [2, 3, 2, 6, 8],
    [2, 3, 2, 6, 8],
    {
      enableGQA: true,
      kvLengths: [0, 5],
      softcap: 1.5,
      returnScores: 'softcapped',
    },
  ],
  [
    '2-D inputs, one kvLength, lower-right, window [0, 0]',
    [4, 8],
    [7, 8],
    [7, 3],
    { kvLengths: [5], isCausal: 'lower-right', window: [0, 0] },
  ],
  [
    'odd sizes over several tiles: GQA 4/2, lower-right + window [16, -1] + kvLengths',
    [2, 4, 33, 40],
    [2, 2, 70, 40],
    [2, 2, 70, 24],
    { isCausal: 'lower-right', window: [16, -1], kvLengths: [70, 41] },
  ],
  [
    'padding mask (B, 1, 1, Lk) with size-1 dims + causal upper-left',
    [3, 2, 6, 8],
    [3, 2, 6, 8],
    [3, 2, 6, 8],
    {
      attnMask: randomMask([3, 1, 1, 6], 8, { p: 0.4 }),
      isCausal: 'upper-left',
    },
  ],
  [
    'negative lower-right offset: kvLengths [2] < Lq 5 (rows 0-2 see nothing)',
    [1, 2, 5, 8],
    [1, 2, 5, 8],
    [1, 2, 5, 8],
    { kvLengths: [2], isCausal: 'lower-right', returnScores: 'masked' },
  ],
];

/** A case's tensors and options (seeded by its index), as given to attnlab and to the reference. */
function materialise([, qs, ks, vs, o], i) {
  const options = { ...o };
  if (o.kvLengths) options.kvLengths = Int32Array.from(o.kvLengths);
  if (o.pastKey) options.pastKey = tensor(o.pastKey, 100 * i + 4);
  if (o.pastValue) options.pastValue = tensor(o.pastValue, 100 * i + 5);
  if (ks[ks.length - 3] !== qs[qs.length - 3] && qs.length > 2) options.enableGQA = true;
  return {
    q: tensor(qs, 100 * i + 1),
    k: tensor(ks, 100 * i + 2),
    v: tensor(vs, 100 * i + 3),
    options,
  };
}

for (const variant of VARIANTS) {
  describe(`modern SDPA options, ${variant} build`, () => {
    let attn;
    test(`init({ variant: '${variant}' })`, async () => {
      attn = await init({ variant });
    });
    kCases.forEach((c, i) => {
      test(c[0], () => {
        const { q, k, v, options } = materialise(c, i);
        const want = sdpaRef(q, k, v, options);
        for (const needWeights of [true, false]) {
          const got = attn.scaledDotProductAttention(q, k, v, {
            ...options,
            needWeights,
          });
          const what = `${c[0]}${needWeights ? '' : ' (needWeights: false)'}`;
          assertClose(got.output, want.output, kTol, `${what}: output`);
          if (needWeights) assertClose(got.weights, want.weights, kTol, `${what}: weights`);
          if (options.returnScores) {
            assertClose(got.scores, want.scores[options.returnScores], kTol, `${what}: scores`);
          } else assert.equal(got.scores, undefined);
          if (options.pastKey) {
            assert.deepEqual(got.presentKey, {
              data: Float32Array.from(want.presentKey.data),
              shape: want.presentKey.shape,
            });
            assert.deepEqual(got.presentValue.shape, want.presentValue.shape);
            assert.deepEqual(got.presentValue.data, Float32Array.from(want.presentValue.data));
          } else assert.equal(got.presentKey, undefined);
        }
      });
    });

    test('each scores stage of one call: scaled → softcapped → masked', () => {
      const { q, k, v, options } = materialise(kCases[2], 2);
      const want = sdpaRef(q, k, v, options);
      for (const stage of ['scaled', 'softcapped', 'masked']) {
        const got = attn.scaledDotProductAttention(q, k, v, {
          ...options,
          returnScores: stage,
          needWeights: false,
        });
        assertClose(got.scores, want.scores[stage], kTol, stage);
      }
    });

    test('backward with GQA, a past, lower-right causal, window, softcap and kvLengths = central differences', () => {
      const rng = makeRng(77);
      const q = tensor([2, 4, 3, 4], 71);
      const k = tensor([2, 2, 2, 4], 72);
      const v = tensor([2, 2, 2, 3], 73);
      const options = {
        enableGQA: true,
        isCausal: 'lower-right',
        window: [3, -1],
        softcap: 2,
        kvLengths: Int32Array.from([5, 4]),
        pastKey: tensor([2, 2, 3, 4], 74),
        pastValue: tensor([2, 2, 3, 3], 75),
        scale: 0.8,
      };
      const g = { data: rng.floats(2 * 4 * 3 * 3), shape: [2, 4, 3, 3] };
      const grads = attn.scaledDotProductAttentionBackward(q, k, v, g, options);
      assert.deepEqual(Object.keys(grads).sort(), [
        'gradKey',
        'gradPastKey',
        'gradPastValue',
        'gradQuery',
        'gradValue',
      ]);
      const loss = (o) => {
        const out = sdpaRef(o.q, o.k, o.v, o.options).output.data;
        return out.reduce((s, x, i) => s + x * g.data[i], 0);
      };
      const base = { q, k, v, options };
      const inputs = {
        gradQuery: ['q'],
        gradKey: ['k'],
        gradValue: ['v'],
        gradPastKey: ['options', 'pastKey'],
        gradPastValue: ['options', 'pastValue'],
      };
      for (const [name, path] of Object.entries(inputs)) {
        const t = path.length === 1 ? base[path[0]] : base.options[path[1]];
        const numeric = new Float64Array(t.data.length);
        for (let i = 0; i < t.data.length; ++i) {
          const at = (delta) => {
            const data = Float64Array.from(t.data);
            data[i] += delta;
            const x = { data, shape: t.shape };
            const o = { ...base, options: { ...base.options } };
            if (path.length === 1) o[path[0]] = x;
            else o.options[path[1]] = x;
            return loss(o);
          };
          numeric[i] = (at(1e-6) - at(-1e-6)) / 2e-6;
        }
        assertClose(grads[name], { data: numeric, shape: t.shape }, { atol: 1e-4, rtol: 1e-3 }, name);
      }
    });
  });
}
