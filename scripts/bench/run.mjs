// attnlab side-by-side benchmark (`npm run bench` from the repository root; see scripts/bench/run.sh).
//
// One Node process, every implementation loaded side by side, cases run in order:
//   SDPA L = 128, 512, 2048 → MHA L = 128, 512, 2048 → SDPA L = 8192 → decode (decode.mjs: one token per step
//   over a K/V cache at context 128, 512, 2048 with 8 and 2 key/value heads)
// (SDPA first so that its wasm heap growth is not hidden by MHA's high-water mark; 8192 last because the peers
// that materialise the L×L scores may run out of wasm memory there, which must not disturb the other cases).
// Per case: every implementation's first output is checked against attnlab-simd's (max |Δ| ≤ 1e-3, abort on a
// mismatch), then warm-up runs, then ≥ 10 timed runs, round-robin over the implementations (the start of the
// round rotates each repetition). Reports median ms, min–max, GFLOP/s, speed relative to onnxruntime-web, % of a
// WASM SIMD128 peak measured in this process, and heap growth. Writes build/bench/results.{json,md}.
//
// Environment knobs (all optional): BENCH_QUICK=1 (small sizes only, for a smoke test), BENCH_MAX_RUN_S (skip an
// implementation at a case when its predicted or checked time per run exceeds this; default 20), BENCH_MIN_REPS
// (default 10), BENCH_CASE_BUDGET_S (timed rounds of one case stay under this by dropping the slowest peers,
// onnxruntime-web last, attnlab-simd never; default 180). These keep a run near 10 minutes on 2 cores.
// Also BENCH_OUT, BENCH_CASES and BENCH_IMPLS (config.mjs; e.g. BENCH_CASES=MHA:512,DECODE:2048:2) for focused
// re-measurements, BENCH_THREADS_MAX (attnlab-simd-threaded@1 … @n, default the core count; onnxruntime-web@2 when
// n ≥ 2; attnlab-impls.mjs), and
// `node scripts/bench/run.mjs --render [results.json]` to rewrite results.md from a saved results.json.
// The tfjs graph is written per head with 2-D matmuls (its fast XNNPACK path); see loadImplementations().
// Modules: capture-memory.mjs (wasm memory meters; imported first), config.mjs (sizes, cases, knobs), inputs.mjs,
// implementations.mjs (loading every peer), decode.mjs + decode-impls.mjs (the decode benchmark and each peer's
// step), onnx-models.mjs (the onnxruntime graphs), stats.mjs, report.mjs + report-decode.mjs (goals, results.md,
// --render).

import './capture-memory.mjs'; // patches WebAssembly before any wasm library is loaded
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { CASES, CASE_BUDGET_S, DECODE_CASES, MAX_RUN_S, MIN_REPS, QUICK, TOL, flopsOf } from './config.mjs';
import { runDecode } from './decode.mjs';
import { loadImplementations } from './implementations.mjs';
import { makeInputs } from './inputs.mjs';
import { computeGoals, renderMarkdown, renderOnly } from './report.mjs';
import { MiB, fmtMs, log, maxAbsDiff, median, setOrtWebRatios } from './stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');

// --- the run ---------------------------------------------------------------------------------------------------------

/**
 * Every implementation's first run of case c, checked against attnlab-simd's (which runs first and is the reference;
 * a mismatch aborts the bench: timing a wrong result means nothing). Implementations predicted to take longer than
 * MAX_RUN_S a run (from their last case) are skipped. Returns the case's entries.
 */
