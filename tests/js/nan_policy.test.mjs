// The NaN / Inf policy of docs/robustness.md on both wasm variants and both attention paths (needWeights true:
// exact path with weights; false: tiled online softmax), and consistency: repeated calls are bit-identical,
// wasm-SIMD and wasm-scalar agree within 1e-5 on random cases, and both agree within 1e-5 with the native build
// (tests/consistency/native_cases.json, written by scripts/make_consistency_cases.sh).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { init } from '../../dist/index.mjs';
import { VARIANTS, root } from './helpers.mjs';
import { makeRng } from './rng.mjs';
import { mismatch, randomMhaCase, randomSdpaCase } from './robustness-helpers.mjs';

const B = 2;
const LQ = 5;
const LK = 6;
const D = 3;

function problem(seed = 1) {
  const rng = makeRng(seed);
  return {
    q: { data: rng.floats(B * LQ * D), shape: [B, LQ, D] },
    k: { data: rng.floats(B * LK * D), shape: [B, LK, D] },
    v: { data: rng.floats(B * LK * D), shape: [B, LK, D] },
  };
}
const at = (b, i, c, len) => (b * len + i) * D + c;

const allNaN = (data, from, n) => Array.from(data.subarray(from, from + n)).every(Number.isNaN);
const allZero = (data, from, n) => Array.from(data.subarray(from, from + n)).every((x) => x === 0);
function same(a, b, from, n) {
  for (let i = from; i < from + n; ++i) {
    if (!Number.isFinite(a[i]) || !Number.isFinite(b[i]) || Math.abs(a[i] - b[i]) > 1e-6 * (1 + Math.abs(b[i])))
      return false;
  }
  return true;
}

/** Rows (b, i) with poisoned(b, i) are all NaN (weights too); the others equal the clean call's. */
function expectNaNRows(got, clean, needWeights, poisoned) {
  for (let b = 0; b < B; ++b) {
    for (let i = 0; i < LQ; ++i) {
      const row = b * LQ + i;
      const where = `batch item ${b}, row ${i}`;
      if (poisoned(b, i)) {
        assert.ok(allNaN(got.output.data, row * D, D), `${where}: output row should be NaN`);
        if (needWeights) assert.ok(allNaN(got.weights.data, row * LK, LK), `${where}: weight row should be NaN`);
      } else {
        assert.ok(same(got.output.data, clean.output.data, row * D, D), `${where}: output row changed`);
        if (needWeights)
          assert.ok(same(got.weights.data, clean.weights.data, row * LK, LK), `${where}: weight row changed`);
      }
    }
  }
}

const bits = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

