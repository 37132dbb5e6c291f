// Times head importance (issue 35) on the GPT-2-small-shaped bench model (build/bench/gpt2-small, from
// scripts/bench/model/export_gpt2.py; BENCH_MODEL_DIR to point elsewhere): all 144 heads (12 layers × 12) on one
// 64-token prompt, by the head mask's gradient (one forward and backward) against ablation (144 + 1 forwards).
// Natively (--native: build/native/attnlab_model_bench's "importance" command, one thread) or in this process on a
// wasm variant (model.headImportance). The gradient case is warmed up, then both run interleaved over rounds; each
// reports its median and minimum by the wall clock and the process's CPU time (on a shared host the wall clock also
// counts waiting for a core).
//   node scripts/bench/head_importance.mjs [--native] [--rounds N] [--variant simd]
//   (wasm needs dist/: scripts/build.sh; native: cmake --build build/native --target attnlab_model_bench)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';

import { makeRng } from '../../tests/js/rng.mjs';
import { modelDir, repoRoot } from './model/files.mjs';
import { cpuName, fmtMs, median } from './stats.mjs';

const arg = (name, dflt) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : dflt);
const native = process.argv.includes('--native');
const rounds = Number(arg('--rounds', 2));
const variant = arg('--variant', 'simd');
const T = 64;
const methods = ['gradient', 'ablation'];

const hf = JSON.parse(fs.readFileSync(path.join(modelDir, 'config.json'), 'utf8'));
const rng = makeRng(35);
const ids = Int32Array.from({ length: T + 1 }, () => rng.int(0, hf.vocab_size - 1));

/** [{ ms, cpuMs }] per method per round, the gradient warmed up first: natively. */
function runNative() {
  const file = path.join(tmpdir(), `head_importance_ids_${process.pid}.bin`);
  fs.writeFileSync(file, new Uint8Array(ids.buffer));
  const commands = [`importance ${T} gradient`];
  for (let r = 0; r < rounds; ++r) commands.push(...methods.map((m) => `importance ${T} ${m}`));
  const bin = path.join(repoRoot, 'build/native/attnlab_model_bench');
  const out = execFileSync(bin, ['--model', modelDir, '--tokens', file, '--serve'], {
    input: ['threads 1', ...commands].join('\n') + '\n',
    encoding: 'utf8',
    maxBuffer: 1 << 24,
  });
  fs.rmSync(file);
  const lines = out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .slice(3); // ready, threads, warm-up
  return methods.map((_, k) => lines.filter((_, i) => i % methods.length === k));
}

/** The same in this process, on a wasm variant. */
async function runWasm() {
  const { init, readSafetensors } = await import('../../dist/index.mjs');
  const attn = await init({ variant });
  const bytes = fs.readFileSync(path.join(modelDir, 'model.safetensors'));
  const model = attn.loadModel({ config: hf, tensors: readSafetensors(new Uint8Array(bytes)) });
  const batch = { tokens: { data: ids.slice(0, T), shape: [1, T] }, targets: { data: ids.slice(1), shape: [1, T] } };
  const time = (method) => {
    const [t0, cpu0] = [performance.now(), process.cpuUsage()];
    model.headImportance(batch, { method });
    const cpu = process.cpuUsage(cpu0);
    return { ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000 };
  };
  time('gradient');
  const times = methods.map(() => /** @type {{ ms: number, cpuMs: number }[]} */ ([]));
  for (let r = 0; r < rounds; ++r) methods.forEach((m, k) => times[k].push(time(m)));
  model.dispose();
  return times;
}

console.log(`CPU: ${cpuName()}; Node ${process.versions.node}; load average ${loadavg()[0].toFixed(2)}`);
console.log(`${native ? 'native, 1 thread' : `wasm ${variant}`}; ${hf.n_layer} layers × ${hf.n_head} heads; T = ${T}`);
const times = native ? runNative() : await runWasm();
methods.forEach((m, k) => {
  const wall = times[k].map((t) => t.ms);
  console.log(
    `${m}: median ${fmtMs(median(wall))} ms, min ${fmtMs(Math.min(...wall))} ms, ` +
      `CPU time median ${fmtMs(median(times[k].map((t) => t.cpuMs)))} ms over ${rounds} rounds`,
  );
});
const ratio = median(times[1].map((t) => t.cpuMs)) / median(times[0].map((t) => t.cpuMs));
console.log(
  `ablation / gradient, CPU time medians: ${ratio.toFixed(1)}×; load average after ${loadavg()[0].toFixed(2)}`,
);
