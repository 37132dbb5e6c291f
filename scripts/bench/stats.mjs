// The bench's statistics and formatting: medians, paired ratios, the check's max |Δ|, ms and MiB strings, the CPU.
import { execFileSync } from 'node:child_process';

export function maxAbsDiff(a, b) {
  if (a.length !== b.length) return Infinity;
  let m = 0;
  for (let i = 0; i < a.length; ++i) {
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= m)) m = Number.isNaN(d) ? Infinity : d;
  }
  return m;
}
export const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};
// Median over timed rounds of base's time / e's time in the same round (the round-robin times every
// implementation once per round): a slow phase of the machine that spans a round slows both sides of a pair.
export const pairedRatio = (base, e) =>
  base?.times?.length && e?.times?.length === base.times.length
    ? median(base.times.map((t, i) => t / e.times[i]))
    : null;
// Each entry's ratios to onnxruntime-web in the same case: medians, minima and paired rounds.
export function setOrtWebRatios(entries) {
  const ort = entries.find((e) => e.impl === 'onnxruntime-web' && e.medianMs);
  for (const e of entries) {
    if (e.medianMs && ort) {
      e.vsOrtWeb = ort.medianMs / e.medianMs;
      e.vsOrtWebMin = ort.minMs / e.minMs;
      e.vsOrtWebPaired = pairedRatio(ort, e);
    }
  }
}
export const MiB = 1024 * 1024;
export const fmtMs = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2));
export const fmtMiB = (bytes) => `${(bytes / MiB).toFixed(bytes >= 100 * MiB ? 0 : 1)} MiB`;
export const log = (...args) => console.error(...args);
/** The CPU's model name, from lscpu. */
export function cpuName() {
  try {
    const line = execFileSync('lscpu', { encoding: 'utf8' })
      .split('\n')
      .find((l) => l.startsWith('Model name:'));
    return line?.replace('Model name:', '').trim() ?? 'unknown';
  } catch {
    return 'unknown (no lscpu)';
  }
}