async function checkCase(c, impls, inputs, flops, lastRate) {
  const entries = [];
  let reference = null;
  for (const impl of impls) {
    const entry = { impl: impl.name, op: c.op, L: c.L, flops, memKind: impl.memKind, times: [], status: 'ok' };
    entries.push(entry);
    const prev = lastRate[impl.name]?.[c.op];
    const predicted = prev ? (prev.seconds * flops) / flopsOf({ op: c.op, L: prev.L }) : 0;
    entry.predictedRunS = predicted || undefined;
    // attnlab-simd is the reference every other output is checked against: it always runs.
    const skip =
      impl.skip?.(c) ??
      (impl !== impls[0] && predicted > MAX_RUN_S
        ? `skipped: ~${predicted.toFixed(0)} s/run predicted (> ${MAX_RUN_S} s)`
        : null);
    if (skip) {
      entry.status = skip;
      log(`  ${impl.name}: ${skip}`);
      continue;
    }
    entry.memBefore = impl.memBytes();
    entry.run = impl.prepare(c, inputs);
    // First run: correctness check against attnlab-simd (which runs first and is the reference).
    let out;
    const tCheck = performance.now();
    try {
      out = await entry.run();
    } catch (err) {
      entry.status = `failed: ${String(err?.message ?? err)
        .split('\n')[0]
        .slice(0, 160)}`;
      log(`  ${impl.name}: ${entry.status}`);
      entry.run = null;
      continue;
    }
    entry.checkRunS = (performance.now() - tCheck) / 1e3;
    entry.memPeak = impl.memBytes();
    if (!reference) {
      reference = out;
      entry.maxAbsDiff = 0;
      entry.reference = true;
    } else {
      entry.maxAbsDiff = maxAbsDiff(out, reference);
      if (!(entry.maxAbsDiff <= TOL)) {
        console.error(
          `\nMISMATCH: ${impl.name} disagrees with attnlab-simd on ${c.op} L=${c.L}: max |Δ| = ${entry.maxAbsDiff} ` +
            `(tolerance ${TOL}; lengths ${out.length} vs ${reference.length}). Aborting: timing a wrong result means nothing.`,
        );
        process.exit(1);
      }
    }
    log(
      `  ${impl.name}: check ok (max |Δ| ${entry.maxAbsDiff.toExponential(1)}), first run ${entry.checkRunS.toFixed(2)} s`,
    );
  }
  if (!reference) throw new Error(`attnlab-simd produced no output for ${c.op} L=${c.L}`);
  return entries;
}

/**
 * Time limits: an implementation whose checked run took longer than MAX_RUN_S is not timed; then, while a round ×
 * MIN_REPS would exceed CASE_BUDGET_S, the slowest remaining one is dropped (onnxruntime-web last, attnlab-simd
 * never). Both are reported in the table.
 */
function limitTimedRuns(c, entries, lastRate) {
  for (const e of entries) {
    if (e.run && !e.reference && e.checkRunS > MAX_RUN_S) {
      e.status = `checked, not timed: one run took ${e.checkRunS.toFixed(0)} s (> ${MAX_RUN_S} s)`;
      e.run = null;
    }
  }
  for (;;) {
    const timed = entries.filter((e) => e.run);
    const round = timed.reduce((s, e) => s + e.checkRunS, 0);
    if (round * MIN_REPS <= CASE_BUDGET_S) break;
    const droppable = timed
      .filter((e) => !e.reference)
      .sort((a, b) => (a.impl === 'onnxruntime-web') - (b.impl === 'onnxruntime-web') || b.checkRunS - a.checkRunS);
    if (!droppable.length) break;
    const e = droppable[0];
    e.status = `checked, not timed: ${e.checkRunS.toFixed(1)} s/run would push this case past its ${CASE_BUDGET_S} s budget`;
    e.run = null;
  }
  for (const e of entries) {
    if (!e.run && e.status.startsWith('checked')) {
      log(`  ${e.impl}: ${e.status}`);
      (lastRate[e.impl] ??= {})[c.op] = { L: c.L, seconds: e.checkRunS }; // predicts the next L from the check
    }
  }
}

/** Warm-up and timed runs of the entries still to time, round-robin; their statistics into the entries. */
async function timeCase(c, entries, impls, flops, lastRate) {
  const live = entries.filter((e) => e.run);
  const roundS = live.reduce((s, e) => s + e.checkRunS, 0);
  // The check run above already ran every implementation once; big cases take it as their warm-up.
  const warmups = roundS < 0.5 ? 5 : roundS < 5 ? 2 : 0;
  const reps = Math.max(MIN_REPS, Math.min(50, Math.floor(3 / Math.max(roundS, 1e-3))));
  log(`  ${warmups} warm-up + ${reps} timed rounds (one round ≈ ${roundS.toFixed(2)} s)`);
  for (let rep = -warmups; rep < reps; ++rep) {
    const start = ((rep % live.length) + live.length) % live.length;
    for (let j = 0; j < live.length; ++j) {
      const e = live[(start + j) % live.length];
      const ts = performance.now();
      await e.run();
      const dt = performance.now() - ts;
      if (rep >= 0) e.times.push(dt);
      e.memPeak = Math.max(e.memPeak, impls.find((i) => i.name === e.impl).memBytes());
    }
  }
  for (const e of live) {
    const impl = impls.find((i) => i.name === e.impl);
    e.memAfter = impl.memBytes();
    e.memGrowth = Math.max(e.memAfter, e.memPeak) - e.memBefore;
    e.medianMs = median(e.times);
    e.minMs = Math.min(...e.times);
    e.maxMs = Math.max(...e.times);
    e.gflops = flops / (e.medianMs / 1e3) / 1e9;
    e.runs = e.times.length;
    e.warmups = warmups;
    (lastRate[e.impl] ??= {})[c.op] = { L: c.L, seconds: e.medianMs / 1e3 };
    delete e.run;
    log(
      `  ${e.impl.padEnd(18)} median ${fmtMs(e.medianMs)} ms  [${fmtMs(e.minMs)}–${fmtMs(e.maxMs)}]  ${e.gflops.toFixed(1)} GFLOP/s`,
    );
  }
}

