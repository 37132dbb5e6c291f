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
// The decode cases (decode.mjs): context × key/value heads, run after the others.
const ALL_DECODE_CASES = (QUICK ? [128] : [128, 512, 2048]).flatMap((context) =>
  [8, 2].map((kvHeads) => ({ context, kvHeads })),
);
// BENCH_CASES="MHA:512,SDPA:2048,DECODE:512,DECODE:2048:2" runs only those cases (in that order; DECODE:C runs
// both key/value head counts, DECODE:C:Hkv one); BENCH_IMPLS="onnxruntime-web,…" only those peers (attnlab-simd,
// the reference, always runs). For focused re-measurements; the default runs all.
const picked = process.env.BENCH_CASES?.split(',').map((c) => {
  const [op, L, hkv] = c.split(':');
  const ok = ['SDPA', 'MHA'].includes(op) ? hkv === undefined : op === 'DECODE' && [undefined, '8', '2'].includes(hkv);
  if (!ok || !(Number(L) > 0)) throw new Error(`BENCH_CASES: bad entry ${c}`);
  return { op, L: Number(L), hkv };
});
export const CASES = picked ? picked.filter((c) => c.op !== 'DECODE').map(({ op, L }) => ({ op, L })) : ALL_CASES;
export const DECODE_CASES = picked
  ? picked
      .filter((c) => c.op === 'DECODE')
      .flatMap(({ L, hkv }) => (hkv ? [Number(hkv)] : [8, 2]).map((kvHeads) => ({ context: L, kvHeads })))
  : ALL_DECODE_CASES;
export const IMPL_FILTER = process.env.BENCH_IMPLS
  ? new Set(['attnlab-simd', ...process.env.BENCH_IMPLS.split(',')])
  : null;
export const flopsOf = ({ op, L }) => (op === 'MHA' ? 8 * L * E * E + 4 * L * L * E : 4 * L * L * E);
