// The training benchmark (issue 26 item 5; run by run.sh, or `node scripts/bench/model/train.mjs`): training steps
// of the poem model's configuration (docs/poem-model.md: Llama, E 128, 4 layers of 4 heads of 32, MLP 352,
// vocabulary 6822, tied embeddings; batches of 48 rows × 34 tokens, the trainer's 48 poems padded to the longest)
// with AdamW (lr 1e-4, clip 1), in one run, interleaved round by round:
//   - attnlab native (cpp/bench/model_bench.cc --train, 1 and 2 threads),
//   - attnlab wasm in this process (simd; simd-threaded at 2 threads), model.trainStep,
//   - PyTorch 1.13 (/usr/bin/python3 train_torch.py: the reference LlamaForCausalLM, 1 and 2 threads).
// Every peer starts from the same random token ids (ids.bin) and takes the same batches; the attnlab peers start
// from the same weights (seed 1), so their first losses agree, and every loss must be near ln V (a fresh model).
// The SIMD peak is measured in the run, by CPU time: native = independent FMA chains (model_bench.cc `peak`), wasm =
// SIMD128 mul + add chains and a GEMM register tile (../simd-peak.mjs's modules). Flops of a step: 6 · (parameters
// of the matrix products, the tied LM head included) · tokens + attention (forward QKᵀ and PV over the causal
// T(T+1)/2 pairs, 2·T(T+1)·H·D per row and layer; backward twice that). Writes build/bench/model-train.{json,md}.
// Knobs: BENCH_TRAIN_ROUNDS (5), BENCH_TRAIN_STEPS (steps per peer per round, 2), BENCH_TRAIN_PEERS (a list of
// names, e.g. native@2,simd), BENCH_QUICK=1 (2 rounds of 1 step); a baseline in the same rounds (before/after a
// change): BENCH_TRAIN_BASELINE_BIN (another attnlab_model_bench: peer native-base@1) and BENCH_TRAIN_BASELINE_DIST
// (another dist/ folder: peer simd-base).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { makeRng } from '../../../tests/js/rng.mjs';
import { kTileFlopsPerIter, peakModuleBytes, tilePeakModuleBytes } from '../simd-peak.mjs';
import { log } from '../stats.mjs';
import { QUICK, clocks, pairedRatio, roundRobin, since, summarize } from './common.mjs';
import { repoRoot } from './files.mjs';
import { LineProgram } from './line-program.mjs';
import { renderTrain } from './train-report.mjs';

/** The poem model's configuration, as createModel takes it. */
export const POEM = {
  arch: 'llama',
  vocabSize: 6822,
  contextLength: 80,
  embedDim: 128,
  numLayers: 4,
  numHeads: 4,
  numKVHeads: 4,
  headDim: 32,
  hiddenDim: 352,
  normEps: 1e-5,
  ropeTheta: 10000,
  tieEmbeddings: true,
};
/** The same as a Hugging Face config.json (for the native program and PyTorch). */
const POEM_HF = {
  model_type: 'llama',
  vocab_size: POEM.vocabSize,
  max_position_embeddings: POEM.contextLength,
  hidden_size: POEM.embedDim,
  num_hidden_layers: POEM.numLayers,
  num_attention_heads: POEM.numHeads,
  num_key_value_heads: POEM.numKVHeads,
  head_dim: POEM.headDim,
  intermediate_size: POEM.hiddenDim,
  rms_norm_eps: POEM.normEps,
  rope_theta: POEM.ropeTheta,
  tie_word_embeddings: POEM.tieEmbeddings,
};
export const B = 48;
export const T = 34;
const ROUNDS = Number(process.env.BENCH_TRAIN_ROUNDS ?? (QUICK ? 2 : 5));
const STEPS = Number(process.env.BENCH_TRAIN_STEPS ?? (QUICK ? 1 : 2));
const ADAMW = { lr: 1e-4, clipGradNorm: 1 }; // as model_bench.cc and train_torch.py
const outDir = path.join(repoRoot, process.env.BENCH_OUT ?? 'build/bench');
const bin = path.resolve(repoRoot, process.env.BENCH_MODEL_NATIVE_BIN ?? 'build/native/attnlab_model_bench');

