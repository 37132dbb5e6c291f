// attnlab side-by-side benchmark (`npm run bench` from the repository root; see scripts/bench/run.sh).
//
// One Node process, every implementation loaded side by side, cases run in order:
//   SDPA L = 128, 512, 2048 → MHA L = 128, 512, 2048 → SDPA L = 8192
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
// Also BENCH_OUT, BENCH_CASES and BENCH_IMPLS (below) for focused re-measurements, and
// `node scripts/bench/run.mjs --render [results.json]` to rewrite results.md from a saved results.json.
// The tfjs graph is written per head with 2-D matmuls (its fast XNNPACK path); see loadImplementations().

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');

// --- wasm memory capture (before any wasm library is imported) ------------------------------------------------
// onnxruntime-web creates its (shared) memory in JS with `new WebAssembly.Memory`; tfjs-backend-wasm's module
// exports its memory from the instance. We record both, tagged with the library being loaded at that moment.
const capturedMemories = [];
let loadingTag = 'none';
{
  const OrigMemory = WebAssembly.Memory;
  const PatchedMemory = function Memory(...args) {
    const memory = new OrigMemory(...args);
    capturedMemories.push({ tag: loadingTag, memory });
    return memory;
  };
  PatchedMemory.prototype = OrigMemory.prototype;
  WebAssembly.Memory = PatchedMemory;
  const recordExports = (result) => {
    const instance = result instanceof WebAssembly.Instance ? result : result?.instance;
    if (instance) {
      for (const value of Object.values(instance.exports)) {
        if (value instanceof OrigMemory && !capturedMemories.some((m) => m.memory === value)) {
          capturedMemories.push({ tag: loadingTag, memory: value });
        }
      }
    }
    return result;
  };
  const origInstantiate = WebAssembly.instantiate;
  WebAssembly.instantiate = function instantiate(...args) {
    return origInstantiate.apply(this, args).then(recordExports);
  };
  if (WebAssembly.instantiateStreaming) {
    const origStreaming = WebAssembly.instantiateStreaming;
    WebAssembly.instantiateStreaming = function instantiateStreaming(...args) {
      return origStreaming.apply(this, args).then(recordExports);
    };
  }
}
const memoriesOf = (tag) => capturedMemories.filter((m) => m.tag === tag).map((m) => m.memory);

// --- configuration -----------------------------------------------------------------------------------------------
const QUICK = process.env.BENCH_QUICK === '1';
const MAX_RUN_S = Number(process.env.BENCH_MAX_RUN_S ?? 20);
const MIN_REPS = Math.max(10, Number(process.env.BENCH_MIN_REPS ?? 10));
const CASE_BUDGET_S = Number(process.env.BENCH_CASE_BUDGET_S ?? 180);
const E = 512;
const H = 8;
const D = E / H;
const TOL = 1e-3;
const ALL_CASES = QUICK
  ? [
      { op: 'SDPA', L: 128 },
      { op: 'MHA', L: 128 },
      { op: 'SDPA', L: 512 },
    ]
  : [
      { op: 'SDPA', L: 128 },
      { op: 'SDPA', L: 512 },
      { op: 'SDPA', L: 2048 },
      { op: 'MHA', L: 128 },
      { op: 'MHA', L: 512 },
      { op: 'MHA', L: 2048 },
      { op: 'SDPA', L: 8192 },
    ];
// BENCH_OUT=dir writes the results there instead of build/bench.
// BENCH_CASES="MHA:512,SDPA:2048" runs only those cases (in that order); BENCH_IMPLS="onnxruntime-web,…" only
// those peers (attnlab-simd, the reference, always runs). For focused re-measurements; the default runs all.
const CASES = process.env.BENCH_CASES
  ? process.env.BENCH_CASES.split(',').map((c) => {
      const [op, L] = c.split(':');
      if (!['SDPA', 'MHA'].includes(op) || !(Number(L) > 0)) throw new Error(`BENCH_CASES: bad entry ${c}`);
      return { op, L: Number(L) };
    })
  : ALL_CASES;
