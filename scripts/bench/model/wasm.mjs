// The model bench's WebAssembly phase (run by run.sh; `node --expose-gc scripts/bench/model/wasm.mjs`): in one Node
// process, attnlab (simd, simd-threaded at 1 … BENCH_THREADS_MAX threads) against onnxruntime-web 1.30 (wasm, 1 and
// 2 threads) on the same GPT-2-small-shaped weights (export_gpt2.py):
//   - prefill of T = 128 / 512 tokens with every layer's attention returned (attnlab: forward(tokens,
//     { outputAttentions: true }); onnxruntime-web: prefill.onnx, its 12 attention outputs fetched), logits and
//     attentions checked against attnlab-simd's before timing;
//   - decode steps (one token) at context 128 / 512 / 1024 through a cache (attnlab: createKVCache + forward of one
//     token; onnxruntime-web: decode.onnx with the 24 past tensors fed back), each step's logits checked, and the
//     step's share of the memory-bandwidth limit against a copy bandwidth measured in this process;
//   - where attnlab's time goes (breakdown.mjs), and wasm / JS memory at load and at T = 512.
// Rounds are interleaved (every implementation once per round, the first one rotating); medians, min–max, and
// paired ratios (median over rounds of ort-web's time ÷ attnlab's in the same round). Writes
// build/bench/model-wasm.json (report.mjs renders it).
import '../capture-memory.mjs'; // patches WebAssembly before any wasm library is loaded

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { benchVariants, maxThreads } from '../attnlab-impls.mjs';
import { memoriesOf, setLoadingTag } from '../capture-memory.mjs';
import { importOrtWebInstance } from '../ort-web-instance.mjs';
import { MiB, log } from '../stats.mjs';
import { attnlabBreakdown } from './breakdown.mjs';
import { runDecode, runPrefill } from './cases.mjs';
import {
  DECODE_C,
  DECODE_ROUNDS,
  PREFILL_ROUNDS,
  PREFILL_T,
  QUICK,
  STEPS,
  cacheDecoder,
  copyBandwidth2,
  dims,
  readConfig,
  tokenIds,
} from './common.mjs';
import { modelDir, repoRoot } from './files.mjs';
import { ortPeer } from './ort-peer.mjs';

const gc = globalThis.gc ?? (() => {});
const jsMem = () => {
  gc();
  gc();
  const m = process.memoryUsage();
  return { heapUsed: m.heapUsed, arrayBuffers: m.arrayBuffers, external: m.external, rss: m.rss };
};
const jsDelta = (a, b) => ({
  heapUsed: b.heapUsed - a.heapUsed,
  arrayBuffers: b.arrayBuffers - a.arrayBuffers,
  rss: b.rss - a.rss,
});

const here = path.dirname(fileURLToPath(import.meta.url));
const hf = readConfig();
const ids = tokenIds(hf.n_positions, dims(hf).V);

// --- the peers ------------------------------------------------------------------------------------------------------
async function loadAttnlab() {
  setLoadingTag('attnlab');
  const dist = await import(path.join(repoRoot, 'dist/index.mjs'));
  const bytes = fs.readFileSync(path.join(modelDir, 'model.safetensors'));
  const tensors = dist.readSafetensors(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  const wanted = process.env.BENCH_MODEL_VARIANTS?.split(',');
  const peers = [];
  for (const v of benchVariants()) {
    if (v.name === 'scalar' && !wanted?.includes('scalar')) continue; // ≈ 5× slower: only when asked for
    const counts = v.threads ? Array.from({ length: maxThreads() }, (_, i) => i + 1) : [null];
    for (const threads of counts) {
      const name = threads ? `attnlab-${v.name}@${threads}` : `attnlab-${v.name}`;
      if (wanted && !wanted.includes(name.replace(/^attnlab-/, '')) && name !== 'attnlab-simd') continue;
      const attn = await dist.init(threads ? { variant: v.name, threads } : { variant: v.name });
      const js0 = jsMem();
      const wasm0 = attn.memoryBytes();
      const t0 = performance.now();
      const model = attn.loadModel({ config: hf, tensors });
      const loadS = (performance.now() - t0) / 1e3;
      const mem = { wasmBeforeLoad: wasm0, wasmAtLoad: attn.memoryBytes(), jsAtLoad: jsDelta(js0, jsMem()) };
      log(
        `  ${name}: loaded in ${loadS.toFixed(1)} s, wasm memory ${(wasm0 / MiB).toFixed(0)} → ` +
          `${(mem.wasmAtLoad / MiB).toFixed(0)} MiB`,
      );
      peers.push(attnlabPeer(attn, model, name, threads ?? 1, mem, loadS));
    }
  }
  return { peers, version: JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).version };
}

