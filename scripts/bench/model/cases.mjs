// The model bench's two timed cases, shared by the wasm and native phases: a prefill with every layer's attention
// returned, and one-token decode steps through a cache. A peer is { name, kind: 'attnlab' | 'ort', threads,
// memBytes?(), prefill(T) → async run() → { logits?, attentions?, ms? }, decoder() → { fill(n), step() → logits
// | steps(n) → { ms: [...], logits: [...] }, dispose?() } }: a run that reports its own ms (the native program,
// timed inside its process) is timed by that, else by the wall clock around the call; an output without logits
// is not checked here (native.mjs checks it through files).
import { MiB, fmtMs, log, maxAbsDiff } from '../stats.mjs';
import {
  DECODE_ROUNDS,
  PREFILL_ROUNDS,
  PREFILL_ROUNDS_MAX,
  STEPS,
  TOL_ATTN,
  TOL_LOGITS,
  clocks,
  decodeBytes,
  pairedRatio,
  prefillFlops,
  roundRobin,
  since,
  summarize,
} from './common.mjs';

// The CPU time of a call (see clocks in common.mjs): the native program's own, the main thread's for peers that
// compute on it (cpu: 'main'), else the process's.
const cpuOf = (peer, out, d) => out?.cpuMs ?? (peer.cpu === 'main' ? d.mainCpuMs : d.procCpuMs);
const cpuSummary = (e) => {
  const c = summarize(e.cpuTimes ?? []);
  return {
    cpuMedianMs: c.medianMs,
    cpuMinMs: c.minMs,
    waitMedianMs: e.waits?.length ? summarize(e.waits).medianMs : undefined,
  };
};

/** A result entry per peer, `at` (the case's size: { T } or { C }) after the peer's fields. */
const newEntries = (peers, at) =>
  peers.map((p) => ({
    impl: p.name,
    kind: p.kind,
    threads: p.threads,
    ...at,
    times: [],
    cpuTimes: [],
    waits: [],
    status: 'ok',
  }));

export async function runPrefill(peers, hf, T, { roundsMin = PREFILL_ROUNDS, budgetS = 90 } = {}) {
  const flops = prefillFlops(hf, T);
  log(`\n== prefill T=${T} with every layer's attention (${(flops.total / 1e9).toFixed(1)} GFLOP)`);
  const entries = newEntries(peers, { T });
  let ref = null;
  for (const [i, p] of peers.entries()) {
    const e = entries[i];
    e.run = p.prefill(T);
    try {
      const t0 = performance.now();
      const out = await e.run();
      e.checkS = out.ms !== undefined ? out.ms / 1e3 : (performance.now() - t0) / 1e3;
      e.memAfter = p.memBytes?.();
      if (out.logits) {
        if (!ref) {
          ref = out;
          e.reference = true;
          e.maxAbsDiffLogits = 0;
          e.maxAbsDiffAttn = 0;
        } else {
          e.maxAbsDiffLogits = maxAbsDiff(out.logits, ref.logits);
          e.maxAbsDiffAttn = Math.max(...out.attentions.map((a, l) => maxAbsDiff(a, ref.attentions[l])));
          if (!(e.maxAbsDiffLogits <= TOL_LOGITS && e.maxAbsDiffAttn <= TOL_ATTN)) {
            throw new Error(
              `MISMATCH with ${entries.find((x) => x.reference).impl}: max |Δ logits| ${e.maxAbsDiffLogits}, ` +
                `attentions ${e.maxAbsDiffAttn}; not timed`,
            );
          }
        }
        log(
          `  ${p.name}: check ok (max |Δ| logits ${e.maxAbsDiffLogits.toExponential(1)}, attentions ` +
            `${e.maxAbsDiffAttn.toExponential(1)}), first run ${e.checkS.toFixed(2)} s`,
        );
      } else {
        log(`  ${p.name}: first run ${e.checkS.toFixed(2)} s`);
      }
    } catch (err) {
      e.status = `failed: ${String(err?.message ?? err)
        .split('\n')[0]
        .slice(0, 200)}`;
      e.run = null;
      log(`  ${p.name}: ${e.status}`);
    }
  }
  ref = null;
  const live = entries.filter((e) => e.run);
  const roundS = live.reduce((s, e) => s + e.checkS, 0);
  const rounds = Math.max(roundsMin, Math.min(PREFILL_ROUNDS_MAX, Math.floor(budgetS / roundS)));
  const warmups = roundS < 10 ? 1 : 0; // the check run warmed the big ones
  log(`  ${warmups} warm-up + ${rounds} interleaved rounds (one round ≈ ${roundS.toFixed(1)} s)`);
  await roundRobin(
    live,
    rounds,
    async (e, rep) => {
      const p = peers.find((x) => x.name === e.impl);
      const c0 = clocks();
      const out = await e.run();
      const d = since(c0);
      if (rep < 0) return;
      e.times.push(out.ms ?? d.ms);
      e.cpuTimes.push(cpuOf(p, out, d));
      if (out.ms === undefined) e.waits.push(d.waitMs);
    },
    { warmups },
  );
  for (const e of live) {
    Object.assign(e, summarize(e.times), cpuSummary(e));
    e.gflops = flops.total / (e.medianMs / 1e3) / 1e9;
    log(
      `  ${e.impl.padEnd(26)} median ${fmtMs(e.medianMs)} ms [${fmtMs(e.minMs)}–${fmtMs(e.maxMs)}] ` +
        `${e.gflops.toFixed(1)} GFLOP/s; CPU ${fmtMs(e.cpuMedianMs)} ms`,
    );
  }
  for (const e of entries) delete e.run;
  vsOrt(entries);
  return { T, flops, entries };
}

