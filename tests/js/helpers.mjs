// Shared helpers of the JS tests: fixtures, comparison, seeded random tensors, and checks that an instance still
// works. The float64 references are in reference.mjs, the seeded generator in rng.mjs.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { mhaRef, sdpaRef, size } from './reference.mjs';
import { makeRng } from './rng.mjs';

export const here = dirname(fileURLToPath(import.meta.url));
export const root = join(here, '..', '..');
export const distDir = join(root, 'dist');
export const fixtureDir = join(root, 'tests', 'fixtures', 'torch');
export const gradFixtureDir = join(root, 'tests', 'fixtures', 'torch-grad');
/** Every variant of wasm-variants.json (the one table), most capable first. */
export const VARIANTS = JSON.parse(readFileSync(join(root, 'wasm-variants.json'), 'utf8')).variants.map((v) => v.name);

/** Fixture JSON numbers, with "NaN" / "Infinity" / "-Infinity" strings, as a Float32Array. */
export function f32(values) {
  return Float32Array.from(values, (x) => (typeof x === 'string' ? Number(x) : x));
}

export function loadFixtures(dir = fixtureDir) {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')));
}

/** A fixture TENSOR as attnlab's Tensor (float32) or Tokens (int32). */
export function fixtureTensor(t) {
  if (t.dtype === 'int32') return { data: Int32Array.from(t.data), shape: t.shape };
  return { data: f32(t.data), shape: t.shape };
}

/**
 * A fixture mask as attnlab's Mask (undefined when absent). Fixture bool masks mean true = masked out; `invert`
 * turns them into 1 = may attend (attnlab's SDPA convention). Float masks pass as they are.
 */
export function fixtureMask(t, invert) {
  if (!t) return undefined;
  if (t.dtype === 'bool') return { data: Uint8Array.from(t.data, (b) => (b !== invert ? 1 : 0)), shape: t.shape };
  return { data: f32(t.data), shape: t.shape };
}

/**
 * numpy.allclose, element by element: |a - e| <= atol + rtol |e|; NaN only where NaN is expected; finite where
 * finite is expected. Throws an AssertionError naming the first bad index and the worst error.
 */
export function assertClose(actual, expected, { atol = 1e-5, rtol = 1e-4 } = {}, what = 'tensor') {
  assert.deepEqual(actual.shape, expected.shape, `${what}: shape`);
  assert.equal(actual.data.length, expected.data.length, `${what}: length`);
  let worst = 0;
  let firstBad = -1;
  for (let i = 0; i < expected.data.length; ++i) {
    const a = actual.data[i];
    const e = expected.data[i];
    let ok;
    if (Number.isNaN(e)) ok = Number.isNaN(a);
    else if (!Number.isFinite(e)) ok = a === e;
    else {
      const err = Math.abs(a - e);
      ok = Number.isFinite(a) && err <= atol + rtol * Math.abs(e);
      if (Number.isFinite(err)) worst = Math.max(worst, err);
    }
    if (!ok && firstBad < 0) firstBad = i;
  }
  if (firstBad >= 0) {
    assert.fail(
      `${what}: element ${firstBad} is ${actual.data[firstBad]}, expected ${expected.data[firstBad]} ` +
        `(atol ${atol}, rtol ${rtol}; max abs error ${worst})`,
    );
  }
  return worst;
}

/** Seeded pseudo-random floats in [-1, 1) (rng.mjs's generator). */
export function random(n, seed = 1) {
  return makeRng(seed).floats(n);
}

export function tensor(shape, seed = 1) {
  return { data: random(size(shape), seed), shape };
}

/** The SDPA case on which the SIMD and scalar builds are compared: odd sizes, a bool mask and causal. */
export function simdScalarCase() {
  return {
    q: tensor([2, 3, 17, 24], 1),
    k: tensor([2, 3, 29, 24], 2),
    v: tensor([2, 3, 29, 19], 3),
    g: tensor([2, 3, 17, 19], 4),
    mask: { data: Uint8Array.from({ length: 17 * 29 }, (_, i) => (i % 7 === 3 ? 0 : 1)), shape: [17, 29] },
  };
}