const IMPL_FILTER = process.env.BENCH_IMPLS ? new Set(['attnlab-simd', ...process.env.BENCH_IMPLS.split(',')]) : null;
const flopsOf = ({ op, L }) => (op === 'MHA' ? 8 * L * E * E + 4 * L * L * E : 4 * L * L * E);

// --- helpers -------------------------------------------------------------------------------------------------------
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
function uniform(n, bound, rng) {
  const a = new Float32Array(n);
  for (let i = 0; i < n; ++i) a[i] = (rng() * 2 - 1) * bound;
  return a;
}
function maxAbsDiff(a, b) {
  if (a.length !== b.length) return Infinity;
  let m = 0;
  for (let i = 0; i < a.length; ++i) {
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= m)) m = Number.isNaN(d) ? Infinity : d;
  }
  return m;
}
const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};
// Median over timed rounds of base's time / e's time in the same round (the round-robin times every
// implementation once per round): a slow phase of the machine that spans a round slows both sides of a pair.
const pairedRatio = (base, e) =>
  base?.times?.length && e?.times?.length === base.times.length
    ? median(base.times.map((t, i) => t / e.times[i]))
    : null;
// Each entry's ratios to onnxruntime-web in the same case: medians, minima and paired rounds.
function setOrtWebRatios(entries) {
  const ort = entries.find((e) => e.impl === 'onnxruntime-web' && e.medianMs);
  for (const e of entries) {
    if (e.medianMs && ort) {
      e.vsOrtWeb = ort.medianMs / e.medianMs;
      e.vsOrtWebMin = ort.minMs / e.minMs;
      e.vsOrtWebPaired = pairedRatio(ort, e);
    }
  }
}
const MiB = 1024 * 1024;
const fmtMs = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2));
const fmtMiB = (bytes) => `${(bytes / MiB).toFixed(bytes >= 100 * MiB ? 0 : 1)} MiB`;
const pkgVersion = (name) =>
  JSON.parse(fs.readFileSync(path.join(here, 'node_modules', name, 'package.json'), 'utf8')).version;
const log = (...args) => console.error(...args);

// --- inputs ----------------------------------------------------------------------------------------------------------
const rng = mulberry32(20240605);
const stateDict = {
  in_proj_weight: uniform(3 * E * E, Math.sqrt(6 / (4 * E)), rng), // xavier_uniform bound for (3E, E)
  in_proj_bias: uniform(3 * E, 0.1, rng),
  'out_proj.weight': uniform(E * E, 1 / Math.sqrt(E), rng),
  'out_proj.bias': uniform(E, 0.1, rng),
};
function makeInputs({ op, L }) {
  const r = mulberry32(L * 7 + (op === 'MHA' ? 1 : 0));
  if (op === 'SDPA') return { q: uniform(H * L * D, 1, r), k: uniform(H * L * D, 1, r), v: uniform(H * L * D, 1, r) };
  return { x: uniform(L * E, 1, r) };
}

