// The bench's report: the goals of issues 5, 14 (threads) and 19 (decode, report-decode.mjs) from the results, and
// results.md; `--render` rewrites both from a saved results.json.
import fs from 'node:fs';

import { D, E, H } from './config.mjs';
import { decodeGoals, renderDecode } from './report-decode.mjs';
import { MiB, fmtMiB, fmtMs, pairedRatio, setOrtWebRatios } from './stats.mjs';

// The (op, L) pairs whose goals compare one variant with another.
const kSizes = [
  ['MHA', 128],
  ['MHA', 512],
  ['MHA', 2048],
  ['SDPA', 512],
  ['SDPA', 2048],
];

function find(results, impl, op, L) {
  return results.find((e) => e.impl === impl && e.op === op && e.L === L && e.medianMs);
}

export function computeGoals(results, decode = null) {
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
  for (const [op, L] of kSizes) {
    addRatio(`${op} L=${L}: attnlab-simd vs attnlab-scalar`, 'attnlab-simd', op, L, 'attnlab-scalar', 4.0);
  }
  // issue 14: the threaded variant at 2 threads vs one thread and vs onnxruntime-web at 2 threads
  const thr = 'attnlab-simd-threaded@2';
  for (const [op, L] of [
    ['MHA', 512],
    ['MHA', 2048],
    ['SDPA', 2048],
  ]) {
    addRatio(`${op} L=${L}: ${thr} vs attnlab-simd (1 thread)`, thr, op, L, 'attnlab-simd', 1.8);
  }
  addRatio(`MHA L=128: ${thr} vs attnlab-simd (not slower)`, thr, 'MHA', 128, 'attnlab-simd', 1.0);
  for (const [op, L] of kSizes) {
    const target = (op === 'MHA' && L === 512) || (op === 'SDPA' && L === 2048) ? 1.3 : 1.0;
    addRatio(`${op} L=${L}: ${thr} vs onnxruntime-web@2 (equal threads)`, thr, op, L, 'onnxruntime-web@2', target);
  }
  for (const L of [512, 2048]) {
    const e = find(results, 'attnlab-simd', 'MHA', L);
    add(`MHA L=${L}: attnlab-simd (1 thread), % of the SIMD peak`, e?.pctPeak ?? null, 90, '%');
  }
  goals.push(...decodeGoals(decode));
  return goals;
}

export function renderMarkdown({
  results,
  machine,
  versions,
  simdPeak,
  goals,
  wallS,
  notes,
  breakdown,
  decode = null,
  date = new Date().toISOString(),
}) {
  const lines = [];
  lines.push(`## attnlab benchmark (${date.slice(0, 16).replace('T', ' ')} UTC)`);
  lines.push('');
  lines.push(
    `${machine.cpu}, ${machine.cores} cores (shared, load ${machine.loadavg.map((x) => x.toFixed(1)).join('/')}), ` +
      `Node ${versions.node}; attnlab dist built ${versions['attnlab dist built'].slice(0, 16).replace('T', ' ')}; onnxruntime-web ${versions['onnxruntime-web']} (wasm, SIMD, 1 thread; onnxruntime-web@2: numThreads 2, a second instance), ` +
      `attnlab-simd-threaded@n: init({ variant: 'simd-threaded', threads: n }), ` +
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
  if (results.length) {
    lines.push('');
    lines.push(
      '| op | L | implementation | median ms | min–max ms | runs | GFLOP/s | × ort-web (median / min / paired) | % SIMD peak | memory growth | max abs Δ |',
    );
    lines.push('|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const e of results) {
      if (!e.medianMs) {
        const checked = e.maxAbsDiff !== undefined;
        const mem =
          checked && e.memPeak !== undefined
            ? `${fmtMiB(e.memPeak - e.memBefore)}${e.memKind === 'wasm heap' ? '' : ` (${e.memKind})`}`
            : '';
        lines.push(
          `| ${e.op} | ${e.L} | ${e.impl} | — | ${e.status} | | | | | ${mem} | ${checked ? e.maxAbsDiff.toExponential(1) : ''} |`,
        );
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
  }
  if (breakdown.length) {
    lines.push('attnlab-simd sub-steps (public API, same process; what each step costs in wasm):');
    lines.push('');
    lines.push('| L | step | median ms | min–max ms | GFLOP/s | % SIMD peak |');
    lines.push('|---:|---|---:|---:|---:|---:|');
    for (const b of breakdown) {
      lines.push(
        `| ${b.L} | ${b.step} | ${fmtMs(b.medianMs)} | ${fmtMs(b.minMs)}–${fmtMs(b.maxMs)} | ${b.gflops.toFixed(1)} | ${b.pctPeak.toFixed(0)}% |`,
      );
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
  lines.push(...renderDecode(decode));
  lines.push('| goal (issues 5, 14, 19) | measured (medians) | from minima | paired rounds | target | met (medians) |');
  lines.push('|---|---:|---:|---:|---:|---|');
  for (const g of goals) {
    const fmt = { MiB: (x) => `${x.toFixed(1)} MiB`, '%': (x) => `${x.toFixed(0)}%`, '×': (x) => `${x.toFixed(2)}×` };
    const v = g.value == null ? 'n/a' : fmt[g.unit](g.value);
    const m = g.fromMin == null ? '' : `${g.fromMin.toFixed(2)}×`;
    const p = g.fromPairs == null ? '' : `${g.fromPairs.toFixed(2)}×`;
    const t = g.unit === 'MiB' ? `≤ ${g.target} MiB` : `≥ ${g.target}${g.unit === '%' ? '%' : '×'}`;
    lines.push(`| ${g.goal} | ${v} | ${m} | ${p} | ${t} | ${g.met == null ? 'n/a' : g.met ? 'yes' : 'no'} |`);
  }
  lines.push('');
  return lines.join('\n');
}

// `node run.mjs --render [results.json]`: rewrites results.md from a saved results.json (no measuring).
export async function renderOnly(file) {
  const data = JSON.parse(fs.readFileSync(file, 'utf8'));
  for (const c of new Set(data.results.map((e) => `${e.op}:${e.L}`))) {
    const [op, L] = c.split(':');
    setOrtWebRatios(data.results.filter((e) => e.op === op && e.L === Number(L)));
  }
  data.goals = computeGoals(data.results, data.decode);
  const md = renderMarkdown({ ...data, breakdown: data.breakdown ?? [] });
  fs.writeFileSync(file, JSON.stringify(data, null, 2));
  fs.writeFileSync(file.replace(/\.json$/, '.md'), md);
  console.log(md);
}