function attnlabPeer(attn, model, name, threads, mem, loadS) {
  const toks = (a, b) => ({ data: ids.slice(a, b), shape: [1, b - a] });
  return {
    name,
    kind: 'attnlab',
    threads,
    cpu: threads === 1 ? 'main' : 'process', // one thread: the JS thread computes
    attn,
    model,
    mem,
    loadS,
    memBytes: () => attn.memoryBytes(),
    prefill(T) {
      const t = toks(0, T);
      return () => {
        const r = model.forward(t, { outputAttentions: true });
        return { logits: r.logits.data, attentions: r.attentions.map((a) => a.data) };
      };
    },
    decoder: () => cacheDecoder(model, toks, hf.n_positions),
  };
}

async function loadOrtWeb(threads, tag, startPasts) {
  setLoadingTag(tag);
  const ort = threads === 1 ? await import('onnxruntime-web') : await importOrtWebInstance(`threads-${threads}`);
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.simd = true;
  ort.env.wasm.proxy = false;
  const opts = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };
  const mems = () => memoriesOf(tag);
  const memBytes = () => mems().reduce((s, m) => s + m.buffer.byteLength, 0);
  const js0 = jsMem();
  const t0 = performance.now();
  const prefill = await ort.InferenceSession.create(fs.readFileSync(path.join(modelDir, 'prefill.onnx')), opts);
  const wasmPrefill = memBytes();
  const decode = await ort.InferenceSession.create(fs.readFileSync(path.join(modelDir, 'decode.onnx')), opts);
  const loadS = (performance.now() - t0) / 1e3;
  const mem = { wasmAtLoadPrefill: wasmPrefill, wasmAtLoad: memBytes(), jsAtLoad: jsDelta(js0, jsMem()) };
  const name = threads === 1 ? 'onnxruntime-web' : `onnxruntime-web@${threads}`;
  log(
    `  ${name}: 2 sessions in ${loadS.toFixed(1)} s, wasm memory ${(wasmPrefill / MiB).toFixed(0)} MiB (prefill) → ` +
      `${(mem.wasmAtLoad / MiB).toFixed(0)} MiB (+ decode)`,
  );
  const cpu = threads === 1 ? 'main' : 'process';
  return ortPeer(ort, { prefill, decode }, { name, threads, hf, ids, mem, memBytes, loadS, startPasts, cpu });
}

