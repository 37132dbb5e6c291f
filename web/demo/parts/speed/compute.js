// @ts-check
// Part "speed" (§3's O(L²) cost), the numbers: SDPA and MHA (E = 512, 8 heads, batch 1) timed with attnlab's
// threaded build (only where cross-origin isolated: it needs SharedArrayBuffer), its SIMD build, its scalar build and
// the plain-JS baseline that `npm run bench` also measures (shared/plain-attention.js); every implementation's output
// is checked against the first one's. Runs in the part's Web Worker (worker.js); the table's rows for the page. No DOM.

import * as plain from '../../shared/plain-attention.js';
import { rng } from '../../shared/random.js';

/** @typedef {import('../../attnlab.js').Attnlab} Attnlab */
/** @typedef {import('../../attnlab.js').MultiHeadAttention} MultiHeadAttention */
/** @typedef {'sdpa' | 'mha'} Op */
/**
 * One timing.
 * @typedef {{ op: Op, L: number, E: number, H: number, impl: string, threads: number, ms: number, min: number,
 *   max: number, runs: number, flops: number, gflops: number, extrapolated: boolean, maxDiff: number | null }} Row
 */
/** @typedef {{ name: string, variant: string, attn: Attnlab, threads: number }} Build */
/** @typedef {{ type: string } & Record<string, any>} Message */

export const PLAIN_JS = 'plain JS';
export const THREADED = 'attnlab simd-threaded';

/** Floating-point operations of one call. */
export const FLOPS = {
  /** @param {number} L @param {number} E */
  sdpa: (L, E) => 4 * L * L * E,
  /** @param {number} L @param {number} E */
  mha: (L, E) => 8 * L * E * E + 4 * L * L * E,
};

/**
 * Where the time of an MHA forward goes, by FLOPS: for each L the projections (8·L·E²), the attention (4·L²·E) and
 * how much the whole grows from the previous L. The two halves are equal at L = 2E: below it, 4 × the length is
 * far less than 16 × the work (at E = 512, 128 → 512 is ≈ 5.3 ×); only the attention term grows as L².
 * @param {number} E
 * @param {number[]} Ls
 */
export function costSplit(E, Ls) {
  return Ls.map((L, i) => {
    const proj = 8 * L * E * E;
    const attn = 4 * L * L * E;
    const total = FLOPS.mha(L, E);
    return { L, proj, attn, total, growth: i ? total / FLOPS.mha(Ls[i - 1], E) : null, attnShare: attn / total };
  });
}

/** The length at which the attention term 4·L²·E equals the projections' 8·L·E². @param {number} E */
export const crossover = (E) => 2 * E;

/**
 * Median ms of fn. Warm-up: calls until ~budget/2 ms or 3 calls have run (wasm tiers up from Liftoff to TurboFan
 * only after some calls), skipped when `warm` is false (a slow size after a warmed-up smaller one). Then timed runs
 * until ~budget ms: at least 1, at most 7.
 * @param {() => void} fn
 */
export function time(fn, { budget = 400, warm = true } = {}) {
  let first = 0;
  if (warm) {
    let spent = 0;
    for (let n = 0; n < 3 && spent < budget / 2; n++) {
      const t0 = performance.now();
      fn();
      first = performance.now() - t0;
      spent += first;
    }
  }
  const ts = [];
  let total = 0;
  const maxRuns = first > budget / 2 ? 1 : 7;
  while (ts.length < maxRuns) {
    const t0 = performance.now();
    fn();
    const dt = performance.now() - t0;
    ts.push(dt);
    total += dt;
    if (total >= budget) break;
  }
  ts.sort((a, b) => a - b);
  return { ms: ts[Math.floor(ts.length / 2)], runs: ts.length, min: ts[0], max: ts[ts.length - 1] };
}

/**
 * The attnlab builds this runtime can load, threaded first; the ones that fail are reported as notes.
 * @param {(options: { variant: import('../../attnlab.js').Variant }) => Promise<Attnlab>} init
 * @param {boolean} isolated whether shared memory is available (cross-origin isolated)
 * @param {(m: Message) => void} post
 */
