// attnlab/analysis (web/src/analysis.mjs): rollout and attentionFlow against float64 references written by
// tests/fixtures/analysis/gen_analysis.py (NumPy products; an exact-arithmetic push-relabel max flow, each flow
// certified by a cut), hand-computed cases, properties that hold for any input (identity attention rolls out to the
// identity; a flow is at most 1, at most what enters its input node, and at least the widest path's bottleneck),
// and each bad argument's error.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { attentionFlow, kMaxFlowLength, rollout } from '../../dist/analysis.mjs';
import { init } from '../../dist/index.mjs';
import { assertThrows, root } from './helpers.mjs';
import { kGpt2, scope } from './model-helpers.mjs';
import { makeRng } from './rng.mjs';

const fixture = JSON.parse(readFileSync(join(root, 'tests/fixtures/analysis/analysis.json'), 'utf8'));
const kTol = 2e-6; // float32 results of float64 computations

function assertNear(actual, expected, what) {
  assert.equal(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < expected.length; ++i) {
    assert.ok(Math.abs(actual[i] - expected[i]) <= kTol, `${what}[${i}]: got ${actual[i]}, expected ${expected[i]}`);
  }
}

/** L layers (B, H, T, T) of random softmax-like rows from the tests' seeded generator. */
function randomAttentions(rng, L, B, H, T, { causal = false } = {}) {
  return Array.from({ length: L }, () => {
    const data = new Float32Array(B * H * T * T);
    for (let row = 0; row < B * H * T; ++row) {
      const i = row % T;
      let sum = 0;
      for (let j = 0; j < T; ++j) {
        const v = causal && j > i ? 0 : Math.exp(3 * rng());
        data[row * T + j] = v;
        sum += v;
      }
      for (let j = 0; j < T; ++j) data[row * T + j] /= sum;
    }
    return { data, shape: [B, H, T, T] };
  });
}

/** Â of layer data (B, H, T, T), batch row b, as the contract states it: T × T arrays of numbers. */
function hat(layer, b, heads, residual) {
  const [, H, T] = layer.shape;
  return Array.from({ length: T }, (_, i) => {
    const row = Array.from({ length: T }, (_, j) => {
      let mean = 0;
      for (const h of heads) mean += layer.data[((b * H + h) * T + i) * T + j] / heads.length;
      return (i === j ? residual : 0) + (1 - residual) * mean;
    });
    const sum = row.reduce((a, v) => a + v, 0);
    return sum > 0 ? row.map((v) => v / sum) : row;
  });
}

describe('against the float64 references of gen_analysis.py', () => {
  for (const c of fixture.cases) {
    const attentions = c.attentions.map((a) => ({ data: Float32Array.from(a.data), shape: a.shape }));
    for (const run of c.runs) {
      const options = { residual: run.residual, heads: run.heads };
      test(`${c.name}: residual ${run.residual}, heads ${JSON.stringify(run.heads)}`, () => {
        const r = rollout(attentions, options);
        const [B, , T] = attentions[0].shape;
        assert.deepEqual(r.shape, [B, T, T]);
        assert.ok(r.data instanceof Float32Array);
        assertNear(r.data, run.rollout, 'rollout');
        for (const [query, expected] of Object.entries(run.flow)) {
          const f = attentionFlow(attentions, { ...options, query: Number(query) });
          assert.deepEqual(f.shape, [B, T]);
          assertNear(f.data, expected, `attentionFlow query ${query}`);
        }
      });
    }
  }

  test('{ data, dims } tensors with Float64Array data (transformers.js-like) give the same results', () => {
    const c = fixture.cases[0];
    const run = c.runs[1];
    const options = { residual: run.residual, heads: run.heads };
    const attentions = c.attentions.map((a) => ({ data: Float64Array.from(a.data), dims: a.shape }));
    assertNear(rollout(attentions, options).data, run.rollout, 'rollout');
    const [query, expected] = Object.entries(run.flow)[0];
    assertNear(attentionFlow(attentions, { ...options, query: Number(query) }).data, expected, 'attentionFlow');
  });

  test('the fixture covers what the contract distinguishes', () => {
    const runs = fixture.cases.flatMap((c) => c.runs);
    assert.ok(runs.some((r) => Array.isArray(r.heads)) && runs.some((r) => r.heads === 'mean'));
    assert.deepEqual([...new Set(runs.map((r) => r.residual))].sort(), [0, 0.2, 0.5, 0.9, 1]);
    // an all-zero row that stays zero (residual 0 on a padded query's row)
    assert.ok(
      runs.some((r) => r.rollout.some((v, k, all) => k % 5 === 0 && all.slice(k, k + 5).every((x) => x === 0))),
    );
  });
});

