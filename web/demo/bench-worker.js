// Module Web Worker for the demo's speed test. Times SDPA and MHA (E = 512, 8 heads, batch 1) with
// attnlab's threaded build (only where this worker is cross-origin isolated: it needs SharedArrayBuffer), its
// SIMD build, its scalar build and a plain-JS reference, and posts progress and results. Running here, even
// L = 2048 never blocks the page.
//
// in:  { sizes: number[], E, H, jsMaxL }
// out: { type: 'note' | 'progress' | 'result' | 'done' | 'error', ... }

import { init } from '/dist/index.mjs';
// The plain-JS baseline is the one `npm run bench` measures (one source for both).
import * as plain from './shared/plain-attention.js';
import { rng } from './util.js';

const flops = {
  sdpa: (L, E) => 4 * L * L * E,
  mha: (L, E) => 8 * L * E * E + 4 * L * L * E,
};

/**
 * Median ms of fn. Warm-up: calls until ~budget/2 ms or 3 calls have run (wasm tiers up from Liftoff to
 * TurboFan only after some calls), skipped when `warm` is false (a slow size after a warmed-up smaller one).
 * Then timed runs until ~budget ms: at least 1, at most 7.
 */
function time(fn, { budget = 400, warm = true } = {}) {
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

self.onmessage = async (ev) => {
  const { sizes, E = 512, H = 8, jsMaxL = 512 } = ev.data;
  try {
    const builds = [];
    // The threaded build needs shared memory, which only a cross-origin-isolated page (and its workers) has.
    const variants = self.crossOriginIsolated ? ['simd-threaded', 'simd', 'scalar'] : ['simd', 'scalar'];
    for (const variant of variants) {
      try {
        const attn = await init({ variant });
        builds.push({ name: `attnlab ${variant}`, variant, attn, threads: attn.threads });
      } catch (e) {
        postMessage({ type: 'note', variant, message: e.message }); // worded on the page, in its language
      }
    }
    if (!builds.length) throw new Error('no attnlab build could be loaded');
    const d = E / H;
    const impls = [...builds.map((b) => b.name), 'plain JS'];
    const total = sizes.length * 2 * impls.length;
    let done = 0;
    const results = [];
    const lastJs = {};
    const last = {};
    const progress = (label) => postMessage({ type: 'progress', done, total, label });

    // MHA modules, one per build, with the same (PyTorch default) weights; the JS reference uses them too.
    const mhas = builds.map((b) => b.attn.createMultiHeadAttention({ embedDim: E, numHeads: H, batchFirst: true }));
    const sd = mhas[0].stateDict();
    for (const m of mhas.slice(1)) m.loadStateDict(sd);
    const p = Object.fromEntries(Object.entries(sd).map(([k, t]) => [k, t.data]));

    // Warm-up for every build and op at a small size first: wasm code tiers up (Liftoff → TurboFan) only
    // after some calls, and the first timed size should not pay for it.
    progress('warming up');
    {
      const L = 64;
      const r = rng(1);
      const a = Float32Array.from({ length: H * L * d }, r.normal);
      const xw = { data: Float32Array.from({ length: L * E }, r.normal), shape: [1, L, E] };
      for (let n = 0; n < 5; n++) {
        builds.forEach((b, bi) => {
          b.attn.scaledDotProductAttention(
            { data: a, shape: [H, L, d] },
            { data: a, shape: [H, L, d] },
            { data: a, shape: [H, L, d] },
            { needWeights: false },
          );
          mhas[bi].forward(xw, xw, xw, { needWeights: false });
        });
      }
    }

    for (const L of sizes) {
      const r = rng(L);
      const q = Float32Array.from({ length: H * L * d }, r.normal);
      const k = Float32Array.from({ length: H * L * d }, r.normal);
      const v = Float32Array.from({ length: H * L * d }, r.normal);
      const x = Float32Array.from({ length: L * E }, r.normal);
      const T = (a) => ({ data: a, shape: [H, L, d] });
      const X = { data: x, shape: [1, L, E] };
      for (const op of ['sdpa', 'mha']) {
        const f = flops[op](L, E);
        let check = null;
        for (const impl of impls) {
          progress(`${op.toUpperCase()} L=${L}: ${impl}`);
          await new Promise((res) => setTimeout(res, 0));
          let t;
          let extrapolated = false;
          let out = null;
          if (impl === 'plain JS') {
            if (L > jsMaxL && lastJs[op]) {
              const prev = lastJs[op];
              t = { ms: prev.ms * (f / prev.flops), runs: 0, min: NaN, max: NaN };
              extrapolated = true;
            } else {
              const fn =
                op === 'sdpa'
                  ? () => {
                      out = plain.sdpa(q, k, v, H, L, L, d, d, 1 / Math.sqrt(d));
                    }
                  : () => {
                      out = plain.mha(x, L, E, H, p);
                    };
              t = time(fn, { budget: 300, warm: L <= 128 });
              lastJs[op] = { ms: t.ms, flops: f };
            }
          } else {
            const bi = builds.findIndex((b) => b.name === impl);
            const b = builds[bi];
            const fn =
              op === 'sdpa'
                ? () => {
                    out = b.attn.scaledDotProductAttention(T(q), T(k), T(v), { needWeights: false }).output.data;
                  }
                : () => {
                    out = mhas[bi].forward(X, X, X, { needWeights: false }).output.data;
                  };
            const prev = last[`${impl}/${op}`];
            t = time(fn, { budget: 400, warm: !prev || prev.ms * (f / prev.flops) < 1000 });
            last[`${impl}/${op}`] = { ms: t.ms, flops: f };
          }
          // Cross-check every implementation against the first one (same inputs, same weights).
          let maxDiff = null;
          if (out) {
            if (!check) check = out;
            else {
              maxDiff = 0;
              for (let i = 0; i < out.length; i++) maxDiff = Math.max(maxDiff, Math.abs(out[i] - check[i]));
            }
          }
          const row = {
            op,
            L,
            E,
            H,
            impl,
            threads: builds.find((b) => b.name === impl)?.threads ?? 1,
            ms: t.ms,
            min: t.min,
            max: t.max,
            runs: t.runs,
            flops: f,
            gflops: f / (t.ms * 1e6),
            extrapolated,
            maxDiff,
          };
          results.push(row);
          done += 1;
          postMessage({ type: 'result', row });
        }
      }
    }
    for (const m of mhas) m.dispose();
    progress('done');
    postMessage({
      type: 'done',
      results,
      builds: builds.map((b) => ({ variant: b.attn.variant, threads: b.attn.threads })),
      cores: navigator.hardwareConcurrency,
    });
  } catch (e) {
    postMessage({ type: 'error', message: `${e.name || 'Error'}: ${e.message}` });
  }
};
