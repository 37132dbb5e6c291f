// The model bench's native phase (run by run.sh after wasm.mjs; `node scripts/bench/model/native.mjs`): attnlab's
// native build (cpp/bench/model_bench.cc: attnlab::Transformer, Highway's best target for this CPU, 1 and 2 threads)
// against onnxruntime-node 1.30 (1 and 2 intra-op threads) on the same weights, interleaved round by round: this
// process times onnxruntime-node and sends the native program one command per run (it times its own calls). The
// same cases as the wasm phase (cases.mjs), the native logits checked against onnxruntime-node's through files,
// and where attnlab's native time goes (the program's `breakdown`). Writes build/bench/model-native.json.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { MiB, log, maxAbsDiff } from '../stats.mjs';
import { runDecode, runPrefill } from './cases.mjs';
import { DECODE_C, PREFILL_T, QUICK, TOL_LOGITS, copyBandwidth2, dims, readConfig, tokenIds } from './common.mjs';
import { modelDir, repoRoot } from './files.mjs';
import { LineProgram } from './line-program.mjs';
import { ortPeer } from './ort-peer.mjs';

const hf = readConfig();
const { V } = dims(hf);
const ids = tokenIds(hf.n_positions, V);
const outDir = path.join(repoRoot, process.env.BENCH_OUT ?? 'build/bench');
const bin = path.resolve(repoRoot, process.env.BENCH_MODEL_NATIVE_BIN ?? 'build/native/attnlab_model_bench');
const threadCounts = [1, 2].filter((n) => n <= Number(process.env.BENCH_THREADS_MAX ?? os.cpus().length));

