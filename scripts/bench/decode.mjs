// The decode benchmark (issue 19): one token per step over a K/V cache at context C = 128 / 512 / 2048, E = 512,
// 8 query heads, 8 and 2 key/value heads, batch 1. A step = the new token's Q/K/V projections + attention of its
// query over the C + i + 1 cached keys + the out-projection, for every implementation that offers
// `prepareDecode(case, inputs)` → { prefill(), step(i) → (Promise of) Float32Array (1, 1, E), dispose?() }
// (implementations.mjs).
//
// Per case, rounds of DECODE_STEPS steps: an untimed prefill brings each implementation's cache to C tokens (attnlab:
// reset + one forward over the C context tokens through the cache; onnxruntime-web: its functional past_key /
// past_value set back to the context's K/V), then steps 0 … n−1, each timed; the implementations take turns per
// round (the first one rotates), like the other cases. The first round checks every step's output against the
// plain-JS decoder's (float64 sums; without it, the first peer's; max |Δ| ≤ TOL). Per implementation: median step
// time, steps/s, the wasm memory growth over the steps (prefill excluded: a step must allocate nothing once the
// cache exists), and the step's share of the memory-bandwidth limit: bytes of cache read per step (K and V of every
// cached token: 2 · keys · Hkv · d · 4 B) ÷ step time, against the copy bandwidth measured in this process
// (TypedArray.set, bytes read + written per second, best of several trials) at the cache's size and at 256 MiB.
import { D, E, H, MIN_REPS, TOL } from './config.mjs';
import { decodeInputs, decodeWeights } from './inputs.mjs';
import { MiB, log, maxAbsDiff, median } from './stats.mjs';

export const DECODE_STEPS = 8; // steps per round: context C … C + 7 before the new token

// K and V of the context tokens, (1, Hkv, C, d) each (BNSH, onnxruntime's cache layout): x · Wᵀ + b per token.
// Computed once per case in JS (float64 sums), for the peers whose cache is an input.
export function projectContext(prefix, context, kvHeads) {
  const w = decodeWeights(kvHeads);
  const kv = kvHeads * D;
  const k = new Float32Array(kv * context);
  const v = new Float32Array(kv * context);
  for (let t = 0; t < context; ++t) {
    const x = prefix.subarray(t * E, (t + 1) * E);
    for (let r = 0; r < kv; ++r) {
      let sk = w.bk[r];
      let sv = w.bv[r];
      const wk = w.wk.subarray(r * E, (r + 1) * E);
      const wv = w.wv.subarray(r * E, (r + 1) * E);
      for (let c = 0; c < E; ++c) {
        sk += x[c] * wk[c];
        sv += x[c] * wv[c];
      }
      const h = Math.floor(r / D);
      const at = (h * context + t) * D + (r % D);
      k[at] = sk;
      v[at] = sv;
    }
  }
  return { k, v };
}

// Copy bandwidth (bytes read + written per second) for a buffer of `bytes`, best of `trials` timed passes.
export function copyBandwidth(bytes, { seconds = 0.15, trials = 5 } = {}) {
  const n = Math.max(1024, Math.floor(bytes / 4));
  const src = new Float32Array(n).fill(1);
  const dst = new Float32Array(n);
  let best = 0;
  for (let t = 0; t < trials; ++t) {
    let reps = 0;
    const t0 = performance.now();
    let dt = 0;
    do {
      dst.set(src);
      ++reps;
      dt = (performance.now() - t0) / 1e3;
    } while (dt < seconds / trials);
    best = Math.max(best, (2 * 4 * n * reps) / dt);
  }
  return best;
}

export const cacheBytes = (keys, kvHeads) => 2 * keys * kvHeads * D * 4;

