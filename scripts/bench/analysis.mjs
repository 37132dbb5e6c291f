// Times attnlab/analysis (dist/analysis.mjs, pure JS) in Node against issue 35's goals: rollout over 12 layers at
// T = 128 (< 50 ms) and attentionFlow over 12 layers at T = 64 (< 1 s), 12 heads, batch 1, on random softmax rows,
// dense (an encoder) and causal (a decoder; flow from the last position). Rounds are interleaved (each round runs
// every case once, after a warm-up round) and each case reports its median and minimum over the rounds, by the wall
// clock and by the process's CPU time (on a shared host the wall clock also counts waiting for a core).
//   node scripts/bench/analysis.mjs [--rounds N]     (needs dist/: npm run build, or scripts/build.sh)
import { loadavg } from 'node:os';

import { attentionFlow, rollout } from '../../dist/analysis.mjs';
import { makeRng } from '../../tests/js/rng.mjs';
import { cpuName, fmtMs, median } from './stats.mjs';

const roundsArg = process.argv.indexOf('--rounds');
const rounds = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 11;

/** L layers (1, H, T, T) of softmax rows of random logits (causal: keys after the query get 0). */
function attentions(seed, L, H, T, causal) {
  const rng = makeRng(seed);
  return Array.from({ length: L }, () => {
    const data = new Float32Array(H * T * T);
    for (let row = 0; row < H * T; ++row) {
      const i = row % T;
      let sum = 0;
      for (let j = 0; j < T; ++j) {
        const v = causal && j > i ? 0 : Math.exp(4 * rng());
        data[row * T + j] = v;
        sum += v;
      }
      for (let j = 0; j < T; ++j) data[row * T + j] /= sum;
    }
    return { data, shape: [1, H, T, T] };
  });
}

const cases = [
  { name: 'rollout, 12 layers × 12 heads, T = 128, dense', goalMs: 50, input: attentions(1, 12, 12, 128, false) },
  { name: 'rollout, 12 layers × 12 heads, T = 128, causal', goalMs: 50, input: attentions(2, 12, 12, 128, true) },
  { name: 'attentionFlow, 12 layers × 12 heads, T = 64, dense', goalMs: 1000, input: attentions(3, 12, 12, 64, false) },
  { name: 'attentionFlow, 12 layers × 12 heads, T = 64, causal', goalMs: 1000, input: attentions(4, 12, 12, 64, true) },
];
const run = (c) => (c.name.startsWith('rollout') ? rollout(c.input) : attentionFlow(c.input, { query: 63 }));

console.log(`CPU: ${cpuName()}; Node ${process.versions.node}; load average ${loadavg()[0].toFixed(2)}`);
for (const c of cases) run(c); // warm-up round
const times = cases.map(() => ({ wall: /** @type {number[]} */ ([]), cpu: /** @type {number[]} */ ([]) }));
for (let r = 0; r < rounds; ++r) {
  cases.forEach((c, k) => {
    const [t0, cpu0] = [performance.now(), process.cpuUsage()];
    run(c);
    const cpu = process.cpuUsage(cpu0);
    times[k].wall.push(performance.now() - t0);
    times[k].cpu.push((cpu.user + cpu.system) / 1000);
  });
}
cases.forEach((c, k) => {
  const { wall, cpu } = times[k];
  const m = median(wall);
  const verdict = m < c.goalMs ? 'meets' : 'misses';
  console.log(
    `${c.name}: median ${fmtMs(m)} ms, min ${fmtMs(Math.min(...wall))} ms, CPU time median ${fmtMs(median(cpu))} ms ` +
      `over ${rounds} rounds (${verdict} the goal < ${c.goalMs} ms by the wall clock)`,
  );
});
console.log(`load average after: ${loadavg()[0].toFixed(2)}`);
