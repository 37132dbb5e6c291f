// createRng (web/src/rng.mjs), the package's one seeded generator: its stream against a BigInt reference written
// from the algorithm (xoshiro128**, checked on the authors' published outputs, seeded by splitmix32 as docs/api.md
// says), its documented draws (uniform, int, normal) by their moments, its errors, and generate and train's
// sampler drawing from the same stream.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { createRng, init } from '../../dist/index.mjs';
import { assertThrows } from './helpers.mjs';
import { kGpt2, scope } from './model-helpers.mjs';

const kMask = 0xffffffffn;
const u32 = (x) => BigInt.asUintN(32, x);
const rotl = (x, k) => u32((x << BigInt(k)) | (x >> BigInt(32 - k)));

/** xoshiro128** from four 32-bit state words, in BigInt: the next 32-bit output per call. */
function referenceXoshiro(state) {
  const s = state.map(BigInt);
  return () => {
    const result = u32(rotl(u32(s[1] * 5n), 7) * 9n);
    const t = u32(s[1] << 9n);
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return result;
  };
}

/** The documented seeding: splitmix32 over the seed's low half (xor the golden ratio) and its high half. */
function referenceState(seed) {
  const golden = 0x9e3779b9n;
  let x = (BigInt(seed) & kMask) ^ golden;
  let y = BigInt(seed) >> 32n;
  const next = () => {
    x = u32(x + golden);
    let z = x ^ y;
    y = u32(y + 0x632be5abn);
    z = u32((z ^ (z >> 16n)) * 0x85ebca6bn);
    z = u32((z ^ (z >> 13n)) * 0xc2b2ae35n);
    return z ^ (z >> 16n);
  };
  const s = [next(), next(), next(), next()];
  if (s.every((w) => w === 0n)) s[0] = 1n;
  return s;
}

/** The reference's uniform numbers in [0, 1) for `seed`. */
function referenceUniform(seed) {
  const next = referenceXoshiro(referenceState(seed));
  return () => Number(next()) / 2 ** 32;
}

describe('createRng', () => {
  test('the reference is xoshiro128**: the first outputs of the state [1, 2, 3, 4]', () => {
    // The outputs of Blackman and Vigna's xoshiro128starstar.c from s = {1, 2, 3, 4}.
    const next = referenceXoshiro([1, 2, 3, 4]);
    const want = [11520, 0, 5927040, 70819200, 2031721883, 1637235492, 1287239034, 3734860849, 3729100597];
    assert.deepEqual(
      want.map(() => Number(next())),
      want,
    );
  });

  test('draws the reference stream for seeds across both 32-bit halves', () => {
    const seeds = [0, 1, 2, 42, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 7, 123456789012345, Number.MAX_SAFE_INTEGER];
    for (const seed of seeds) {
      const rng = createRng(seed);
      const ref = referenceUniform(seed);
      for (let i = 0; i < 200; ++i) assert.equal(rng(), ref(), `seed ${seed}, draw ${i}`);
    }
    const a = createRng();
    const b = referenceUniform(0);
    assert.equal(a(), b(), 'seed 0 by default');
  });

  test('int and normal draw from the same stream: int(n) = floor(u · n), normal by Box–Muller of two draws', () => {
    const rng = createRng(2024);
    const ref = referenceUniform(2024);
    for (let i = 0; i < 100; ++i) {
      const n = 1 + (i % 17);
      assert.equal(rng.int(n), Math.floor(ref() * n));
      const u = Math.max(ref(), 1e-12);
      assert.equal(rng.normal(), Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * ref()));
      assert.equal(rng(), ref());
    }
    assert.equal(createRng(1).int(2 ** 32), Math.floor(referenceUniform(1)() * 2 ** 32));
  });

  test('moments: uniform mean 1/2 and variance 1/12, int(6) faces even, normal mean 0 and variance 1', () => {
    const N = 120000;
    const rng = createRng(7);
    let sum = 0;
    let sq = 0;
    for (let i = 0; i < N; ++i) {
      const u = rng();
      assert.ok(u >= 0 && u < 1, `uniform draw ${u}`);
      sum += u;
      sq += u * u;
    }
    // Tolerances: 5 standard errors of each estimate.
    assert.ok(Math.abs(sum / N - 0.5) < 5 * Math.sqrt(1 / 12 / N), `uniform mean ${sum / N}`);
    assert.ok(Math.abs(sq / N - sum ** 2 / N ** 2 - 1 / 12) < 5 * Math.sqrt(1 / 180 / N), 'uniform variance');
    const faces = new Array(6).fill(0);
    for (let i = 0; i < N; ++i) faces[rng.int(6)] += 1;
    const chi2 = faces.reduce((c, f) => c + (f - N / 6) ** 2 / (N / 6), 0);
    assert.ok(chi2 < 20.5, `int(6) faces ${faces}: χ² ${chi2} (5 degrees of freedom, p < 0.001)`);
    let zs = 0;
    let zz = 0;
    for (let i = 0; i < N; ++i) {
      const z = rng.normal();
      zs += z;
      zz += z * z;
    }
    assert.ok(Math.abs(zs / N) < 5 / Math.sqrt(N), `normal mean ${zs / N}`);
    assert.ok(Math.abs(zz / N - 1) < 5 * Math.sqrt(2 / N), `normal variance ${zz / N}`);
  });

  test('a seed reproduces its stream; another seed draws others', () => {
    const take = (rng) => Array.from({ length: 16 }, () => rng());
    assert.deepEqual(take(createRng(99)), take(createRng(99)));
    assert.notDeepEqual(take(createRng(99)), take(createRng(100)));
    assert.notDeepEqual(take(createRng(99)), take(createRng(99 + 2 ** 32)), 'the high half counts');
  });

  test('a bad seed or bound is an error naming it', () => {
    assertThrows(() => createRng('1'), TypeError, /createRng/, /seed must be a number, got string "1"/);
    assertThrows(() => createRng(-1), RangeError, /createRng/, /seed must be a non-negative safe integer, got -1/);
    assertThrows(() => createRng(0.5), RangeError, /createRng/, /seed/);
    assertThrows(() => createRng(2 ** 53), RangeError, /createRng/, /seed/);
    const rng = createRng(1);
    assertThrows(() => rng.int(), TypeError, /rng\.int/, /n must be a number, got undefined/);
    for (const n of [0, -3, 2.5, 2 ** 32 + 1, Infinity, NaN]) {
      assertThrows(() => rng.int(n), RangeError, /rng\.int/, /n must be an integer in \[1, 2\^32\]/);
    }
  });
});

