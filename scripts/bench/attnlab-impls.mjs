// attnlab's peers in the bench: one per wasm variant that dist/ holds, in the order of the one table of variants
// (wasm-variants.json at the repository root; before it existed: simd, scalar), attnlab-simd first (the reference
// of every check). A threaded variant runs once per thread count 1 … BENCH_THREADS_MAX (default: the core count),
// each its own instance (init({ variant, threads })), named e.g. attnlab-simd-threaded@2.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { makeRng } from '../../tests/js/rng.mjs';
import { setLoadingTag } from './capture-memory.mjs';
import { D, E, H } from './config.mjs';
import { decodeWeights, stateDict, uniform } from './inputs.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');

/** The variants to bench: [{ name, threads: boolean }], those whose files dist/ holds, attnlab-simd first. */
export function benchVariants() {
  const table = path.join(repoRoot, 'wasm-variants.json');
  const rows = fs.existsSync(table)
    ? JSON.parse(fs.readFileSync(table, 'utf8')).variants
    : [
        { name: 'simd', files: ['attnlab-simd.mjs', 'attnlab-simd.wasm'], threads: false },
        { name: 'scalar', files: ['attnlab-scalar.mjs', 'attnlab-scalar.wasm'], threads: false },
      ];
  const present = rows.filter((v) => v.files.every((f) => fs.existsSync(path.join(repoRoot, 'dist', f))));
  return [...present.filter((v) => v.name === 'simd'), ...present.filter((v) => v.name !== 'simd')];
}

export const maxThreads = () =>
  Number(process.env.BENCH_THREADS_MAX ?? os.availableParallelism?.() ?? os.cpus().length);

export async function attnlabImpls() {
  setLoadingTag('attnlab');
  const { init } = await import(path.join(repoRoot, 'dist/index.mjs'));
  const impls = [];
  for (const v of benchVariants()) {
    const counts = v.threads ? Array.from({ length: maxThreads() }, (_, i) => i + 1) : [null];
    for (const threads of counts) {
      const attn = await init(threads ? { variant: v.name, threads } : { variant: v.name });
      if (attn.variant !== v.name) throw new Error(`init({variant:'${v.name}'}) gave variant ${attn.variant}`);
      if (threads && attn.threads !== threads) {
        throw new Error(`init({variant:'${v.name}', threads: ${threads}}) gave ${attn.threads} threads`);
      }
      impls.push(attnlabImpl(attn, threads ? `attnlab-${v.name}@${threads}` : `attnlab-${v.name}`));
    }
  }
  return impls;
}

function attnlabImpl(attn, name) {
  const mha = attn.createMultiHeadAttention({ embedDim: E, numHeads: H, batchFirst: true });
  mha.loadStateDict(stateDict);
  return {
    name,
    threads: attn.threads ?? 1,
    memKind: 'wasm heap',
    memBytes: () => attn.memoryBytes(),
    prepare({ op, L }, inp) {
      if (op === 'SDPA') {
        const t = (data) => ({ data, shape: [H, L, D] });
        const q = t(inp.q);
        const k = t(inp.k);
        const v = t(inp.v);
        return () => attn.scaledDotProductAttention(q, k, v, { needWeights: false }).output.data;
      }
      const x = { data: inp.x, shape: [1, L, E] };
      return () => mha.forward(x, x, x, { needWeights: false }).output.data;
    },
    // The KV-cache decode step (decode.mjs), once the API has it: a module with numKVHeads, one cache of
    // C + steps tokens; prefill = reset + one forward over the C context tokens through the cache.
    prepareDecode: typeof mha.createKVCache === 'function' ? (c, inputs) => attnlabDecode(attn, c, inputs) : undefined,
    breakdown: (L) => breakdown(attn, mha, L),
  };
}

function attnlabDecode(attn, { context, kvHeads }, inputs) {
  const w = decodeWeights(kvHeads);
  const m = attn.createMultiHeadAttention({ embedDim: E, numHeads: H, numKVHeads: kvHeads, batchFirst: true });
  const bias = new Float32Array(E + 2 * kvHeads * D);
  bias.set(w.bq, 0);
  bias.set(w.bk, E);
  bias.set(w.bv, E + kvHeads * D);
  m.loadStateDict({
    ...(kvHeads === H
      ? { in_proj_weight: stateDict.in_proj_weight }
      : { q_proj_weight: w.wq, k_proj_weight: w.wk, v_proj_weight: w.wv }),
    in_proj_bias: bias,
    'out_proj.weight': w.wo,
    'out_proj.bias': w.bo,
  });
  const cache = m.createKVCache({ batchSize: 1, maxLength: context + inputs.steps });
  const prefix = { data: inputs.prefix, shape: [1, context, E] };
  const tokens = Array.from({ length: inputs.steps }, (_, i) => ({
    data: inputs.tokens.subarray(i * E, (i + 1) * E),
    shape: [1, 1, E],
  }));
  return {
    prefill() {
      cache.reset();
      m.forward(prefix, prefix, prefix, { kvCache: cache, needWeights: false });
    },
    step: (i) => m.forward(tokens[i], tokens[i], tokens[i], { kvCache: cache, needWeights: false }).output.data,
    dispose() {
      cache.dispose();
      m.dispose();
    },
  };
}

// The time split with public calls only: SDPA (8, L, 64) online; the same with d = 128 (twice the matmul FLOPs,
// the same exponentials: 2·T64 − T128 estimates softmax + tile bookkeeping); MHA full; MHA with a single key/value
// row (≈ the Q and output projections, 4·L·E² FLOPs, with a trivial attention).
function breakdown(attn, mha, L) {
  const r = makeRng(L);
  const t = (d) => ({ data: uniform(H * L * d, 1, r), shape: [H, L, d] });
  const [q, k, v, q2, k2, v2] = [t(D), t(D), t(D), t(2 * D), t(2 * D), t(2 * D)];
  const x = { data: uniform(L * E, 1, r), shape: [1, L, E] };
  const x1 = { data: uniform(E, 1, r), shape: [1, 1, E] };
  const scale2 = 1 / Math.sqrt(D) / Math.SQRT2;
  return [
    {
      name: 'SDPA d = 64 (needWeights false)',
      flops: 4 * L * L * E,
      run: () => attn.scaledDotProductAttention(q, k, v, { needWeights: false }),
    },
    {
      name: 'SDPA d = 128 (needWeights false)',
      flops: 8 * L * L * E,
      run: () => attn.scaledDotProductAttention(q2, k2, v2, { needWeights: false, scale: scale2 }),
    },
    {
      name: 'SDPA d = 64, needWeights true (exact path)',
      flops: 4 * L * L * E,
      run: () => attn.scaledDotProductAttention(q, k, v, { needWeights: true }),
    },
    {
      name: 'MHA full',
      flops: 8 * L * E * E + 4 * L * L * E,
      run: () => mha.forward(x, x, x, { needWeights: false }),
    },
    {
      name: 'MHA, one key (≈ Q + out projections)',
      flops: 4 * L * E * E,
      run: () => mha.forward(x, x1, x1, { needWeights: false }),
    },
  ];
}