/** Flops of one training step (see the header). */
export function stepFlops(c = POEM, rows = B, len = T) {
  const { embedDim: E, numHeads: H, numKVHeads: Hkv, headDim: D, hiddenDim: F, numLayers: L, vocabSize: V } = c;
  const matrices = L * (E * H * D + 2 * E * Hkv * D + H * D * E + 3 * E * F) + V * E;
  const gemm = 6 * matrices * rows * len;
  const attention = 3 * 2 * len * (len + 1) * H * D * L * rows;
  return { matrices, gemm, attention, total: gemm + attention };
}

/** B·(T + 1)·4 seeded ids in [0, V): four different batches, then again. */
function tokenIds() {
  const rng = makeRng(2626);
  return Int32Array.from({ length: B * (T + 1) * 4 }, () => Math.floor(rng() * POEM.vocabSize));
}

// --- the peers: { name, kind, threads, run(n) → { ms: [...], cpuMs: [...], loss: [...] } } -----------------------
function programPeers(program, kind, prefix, threadCounts) {
  return threadCounts.map((threads) => ({
    name: `${prefix}@${threads}`,
    kind,
    threads,
    async run(n) {
      await program.cmd(`threads ${threads}`);
      return program.cmd(`train ${B} ${T} ${n}`);
    },
  }));
}

async function wasmPeer(dist, variant, threads, ids) {
  const attn = await dist.init(threads ? { variant, threads } : { variant });
  const model = attn.createModel({ ...POEM, seed: 1 });
  let row = 0;
  const rows = Math.floor(ids.length / (T + 1));
  const tokens = new Int32Array(B * T);
  const targets = new Int32Array(B * T);
  return {
    name: threads ? `${variant}@${threads}` : variant,
    kind: 'wasm',
    threads: threads ?? 1,
    run(n) {
      const r = { ms: [], cpuMs: [], loss: [] };
      for (let s = 0; s < n; ++s) {
        for (let i = 0; i < B; ++i, ++row) {
          const at = (row % rows) * (T + 1);
          tokens.set(ids.subarray(at, at + T), i * T);
          targets.set(ids.subarray(at + 1, at + T + 1), i * T);
        }
        const c0 = clocks();
        const { loss } = model.trainStep({ data: tokens, shape: [B, T] }, { data: targets, shape: [B, T] }, ADAMW);
        const d = since(c0);
        r.ms.push(d.ms);
        r.cpuMs.push(threads ? d.procCpuMs : d.mainCpuMs); // one thread: the JS thread computes
        r.loss.push(loss);
      }
      return r;
    },
  };
}

/** WebAssembly SIMD128's peak per thread by CPU time: the best of simd-peak.mjs's chain modules and its register
 *  tile, each the best of 5 calls of ≈ 0.1 s, flops ÷ the JS thread's CPU time. */
async function wasmPeakCpu() {
  const modules = [
    ...[8, 10, 12, 16].map((K) => ({ bytes: peakModuleBytes(K), flopsPerIter: 4 * K * 8, iters: 4e6 })),
    { bytes: tilePeakModuleBytes(), flopsPerIter: kTileFlopsPerIter, iters: 1e5 },
  ];
  let best = 0;
  for (const m of modules) {
    const { instance } = await WebAssembly.instantiate(m.bytes);
    instance.exports.peak(m.iters / 10); // warm-up
    for (let t = 0; t < 5; ++t) {
      const c0 = clocks();
      instance.exports.peak(m.iters);
      best = Math.max(best, (m.iters * m.flopsPerIter) / (since(c0).mainCpuMs / 1e3) / 1e9);
    }
  }
  return best;
}

/** The baseline peers (a build before a change, in the same rounds): native-base@1 from BENCH_TRAIN_BASELINE_BIN,
 *  simd-base from the dist folder BENCH_TRAIN_BASELINE_DIST; none without them. */
async function baselinePeers(ids, args) {
  const peers = [];
  const programs = [];
  if (process.env.BENCH_TRAIN_BASELINE_BIN) {
    const program = new LineProgram(path.resolve(process.env.BENCH_TRAIN_BASELINE_BIN), args);
    await program.ready;
    programs.push(program);
    peers.push(...programPeers(program, 'native', 'native-base', [1]));
  }
  if (process.env.BENCH_TRAIN_BASELINE_DIST) {
    const dist = await import(path.resolve(process.env.BENCH_TRAIN_BASELINE_DIST, 'index.mjs'));
    peers.push({ ...(await wasmPeer(dist, 'simd', null, ids)), name: 'simd-base' });
  }
  return { peers, programs };
}