/** A random state dict for (E, bias) with in_proj_weight. */
export function randomStateDict(E, seed = 7) {
  const scale = (t, s) => ({ data: t.data.map((x) => Math.fround(x * s)), shape: t.shape });
  return {
    in_proj_weight: scale(tensor([3 * E, E], seed), 0.5),
    in_proj_bias: scale(tensor([3 * E], seed + 1), 0.1),
    'out_proj.weight': scale(tensor([E, E], seed + 2), 0.5),
    'out_proj.bias': scale(tensor([E], seed + 3), 0.1),
  };
}

// Q = K = V of sdpa_tiny_exact, and its known weights row 0.
export const kTiny = {
  q: { data: new Float32Array([1, 0, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0]), shape: [3, 4] },
  weightsRow0: [0.50648, 0.18632, 0.3072],
};

/**
 * Checks that `attn` still computes correctly: the tiny SDPA, a causal SDPA against the reference, and an MHA
 * forward (created, loaded, disposed here) against the reference.
 */
export function assertStillWorks(attn) {
  const { q } = kTiny;
  const r = attn.scaledDotProductAttention(q, q, q);
  for (let j = 0; j < 3; ++j) assert.ok(Math.abs(r.weights.data[j] - kTiny.weightsRow0[j]) < 1e-4, 'tiny SDPA weights');
  const qq = tensor([2, 5, 8], 11);
  const kk = tensor([2, 5, 8], 12);
  const vv = tensor([2, 5, 8], 13);
  const got = attn.scaledDotProductAttention(qq, kk, vv, { isCausal: true });
  const want = sdpaRef(qq, kk, vv, { isCausal: true });
  assertClose(got.output, want.output, {}, 'causal SDPA output');
  assertClose(got.weights, want.weights, {}, 'causal SDPA weights');
  const E = 8;
  const H = 2;
  const mha = attn.createMultiHeadAttention({ embedDim: E, numHeads: H, batchFirst: true });
  try {
    const params = randomStateDict(E);
    mha.loadStateDict(params);
    const x = tensor([2, 3, E], 21);
    const y = tensor([2, 4, E], 22);
    const out = mha.forward(x, y, y);
    const ref = mhaRef({ embedDim: E, numHeads: H, batchFirst: true }, params, x, y, y);
    assertClose(out.output, ref.output, {}, 'MHA output');
    assertClose(out.weights, ref.weights, {}, 'MHA weights');
  } finally {
    mha.dispose();
  }
}

const kSnakeCase =
  /\b(attn_mask|key_padding_mask|embed_dim|num_heads|add_bias_kv|add_zero_attn|is_causal|need_weights|batch_first|average_attn_weights|grad_output|requires_grad|enable_gqa|causal_align|kv_lengths|num_kv_lengths|window_left|window_right|return_scores|past_key|past_value|present_key|present_value)\b/;

/** Runs fn; asserts it throws exactly `Class` with a message matching every pattern and no C++ spelling. */
export function assertThrows(fn, Class, ...patterns) {
  let error;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  assert.ok(error !== undefined, 'expected a throw, but the call returned');
  assert.ok(error instanceof Error, `expected an Error object, got ${typeof error}: ${String(error)}`);
  assert.equal(error.constructor, Class, `expected ${Class.name}, got ${error.constructor.name}: ${error.message}`);
  for (const p of patterns) assert.match(error.message, p);
  assert.doesNotMatch(error.message, kSnakeCase, 'message uses the JS spelling of argument names');
  assert.doesNotMatch(error.message, /internal failure/, 'no wasm trap or abort');
  return error;
}

/** The data scripts' split bucket of a poem id, written again from docs/poem-model.md: SHA-256, first 4 bytes, mod 100. */
export const splitBucket = (id) => createHash('sha256').update(id).digest().readUInt32BE(0) % 100;

/** A JSON-lines file as an array of objects. */
export const readJsonl = (file) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