export async function loadBuilds(init, isolated, post) {
  /** @type {Build[]} */
  const builds = [];
  /** @type {import('../../attnlab.js').Variant[]} */
  const variants = isolated ? ['simd-threaded', 'simd', 'scalar'] : ['simd', 'scalar'];
  for (const variant of variants) {
    try {
      const attn = await init({ variant });
      builds.push({ name: `attnlab ${variant}`, variant, attn, threads: attn.threads });
    } catch (e) {
      post({ type: 'note', variant, message: e.message }); // worded on the page, in its language
    }
  }
  if (!builds.length) throw new Error('no attnlab build could be loaded');
  return builds;
}

/**
 * Every build and op at a small size first: wasm code tiers up (Liftoff → TurboFan) only after some calls, and the
 * first timed size should not pay for it.
 * @param {Build[]} builds
 * @param {MultiHeadAttention[]} mhas
 * @param {number} E
 * @param {number} H
 */
function warmUp(builds, mhas, E, H) {
  const L = 64;
  const d = E / H;
  const r = rng(1);
  const a = { data: Float32Array.from({ length: H * L * d }, r.normal), shape: [H, L, d] };
  const xw = { data: Float32Array.from({ length: L * E }, r.normal), shape: [1, L, E] };
  for (let n = 0; n < 5; n++) {
    builds.forEach((b, bi) => {
      b.attn.scaledDotProductAttention(a, a, a, { needWeights: false });
      mhas[bi].forward(xw, xw, xw, { needWeights: false });
    });
  }
}

/**
 * The inputs of size L: q, k, v (H, L, d) and x (1, L, E), seeded by L.
 * @param {number} L
 * @param {number} E
 * @param {number} H
 */
function inputsFor(L, E, H) {
  const d = E / H;
  const r = rng(L);
  const q = Float32Array.from({ length: H * L * d }, r.normal);
  const k = Float32Array.from({ length: H * L * d }, r.normal);
  const v = Float32Array.from({ length: H * L * d }, r.normal);
  const x = Float32Array.from({ length: L * E }, r.normal);
  return { q, k, v, x, d };
}

/**
 * The benchmark: for each size and op, each implementation timed (plain JS past jsMaxL extrapolated from its last
 * size), posting progress and each row; returns every row.
 * @param {Build[]} builds
 * @param {{ sizes: number[], E: number, H: number, jsMaxL: number }} cfg
 * @param {(m: Message) => void} post
 */
export async function runBenchmark(builds, { sizes, E, H, jsMaxL }, post) {
  const impls = [...builds.map((b) => b.name), PLAIN_JS];
  const total = sizes.length * 2 * impls.length;
  const progress = { done: 0 };
  /** @param {string} label */
  const report = (label) => post({ type: 'progress', done: progress.done, total, label });
  // MHA modules, one per build, with the same (PyTorch default) weights; the JS reference uses them too.
  const mhas = builds.map((b) => b.attn.createMultiHeadAttention({ embedDim: E, numHeads: H, batchFirst: true }));
  const sd = mhas[0].stateDict();
  for (const m of mhas.slice(1)) m.loadStateDict(sd);
  const weights = Object.fromEntries(Object.entries(sd).map(([k, tensor]) => [k, tensor.data]));
  report('warming up');
  warmUp(builds, mhas, E, H);
  /** @type {Row[]} */
  const results = [];
  /** @type {Record<string, { ms: number, flops: number }>} the last timing of each implementation and op */
  const last = {};
  for (const L of sizes) {
    const inp = inputsFor(L, E, H);
    for (const op of /** @type {Op[]} */ (['sdpa', 'mha'])) {
      const f = FLOPS[op](L, E);
      /** @type {Float32Array | null} */
      let check = null;
      for (const impl of impls) {
        report(`${op.toUpperCase()} L=${L}: ${impl}`);
        await new Promise((res) => setTimeout(res, 0));
        const bi = builds.findIndex((b) => b.name === impl);
        const ctx = { op, L, E, H, f, inp, weights, jsMaxL, last };
        const { t, extrapolated, out } = bi < 0 ? timePlain(ctx) : timeBuild(builds[bi], mhas[bi], impl, ctx);
        // Cross-check every implementation against the first one (same inputs, same weights).
        let maxDiff = null;
        if (out) {
          if (!check) check = out;
          else {
            maxDiff = 0;
            for (let i = 0; i < out.length; i++) maxDiff = Math.max(maxDiff, Math.abs(out[i] - check[i]));
          }
        }
        const threads = bi < 0 ? 1 : builds[bi].threads;
        const row = { op, L, E, H, impl, threads, ...t, flops: f, gflops: f / (t.ms * 1e6), extrapolated, maxDiff };
        results.push(row);
        progress.done += 1;
        post({ type: 'result', row });
      }
    }
  }
  for (const m of mhas) m.dispose();
  report('done');
  return results;
}