for (const variant of VARIANTS) {
  describe(`NaN / Inf policy, ${variant} build`, async () => {
    const attn = await init({ variant });
    for (const needWeights of [true, false]) {
      const run = (p, extra = {}) => attn.scaledDotProductAttention(p.q, p.k, p.v, { needWeights, ...extra });
      const path = needWeights ? 'exact path' : 'online path';

      test(`NaN in query row i: only row i is NaN (${path})`, () => {
        const p = problem();
        const clean = run(p);
        p.q.data[at(1, 2, 1, LQ)] = NaN;
        expectNaNRows(run(p), clean, needWeights, (b, i) => b === 1 && i === 2);
      });

      test(`NaN is found in full vectors too (Lk a multiple of the lane count) (${path})`, () => {
        for (const lk of [4, 8, 16, 32, 128]) {
          const rng = makeRng(lk);
          const q = { data: rng.floats(3 * 2), shape: [3, 2] };
          const k = { data: rng.floats(lk * 2), shape: [lk, 2] };
          const v = { data: rng.floats(lk * 2), shape: [lk, 2] };
          q.data[2] = NaN; // query row 1
          const r = attn.scaledDotProductAttention(q, k, v, { needWeights });
          assert.ok(allNaN(r.output.data, 2, 2), `Lk ${lk}: output row 1 should be NaN`);
          assert.ok(Array.from(r.output.data.subarray(0, 2)).every(Number.isFinite), `Lk ${lk}: row 0 finite`);
          if (needWeights) assert.ok(allNaN(r.weights.data, lk, lk), `Lk ${lk}: weight row 1 should be NaN`);
        }
      });

      test(`+Infinity in query row i: only row i is NaN (inf - inf) (${path})`, () => {
        const p = problem();
        const clean = run(p);
        p.q.data[at(0, 1, 0, LQ)] = Infinity;
        expectNaNRows(run(p), clean, needWeights, (b, i) => b === 0 && i === 1);
      });

      test(`NaN in a key row: the rows of that batch item that attend it, nothing else (${path})`, () => {
        const p = problem();
        const clean = run(p);
        p.k.data[at(0, 3, 2, LK)] = NaN;
        expectNaNRows(run(p), clean, needWeights, (b) => b === 0);
        const cleanCausal = run(problem(), { isCausal: true });
        const c = problem();
        c.k.data[at(0, 3, 2, LK)] = NaN;
        expectNaNRows(run(c, { isCausal: true }), cleanCausal, needWeights, (b, i) => b === 0 && i >= 3);
      });

      test(`NaN in a value row: only that column of the rows that attend it (${path})`, () => {
        for (const isCausal of [false, true]) {
          const p = problem();
          const clean = run(p, { isCausal });
          p.v.data[at(1, 3, 1, LK)] = NaN;
          const got = run(p, { isCausal });
          for (let b = 0; b < B; ++b) {
            for (let i = 0; i < LQ; ++i) {
              const attends = b === 1 && (!isCausal || i >= 3);
              for (let c = 0; c < D; ++c) {
                const x = got.output.data[at(b, i, c, LQ)];
                const where = `causal ${isCausal}, item ${b}, row ${i}, column ${c}`;
                if (attends && c === 1) assert.ok(Number.isNaN(x), `${where}: should be NaN`);
                else
                  assert.ok(same(got.output.data, clean.output.data, at(b, i, c, LQ), 1), `${where}: changed to ${x}`);
              }
            }
          }
        }
      });

      const floatMask = () => ({ data: new Float32Array(B * LQ * LK), shape: [B, LQ, LK] });

      test(`NaN in float mask element (i, j): only row i is NaN (${path})`, () => {
        const p = problem();
        const m = floatMask();
        const clean = run(p, { attnMask: m });
        m.data[(1 * LQ + 4) * LK + 0] = NaN;
        expectNaNRows(run(p, { attnMask: m }), clean, needWeights, (b, i) => b === 1 && i === 4);
      });

      test(`+Infinity in float mask element (i, j): row i is NaN (IEEE inf - inf) (${path})`, () => {
        const p = problem();
        const m = floatMask();
        const clean = run(p, { attnMask: m });
        m.data[(0 * LQ + 2) * LK + 5] = Infinity;
        expectNaNRows(run(p, { attnMask: m }), clean, needWeights, (b, i) => b === 0 && i === 2);
      });

      test(`a -Infinity float mask row is fully masked: zeros, never NaN, even with NaN values (${path})`, () => {
        const p = problem();
        const m = floatMask();
        for (let j = 0; j < LK; ++j) m.data[(1 * LQ + 3) * LK + j] = -Infinity;
        const clean = run(p, { attnMask: m });
        const row = 1 * LQ + 3;
        assert.ok(allZero(clean.output.data, row * D, D), 'output row is 0');
        if (needWeights) assert.ok(allZero(clean.weights.data, row * LK, LK), 'weight row is 0');
        p.v.data[at(1, 2, 0, LK)] = NaN;
        p.k.data[at(1, 4, 1, LK)] = Infinity;
        const got = run(p, { attnMask: m });
        assert.ok(
          allZero(got.output.data, row * D, D),
          `fully masked output row with NaN values: ${got.output.data.subarray(row * D, row * D + D)}`,
        );
      });

      test(`NaN / Infinity in a masked key or value row does not reach any row (${path})`, () => {
        const p = problem();
        const allowed = new Uint8Array(LQ * LK).fill(1);
        for (let i = 0; i < LQ; ++i) allowed[i * LK + 2] = 0; // SDPA bool: 0 = masked
        const mask = { data: allowed, shape: [LQ, LK] };
        const clean = run(p, { attnMask: mask });
        p.k.data[at(0, 2, 0, LK)] = NaN;
        p.v.data[at(0, 2, 1, LK)] = NaN;
        p.v.data[at(0, 2, 2, LK)] = -Infinity;
        expectNaNRows(run(p, { attnMask: mask }), clean, needWeights, () => false);
      });
    }

    // ---- MultiHeadAttention
    const E = 4;
    const H = 2;
    const N = 2;
    const L = 3;
    const S = 4;
    const mhaProblem = () => {
      const rng = makeRng(5);
      return {
        q: { data: rng.floats(N * L * E), shape: [N, L, E] },
        k: { data: rng.floats(N * S * E), shape: [N, S, E] },
        v: { data: rng.floats(N * S * E), shape: [N, S, E] },
      };
    };
    const mhaRun = (m, p, options = {}) => m.forward(p.q, p.k, p.v, { averageAttnWeights: false, ...options });
    const expectNaNTokens = (got, clean, poisoned) => {
      for (let b = 0; b < N; ++b) {
        for (let i = 0; i < L; ++i) {
          const tok = (b * L + i) * E;
          if (poisoned(b, i)) assert.ok(allNaN(got.output.data, tok, E), `item ${b}, position ${i}: should be NaN`);
          else assert.ok(same(got.output.data, clean.output.data, tok, E), `item ${b}, position ${i}: changed`);
        }
      }
    };

    test('MHA: NaN in a query token poisons that token only', () => {
      const m = attn.createMultiHeadAttention({ embedDim: E, numHeads: H, batchFirst: true, seed: 5 });
      const p = mhaProblem();
      const clean = mhaRun(m, p);
      p.q.data[(1 * L + 0) * E + 2] = NaN;
      expectNaNTokens(mhaRun(m, p), clean, (b, i) => b === 1 && i === 0);
      m.dispose();
    });

    test('MHA: NaN in a key or value token poisons its batch item only', () => {
      const m = attn.createMultiHeadAttention({ embedDim: E, numHeads: H, batchFirst: true, seed: 5 });
      const clean = mhaRun(m, mhaProblem());
      const p = mhaProblem();
      p.k.data[(0 * S + 2) * E + 1] = NaN;
      expectNaNTokens(mhaRun(m, p), clean, (b) => b === 0);
      const pv = mhaProblem();
      pv.v.data[(1 * S + 3) * E + 3] = NaN;
      expectNaNTokens(mhaRun(m, pv), clean, (b) => b === 1);
      m.dispose();
    });

    test('MHA: a padded key/value token holding NaN / Infinity does not reach any row', () => {
      const m = attn.createMultiHeadAttention({ embedDim: E, numHeads: H, batchFirst: true, seed: 5 });
      const kpm = { data: new Uint8Array(N * S), shape: [N, S] };
      kpm.data[0 * S + 1] = 1; // item 0, key 1 padded (MHA bool: 1 = masked)
      const clean = mhaRun(m, mhaProblem(), { keyPaddingMask: kpm });
      const p = mhaProblem();
      p.k.data[(0 * S + 1) * E + 0] = NaN;
      p.v.data[(0 * S + 1) * E + 2] = NaN;
      p.v.data[(0 * S + 1) * E + 3] = Infinity;
      for (const needWeights of [true, false]) {
        expectNaNTokens(mhaRun(m, p, { keyPaddingMask: kpm, needWeights }), clean, () => false);
      }
      m.dispose();
    });

    test('MHA: a fully padded item gives out_proj.bias rows, even with NaN values', () => {
      const m = attn.createMultiHeadAttention({ embedDim: E, numHeads: H, batchFirst: true, seed: 5 });
      const rng = makeRng(3);
      const sd = m.stateDict();
      const bias = rng.floats(E);
      m.loadStateDict({ ...sd, 'out_proj.bias': bias });
      const kpm = { data: new Uint8Array(N * S), shape: [N, S] };
      kpm.data.fill(1, 1 * S, 2 * S);
      const p = mhaProblem();
      p.v.data[(1 * S + 0) * E + 0] = NaN;
      const got = mhaRun(m, p, { keyPaddingMask: kpm });
      for (let i = 0; i < L; ++i) {
        assert.deepEqual(
          Array.from(got.output.data.subarray((1 * L + i) * E, (1 * L + i + 1) * E)),
          Array.from(bias),
          `position ${i}`,
        );
      }
      assert.ok(allZero(got.weights.data, 1 * H * L * S, H * L * S), 'weights of the padded item are 0');
      m.dispose();
    });

    // docs/robustness.md, "Two masks on one key": the float masks are added in float32, and a sum of -Infinity masks
    // the key even when two finite masks overflow (-FLT_MAX + -FLT_MAX); one of +Infinity makes the row NaN.
    test('MHA: float masks whose float32 sum overflows mask the key (-inf) or poison the row (+inf)', () => {
      const MAX = 3.4028234663852886e38;
      const m = attn.createMultiHeadAttention({ embedDim: E, numHeads: H, batchFirst: true, seed: 5 });
      const kpm = { data: new Float32Array(N * S), shape: [N, S] };
      const am = { data: new Float32Array(N * H * L * S), shape: [N * H, L, S] };
      const j = 1;
      const i = 2;
      kpm.data[0 * S + j] = -MAX; // item 0, key j; row i also gets -MAX from attnMask, in both heads
      for (let h = 0; h < H; ++h) am.data[((0 * H + h) * L + i) * S + j] = -MAX;
      for (const needWeights of [true, false]) {
        const options = { keyPaddingMask: kpm, attnMask: am, needWeights };
        const clean = mhaRun(m, mhaProblem(), options);
        const p = mhaProblem();
        p.k.data.fill(NaN, (0 * S + j) * E, (0 * S + j + 1) * E);
        const got = mhaRun(m, p, options);
        expectNaNTokens(got, clean, (b, ii) => b === 0 && ii !== i); // -MAX alone: key j attended, NaN
        if (needWeights) {
          for (let h = 0; h < H; ++h) assert.equal(got.weights.data[((0 * H + h) * L + i) * S + j], 0);
        }
      }
      const kpmUp = { data: new Float32Array(N * S), shape: [N, S] };
      const amUp = { data: new Float32Array(N * H * L * S), shape: [N * H, L, S] };
      kpmUp.data[1 * S + 0] = MAX; // item 1, key 0: +MAX alone is a finite bias
      const finite = mhaRun(m, mhaProblem(), { keyPaddingMask: kpmUp, attnMask: amUp });
      amUp.data[((1 * H + 1) * L + 1) * S + 0] = MAX; // + MAX = +inf in head 1, row 1
      const poisoned = mhaRun(m, mhaProblem(), { keyPaddingMask: kpmUp, attnMask: amUp });
      expectNaNTokens(poisoned, finite, (b, ii) => b === 1 && ii === 1);
      assert.ok(allNaN(poisoned.weights.data, ((1 * H + 1) * L + 1) * S, S), 'head 1, row 1: NaN weights');
      assert.ok(same(poisoned.weights.data, finite.weights.data, ((1 * H + 0) * L + 1) * S, S), 'head 0 unchanged');
      m.dispose();
    });

    // ---- Consistency
    test('repeated calls are bit-identical (NaN / Inf inputs included)', () => {
      const rng = makeRng(99);
      for (let t = 0; t < 50; ++t) {
        const c = randomSdpaCase(rng);
        if (c.q.data.length && rng.bool(0.5)) c.q.data[0] = rng.pick([NaN, Infinity, -Infinity]);
        const a = attn.scaledDotProductAttention(c.q, c.k, c.v, c.options);
        const b = attn.scaledDotProductAttention(c.q, c.k, c.v, c.options);
        assert.ok(bits(a.output.data).equals(bits(b.output.data)), `case ${t}: output`);
        if (a.weights) assert.ok(bits(a.weights.data).equals(bits(b.weights.data)), `case ${t}: weights`);
      }
      for (let t = 0; t < 20; ++t) {
        const c = randomMhaCase(rng);
        const m = attn.createMultiHeadAttention(c.config);
        m.loadStateDict(c.params);
        const a = m.forward(c.query, c.key, c.value, c.options);
        const b = m.forward(c.query, c.key, c.value, c.options);
        m.dispose();
        assert.ok(bits(a.output.data).equals(bits(b.output.data)), `MHA case ${t}: output`);
      }
    });
  });
}