describe('generate and train draw from createRng', async () => {
  const attn = await init({ variant: 'simd' });

  test("generate's draw at temperature 1 walks softmax(logits) by id with createRng(seed)'s first number", (t) => {
    const own = scope(t);
    const model = own(attn.createModel({ ...kGpt2, seed: 3 }));
    const prompt = Int32Array.of(1, 2, 3);
    const { logits } = model.forward({ data: prompt, shape: [1, 3] });
    const V = kGpt2.vocabSize;
    const row = Array.from(logits.data.subarray(2 * V, 3 * V));
    const max = Math.max(...row);
    const weights = row.map((l) => Math.exp(l - max));
    const total = weights.reduce((a, b) => a + b, 0);
    const ids = new Set();
    for (let seed = 0; seed < 20; ++seed) {
      let u = createRng(seed)() * total;
      const want = Math.max(
        0,
        weights.findIndex((w) => (u -= w) < 0),
      );
      const [id] = model.generate(prompt, { maxNewTokens: 1, temperature: 1, seed });
      assert.equal(id, want, `seed ${seed}`);
      ids.add(id);
    }
    assert.ok(ids.size > 3, `20 seeds drew ${ids.size} distinct ids`);
  });

  test("train's sampler takes each window's start as floor(u · starts) from createRng(data.seed)", (t) => {
    const own = scope(t);
    const V = kGpt2.vocabSize;
    const ids = Int32Array.from({ length: 60 }, (_, i) => (i * 7 + (i >> 2)) % V);
    const [B, T, seed, steps] = [3, 8, 12, 3];
    const rng = createRng(seed);
    const batches = Array.from({ length: steps }, () => {
      const starts = Array.from({ length: B }, () => Math.floor(rng() * (ids.length - T)));
      const rows = (off) => Int32Array.from(starts.flatMap((s) => Array.from(ids.subarray(s + off, s + off + T))));
      return { tokens: { data: rows(0), shape: [B, T] }, targets: { data: rows(1), shape: [B, T] } };
    });
    const a = own(attn.createModel({ ...kGpt2, seed: 1 }));
    const b = own(attn.createModel({ ...kGpt2, seed: 1 }));
    const options = { lr: 1e-2, steps };
    assert.deepEqual(a.train({ ids, batchSize: B, blockLength: T, seed }, options), b.train(batches, options));
  });
});