async function loadPeers(ids, idsFile, configFile) {
  const wanted = process.env.BENCH_TRAIN_PEERS?.split(',');
  const keep = (p) => !wanted || wanted.includes(p.name) || p.name.includes('-base');
  const native = new LineProgram(bin, ['--train', configFile, '--tokens', idsFile, '--serve']);
  const torch = new LineProgram('/usr/bin/python3', [
    path.join(repoRoot, 'scripts/bench/model/train_torch.py'),
    '--config',
    configFile,
    '--tokens',
    idsFile,
  ]);
  const info = { native: await native.ready, torch: await torch.ready };
  const dist = await import(path.join(repoRoot, 'dist/index.mjs'));
  const baseline = await baselinePeers(ids, ['--train', configFile, '--tokens', idsFile, '--serve']);
  const peers = [
    ...programPeers(native, 'native', 'native', [1, 2]),
    await wasmPeer(dist, 'simd', null, ids),
    await wasmPeer(dist, 'simd-threaded', 2, ids),
    ...programPeers(torch, 'pytorch', 'pytorch', [1, 2]),
    ...baseline.peers,
  ].filter(keep);
  return { peers, programs: [native, torch, ...baseline.programs], info };
}

/** Interleaved rounds (the first peer rotating), after one untimed step each: per peer the steps' wall and CPU
 *  times and losses, and each round's mean step time (for paired ratios). */
async function timeRounds(peers) {
  const entries = peers.map((p) => ({ peer: p, times: [], cpuTimes: [], losses: [], roundMs: [] }));
  await roundRobin(
    entries,
    ROUNDS,
    async (e, rep) => {
      const r = await e.peer.run(rep < 0 ? 1 : STEPS);
      if (rep < 0) {
        e.firstLoss = r.loss[0];
        e.warmupMs = r.ms[0];
        return;
      }
      e.times.push(...r.ms);
      e.cpuTimes.push(...r.cpuMs);
      e.losses.push(...r.loss);
      e.roundMs.push(r.ms.reduce((a, b) => a + b, 0) / r.ms.length);
      log(`  round ${rep + 1}: ${e.peer.name.padEnd(16)} ${r.ms.map((x) => x.toFixed(0)).join(', ')} ms`);
    },
    { warmups: 1 },
  );
  return entries;
}

/** The checks: every loss finite and near ln V (a fresh model, lr 1e-4); the attnlab peers' first losses (the same
 *  weights and batch) within 1e-3 of each other. Throws on a failure: nothing is reported then. */
function check(entries) {
  const lnV = Math.log(POEM.vocabSize);
  for (const e of entries) {
    const bad = [e.firstLoss, ...e.losses].find((l) => !(Math.abs(l - lnV) < 0.5));
    if (bad !== undefined) throw new Error(`${e.peer.name}: loss ${bad}, expected ≈ ln V = ${lnV.toFixed(3)}`);
  }
  // native@2 continues native@1's model (one program), which takes its first step before it in the warm-up round
  const fresh = entries.filter((e) => e.peer.kind === 'wasm' || /^native(-base)?@1$/.test(e.peer.name));
  const firsts = fresh.map((e) => e.firstLoss);
  const spread = firsts.length ? Math.max(...firsts) - Math.min(...firsts) : 0;
  if (!(spread <= 1e-3)) throw new Error(`attnlab's first losses differ by ${spread}`);
  return { lnV, attnlabFirstLossSpread: spread, firstLosses: entries.map((e) => [e.peer.name, e.firstLoss]) };
}

function summarizeEntry(e, flops, peak, base) {
  const s = summarize(e.times);
  const cpuMedianMs = summarize(e.cpuTimes).medianMs;
  const perThread = e.peer.kind === 'wasm' ? peak.wasmPerThread : peak.nativePerThread;
  const gflops = flops.total / (s.medianMs / 1e3) / 1e9;
  const gflopsCpu = flops.total / (cpuMedianMs / 1e3) / 1e9;
  return {
    impl: e.peer.name,
    kind: e.peer.kind,
    threads: e.peer.threads,
    ...s,
    cpuMedianMs,
    tokensPerS: (B * T) / (s.medianMs / 1e3),
    tokensPerCpuS: (B * T) / (cpuMedianMs / 1e3),
    gflops,
    gflopsCpu,
    peakKind: e.peer.kind === 'wasm' ? 'SIMD128' : peak.nativeIsa,
    // the wall-clock rate against every thread's peak; the CPU-time rate against one thread's (what it reached
    // while it ran, whatever the neighbours took)
    pctPeak: (100 * gflops) / (perThread * e.peer.threads),
    pctPeakCpu: (100 * gflopsCpu) / perThread,
    vsBase: base && base !== e ? pairedRatio(e.roundMs, base.roundMs) : null,
    firstLoss: e.firstLoss,
    lastLoss: e.losses.at(-1),
  };
}