describe('hand-computable cases', () => {
  test('one layer: rollout = residual·I + (1 − residual)·A, rows renormalised; an all-zero row stays zero', () => {
    const rng = makeRng(35);
    const [layer] = randomAttentions(rng, 1, 1, 1, 5);
    layer.data.fill(0, 10, 15); // row 2 of the only head: all zero
    for (const residual of [0, 0.25, 0.5, 1]) {
      const r = rollout([layer], { residual });
      for (let i = 0; i < 5; ++i) {
        const row = Array.from(
          { length: 5 },
          (_, j) => (i === j ? residual : 0) + (1 - residual) * layer.data[i * 5 + j],
        );
        const sum = row.reduce((a, v) => a + v, 0);
        const expected = row.map((v) => (sum > 0 ? v / sum : 0));
        assertNear(r.data.subarray(i * 5, i * 5 + 5), expected, `residual ${residual} row ${i}`);
      }
      if (residual === 0) assert.deepEqual(Array.from(r.data.subarray(10, 15)), [0, 0, 0, 0, 0]);
      if (residual > 0) assertNear(r.data.subarray(10, 15), [0, 0, 1, 0, 0], 'the zero row keeps its residual');
    }
  });

  test('a 2-position chain of two layers: flow 0.7 and 0.5 where rollout says 0.6 and 0.4', () => {
    // residual 0: layer 0 A = [[1, 0], [0.5, 0.5]], layer 1 A = [[1, 0], [0.2, 0.8]]. From position 1 at the top:
    // to input 0 through (1, 0): min(0.2, 1) = 0.2, and through (1, 1): min(0.8, 0.5) = 0.5; to input 1 only
    // through (1, 1): min(0.8, 0.5) = 0.5. Rollout row 1 = [0.2 + 0.8·0.5, 0.8·0.5].
    const attentions = [
      { data: new Float32Array([1, 0, 0.5, 0.5]), shape: [1, 1, 2, 2] },
      { data: new Float32Array([1, 0, 0.2, 0.8]), shape: [1, 1, 2, 2] },
    ];
    assertNear(rollout(attentions, { residual: 0 }).data, [1, 0, 0.6, 0.4], 'rollout');
    assertNear(attentionFlow(attentions, { residual: 0, query: 1 }).data, [0.7, 0.5], 'flow');
    assertNear(attentionFlow(attentions, { residual: 0, query: 0 }).data, [1, 0], 'flow from 0');
  });

  test('heads picks the heads averaged: [h] equals a one-head list of head h', () => {
    const rng = makeRng(7);
    const attentions = randomAttentions(rng, 3, 2, 4, 6);
    const only = (h) =>
      attentions.map(({ data, shape: [B, , T] }) => {
        const out = new Float32Array(B * T * T);
        for (let b = 0; b < B; ++b) out.set(data.subarray((b * 4 + h) * T * T, (b * 4 + h + 1) * T * T), b * T * T);
        return { data: out, shape: [B, 1, T, T] };
      });
    assertNear(rollout(attentions, { heads: [2] }).data, rollout(only(2)).data, 'rollout');
    assertNear(
      attentionFlow(attentions, { heads: [3], query: 4 }).data,
      attentionFlow(only(3), { query: 4 }).data,
      'flow',
    );
  });
});