// --- implementations ----------------------------------------------------------------------------------------------
// Each: { name, memKind, memBytes(), prepare(case, inputs) → async run() → Float32Array, skip?(case) → reason }.
async function loadImplementations() {
  const impls = [];

  // attnlab (both builds side by side)
  loadingTag = 'attnlab';
  const { init } = await import(path.join(repoRoot, 'dist/index.mjs'));
  for (const variant of ['simd', 'scalar']) {
    const attn = await init({ variant });
    if (attn.variant !== variant) throw new Error(`init({variant:'${variant}'}) gave variant ${attn.variant}`);
    const mha = attn.createMultiHeadAttention({ embedDim: E, numHeads: H, batchFirst: true });
    mha.loadStateDict(stateDict);
    impls.push({
      name: `attnlab-${variant}`,
      memKind: 'wasm heap',
      memBytes: () => attn.memoryBytes(),
      prepare({ op, L }, inp) {
        if (op === 'SDPA') {
          const t = (data) => ({ data, shape: [H, L, D] });
          const q = t(inp.q);
          const k = t(inp.k);
          const v = t(inp.v);
          return () => attn.scaledDotProductAttention(q, k, v, { needWeights: false }).output.data;
        }
        const x = { data: inp.x, shape: [1, L, E] };
        return () => mha.forward(x, x, x, { needWeights: false }).output.data;
      },
      breakdown(L) {
        const r = mulberry32(L);
        const t = (d) => ({ data: uniform(H * L * d, 1, r), shape: [H, L, d] });
        const [q, k, v, q2, k2, v2] = [t(D), t(D), t(D), t(2 * D), t(2 * D), t(2 * D)];
        const x = { data: uniform(L * E, 1, r), shape: [1, L, E] };
        const x1 = { data: uniform(E, 1, r), shape: [1, 1, E] };
        const scale2 = 1 / Math.sqrt(D) / Math.SQRT2;
        return [
          { name: 'SDPA d = 64 (needWeights false)', flops: 4 * L * L * E, run: () => attn.scaledDotProductAttention(q, k, v, { needWeights: false }) },
          { name: 'SDPA d = 128 (needWeights false)', flops: 8 * L * L * E, run: () => attn.scaledDotProductAttention(q2, k2, v2, { needWeights: false, scale: scale2 }) },
          { name: 'SDPA d = 64, needWeights true (exact path)', flops: 4 * L * L * E, run: () => attn.scaledDotProductAttention(q, k, v, { needWeights: true }) },
          { name: 'MHA full', flops: 8 * L * E * E + 4 * L * L * E, run: () => mha.forward(x, x, x, { needWeights: false }) },
          { name: 'MHA, one key (≈ Q + out projections)', flops: 4 * L * E * E, run: () => mha.forward(x, x1, x1, { needWeights: false }) },
        ];
      },
    });
  }

  // plain JS
  loadingTag = 'plain-js';
  const plain = await import('./plain-js.mjs');
  impls.push({
    name: 'plain JS',
    memKind: 'RSS Δ',
    memBytes: () => process.memoryUsage().rss,
    prepare({ op, L }, inp) {
      if (op === 'SDPA') return () => plain.sdpa(inp.q, inp.k, inp.v, H, L, L, D, D, 1 / Math.sqrt(D));
      return () => plain.mha(inp.x, L, E, H, stateDict);
    },
  });

  // onnxruntime-web (wasm backend, 1 thread, SIMD)
  const { sdpaModel, mhaModel } = await import('./onnx-models.mjs');
  const sdpaBytes = sdpaModel(1 / Math.sqrt(D));
  const mhaBytes = mhaModel(stateDict, E, H);
  loadingTag = 'ort-web';
  const ortWeb = await import('onnxruntime-web');
  ortWeb.env.wasm.numThreads = 1;
  ortWeb.env.wasm.simd = true; // (always on in 1.2x+ builds; kept for older versions)
  ortWeb.env.wasm.proxy = false;
  const webOpts = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };
  const webSessions = {
    SDPA: await ortWeb.InferenceSession.create(sdpaBytes, webOpts),
    MHA: await ortWeb.InferenceSession.create(mhaBytes, webOpts),
  };
  const ortWebMem = memoriesOf('ort-web');
  impls.push({
    name: 'onnxruntime-web',
    memKind: ortWebMem.length ? 'wasm heap' : 'RSS Δ',
    memBytes: () =>
      ortWebMem.length ? ortWebMem.reduce((s, m) => s + m.buffer.byteLength, 0) : process.memoryUsage().rss,
    prepare: ortPrepare(ortWeb, webSessions),
  });

  // @tensorflow/tfjs-backend-wasm (1 thread: the non-threaded SIMD binary)
  loadingTag = 'tfjs-wasm';
  const tf = await import('@tensorflow/tfjs-core');
  const tfWasm = await import('@tensorflow/tfjs-backend-wasm');
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
  tfWasm.setThreadsCount?.(1);
  tfWasm.setWasmPaths(path.join(here, 'node_modules/@tensorflow/tfjs-backend-wasm/dist/'));
  if (!(await tf.setBackend('wasm'))) throw new Error('tfjs: could not set the wasm backend');
  await tf.ready();
  const tfSimd = tf.env().getBool('WASM_HAS_SIMD_SUPPORT');
  // tfjs-backend-wasm's BatchMatMul only takes its XNNPACK path for batch 1 without transpose flags (anything
  // else runs a scalar blocked loop, ~10× slower), so the graph below is written for that: weights stored
  // pre-transposed once, Kᵀ by an explicit transpose, and the heads as a loop of 2-D matmuls.
  const tfW = {
    wInT: tf.transpose(tf.tensor2d(stateDict.in_proj_weight, [3 * E, E])), // (E, 3E)
    bIn: tf.tensor1d(stateDict.in_proj_bias),
    wOutT: tf.transpose(tf.tensor2d(stateDict['out_proj.weight'], [E, E])),
    bOut: tf.tensor1d(stateDict['out_proj.bias']),
  };
  const tfMem = memoriesOf('tfjs-wasm');
  impls.push({
    name: 'tfjs-backend-wasm',
    memKind: tfMem.length ? 'wasm heap' : 'RSS Δ',
    memBytes: () => (tfMem.length ? tfMem.reduce((s, m) => s + m.buffer.byteLength, 0) : process.memoryUsage().rss),
    prepare({ op, L }, inp) {
      const scale = 1 / Math.sqrt(D);
      // q (L, d), k (L, d), v (L, d) for one head → (L, d)
      const head = (q, k, v) => tf.matMul(tf.softmax(tf.mul(tf.matMul(q, tf.transpose(k)), scale)), v);
      if (op === 'SDPA') {
        return () => {
          const q = tf.tensor3d(inp.q, [H, L, D]);
          const k = tf.tensor3d(inp.k, [H, L, D]);
          const v = tf.tensor3d(inp.v, [H, L, D]);
          const out = tf.tidy(() => {
            const [qs, ks, vs] = [q, k, v].map((t) => tf.unstack(t));
            return tf.stack(qs.map((qh, h) => head(qh, ks[h], vs[h])));
          });
          const data = out.dataSync();
          tf.dispose([q, k, v, out]);
          return data;
        };
      }
      return () => {
        const x = tf.tensor2d(inp.x, [L, E]);
        const out = tf.tidy(() => {
          const proj = tf.add(tf.matMul(x, tfW.wInT), tfW.bIn); // (L, 3E)
          const heads = [];
          for (let h = 0; h < H; ++h) {
            const part = (i) => tf.slice(proj, [0, i * E + h * D], [L, D]);
            heads.push(head(part(0), part(1), part(2)));
          }
          return tf.add(tf.matMul(tf.concat(heads, 1), tfW.wOutT), tfW.bOut);
        });
        const data = out.dataSync();
        tf.dispose([x, out]);
        return data;
      };
    },
  });

  // onnxruntime-node (native, 1 thread): the native reference
  loadingTag = 'ort-node';
  const ortNode = await import('onnxruntime-node');
  const nodeOpts = { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all' };
  const nodeSessions = {
    SDPA: await ortNode.InferenceSession.create(sdpaBytes, nodeOpts),
    MHA: await ortNode.InferenceSession.create(mhaBytes, nodeOpts),
  };
  impls.push({
    name: 'onnxruntime-node',
    memKind: 'RSS Δ',
    memBytes: () => process.memoryUsage().rss,
    prepare: ortPrepare(ortNode, nodeSessions),
    // Its L×L intermediates at L = 8192 are 2 GiB each (it holds several); only try with room to spare.
    skip: ({ L }) =>
      L >= 8192 && os.freemem() < 8 * 1024 * MiB
        ? `skipped: needs ~6 GiB of RAM for the L×L intermediates, ${fmtMiB(os.freemem())} free`
        : null,
  });

  loadingTag = 'none';
  const versions = {
    node: process.version,
    'onnxruntime-web': pkgVersion('onnxruntime-web'),
    '@tensorflow/tfjs-core': pkgVersion('@tensorflow/tfjs-core'),
    '@tensorflow/tfjs-backend-wasm': pkgVersion('@tensorflow/tfjs-backend-wasm'),
    'onnxruntime-node': pkgVersion('onnxruntime-node'),
    'onnx-proto': pkgVersion('onnx-proto'),
    attnlab: JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).version,
    'attnlab dist built': fs.statSync(path.join(repoRoot, 'dist/attnlab-simd.wasm')).mtime.toISOString(),
  };
  const notes = {
    'ort-web memory': ortWebMem.length ? `${ortWebMem.length} WebAssembly.Memory captured` : 'not reachable, RSS',
    'tfjs SIMD': tfSimd,
    'tfjs memory': tfMem.length ? `${tfMem.length} WebAssembly.Memory captured` : 'not reachable, RSS',
  };
  return { impls: IMPL_FILTER ? impls.filter((i) => IMPL_FILTER.has(i.name)) : impls, versions, notes };
}