describe('consistency across builds', async () => {
  const simd = await init({ variant: 'simd' });
  const scalar = await init({ variant: 'scalar' });
  const tol = { atol: 1e-5, rtol: 1e-5 };

  test('wasm-SIMD and wasm-scalar agree within 1e-5 on random cases', () => {
    const rng = makeRng(2024);
    for (let t = 0; t < 300; ++t) {
      const c = randomSdpaCase(rng, { maxDim: 9 });
      const a = simd.scaledDotProductAttention(c.q, c.k, c.v, c.options);
      const b = scalar.scaledDotProductAttention(c.q, c.k, c.v, c.options);
      assert.equal(mismatch(a.output, b.output, tol), null, `SDPA case ${t}: output`);
      if (a.weights) assert.equal(mismatch(a.weights, b.weights, tol), null, `SDPA case ${t}: weights`);
    }
    for (let t = 0; t < 150; ++t) {
      const c = randomMhaCase(rng);
      const out = [simd, scalar].map((attn) => {
        const m = attn.createMultiHeadAttention(c.config);
        try {
          m.loadStateDict(c.params);
          return m.forward(c.query, c.key, c.value, c.options);
        } finally {
          m.dispose();
        }
      });
      assert.equal(mismatch(out[0].output, out[1].output, tol), null, `MHA case ${t}: output`);
      if (out[0].weights) assert.equal(mismatch(out[0].weights, out[1].weights, tol), null, `MHA case ${t}: weights`);
    }
  });

  const casesPath = join(root, 'tests', 'consistency', 'native_cases.json');
  // The cases are committed (scripts/make_consistency_cases.sh writes them): a missing file fails, not skips.
  test('both wasm variants agree within 1e-5 with the native build (native_cases.json)', () => {
    const { cases, target } = JSON.parse(readFileSync(casesPath, 'utf8'));
    const num = (x) => (typeof x === 'string' ? Number(x) : x);
    const f32 = (t) => ({ data: Float32Array.from(t.data, num), shape: t.shape });
    const mask = (m) =>
      m && { data: m.kind === 'bool' ? Uint8Array.from(m.data) : Float32Array.from(m.data, num), shape: m.shape };
    assert.ok(cases.length >= 40);
    for (const [variant, attn] of [
      ['simd', simd],
      ['scalar', scalar],
    ]) {
      cases.forEach((c, idx) => {
        const where = `${variant} vs native ${target}, case ${idx} (${c.kind})`;
        let got;
        if (c.kind === 'sdpa') {
          const options = { ...c.options, attnMask: mask(c.options.attnMask) };
          if (!options.attnMask) delete options.attnMask;
          got = attn.scaledDotProductAttention(f32(c.query), f32(c.key), f32(c.value), options);
        } else {
          const m = attn.createMultiHeadAttention(c.config);
          try {
            const params = {};
            for (const [name, t] of Object.entries(c.params)) params[name] = f32(t);
            m.loadStateDict(params);
            const options = {
              ...c.options,
              keyPaddingMask: mask(c.options.keyPaddingMask),
              attnMask: mask(c.options.attnMask),
            };
            for (const key of ['keyPaddingMask', 'attnMask']) if (!options[key]) delete options[key];
            got = m.forward(f32(c.query), f32(c.key), f32(c.value), options);
          } finally {
            m.dispose();
          }
        }
        assert.equal(mismatch(got.output, f32(c.output), tol), null, `${where}: output`);
        if (c.weights) assert.equal(mismatch(got.weights, f32(c.weights), tol), null, `${where}: weights`);
      });
    }
  });
});