// --- main ----------------------------------------------------------------------------------------------------------
async function main() {
  const t0 = performance.now();
  log(
    `attnlab model bench (wasm): ${os.cpus()[0]?.model ?? '?'}, ${os.cpus().length} cores, node ${process.version}, ` +
      `load ${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}; model ${path.relative(repoRoot, modelDir)}`,
  );
  const loadavg = [os.loadavg()];
  const copy = copyBandwidth2(256 * MiB);
  log(
    `copy bandwidth (TypedArray.set, 256 MiB, read + written): ${(copy.wall / 1e9).toFixed(1)} GB/s by the wall ` +
      `clock, ${(copy.cpu / 1e9).toFixed(1)} GB/s by CPU time`,
  );
  // attnlab's memory per checkpoint dtype, each in a fresh process (memory.mjs)
  const fresh = [];
  if (process.env.BENCH_MODEL_MEMORY !== '0') {
    for (const f of ['model.safetensors', 'model-f16.safetensors']) {
      const T = QUICK ? 32 : Math.max(...PREFILL_T);
      const r = spawnSync(process.execPath, ['--expose-gc', path.join(here, 'memory.mjs'), f, 'simd', String(T)], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      if (r.status !== 0) throw new Error(`memory.mjs ${f} failed (${r.status})`);
      const m = JSON.parse(r.stdout);
      fresh.push(m);
      log(
        `attnlab-simd, ${f} in a fresh process: wasm memory at load ${(m.atLoad.wasm / MiB).toFixed(0)} MiB, ` +
          `after T=${T} with every attention ${(m.atT.wasm / MiB).toFixed(0)} MiB; JS heap + ArrayBuffers at load ` +
          `${((m.atLoad.js.heapUsed + m.atLoad.js.arrayBuffers) / MiB).toFixed(0)} MiB (file dropped)`,
      );
    }
  }
  const js0 = jsMem();
  const { peers: attnlab, version } = await loadAttnlab();
  const startPasts = new Map(); // the onnxruntime-web peers share their starting caches (ortPeer's fill)
  const webPeers = [await loadOrtWeb(1, 'ort-web', startPasts)];
  if (maxThreads() >= 2) webPeers.push(await loadOrtWeb(2, 'ort-web@2', startPasts));
  const peers = [...attnlab, ...webPeers];
  log(
    `peers: ${peers.map((p) => p.name).join(', ')}; JS heap after loading all: ` +
      `${((jsMem().heapUsed - js0.heapUsed) / MiB).toFixed(0)} MiB`,
  );

  const prefill = [];
  for (const T of PREFILL_T) {
    prefill.push(await runPrefill(peers, hf, T));
    loadavg.push(os.loadavg());
  }
  // memory after the largest prefill (wasm memory never shrinks: its size is the peak so far)
  const memory = peers.map((p) => ({
    impl: p.name,
    ...p.mem,
    wasmAfterPrefill: p.memBytes(),
    prefillT: Math.max(...PREFILL_T),
  }));
  const copyAgain = copyBandwidth2(256 * MiB);
  const bandwidth = { wall: Math.max(copy.wall, copyAgain.wall), cpu: Math.max(copy.cpu, copyAgain.cpu) };
  const decode = [];
  for (const C of DECODE_C) {
    decode.push(await runDecode(peers, hf, C, bandwidth));
    loadavg.push(os.loadavg());
  }
  const breakdown = [];
  if (process.env.BENCH_MODEL_BREAKDOWN !== '0') {
    const which = (process.env.BENCH_MODEL_BREAKDOWN ?? 'simd-threaded@1,simd-threaded@2').split(',');
    for (const p of attnlab.filter((x) => which.includes(x.name.replace(/^attnlab-/, '')))) {
      breakdown.push(await attnlabBreakdown(p, hf, ids, QUICK ? 32 : Math.max(...PREFILL_T)));
      loadavg.push(os.loadavg());
    }
  }
  const out = {
    date: new Date().toISOString(),
    quick: QUICK,
    machine: {
      cpu: os.cpus()[0]?.model ?? '?',
      cores: os.cpus().length,
      loadavg,
      mallocMmapThreshold: process.env.MALLOC_MMAP_THRESHOLD_ ?? 'default',
    },
    versions: {
      node: process.version,
      attnlab: version,
      'attnlab dist built': fs.statSync(path.join(repoRoot, 'dist/index.mjs')).mtime.toISOString(),
      'onnxruntime-web': JSON.parse(
        fs.readFileSync(path.join(repoRoot, 'scripts/bench/node_modules/onnxruntime-web/package.json'), 'utf8'),
      ).version,
    },
    model: { dir: path.relative(repoRoot, modelDir), config: hf, stamp: readStamp() },
    bandwidth: {
      copyBytesPerS: bandwidth.wall,
      copyBytesPerCpuS: bandwidth.cpu,
      samples: [copy, copyAgain],
      method: 'TypedArray.set of 256 MiB, read + written bytes per second, best of 4',
    },
    rounds: { prefillMin: PREFILL_ROUNDS, decodeRounds: DECODE_ROUNDS, steps: STEPS },
    prefill,
    decode,
    memory,
    memoryFresh: fresh,
    breakdown,
    wallS: (performance.now() - t0) / 1e3,
  };
  const file = path.join(repoRoot, process.env.BENCH_OUT ?? 'build/bench', 'model-wasm.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(out, null, 2));
  log(`wrote ${path.relative(repoRoot, file)} (${out.wallS.toFixed(0)} s)`);
}

function readStamp() {
  try {
    return JSON.parse(fs.readFileSync(path.join(modelDir, 'stamp.json'), 'utf8'));
  } catch {
    return null;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().then(
    () => process.exit(0), // onnxruntime-web@2's worker threads would keep Node alive
    (err) => {
      console.error(err?.stack ?? err);
      process.exit(1);
    },
  );
}