describe('properties', () => {
  test('rollout of identity attention is the identity, for any residual and depth', () => {
    const T = 9;
    const eye = new Float32Array(2 * 3 * T * T);
    for (let bh = 0; bh < 6; ++bh) for (let i = 0; i < T; ++i) eye[(bh * T + i) * T + i] = 1;
    for (const [L, residual] of [
      [1, 0],
      [4, 0.5],
      [7, 1],
    ]) {
      const r = rollout(
        Array.from({ length: L }, () => ({ data: eye, shape: [2, 3, T, T] })),
        { residual },
      );
      for (let k = 0; k < r.data.length; ++k) assert.equal(r.data[k], (k % (T * T)) % (T + 1) === 0 ? 1 : 0);
    }
  });

  test('flow ≤ 1, ≤ what enters the input node, ≥ the widest path bottleneck; batch rows independent', () => {
    const rng = makeRng(2026);
    for (const [L, B, H, T, causal] of [
      [3, 2, 2, 8, false],
      [5, 1, 3, 10, true],
      [12, 1, 2, 12, false],
    ]) {
      const attentions = randomAttentions(rng, L, B, H, T, { causal });
      const heads = [0, 1];
      const residual = rng();
      const query = rng.int(0, T - 1);
      const flow = attentionFlow(attentions, { residual, heads, query });
      for (let b = 0; b < B; ++b) {
        const hats = attentions.map((layer) => hat(layer, b, heads, residual));
        // widest[k][i]: the best bottleneck of a path from the query's top node down to node (k, i)
        let widest = Array.from({ length: T }, (_, i) => (i === query ? Infinity : 0));
        for (let k = L - 1; k >= 0; --k) {
          const up = widest;
          widest = Array.from({ length: T }, (_, j) => Math.max(...up.map((w, i) => Math.min(w, hats[k][i][j]))));
        }
        const single = attentions.map(({ data, shape: [, , n] }) => ({
          data: data.subarray(b * H * n * n, (b + 1) * H * n * n),
          shape: [1, H, n, n],
        }));
        const alone = attentionFlow(single, { residual, heads, query }).data;
        for (let j = 0; j < T; ++j) {
          const f = flow.data[b * T + j];
          const into = hats[0].reduce((a, row) => a + row[j], 0);
          assert.ok(f <= 1 + 1e-6 && f <= into + 1e-6, `flow ${f} to ${j}: at most 1 and ${into}`);
          assert.ok(f >= widest[j] - 1e-6, `flow ${f} to ${j} below the widest path's ${widest[j]}`);
          assert.equal(f, alone[j], `batch row ${b} computed alone`);
        }
      }
    }
  });

  test(`attentionFlow takes T = ${kMaxFlowLength}: one layer, flow j = Â[query][j]`, () => {
    const T = kMaxFlowLength;
    const [layer] = randomAttentions(makeRng(3), 1, 1, 1, T);
    const f = attentionFlow([layer], { query: 17 }).data;
    const row = hat(layer, 0, [0], 0.5)[17];
    assertNear(f, row, 'flow');
    assert.equal(rollout([layer]).shape[1], T);
  });
});

describe("a model's forward", () => {
  test('a GPT-2-shaped decoder: rollout is the float64 product, causal, rows sum to 1; flow from position 0', async (t) => {
    const attn = await init();
    const own = scope(t);
    const model = own(attn.createModel({ ...kGpt2, seed: 11 }));
    const rng = makeRng(11);
    const T = 8;
    const tokens = { data: Int32Array.from({ length: 2 * T }, () => rng.int(0, kGpt2.vocabSize - 1)), shape: [2, T] };
    const { attentions } = model.forward(tokens, { outputAttentions: true });
    const r = rollout(attentions, { residual: 0.3 });
    assert.deepEqual(r.shape, [2, T, T]);
    for (let b = 0; b < 2; ++b) {
      const hats = attentions.map((layer) => hat(layer, b, [0, 1], 0.3));
      const product = hats.reduce((acc, a) =>
        a.map((row) => acc[0].map((_, j) => row.reduce((s, v, k) => s + v * acc[k][j], 0))),
      );
      for (let i = 0; i < T; ++i) {
        const row = r.data.subarray((b * T + i) * T, (b * T + i + 1) * T);
        assertNear(row, product[i], `row ${b}, ${i}`);
        assert.ok(Math.abs(row.reduce((a, v) => a + v, 0) - 1) < 1e-5, 'rows sum to 1');
        for (let j = i + 1; j < T; ++j) assert.equal(row[j], 0, 'a decoder draws on no later position');
      }
    }
    const flow = attentionFlow(attentions, { query: 0 });
    assertNear(flow.data, [1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0], 'position 0 can only reach itself');
  });

  test('a forward that asked for some layers only: TypeError naming the null layer', async (t) => {
    const attn = await init();
    const model = scope(t)(attn.createModel({ ...kGpt2, seed: 11 }));
    const { attentions } = model.forward({ data: new Int32Array([1, 2, 3]), shape: [1, 3] }, { outputAttentions: [1] });
    assertThrows(() => rollout(attentions), TypeError, /attentions\[0\] is null/);
  });
});