export async function runDecode(impls, cases) {
  // plain JS first when present: its float64 sums are the reference every other step is checked against.
  const decoders = impls
    .filter((i) => i.prepareDecode)
    .sort((a, b) => (b.name === 'plain JS') - (a.name === 'plain JS'));
  const results = [];
  const dram = copyBandwidth(256 * MiB, { seconds: 1, trials: 4 });
  log(`\n== decode: copy bandwidth (256 MiB) ${(dram / 1e9).toFixed(1)} GB/s`);
  const bandwidth = { dramBytesPerS: dram, atCacheSize: {} };
  for (const c of cases) {
    const inputs = decodeInputs({ ...c, steps: DECODE_STEPS });
    inputs.contextKv = projectContext(inputs.prefix, c.context, c.kvHeads); // for the peers that take K/V as input
    const keysMean = c.context + (DECODE_STEPS + 1) / 2; // keys attended per step, averaged over a round
    const bytes = cacheBytes(keysMean, c.kvHeads);
    const bw = copyBandwidth(bytes);
    bandwidth.atCacheSize[`${c.context}:${c.kvHeads}`] = { bytes, bytesPerS: bw };
    log(
      `\n== decode C=${c.context} Hkv=${c.kvHeads} (cache ${(bytes / MiB).toFixed(2)} MiB read per step; ` +
        `copy at that size ${(bw / 1e9).toFixed(1)} GB/s)`,
    );
    const entries = [];
    let reference = null;
    for (const impl of decoders) {
      const entry = { impl: impl.name, memKind: impl.memKind, ...c, steps: DECODE_STEPS, times: [], status: 'ok' };
      entries.push(entry);
      try {
        entry.dec = await impl.prepareDecode(c, inputs);
        await entry.dec.prefill();
        const outs = [];
        const t0 = performance.now();
        for (let i = 0; i < DECODE_STEPS; ++i) outs.push(Float32Array.from(await entry.dec.step(i)));
        entry.checkRoundS = (performance.now() - t0) / 1e3;
        if (!reference) {
          reference = outs;
          entry.reference = true;
          entry.maxAbsDiff = 0;
        } else {
          entry.maxAbsDiff = Math.max(...outs.map((o, i) => maxAbsDiff(o, reference[i])));
          if (!(entry.maxAbsDiff <= TOL)) {
            // Not timed (timing a wrong result means nothing), but kept in the table, and the run goes on.
            throw new Error(
              `MISMATCH with ${entries[0].impl}: max |Δ| = ${entry.maxAbsDiff.toExponential(2)} over ` +
                `${DECODE_STEPS} steps (tolerance ${TOL}); not timed`,
            );
          }
        }
        log(`  ${impl.name}: check ok (max |Δ| ${entry.maxAbsDiff.toExponential(1)} over ${DECODE_STEPS} steps)`);
      } catch (err) {
        entry.status = `failed: ${String(err?.message ?? err)
          .split('\n')[0]
          .slice(0, 160)}`;
        log(`  ${impl.name}: ${entry.status}`);
        entry.dec?.dispose?.();
        entry.dec = null;
      }
    }
    const live = entries.filter((e) => e.dec);
    const roundS = live.reduce((s, e) => s + e.checkRoundS, 0);
    const rounds = Math.max(MIN_REPS, Math.min(40, Math.floor(4 / Math.max(roundS, 1e-3))));
    log(`  ${rounds} timed rounds of ${DECODE_STEPS} steps (one round's steps ≈ ${roundS.toFixed(3)} s)`);
    for (const e of live) e.stepGrowth = 0;
    for (let rep = -1; rep < rounds; ++rep) {
      const start = ((rep % live.length) + live.length) % live.length;
      for (let j = 0; j < live.length; ++j) {
        const e = live[(start + j) % live.length];
        const impl = decoders.find((i) => i.name === e.impl);
        await e.dec.prefill();
        const memBefore = impl.memBytes();
        for (let i = 0; i < DECODE_STEPS; ++i) {
          const ts = performance.now();
          await e.dec.step(i);
          const dt = performance.now() - ts;
          if (rep >= 0) e.times.push(dt);
        }
        e.stepGrowth = Math.max(e.stepGrowth, impl.memBytes() - memBefore);
      }
    }
    for (const e of live) {
      e.medianMs = median(e.times);
      e.minMs = Math.min(...e.times);
      e.maxMs = Math.max(...e.times);
      e.stepsPerS = 1e3 / e.medianMs;
      e.cacheBytesPerStep = bytes;
      e.cacheBytesPerS = bytes / (e.medianMs / 1e3);
      e.pctCopyBw = (100 * e.cacheBytesPerS) / bw;
      e.pctDramBw = (100 * e.cacheBytesPerS) / dram;
      e.runs = e.times.length;
      log(
        `  ${e.impl.padEnd(26)} median ${e.medianMs.toFixed(3)} ms/step (${e.stepsPerS.toFixed(0)} steps/s) ` +
          `[${e.minMs.toFixed(3)}–${e.maxMs.toFixed(3)}], cache ${(e.cacheBytesPerS / 1e9).toFixed(1)} GB/s ` +
          `(${e.pctCopyBw.toFixed(0)}% of copy bandwidth), wasm growth over steps ${e.stepGrowth} B`,
      );
    }
    // The baseline: the faster of onnxruntime-web's graphs at one thread (Attention-23, GQA).
    const orts = entries.filter((e) => /^onnxruntime-web( GQA)?$/.test(e.impl) && e.medianMs);
    const ortMedian = Math.min(...orts.map((e) => e.medianMs));
    const ortMin = Math.min(...orts.map((e) => e.minMs));
    for (const e of entries) {
      if (e.medianMs && orts.length) {
        e.vsOrtWeb = ortMedian / e.medianMs;
        e.vsOrtWebMin = ortMin / e.minMs;
      }
      e.dec?.dispose?.();
      delete e.dec;
    }
    results.push(...entries);
  }
  return { results, bandwidth, context: { E, H, D, steps: DECODE_STEPS } };
}
