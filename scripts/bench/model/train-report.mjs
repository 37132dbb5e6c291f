// build/bench/model-train.md from train.mjs's results (the object it writes to model-train.json).
import { fmtMs } from '../stats.mjs';
import { fmt } from './common.mjs';

const LABELS = {
  native: (r) => `attnlab native (${r.peakKind}) @${r.threads}`,
  wasm: (r) => `attnlab wasm ${r.impl}`,
  pytorch: (r) => `PyTorch @${r.threads}`,
};

export function renderTrain(out) {
  const { machine, versions, config: c, batch, flops, peak } = out;
  const load = machine.loadavg.map((l) => l[0].toFixed(1));
  const lines = [
    '# attnlab training benchmark: the poem model',
    '',
    `${machine.cpu}, ${machine.cores} cores (/proc/cpuinfo: family ${machine.cpuinfo?.family}, model ` +
      `${machine.cpuinfo?.model_}, ${machine.cpuinfo?.mhz} MHz reported); load average (1 min) ${load.join(', ')}; ` +
      `${out.date}, ${out.wallS.toFixed(0)} s.`,
    '',
    `Model: Llama, E ${c.embedDim}, ${c.numLayers} layers, ${c.numHeads} heads of ${c.headDim}, MLP ${c.hiddenDim}, ` +
      `vocabulary ${c.vocabSize}, tied embeddings (${out.parameters.attnlab} parameters; PyTorch's ` +
      `${out.parameters.torch}). A step: ${batch.rows} × ${batch.tokens} tokens, mean cross-entropy, backward, ` +
      `clip 1, AdamW (lr ${batch.adamw.lr}); ${(flops.total / 1e9).toFixed(2)} GFLOP (matrix products ` +
      `${(flops.gemm / 1e9).toFixed(2)}, attention ${(flops.attention / 1e9).toFixed(2)}).`,
    '',
    `Versions: node ${versions.node}, attnlab dist built ${versions['attnlab dist built']}, native target ` +
      `${versions['attnlab native target']} built ${versions['attnlab native built']}, torch ${versions.torch} ` +
      `(${versions['torch BLAS']}).`,
    '',
    `Peak per thread, measured in this run by CPU time: ${peak.nativeIsa} FMA chains ` +
      `${peak.nativePerThread.toFixed(1)} GFLOP/s (two threads at once by the wall clock: ` +
      `${peak.nativeWall[1].gflops.toFixed(1)} GFLOP/s), wasm SIMD128 ${peak.wasmPerThread.toFixed(1)} GFLOP/s.`,
    '',
    `Cells: median over ${out.rounds} interleaved rounds of ${out.stepsPerRound} steps (after one untimed step); ` +
      `% of peak: the wall-clock rate ÷ (threads × one thread's peak), and by CPU time: the step's flops ÷ its CPU ` +
      `time (every thread) ÷ one thread's peak; paired: median over rounds of the step time ÷ ${out.baseline}'s in ` +
      'the same round.',
    '',
    '| implementation | ms / step [min–max] | tokens/s | GFLOP/s | % of peak | CPU ms / step | tokens per CPU s | ' +
      '% of peak by CPU time | time ÷ ' +
      `${out.baseline} (paired) |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of out.results) {
    lines.push(
      `| ${LABELS[r.kind](r)} | ${fmtMs(r.medianMs)} [${fmtMs(r.minMs)}–${fmtMs(r.maxMs)}] | ` +
        `${r.tokensPerS.toFixed(0)} | ${fmt(r.gflops, 1)} | ${fmt(r.pctPeak, 0)} % | ${fmtMs(r.cpuMedianMs)} | ` +
        `${r.tokensPerCpuS.toFixed(0)} | ${fmt(r.pctPeakCpu, 0)} % (${r.peakKind}) | ` +
        `${r.vsBase === null ? '1' : fmt(r.vsBase)}× |`,
    );
  }
  lines.push(
    '',
    `Checks: every loss within 0.5 of ln V = ${out.checks.lnV.toFixed(3)}; attnlab's first losses (same weights, ` +
      `same batch) agree to ${out.checks.attnlabFirstLossSpread.toExponential(1)}.`,
    '',
  );
  return lines.join('\n');
}