/** One case: checked, limited, timed. */
async function runCase(c, impls, lastRate) {
  const flops = flopsOf(c);
  const inputs = makeInputs(c);
  log(`\n== ${c.op} L=${c.L} (${(flops / 1e9).toFixed(2)} GFLOP)`);
  const entries = await checkCase(c, impls, inputs, flops, lastRate);
  limitTimedRuns(c, entries, lastRate);
  await timeCase(c, entries, impls, flops, lastRate);
  setOrtWebRatios(entries);
  for (const e of entries) delete e.run;
  return entries;
}

async function main() {
  const t0 = performance.now();
  log(`attnlab bench: ${os.cpus()[0]?.model ?? '?'}, ${os.cpus().length} cores, node ${process.version}`);
  const { measureSimdPeak, measureTilePeak } = await import('./simd-peak.mjs');
  // The plain-JS peer (imported here, so that changing which baseline is compared is a one-line change).
  const plainJs = () => import('../../web/demo/shared/plain-attention.js');
  const { impls: allImpls, versions, notes } = await loadImplementations({ plainJs });
  log(`loaded: ${allImpls.map((i) => i.name).join(', ')}`);
  const impls = allImpls.filter((i) => i.prepare); // the SDPA/MHA cases' peers (some peers only decode)
  const peakBefore = await measureSimdPeak({ chains: [8, 10, 12, 14, 16] });
  const tileBefore = await measureTilePeak();
  log(
    `WASM SIMD128 peak (hand-assembled): mul+add chains ${peakBefore.gflops.toFixed(1)} GFLOP/s (${peakBefore.chains} ` +
      `chains), 4 x 8 register tile ${tileBefore.gflops.toFixed(1)} GFLOP/s`,
  );

  const results = [];
  const peakSamples = [peakBefore.gflops];
  const tileSamples = [tileBefore.gflops];
  const lastRate = {}; // impl name → op → { L, seconds } of its last timed case, to predict bigger L
  for (const c of CASES) {
    results.push(...(await runCase(c, impls, lastRate)));
    // Re-measure the peak between cases (best chain count only): on a shared machine the best of several
    // samples is the closest to what the CPU can do.
    const sample = await measureSimdPeak({ chains: [peakBefore.chains], seconds: 0.1, trials: 3 });
    peakSamples.push(sample.gflops);
    tileSamples.push((await measureTilePeak({ seconds: 0.1, trials: 3 })).gflops);
  }
  const decode = DECODE_CASES.length ? await runDecode(allImpls, DECODE_CASES) : null;
  const breakdown = CASES.length ? await attnlabBreakdown(impls) : [];
  const peakAfter = await measureSimdPeak({ chains: [8, 10, 12, 14, 16] });
  peakSamples.push(peakAfter.gflops);
  tileSamples.push((await measureTilePeak()).gflops);
  const peak = Math.max(...peakSamples, ...tileSamples);
  for (const e of results) if (e.gflops) e.pctPeak = (100 * e.gflops) / peak;
  const wallS = (performance.now() - t0) / 1e3;
  const simdPeak = {
    method:
      'the better of two hand-assembled wasm modules (scripts/bench/simd-peak.mjs): independent f32x4.mul + ' +
      'f32x4.add chains, and a cache-resident 4 x 8 GEMM register tile',
    gflops: peak,
    before: peakBefore,
    after: peakAfter,
    samples: peakSamples,
    tileSamples,
  };
  for (const b of breakdown) b.pctPeak = (100 * b.gflops) / peak;
  writeReport({ results, versions, notes, simdPeak, wallS, breakdown, decode });
}