function ortPrepare(ort, sessions) {
  return ({ op, L }, inp) => {
    const session = sessions[op];
    if (op === 'SDPA') {
      return async () => {
        const t = (data) => new ort.Tensor('float32', data, [H, L, D]);
        const out = await session.run({ q: t(inp.q), k: t(inp.k), v: t(inp.v) });
        return out.out.data;
      };
    }
    return async () => {
      const out = await session.run({ x: new ort.Tensor('float32', inp.x, [1, L, E]) });
      return out.out.data;
    };
  };
}

// --- the run ---------------------------------------------------------------------------------------------------------
async function main() {
  const t0 = performance.now();
  log(`attnlab bench: ${os.cpus()[0]?.model ?? '?'}, ${os.cpus().length} cores, node ${process.version}`);
  const { measureSimdPeak, measureTilePeak } = await import('./simd-peak.mjs');
  const { impls, versions, notes } = await loadImplementations();
  log(`loaded: ${impls.map((i) => i.name).join(', ')}`);
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
    const flops = flopsOf(c);
    const inputs = makeInputs(c);
    log(`\n== ${c.op} L=${c.L} (${(flops / 1e9).toFixed(2)} GFLOP)`);
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
        entry.status = `failed: ${String(err?.message ?? err).split('\n')[0].slice(0, 160)}`;
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
      log(`  ${impl.name}: check ok (max |Δ| ${entry.maxAbsDiff.toExponential(1)}), first run ${entry.checkRunS.toFixed(2)} s`);
    }
    if (!reference) throw new Error(`attnlab-simd produced no output for ${c.op} L=${c.L}`);

    // Time limits: an implementation whose checked run took longer than MAX_RUN_S is not timed; then, while a
    // round × MIN_REPS would exceed CASE_BUDGET_S, the slowest remaining one is dropped (onnxruntime-web last,
    // attnlab-simd never). Both are reported in the table.
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

    // Warm-up and timed runs, round-robin. Small cases get more repetitions (cheap, less noisy).
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
      log(`  ${e.impl.padEnd(18)} median ${fmtMs(e.medianMs)} ms  [${fmtMs(e.minMs)}–${fmtMs(e.maxMs)}]  ${e.gflops.toFixed(1)} GFLOP/s`);
    }
    setOrtWebRatios(entries);
    for (const e of entries) delete e.run;
    results.push(...entries);
    // Re-measure the peak between cases (best chain count only): on a shared machine the best of several
    // samples is the closest to what the CPU can do.
    const sample = await measureSimdPeak({ chains: [peakBefore.chains], seconds: 0.1, trials: 3 });
    peakSamples.push(sample.gflops);
    tileSamples.push((await measureTilePeak({ seconds: 0.1, trials: 3 })).gflops);
  }
  const breakdown = await attnlabBreakdown(impls);
  const peakAfter = await measureSimdPeak({ chains: [8, 10, 12, 14, 16] });
  peakSamples.push(peakAfter.gflops);
  tileSamples.push((await measureTilePeak()).gflops);
  const peak = Math.max(...peakSamples, ...tileSamples);
  for (const e of results) if (e.gflops) e.pctPeak = (100 * e.gflops) / peak;
  const wallS = (performance.now() - t0) / 1e3;

  // --- report ---
  const machine = {
    cpu: os.cpus()[0]?.model ?? '?',
    cores: os.cpus().length,
    loadavg: os.loadavg(),
    totalMemGiB: os.totalmem() / 1024 / MiB,
    // run.sh keeps freed large blocks in glibc's heap (fresh mmaps' page faults are slow in a sandbox)
    mallocMmapThreshold: process.env.MALLOC_MMAP_THRESHOLD_ ?? 'default',
  };
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
  const goals = computeGoals(results);
  const md = renderMarkdown({ results, machine, versions, simdPeak, goals, wallS, notes, breakdown });
  const outDir = path.resolve(repoRoot, process.env.BENCH_OUT ?? 'build/bench');
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(
    path.join(outDir, 'results.json'),
    JSON.stringify({ date: new Date().toISOString(), quick: QUICK, machine, versions, notes, simdPeak, wallS, goals, results, breakdown }, null, 2),
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
  for (const L of [512]) { // L = 2048 costs ~1 min more here; the native bench breaks down 2048 too
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
        L, step: s.name, flops: s.flops, medianMs, minMs: Math.min(...times[i]), maxMs: Math.max(...times[i]),
        runs: reps, gflops: s.flops / (medianMs / 1e3) / 1e9,
      });
    });
    log(`  breakdown L=${L}: ${out.filter((b) => b.L === L).map((b) => `${b.step} ${fmtMs(b.medianMs)} ms`).join('; ')}`);
  }
  return out;
}