/** Each attnlab entry's ratio to the onnxruntime entry at the same thread count: medians, minima, paired rounds
 *  (median over rounds of onnxruntime's time ÷ attnlab's in the same round). */
export function vsOrt(entries) {
  for (const e of entries) {
    if (e.kind !== 'attnlab' || !e.medianMs) continue;
    const o = entries.find((x) => x.kind === 'ort' && x.threads === e.threads && x.medianMs);
    if (!o) continue;
    e.vsOrt = o.impl;
    e.ratio = o.medianMs / e.medianMs;
    e.ratioMin = o.minMs / e.minMs;
    e.ratioPaired = pairedRatio(o.times, e.times);
    if (e.threads === 1 && e.cpuMedianMs && o.cpuMedianMs) e.ratioCpu = o.cpuMedianMs / e.cpuMedianMs;
  }
}

/** Decode at context C: each peer's cache filled with C − ROUNDS·STEPS tokens (not timed), then ROUNDS
 *  interleaved rounds of STEPS one-token steps each; the last step attends to C keys. bandwidth: { wall, cpu }
 *  copy bandwidth (copyBandwidth2): a step's bytes read ÷ its wall time against the wall one, ÷ its CPU time
 *  against the CPU one (one thread: what the step could reach, whatever the neighbours took). */
export async function runDecode(peers, hf, C, bandwidth) {
  const span = DECODE_ROUNDS * STEPS;
  const start = C - span;
  const keysMean = start + (span + 1) / 2; // a step at position p attends to p + 1 keys
  const bytes = decodeBytes(hf, keysMean);
  log(
    `\n== decode at context ${C}: ${DECODE_ROUNDS} rounds × ${STEPS} steps, positions ${start} … ${C - 1} ` +
      `(reads ≥ ${(bytes.weights / MiB).toFixed(0)} MiB of weights + ${(bytes.cache / MiB).toFixed(1)} MiB of ` +
      `cache per step)`,
  );
  const entries = newEntries(peers, { C });
  for (const [i, p] of peers.entries()) {
    const e = entries[i];
    e.dec = p.decoder();
    const t0 = performance.now();
    await e.dec.fill(start);
    e.fillS = (performance.now() - t0) / 1e3;
    e.logits = [];
    log(`  ${p.name}: cache filled with ${start} tokens in ${e.fillS.toFixed(2)} s`);
  }
  await roundRobin(entries, DECODE_ROUNDS, async (e) => {
    const p = peers.find((x) => x.name === e.impl);
    const m0 = p.memBytes?.() ?? 0;
    if (e.dec.steps) {
      const r = await e.dec.steps(STEPS);
      e.times.push(...r.ms);
      e.cpuTimes.push(...r.cpuMs);
      e.logits.push(...r.logits);
    } else {
      for (let i = 0; i < STEPS; ++i) {
        const c0 = clocks();
        const logits = await e.dec.step();
        const d = since(c0);
        e.times.push(d.ms);
        e.cpuTimes.push(cpuOf(p, null, d));
        e.waits.push(d.waitMs);
        e.logits.push(Float32Array.from(logits));
      }
    }
    if (p.memBytes) e.stepGrowth = Math.max(e.stepGrowth ?? 0, p.memBytes() - m0);
  });
  const ref = entries[0].logits;
  for (const e of entries) {
    e.maxAbsDiffLogits = Math.max(...e.logits.map((x, i) => maxAbsDiff(x, ref[i])));
    if (!(e.maxAbsDiffLogits <= TOL_LOGITS)) e.status = `MISMATCH: max |Δ logits| ${e.maxAbsDiffLogits}`;
    delete e.logits;
    e.dec.dispose?.();
    delete e.dec;
    Object.assign(e, summarize(e.times), cpuSummary(e));
    e.tokensPerS = 1e3 / e.medianMs;
    e.readGBs = bytes.total / (e.medianMs / 1e3) / 1e9;
    e.pctCopyBw = (100 * bytes.total) / (e.medianMs / 1e3) / bandwidth.wall;
    if (e.threads === 1 && e.cpuMedianMs && bandwidth.cpu) {
      e.readGBsCpu = bytes.total / (e.cpuMedianMs / 1e3) / 1e9;
      e.pctCopyBwCpu = (100 * bytes.total) / (e.cpuMedianMs / 1e3) / bandwidth.cpu;
    }
    log(
      `  ${e.impl.padEnd(26)} median ${e.medianMs.toFixed(1)} ms/token (${e.tokensPerS.toFixed(1)} tokens/s) ` +
        `[${e.minMs.toFixed(1)}–${e.maxMs.toFixed(1)}], reads ${e.readGBs.toFixed(1)} GB/s ` +
        `(${e.pctCopyBw.toFixed(0)} % of copy bandwidth), CPU ${e.cpuMedianMs.toFixed(1)} ms, ` +
        `max |Δ logits| ${e.maxAbsDiffLogits.toExponential(1)}` +
        (e.kind === 'attnlab' && e.stepGrowth !== undefined ? `, memory growth over steps ${e.stepGrowth} B` : ''),
    );
  }
  vsOrt(entries);
  return { C, start, keysMean, bytes, bandwidth, entries };
}