async function main() {
  const t0 = performance.now();
  const loadavg = [os.loadavg()];
  log(`attnlab training bench: ${os.cpus()[0]?.model ?? '?'}, ${os.cpus().length} cores, load ${loadavg[0][0]}`);
  if (!fs.existsSync(bin)) throw new Error(`missing ${bin}: build the CMake target attnlab_model_bench (run.sh does)`);
  fs.mkdirSync(outDir, { recursive: true });
  const ids = tokenIds();
  const idsFile = path.join(outDir, 'model-train-ids.bin');
  const configFile = path.join(outDir, 'model-train-config.json');
  fs.writeFileSync(idsFile, new Uint8Array(ids.buffer));
  fs.writeFileSync(configFile, JSON.stringify(POEM_HF, null, 2));
  const { peers, programs, info } = await loadPeers(ids, idsFile, configFile);
  const flops = stepFlops();
  log(`  ${B} × ${T} tokens a step, ${(flops.total / 1e9).toFixed(2)} GFLOP; peers ${peers.map((p) => p.name)}`);

  const native = programs[0];
  const peaks = [await native.cmd('peak 1'), await native.cmd('peak 2')];
  const wasmPerThread = await wasmPeakCpu();
  const entries = await timeRounds(peers);
  loadavg.push(os.loadavg());
  peaks.push(await native.cmd('peak 1'));
  const wasmAgain = await wasmPeakCpu();
  const peak = {
    nativeIsa: peaks[0].isa,
    nativePerThread: Math.max(...peaks.map((p) => p.perThreadCpu)),
    nativeWall: peaks,
    wasmPerThread: Math.max(wasmPerThread, wasmAgain),
  };
  log(
    `  peak by CPU time, per thread: ${peak.nativeIsa} ${peak.nativePerThread.toFixed(1)} GFLOP/s, SIMD128 ` +
      `${peak.wasmPerThread.toFixed(1)} GFLOP/s`,
  );
  const checks = check(entries);
  const base = entries.find((e) => e.peer.name === 'native@1') ?? entries[0];
  const results = entries.map((e) => summarizeEntry(e, flops, peak, base));
  for (const p of programs) await p.quit();
  const out = {
    date: new Date().toISOString(),
    quick: QUICK,
    machine: { cpu: os.cpus()[0]?.model ?? '?', cores: os.cpus().length, loadavg, cpuinfo: cpuInfo() },
    versions: {
      node: process.version,
      'attnlab dist built': fs.statSync(path.join(repoRoot, 'dist/index.mjs')).mtime.toISOString(),
      'attnlab native target': info.native.target,
      'attnlab native built': fs.statSync(bin).mtime.toISOString(),
      torch: info.torch.torch,
      'torch BLAS': info.torch.blas,
    },
    config: POEM,
    batch: { rows: B, tokens: T, adamw: ADAMW },
    parameters: { attnlab: info.native.parameters, torch: info.torch.parameters },
    flops,
    rounds: ROUNDS,
    stepsPerRound: STEPS,
    baseline: base.peer.name,
    peak,
    checks,
    results,
    wallS: (performance.now() - t0) / 1e3,
  };
  fs.writeFileSync(path.join(outDir, 'model-train.json'), JSON.stringify(out, null, 2));
  fs.writeFileSync(path.join(outDir, 'model-train.md'), renderTrain(out));
  log(`wrote ${path.relative(repoRoot, outDir)}/model-train.{json,md} (${out.wallS.toFixed(0)} s)`);
}

/** /proc/cpuinfo's model name, family, model and MHz (the clock the VM reports, not the one it runs at). */
function cpuInfo() {
  try {
    const text = fs.readFileSync('/proc/cpuinfo', 'utf8');
    const field = (k) => text.match(new RegExp(`^${k}\\s*: (.*)$`, 'm'))?.[1];
    return { model: field('model name'), family: field('cpu family'), model_: field('model'), mhz: field('cpu MHz') };
  } catch {
    return null;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().then(
    () => process.exit(0), // simd-threaded's workers would keep Node alive
    (err) => {
      console.error(err?.stack ?? err);
      process.exit(1);
    },
  );
}