function find(results, impl, op, L) {
  return results.find((e) => e.impl === impl && e.op === op && e.L === L && e.medianMs);
}

function computeGoals(results) {
  const goals = [];
  const ratio = (impl, op, L, vs, key = 'medianMs') => {
    const a = find(results, impl, op, L);
    const b = find(results, vs, op, L);
    return a && b ? b[key] / a[key] : null;
  };
  const paired = (impl, op, L, vs) => pairedRatio(find(results, vs, op, L), find(results, impl, op, L));
  const add = (goal, value, target, unit = '×', fromMin = null, fromPairs = null) =>
    goals.push({
      goal,
      value,
      fromMin,
      fromPairs,
      target,
      met: value == null ? null : unit === 'MiB' ? value <= target : value >= target,
      unit,
    });
  const addRatio = (goal, impl, op, L, vs, target) =>
    add(goal, ratio(impl, op, L, vs), target, '×', ratio(impl, op, L, vs, 'minMs'), paired(impl, op, L, vs));
  addRatio('MHA L=512: attnlab-simd vs onnxruntime-web', 'attnlab-simd', 'MHA', 512, 'onnxruntime-web', 2.0);
  for (const L of [128, 512, 2048]) {
    addRatio(`MHA L=${L}: attnlab-simd vs onnxruntime-web`, 'attnlab-simd', 'MHA', L, 'onnxruntime-web', 1.6);
  }
  addRatio('SDPA L=2048: attnlab-simd vs onnxruntime-web', 'attnlab-simd', 'SDPA', 2048, 'onnxruntime-web', 2.0);
  const g = find(results, 'attnlab-simd', 'SDPA', 2048);
  add('SDPA L=2048: attnlab-simd wasm heap growth', g ? g.memGrowth / MiB : null, 16, 'MiB');
  for (const [op, L] of [['MHA', 128], ['MHA', 512], ['MHA', 2048], ['SDPA', 512], ['SDPA', 2048]]) {
    addRatio(`${op} L=${L}: attnlab-simd vs attnlab-scalar`, 'attnlab-simd', op, L, 'attnlab-scalar', 4.0);
  }
  return goals;
}