/** build/bench/results.json and results.md (BENCH_OUT elsewhere), and the markdown on stdout. */
function writeReport({ results, versions, notes, simdPeak, wallS, breakdown, decode }) {
  const machine = {
    cpu: os.cpus()[0]?.model ?? '?',
    cores: os.cpus().length,
    loadavg: os.loadavg(),
    totalMemGiB: os.totalmem() / 1024 / MiB,
    // run.sh keeps freed large blocks in glibc's heap (fresh mmaps' page faults are slow in a sandbox)
    mallocMmapThreshold: process.env.MALLOC_MMAP_THRESHOLD_ ?? 'default',
  };
  const goals = computeGoals(results, decode);
  const md = renderMarkdown({ results, machine, versions, simdPeak, goals, wallS, notes, breakdown, decode });
  const outDir = path.resolve(repoRoot, process.env.BENCH_OUT ?? 'build/bench');
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(
    path.join(outDir, 'results.json'),
    JSON.stringify(
      {
        date: new Date().toISOString(),
        quick: QUICK,
        machine,
        versions,
        notes,
        simdPeak,
        wallS,
        goals,
        results,
        breakdown,
        decode,
      },
      null,
      2,
    ),
  );
  fs.writeFileSync(path.join(outDir, 'results.md'), md);
  console.log(md);
  log(`wrote ${path.relative(repoRoot, outDir)}/results.{json,md} (${wallS.toFixed(0)} s)`);
}

// attnlab-simd's time split with public calls only: SDPA (8, L, 64) online; the same with d = 128 (twice the
// matmul FLOPs, the same exponentials: 2·T64 − T128 estimates softmax + tile bookkeeping); MHA full; MHA with a
// single key/value row (≈ the Q and output projections, 4·L·E² FLOPs, with a trivial attention).
async function attnlabBreakdown(impls) {
  const simd = impls.find((i) => i.name === 'attnlab-simd');
  if (!simd?.breakdown) return [];
  const out = [];
  for (const L of [512]) {
    // L = 2048 costs ~1 min more here; the native bench breaks down 2048 too
    const steps = simd.breakdown(L);
    const times = steps.map(() => []);
    for (const s of steps) s.run(); // warm-up
    const roundS = steps.reduce((acc, s) => {
      const t0 = performance.now();
      s.run();
      return acc + (performance.now() - t0) / 1e3;
    }, 0);
    const reps = Math.max(MIN_REPS, Math.min(30, Math.floor(2 / Math.max(roundS, 1e-3))));
    for (let rep = 0; rep < reps; ++rep) {
      for (let j = 0; j < steps.length; ++j) {
        const i = (j + rep) % steps.length;
        const t0 = performance.now();
        steps[i].run();
        times[i].push(performance.now() - t0);
      }
    }
    steps.forEach((s, i) => {
      const medianMs = median(times[i]);
      out.push({
        L,
        step: s.name,
        flops: s.flops,
        medianMs,
        minMs: Math.min(...times[i]),
        maxMs: Math.max(...times[i]),
        runs: reps,
        gflops: s.flops / (medianMs / 1e3) / 1e9,
      });
    });
    log(
      `  breakdown L=${L}: ${out
        .filter((b) => b.L === L)
        .map((b) => `${b.step} ${fmtMs(b.medianMs)} ms`)
        .join('; ')}`,
    );
  }
  return out;
}

// `--help`: the header comment of this file and config.mjs's knobs.
if (process.argv.includes('--help') || process.argv.includes('-h')) {
  const lines = fs.readFileSync(path.join(here, 'run.mjs'), 'utf8').split('\n');
  const header = lines
    .slice(
      0,
      lines.findIndex((l) => !l.startsWith('//')),
    )
    .map((l) => l.replace(/^\/\/ ?/, ''));
  console.log(
    [
      'usage: node scripts/bench/run.mjs [--render [results.json]]   (npm run bench builds dist/ first)',
      '',
      ...header,
    ].join('\n'),
  );
  process.exit(0);
}

const renderAt = process.argv.indexOf('--render');
(renderAt >= 0
  ? renderOnly(process.argv[renderAt + 1] ?? path.join(repoRoot, 'build/bench/results.json'))
  : main().then(() => process.exit(0))
) // onnxruntime-web@2's worker threads would keep Node alive
  .catch((err) => {
    console.error(err?.stack ?? err);
    process.exit(1);
  });