/**
 * @typedef {{ op: Op, L: number, E: number, H: number, f: number, inp: ReturnType<typeof inputsFor>,
 *   weights: Record<string, Float32Array>, jsMaxL: number, last: Record<string, { ms: number, flops: number }> }} TimingContext
 */

/**
 * The plain-JS baseline, or its extrapolation from its last size when L is past jsMaxL.
 * @param {TimingContext} c
 */
function timePlain({ op, L, E, H, f, inp, weights, jsMaxL, last }) {
  const prev = last[`${PLAIN_JS}/${op}`];
  if (L > jsMaxL && prev) {
    return { t: { ms: prev.ms * (f / prev.flops), runs: 0, min: NaN, max: NaN }, extrapolated: true, out: null };
  }
  /** @type {Float32Array} */
  let out = null;
  const fn =
    op === 'sdpa'
      ? () => {
          out = plain.sdpa(inp.q, inp.k, inp.v, H, L, L, inp.d, inp.d, 1 / Math.sqrt(inp.d));
        }
      : () => {
          out = plain.mha(inp.x, L, E, H, weights);
        };
  const t = time(fn, { budget: 300, warm: L <= 128 });
  last[`${PLAIN_JS}/${op}`] = { ms: t.ms, flops: f };
  return { t, extrapolated: false, out };
}

/**
 * One attnlab build; its warm-up is skipped when the previous size's time says this one takes a second or more.
 * @param {Build} b
 * @param {MultiHeadAttention} mha
 * @param {string} impl
 * @param {TimingContext} c
 */
function timeBuild(b, mha, impl, { op, L, E, H, f, inp, last }) {
  const shape = [H, L, inp.d];
  const X = { data: inp.x, shape: [1, L, E] };
  /** @type {Float32Array} */
  let out = null;
  const fn =
    op === 'sdpa'
      ? () => {
          out = b.attn.scaledDotProductAttention(
            { data: inp.q, shape },
            { data: inp.k, shape },
            { data: inp.v, shape },
            { needWeights: false },
          ).output.data;
        }
      : () => {
          out = mha.forward(X, X, X, { needWeights: false }).output.data;
        };
  const prev = last[`${impl}/${op}`];
  const t = time(fn, { budget: 400, warm: !prev || prev.ms * (f / prev.flops) < 1000 });
  last[`${impl}/${op}`] = { ms: t.ms, flops: f };
  return { t, extrapolated: false, out };
}

/**
 * The table's groups (op × L, in that order) of the rows so far, and each implementation once, in first-seen order.
 * @param {Row[]} rows
 */
export function groupRows(rows) {
  const impls = [...new Set(rows.map((r) => r.impl))];
  /** @type {{ op: Op, L: number, label: string }[]} */
  const groups = [];
  for (const op of /** @type {Op[]} */ (['sdpa', 'mha']))
    for (const L of [...new Set(rows.map((r) => r.L))])
      if (rows.some((r) => r.op === op && r.L === L)) groups.push({ op, L, label: `${op.toUpperCase()}\nL=${L}` });
  /** @param {number} g @param {number} si */
  const get = (g, si) => rows.find((r) => r.op === groups[g].op && r.L === groups[g].L && r.impl === impls[si]);
  const threads = rows.find((r) => r.impl === THREADED)?.threads;
  return { impls, groups, get, threads };
}