function readFloats(file) {
  const b = fs.readFileSync(file);
  fs.rmSync(file);
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

function nativePeer(nat, threads) {
  const scratch = path.join(outDir, `model-native-steps-${threads}.bin`);
  return {
    name: `attnlab-native@${threads}`,
    kind: 'attnlab',
    threads,
    prefill(T) {
      return async () => {
        await nat.cmd(`threads ${threads}`);
        const r = await nat.cmd(`prefill ${T} 1`);
        return { ms: r.ms, cpuMs: r.cpuMs };
      };
    },
    decoder() {
      const name = `t${threads}`;
      return {
        async fill(n) {
          await nat.cmd(`threads ${threads}`);
          await nat.cmd(`fill ${name} ${n}`);
        },
        async steps(n) {
          await nat.cmd(`threads ${threads}`);
          fs.rmSync(scratch, { force: true });
          const r = await nat.cmd(`steps ${name} ${n} ${scratch}`);
          const all = readFloats(scratch);
          return {
            ms: r.ms,
            cpuMs: r.cpuMs,
            logits: Array.from({ length: n }, (_, i) => all.slice(i * V, (i + 1) * V)),
          };
        },
      };
    },
  };
}

async function main() {
  const t0 = performance.now();
  const loadavg = [os.loadavg()];
  log(
    `attnlab model bench (native): ${os.cpus()[0]?.model ?? '?'}, ${os.cpus().length} cores, load ` +
      `${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}`,
  );
  if (!fs.existsSync(bin)) throw new Error(`missing ${bin}: build the CMake target attnlab_model_bench (run.sh does)`);
  fs.mkdirSync(outDir, { recursive: true });
  const tokensFile = path.join(outDir, 'model-tokens.bin');
  fs.writeFileSync(tokensFile, new Uint8Array(ids.buffer));
  const nat = new LineProgram(bin, ['--model', modelDir, '--tokens', tokensFile, '--serve']);
  const ready = await nat.ready;
  log(`  attnlab native: Highway target ${ready.target}, ${ready.parameters} parameters`);

  const ort = await import('onnxruntime-node');
  const startPasts = new Map();
  const ortPeers = [];
  for (const n of threadCounts) {
    const opts = {
      intraOpNumThreads: n,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
    };
    const ts = performance.now();
    const sessions = {
      prefill: await ort.InferenceSession.create(path.join(modelDir, 'prefill.onnx'), opts),
      decode: await ort.InferenceSession.create(path.join(modelDir, 'decode.onnx'), opts),
    };
    const name = n === 1 ? 'onnxruntime-node' : `onnxruntime-node@${n}`;
    log(`  ${name}: 2 sessions in ${((performance.now() - ts) / 1e3).toFixed(1)} s`);
    ortPeers.push(ortPeer(ort, sessions, { name, threads: n, hf, ids, startPasts, cpu: 'process' }));
  }
  const natPeers = threadCounts.map((n) => nativePeer(nat, n));

  // The check: attnlab native's logits against onnxruntime-node's (1 thread) at the first prefill length.
  const Tc = Math.min(...PREFILL_T);
  const file = path.join(outDir, 'model-native-logits.bin');
  await nat.cmd('threads 1');
  await nat.cmd(`logits ${Tc} ${file}`);
  const mine = readFloats(file);
  const theirs = (await ortPeers[0].prefill(Tc)()).logits;
  const check = { T: Tc, maxAbsDiffLogits: maxAbsDiff(mine, theirs) };
  log(
    `  check: attnlab native vs onnxruntime-node at T=${Tc}: max |Δ logits| ${check.maxAbsDiffLogits.toExponential(2)}`,
  );
  if (!(check.maxAbsDiffLogits <= TOL_LOGITS)) throw new Error('MISMATCH between attnlab native and onnxruntime-node');

  const peers = [...natPeers, ...ortPeers];
  const prefill = [];
  for (const T of PREFILL_T) {
    prefill.push(await runPrefill(peers, hf, T, { budgetS: 60 }));
    loadavg.push(os.loadavg());
  }
  const bandwidth = copyBandwidth2(256 * MiB);
  log(
    `\ncopy bandwidth (TypedArray.set, 256 MiB, read + written): ${(bandwidth.wall / 1e9).toFixed(1)} GB/s by the ` +
      `wall clock, ${(bandwidth.cpu / 1e9).toFixed(1)} GB/s by CPU time`,
  );
  const decode = [];
  for (const C of DECODE_C) {
    decode.push(await runDecode(peers, hf, C, bandwidth));
    loadavg.push(os.loadavg());
  }
  const breakdown = [];
  const T = QUICK ? 32 : Math.max(...PREFILL_T);
  for (const n of threadCounts) {
    await nat.cmd(`threads ${n}`);
    log(`\n== native breakdown at T=${T}, ${n} thread(s)`);
    const b = await nat.cmd(`breakdown ${T} ${Number(process.env.BENCH_MODEL_BREAKDOWN_REPS ?? 5)}`);
    log(
      `  ${Object.entries(b.ms)
        .map(([k, v]) => `${k} ${v.toFixed(1)}`)
        .join(', ')} ms`,
    );
    breakdown.push({ impl: `attnlab-native@${n}`, ...b });
    loadavg.push(os.loadavg());
  }
  await nat.quit();
  const out = {
    date: new Date().toISOString(),
    quick: QUICK,
    machine: { cpu: os.cpus()[0]?.model ?? '?', cores: os.cpus().length, loadavg },
    versions: {
      node: process.version,
      'onnxruntime-node': JSON.parse(
        fs.readFileSync(path.join(repoRoot, 'scripts/bench/node_modules/onnxruntime-node/package.json'), 'utf8'),
      ).version,
      'attnlab native target': ready.target,
      'attnlab native built': fs.statSync(bin).mtime.toISOString(),
    },
    model: { dir: path.relative(repoRoot, modelDir), config: hf },
    check,
    bandwidth: { copyBytesPerS: bandwidth.wall, copyBytesPerCpuS: bandwidth.cpu },
    prefill,
    decode,
    breakdown,
    wallS: (performance.now() - t0) / 1e3,
  };
  const outFile = path.join(outDir, 'model-native.json');
  fs.writeFileSync(outFile, JSON.stringify(out, null, 2));
  log(`wrote ${path.relative(repoRoot, outFile)} (${out.wallS.toFixed(0)} s)`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err?.stack ?? err);
    process.exit(1);
  },
);