describe('errors', () => {
  const good = () => randomAttentions(makeRng(1), 2, 1, 2, 4);
  const both = (attentions, options, Class, ...patterns) => {
    assertThrows(() => rollout(attentions, options), Class, /^rollout: /, ...patterns);
    assertThrows(() => attentionFlow(attentions, { query: 0, ...options }), Class, /^attentionFlow: /, ...patterns);
  };

  test('attentions not an array: TypeError', () => both(good()[0], {}, TypeError, /attentions must be an array/));
  test('no layer: RangeError', () => both([], {}, RangeError, /at least one layer/));
  test('a null layer (a forward that asked for some layers only): TypeError', () => {
    both([good()[0], null], {}, TypeError, /attentions\[1\] is null/, /outputAttentions: true/);
  });
  test('data not a float array: TypeError', () => {
    both([{ data: [1, 0, 0, 1], shape: [1, 1, 2, 2] }], {}, TypeError, /attentions\[0\]\.data must be a Float32Array/);
  });
  test('layers of different shapes: RangeError', () => {
    const [a] = good();
    const b = randomAttentions(makeRng(2), 1, 1, 2, 3)[0];
    both([a, b], {}, RangeError, /every layer must have one shape/, /attentions\[1\] is \[1, 2, 3, 3\]/);
  });
  test('non-square maps (a cached forward, Tk = P + T): RangeError', () => {
    both([{ data: new Float32Array(6), shape: [1, 1, 2, 3] }], {}, RangeError, /attentions\[0\] must be square/);
  });
  test('not 4-D: RangeError', () => {
    both([{ data: new Float32Array(4), shape: [2, 2] }], {}, RangeError, /attentions\[0\] must be 4-D/);
  });
  test('data length not the shape: RangeError', () => {
    both([{ data: new Float32Array(5), shape: [1, 1, 2, 2] }], {}, RangeError, /attentions\[0\]\.data holds 5/);
  });
  test('negative or non-finite weights: RangeError', () => {
    both([{ data: new Float32Array([1, 0, -0.5, 1.5]), shape: [1, 1, 2, 2] }], {}, RangeError, /finite weights >= 0/);
    both(
      [{ data: new Float32Array([NaN, 0, 0, 1]), shape: [1, 1, 2, 2] }],
      {},
      RangeError,
      /got NaN at \[0, 0, 0, 0\]/,
    );
  });
  test('heads out of range: RangeError', () => both(good(), { heads: [0, 2] }, RangeError, /heads\[1\].*\[0, 2\)/));
  test('heads repeated: RangeError', () => both(good(), { heads: [1, 1] }, RangeError, /names head 1 twice/));
  test('heads empty: RangeError', () => both(good(), { heads: [] }, RangeError, /at least one head/));
  test('heads not an array or mean: TypeError', () => both(good(), { heads: 'max' }, TypeError, /options\.heads/));
  test('a head not an integer: RangeError / TypeError', () => {
    both(good(), { heads: [0.5] }, RangeError, /options\.heads\[0\]/);
    both(good(), { heads: ['0'] }, TypeError, /options\.heads\[0\] must be a number/);
  });
  test('residual outside [0, 1]: RangeError', () => {
    both(good(), { residual: -0.1 }, RangeError, /residual must be in \[0, 1\], got -0.1/);
    both(good(), { residual: 1.5 }, RangeError, /residual must be in \[0, 1\]/);
    both(good(), { residual: NaN }, RangeError, /residual must be a finite number/);
  });
  test('residual not a number: TypeError', () => both(good(), { residual: '0.5' }, TypeError, /residual/));
  test('an unknown option: TypeError', () => both(good(), { head: [0] }, TypeError, /unknown option "head"/));
  test('query missing: TypeError', () => {
    assertThrows(() => attentionFlow(good(), { residual: 0.5 }), TypeError, /options\.query is required/);
    assertThrows(() => attentionFlow(good()), TypeError, /options\.query is required/);
  });
  test('query out of range or not an integer: RangeError', () => {
    assertThrows(() => attentionFlow(good(), { query: 4 }), RangeError, /query must be a position in \[0, 4\), got 4/);
    assertThrows(() => attentionFlow(good(), { query: -1 }), RangeError, /query/);
    assertThrows(() => attentionFlow(good(), { query: 1.5 }), RangeError, /query/);
  });
  test('query not a number: TypeError', () => {
    assertThrows(() => attentionFlow(good(), { query: '1' }), TypeError, /query must be a number/);
  });
  test(`attentionFlow past T = ${kMaxFlowLength}: RangeError (rollout has no limit)`, () => {
    const T = kMaxFlowLength + 1;
    const layer = { data: new Float32Array(T * T), shape: [1, 1, T, T] };
    assertThrows(() => attentionFlow([layer], { query: 0 }), RangeError, /T = 257/, /at most 256/);
    assert.deepEqual(rollout([layer]).shape, [1, T, T]);
  });
});