function renderMarkdown({ results, machine, versions, simdPeak, goals, wallS, notes, breakdown, date = new Date().toISOString() }) {
  const lines = [];
  lines.push(`## attnlab benchmark (${date.slice(0, 16).replace('T', ' ')} UTC)`);
  lines.push('');
  lines.push(
    `${machine.cpu}, ${machine.cores} cores (shared, load ${machine.loadavg.map((x) => x.toFixed(1)).join('/')}), ` +
      `Node ${versions.node}; attnlab dist built ${versions['attnlab dist built'].slice(0, 16).replace('T', ' ')}; onnxruntime-web ${versions['onnxruntime-web']} (wasm, 1 thread, SIMD), ` +
      `tfjs-backend-wasm ${versions['@tensorflow/tfjs-backend-wasm']} (1 thread, SIMD ${notes['tfjs SIMD'] ? 'on' : 'off'}), ` +
      `onnxruntime-node ${versions['onnxruntime-node']} (native, 1 thread). E = ${E}, H = ${H} (d = ${D}), batch 1, ` +
      `needWeights false. MHA: batch_first self-attention, FLOPs 8·L·E² + 4·L²·E; SDPA: query (8, L, 64), FLOPs 4·L²·E. ` +
      `glibc MALLOC_MMAP_THRESHOLD_: ${machine.mallocMmapThreshold ?? 'default'} (see scripts/bench/heap-env.sh).`,
  );
  lines.push(
    `WASM SIMD128 peak measured in this run: **${simdPeak.gflops.toFixed(1)} GFLOP/s**, the better of two ` +
      `hand-assembled wasm modules: independent f32x4.mul+f32x4.add chains (best chain count: ` +
      `${Math.max(...simdPeak.samples).toFixed(1)} GFLOP/s) and a cache-resident 4 x 8 GEMM register tile ` +
      // (results.json files from before the tile module have no tile samples)
      `(${simdPeak.tileSamples ? `${Math.max(...simdPeak.tileSamples).toFixed(1)} GFLOP/s` : 'not measured'}); ` +
      `best of samples before, between and after the cases. ` +
      `All implementations in one process, interleaved round-robin per repetition; a checked first run, ` +
      `extra warm-up rounds for the small cases, then timed runs. ` +
      `Total ${wallS.toFixed(0)} s.`,
  );
  lines.push('');
  lines.push('| op | L | implementation | median ms | min–max ms | runs | GFLOP/s | × ort-web (median / min / paired) | % SIMD peak | memory growth | max abs Δ |');
  lines.push('|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const e of results) {
    if (!e.medianMs) {
      const checked = e.maxAbsDiff !== undefined;
      const mem = checked && e.memPeak !== undefined
        ? `${fmtMiB(e.memPeak - e.memBefore)}${e.memKind === 'wasm heap' ? '' : ` (${e.memKind})`}`
        : '';
      lines.push(`| ${e.op} | ${e.L} | ${e.impl} | — | ${e.status} | | | | | ${mem} | ${checked ? e.maxAbsDiff.toExponential(1) : ''} |`);
      continue;
    }
    const mem = `${fmtMiB(e.memGrowth)}${e.memKind === 'wasm heap' ? '' : ` (${e.memKind})`}`;
    lines.push(
      `| ${e.op} | ${e.L} | ${e.impl} | ${fmtMs(e.medianMs)} | ${fmtMs(e.minMs)}–${fmtMs(e.maxMs)} | ${e.runs} | ` +
        `${e.gflops.toFixed(1)} | ${e.vsOrtWeb ? `${e.vsOrtWeb.toFixed(2)} / ${e.vsOrtWebMin.toFixed(2)}${e.vsOrtWebPaired ? ` / ${e.vsOrtWebPaired.toFixed(2)}` : ''}` : '—'} | ${e.pctPeak.toFixed(0)}% | ${mem} | ` +
        `${e.reference ? 'reference' : e.maxAbsDiff.toExponential(1)} |`,
    );
  }
  lines.push('');
  lines.push(
    '× ort-web: onnxruntime-web median / this median, then the same from the minimum times, then the median over ' +
      'timed rounds of the two times of one round (> 1 = faster than onnxruntime-web; on a loaded machine the ' +
      'minima and the paired rounds are the steadier figures: a slow phase of the machine that spans a round ' +
      'slows both sides of a pair). Memory growth: wasm ' +
      'memory size after the case (high-water during it) minus before it; wasm memory never shrinks, so it is the ' +
      'growth beyond what earlier cases of the same instance already reserved (cases run in table order, SDPA ' +
      'first). "RSS Δ" (plain JS, onnxruntime-node) is the process resident-set change, a rough figure. Max abs Δ: ' +
      'against attnlab-simd on the first run, before timing (must be ≤ 1e-3).',
  );
  lines.push('');
  if (breakdown.length) {
    lines.push('attnlab-simd sub-steps (public API, same process; what each step costs in wasm):');
    lines.push('');
    lines.push('| L | step | median ms | min–max ms | GFLOP/s | % SIMD peak |');
    lines.push('|---:|---|---:|---:|---:|---:|');
    for (const b of breakdown) {
      lines.push(`| ${b.L} | ${b.step} | ${fmtMs(b.medianMs)} | ${fmtMs(b.minMs)}–${fmtMs(b.maxMs)} | ${b.gflops.toFixed(1)} | ${b.pctPeak.toFixed(0)}% |`);
    }
    lines.push('');
    for (const L of [...new Set(breakdown.map((b) => b.L))]) {
      // Minimum times: on a shared machine they are the steadiest estimate of each step's own cost.
      const t = (prefix) => breakdown.find((b) => b.L === L && b.step.startsWith(prefix))?.minMs ?? NaN;
      const t64 = t('SDPA d = 64');
      const soft = Math.max(0, 2 * t64 - t('SDPA d = 128'));
      const proj = 2 * t('MHA, one key');
      const mhaMs = t('MHA full');
      lines.push(
        `L = ${L}, from minimum times: softmax + tile bookkeeping ≈ ${fmtMs(soft)} of ${fmtMs(t64)} ms SDPA ` +
          `(${((100 * soft) / t64).toFixed(0)}%; estimate 2·T(d=64) − T(d=128), clamped at 0); MHA ${fmtMs(mhaMs)} ms ≈ ` +
          `projections ${fmtMs(proj)} ms (one-key run × 2) + attention ${fmtMs(t64)} ms + rest ${fmtMs(mhaMs - proj - t64)} ms.`,
      );
    }
    lines.push('');
  }
  lines.push('| goal (issue 5) | measured (medians) | from minima | paired rounds | target | met (medians) |');
  lines.push('|---|---:|---:|---:|---:|---|');
  for (const g of goals) {
    const v = g.value == null ? 'n/a' : g.unit === 'MiB' ? `${g.value.toFixed(1)} MiB` : `${g.value.toFixed(2)}×`;
    const m = g.fromMin == null ? '' : `${g.fromMin.toFixed(2)}×`;
    const p = g.fromPairs == null ? '' : `${g.fromPairs.toFixed(2)}×`;
    const t = g.unit === 'MiB' ? `≤ ${g.target} MiB` : `≥ ${g.target}×`;
    lines.push(`| ${g.goal} | ${v} | ${m} | ${p} | ${t} | ${g.met == null ? 'n/a' : g.met ? 'yes' : 'no'} |`);
  }
  lines.push('');
  return lines.join('\n');
}

// `node run.mjs --render [results.json]`: rewrites results.md from a saved results.json (no measuring).
async function renderOnly(file) {
  const data = JSON.parse(fs.readFileSync(file, 'utf8'));
  for (const c of new Set(data.results.map((e) => `${e.op}:${e.L}`))) {
    const [op, L] = c.split(':');
    setOrtWebRatios(data.results.filter((e) => e.op === op && e.L === Number(L)));
  }
  data.goals = computeGoals(data.results);
  const md = renderMarkdown({ ...data, breakdown: data.breakdown ?? [] });
  fs.writeFileSync(file, JSON.stringify(data, null, 2));
  fs.writeFileSync(file.replace(/\.json$/, '.md'), md);
  console.log(md);
}

const renderAt = process.argv.indexOf('--render');
(renderAt >= 0
  ? renderOnly(process.argv[renderAt + 1] ?? path.join(repoRoot, 'build/bench/results.json'))
  : main()
).catch((err) => {
  console.error(err?.stack ?? err);
  process.exit(1);
});
