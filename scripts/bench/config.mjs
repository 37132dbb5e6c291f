// The bench's configuration: sizes, cases and the BENCH_* environment knobs (described in run.mjs).
export const QUICK = process.env.BENCH_QUICK === '1';
export const MAX_RUN_S = Number(process.env.BENCH_MAX_RUN_S ?? 20);
export const MIN_REPS = Math.max(10, Number(process.env.BENCH_MIN_REPS ?? 10));
export const CASE_BUDGET_S = Number(process.env.BENCH_CASE_BUDGET_S ?? 180);
export const E = 512;
export const H = 8;
export const D = E / H;
export const TOL = 1e-3;
const ALL_CASES = QUICK
  ? [
      { op: 'SDPA', L: 128 },
      { op: 'MHA', L: 128 },
      { op: 'SDPA', L: 512 },
    ]
  : [
      { op: 'SDPA', L: 128 },
      { op: 'SDPA', L: 512 },
      { op: 'SDPA', L: 2048 },
      { op: 'MHA', L: 128 },
      { op: 'MHA', L: 512 },
      { op: 'MHA', L: 2048 },
      { op: 'SDPA', L: 8192 },
    ];
// BENCH_OUT=dir writes the results there instead of build/bench.
// BENCH_CASES="MHA:512,SDPA:2048" runs only those cases (in that order); BENCH_IMPLS="onnxruntime-web,…" only
// those peers (attnlab-simd, the reference, always runs). For focused re-measurements; the default runs all.
export const CASES = process.env.BENCH_CASES
  ? process.env.BENCH_CASES.split(',').map((c) => {
      const [op, L] = c.split(':');
      if (!['SDPA', 'MHA'].includes(op) || !(Number(L) > 0)) throw new Error(`BENCH_CASES: bad entry ${c}`);
      return { op, L: Number(L) };
    })
  : ALL_CASES;
export const IMPL_FILTER = process.env.BENCH_IMPLS
  ? new Set(['attnlab-simd', ...process.env.BENCH_IMPLS.split(',')])
  : null;
export const flopsOf = ({ op, L }) => (op === 'MHA' ? 8 * L * E * E + 4 * L * L * E : 4 * L * L * E);
