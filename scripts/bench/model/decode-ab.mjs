// Decode before / after (not a test; docs/benchmarks.md, "Decode: the cache read in place"): the GPT-2-small-shaped
// model of export_gpt2.py (build/bench/gpt2-small) loaded by two builds of the package in one Node process, one-token
// decode steps at contexts 128 / 512 / 1024 through each one's KV cache, in interleaved rounds (cases.mjs runDecode:
// every peer once per round, the first one rotating; each step's logits checked against the first peer's).
//   node --expose-gc scripts/bench/model/decode-ab.mjs BEFORE_DIST [AFTER_DIST]
// AFTER_DIST defaults to dist/. Knobs: BENCH_AB_VARIANTS=simd,simd-threaded@2 (default simd: one thread);
// BENCH_MODEL_DECODE=128,512,1024; BENCH_MODEL_DECODE_ROUNDS (default 4; rounds × 8 steps must stay below the
// smallest context); BENCH_MODEL_DIR; BENCH_OUT (default build/bench: decode-ab.json). Source heap-env.sh first, as
// run.sh does, to measure under the same allocator settings.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { log } from '../stats.mjs';
import { runDecode } from './cases.mjs';
import { DECODE_C, cacheDecoder, copyBandwidth2, dims, pairedRatio, readConfig, tokenIds } from './common.mjs';
import { modelDir, repoRoot } from './files.mjs';

const hf = readConfig();
const ids = tokenIds(hf.n_positions, dims(hf).V);

/** One decode peer: `side`'s package (dist folder), `variant` ('simd' or 'simd-threaded@N'), the model loaded. */
async function peer(side, dist, variant) {
  const pkg = await import(pathToFileURL(path.join(dist, 'index.mjs')).href);
  const [name, threads] = variant.split('@');
  const attn = await pkg.init(threads ? { variant: name, threads: Number(threads) } : { variant: name });
  const bytes = fs.readFileSync(path.join(modelDir, 'model.safetensors'));
  const model = attn.loadModel({
    config: hf,
    tensors: pkg.readSafetensors(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)),
  });
  const toks = (a, b) => ({ data: ids.slice(a, b), shape: [1, b - a] });
  return {
    name: `${side} ${variant}`,
    side,
    variant,
    kind: 'attnlab',
    threads: Number(threads ?? 1),
    cpu: threads > 1 ? 'process' : 'main', // one thread: the JS thread computes
    memBytes: () => attn.memoryBytes(),
    decoder: () => cacheDecoder(model, toks, hf.n_positions),
  };
}

/** Per variant and context: before's and after's medians and spreads, and the paired ratios before ÷ after. */
function summary(decode, variants) {
  const rows = [];
  for (const { C, entries } of decode) {
    for (const v of variants) {
      const [b, a] = ['before', 'after'].map((s) => entries.find((e) => e.impl === `${s} ${v}`));
      const pick = (e) => ({
        medianMs: e.medianMs,
        minMs: e.minMs,
        maxMs: e.maxMs,
        cpuMedianMs: e.cpuMedianMs,
        cpuMinMs: Math.min(...e.cpuTimes),
        cpuMaxMs: Math.max(...e.cpuTimes),
      });
      rows.push({
        C,
        variant: v,
        before: pick(b),
        after: pick(a),
        status: [b.status, a.status],
        speedup: b.medianMs / a.medianMs,
        speedupPaired: pairedRatio(b.times, a.times),
        speedupCpu: b.cpuMedianMs / a.cpuMedianMs,
        speedupCpuPaired: pairedRatio(b.cpuTimes, a.cpuTimes),
      });
    }
  }
  return rows;
}

async function main(beforeDist, afterDist) {
  const variants = (process.env.BENCH_AB_VARIANTS ?? 'simd').split(',');
  const load = () =>
    os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ');
  log(
    `decode before/after: ${os.cpus()[0]?.model}, ${os.cpus().length} cores, node ${process.version}, load ${load()}`,
  );
  const peers = [];
  for (const v of variants) {
    peers.push(await peer('before', beforeDist, v), await peer('after', afterDist, v));
  }
  const copy = copyBandwidth2(256 * 2 ** 20);
  const decode = [];
  const loadavg = [os.loadavg()];
  for (const C of DECODE_C) {
    decode.push(await runDecode(peers, hf, C, copy));
    loadavg.push(os.loadavg());
  }
  const rows = summary(decode, variants);
  const cpu = (x) => `${x.cpuMedianMs.toFixed(1)} [${x.cpuMinMs.toFixed(1)}–${x.cpuMaxMs.toFixed(1)}]`;
  for (const r of rows) {
    log(
      `C=${r.C} ${r.variant}: before ${r.before.medianMs.toFixed(1)} ms [${r.before.minMs.toFixed(1)}–` +
        `${r.before.maxMs.toFixed(1)}] CPU ${cpu(r.before)}, after ${r.after.medianMs.toFixed(1)} ms ` +
        `[${r.after.minMs.toFixed(1)}–${r.after.maxMs.toFixed(1)}] CPU ${cpu(r.after)}; before ÷ after ` +
        `${r.speedup.toFixed(2)}× (paired ${r.speedupPaired.toFixed(2)}×, CPU ${r.speedupCpu.toFixed(2)}×, CPU paired ` +
        `${r.speedupCpuPaired.toFixed(2)}×) ${r.status.join('/')}`,
    );
  }
  const out = {
    date: new Date().toISOString(),
    machine: { cpu: os.cpus()[0]?.model, cores: os.cpus().length, loadavg },
    node: process.version,
    dists: { before: beforeDist, after: afterDist },
    built: Object.fromEntries(
      [beforeDist, afterDist].map((d, i) => [i ? 'after' : 'before', fs.statSync(path.join(d, 'index.mjs')).mtime]),
    ),
    model: path.relative(repoRoot, modelDir),
    rows,
    decode,
  };
  const file = path.join(repoRoot, process.env.BENCH_OUT ?? 'build/bench', 'decode-ab.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(out, null, 2));
  log(`wrote ${path.relative(repoRoot, file)}`);
}

const [before, after = path.join(repoRoot, 'dist')] = process.argv.slice(2);
if (!before) {
  console.error('usage: decode-ab.mjs BEFORE_DIST [AFTER_DIST]');
  process.exit(2);
}
main(path.resolve(before), path.resolve(after)).then(
  () => process.exit(0), // a threaded instance's workers would keep Node alive
  (err) => {
    console.error(err?.stack ?? err);
    process.exit(1);
  },
);
