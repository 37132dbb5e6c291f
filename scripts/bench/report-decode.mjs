// The decode benchmark's part of results.md (decode.mjs's results) and issue 19's goal: ≥ 1.5× onnxruntime-web
// per step.
import { fmtMiB } from './stats.mjs';

const GOAL = 1.5;

// Bytes of projection weights a step reads: W_q and W_out (E × E), W_k and W_v (Hkv·d × E), float32.
const weightBytes = ({ E, D }, kvHeads) => 4 * (2 * E * E + 2 * kvHeads * D * E);

export function renderDecode(decode) {
  if (!decode?.results?.length) return [];
  const { results, bandwidth, context } = decode;
  const lines = [];
  lines.push(
    `### Decode: one token per step over a K/V cache (E = ${context.E}, ${context.H} query heads, d = ${context.D}, batch 1)`,
  );
  lines.push('');
  lines.push(
    `A step = the new token's Q/K/V projections + attention over the cache + the out-projection, for every peer ` +
      `(onnxruntime-web: MatMul + Add + Split, its attention operator with past_key/past_value, MatMul + Add; its ` +
      `cache is functional, copied into and out of the wasm heap each step). ${context.steps} steps per round from ` +
      `context C (C + 1 … C + ${context.steps} keys), an untimed refill of the cache between rounds, the peers ` +
      `round-robin. Cache read per step: K and V of every cached key, 2 · keys · Hkv · d · 4 B (the weights, ` +
      `${fmtMiB(weightBytes(context, 0))} + 2 · Hkv · d · E · 4 B: 4 MiB in all at Hkv = 8, 2.5 MiB at Hkv = 2, come on top: ` +
      `the cache + weights column counts both). Copy bandwidth measured ` +
      `in this process (TypedArray.set, read + written bytes per second): ${(bandwidth.dramBytesPerS / 1e9).toFixed(1)} ` +
      `GB/s at 256 MiB; at each case's cache size in the table.`,
  );
  lines.push('');
  lines.push(
    '| C | Hkv | implementation | median ms/step | min–max ms | steps/s | × best ort-web | cache MiB/step | cache GB/s | % of copy bw (at size / 256 MiB) | cache + weights GB/s | wasm growth over steps | max abs Δ |',
  );
  lines.push('|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const e of results) {
    const bw = bandwidth.atCacheSize[`${e.context}:${e.kvHeads}`];
    if (!e.medianMs) {
      lines.push(
        `| ${e.context} | ${e.kvHeads} | ${e.impl} | — | ${e.status.replaceAll('|', '\\|')} | | | | | | | | |`,
      );
      continue;
    }
    lines.push(
      `| ${e.context} | ${e.kvHeads} | ${e.impl} | ${e.medianMs.toFixed(3)} | ${e.minMs.toFixed(3)}–${e.maxMs.toFixed(2)} | ` +
        `${e.stepsPerS.toFixed(0)} | ${e.vsOrtWeb ? `${e.vsOrtWeb.toFixed(2)}×` : '—'} | ` +
        `${(e.cacheBytesPerStep / 2 ** 20).toFixed(2)} | ${(e.cacheBytesPerS / 1e9).toFixed(1)} | ` +
        `${e.pctCopyBw.toFixed(0)}% of ${(bw.bytesPerS / 1e9).toFixed(0)} GB/s / ${e.pctDramBw.toFixed(0)}% | ` +
        `${((e.cacheBytesPerStep + weightBytes(context, e.kvHeads)) / (e.medianMs / 1e3) / 1e9).toFixed(1)} | ` +
        `${e.memKind === 'wasm heap' ? `${e.stepGrowth} B` : `${e.memKind}`} | ` +
        `${e.reference ? 'reference' : e.maxAbsDiff.toExponential(1)} |`,
    );
  }
  lines.push('');
  lines.push(
    `× best ort-web: the faster onnxruntime-web graph's median (ONNX Attention-23 or com.microsoft ` +
      `GroupQueryAttention, 1 thread) ÷ this median; goal (issue 19) ≥ ${GOAL}×. Wasm growth over steps: the ` +
      `largest growth of the instance's wasm memory across the ${context.steps} steps of a round, refill excluded ` +
      `(0 B = the steps allocate nothing new once the cache exists; onnxruntime-web's cache grows by design).`,
  );
  lines.push('');
  return lines;
}

// Issue 19's decode goal per case, for attnlab's peers whose name starts with attnlab-.
export function decodeGoals(decode) {
  const goals = [];
  for (const e of decode?.results ?? []) {
    if (!e.impl.startsWith('attnlab-')) continue;
    goals.push({
      goal: `decode C=${e.context} Hkv=${e.kvHeads}: ${e.impl} vs best onnxruntime-web (1 thread)`,
      value: e.vsOrtWeb ?? null,
      fromMin: e.vsOrtWebMin ?? null,
      fromPairs: null,
      target: GOAL,
      met: e.vsOrtWeb == null ? null : e.vsOrtWeb >= GOAL,
      unit: '×',
    });
  }
  return goals;
}
