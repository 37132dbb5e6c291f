// Where a T-token forward of attnlab's wasm build spends its time, with public calls only (the same method as the
// native `breakdown` command of cpp/bench/model_bench.cc; report.mjs derives the split from the medians):
//   full / full_attn    the bench's model without / with every layer's attention returned
//   l1 / l2             1 and 2 layers of the same shape with a vocabulary of 8 (no LM head to speak of):
//                       one layer = l2 − l1; embeddings, final norm and the rest = l1 − one layer
//   l1_attn / l2_attn   the same with the layers' attention returned
//   l1_vocab            1 layer with the full vocabulary: LM head = l1_vocab − l1, one GEMM of 2·T·E·V flops whose
//                       rate prices the layers' GEMMs (24·T·E² flops per layer)
//   sdpa_weights        scaledDotProductAttention (H, T, 64), causal, with weights (one layer's attention)
//   sdpa_online         the same without weights (needWeights: false: tiled online softmax)
//   mha_proj            createMultiHeadAttention (E, H) over T query rows and one key/value row: the Q and output
//                       projections, 4·T·E² flops of GEMMs shaped like the layers' (K = E), a trivial attention
// Each step is timed `reps` times round-robin after one warm-up; medians and minima of the wall time, minima of the
// CPU time (the JS thread's for a one-thread peer, else the process's: common.mjs clocks).
import { makeRng } from '../../../tests/js/rng.mjs';
import { fmtMs, log, median } from '../stats.mjs';
import { clocks, dims, since } from './common.mjs';

export async function attnlabBreakdown(peer, hf, ids, T, reps = Number(process.env.BENCH_MODEL_BREAKDOWN_REPS ?? 3)) {
  const { attn, model } = peer;
  const { V, P, E, H, D } = dims(hf);
  const cfg = (vocabSize, numLayers, seed) => ({
    arch: 'gpt2',
    vocabSize,
    contextLength: P,
    embedDim: E,
    numLayers,
    numHeads: H,
    normEps: 1e-5,
    seed,
  });
  log(`\n== breakdown of ${peer.name} at T=${T} (${reps} interleaved rounds)`);
  const l1 = attn.createModel(cfg(8, 1, 1));
  const l2 = attn.createModel(cfg(8, 2, 2));
  const l1v = attn.createModel(cfg(V, 1, 3));
  const tokens = { data: ids.slice(0, T), shape: [1, T] };
  const small = { data: ids.slice(0, T).map((x) => x % 8), shape: [1, T] };
  const rng = makeRng(77);
  const t = () => ({ data: rng.floats(H * T * D), shape: [H, T, D] });
  const [q, k, v] = [t(), t(), t()];
  const mha = attn.createMultiHeadAttention({ embedDim: E, numHeads: H, batchFirst: true });
  const x = { data: rng.floats(T * E), shape: [1, T, E] };
  const x1 = { data: rng.floats(E), shape: [1, 1, E] };
  const steps = [
    ['full', () => model.forward(tokens)],
    ['full_attn', () => model.forward(tokens, { outputAttentions: true })],
    ['l1', () => l1.forward(small)],
    ['l2', () => l2.forward(small)],
    ['l1_attn', () => l1.forward(small, { outputAttentions: true })],
    ['l2_attn', () => l2.forward(small, { outputAttentions: true })],
    ['l1_vocab', () => l1v.forward(tokens)],
    ['sdpa_weights', () => attn.scaledDotProductAttention(q, k, v, { isCausal: true, needWeights: true })],
    ['sdpa_online', () => attn.scaledDotProductAttention(q, k, v, { isCausal: true, needWeights: false })],
    ['mha_proj', () => mha.forward(x, x1, x1, { needWeights: false })],
  ].map(([name, run]) => ({ name, run, ms: [], cpu: [] }));
  for (const s of steps) s.run();
  for (let r = 0; r < reps; ++r) {
    for (let j = 0; j < steps.length; ++j) {
      const s = steps[(j + r) % steps.length];
      const c0 = clocks();
      s.run();
      const d = since(c0);
      s.ms.push(d.ms);
      s.cpu.push(peer.cpu === 'main' ? d.mainCpuMs : d.procCpuMs);
    }
  }
  for (const m of [l1, l2, l1v, mha]) m.dispose();
  const ms = Object.fromEntries(steps.map((s) => [s.name, median(s.ms)]));
  const min = Object.fromEntries(steps.map((s) => [s.name, Math.min(...s.ms)]));
  const cpuMin = Object.fromEntries(steps.map((s) => [s.name, Math.min(...s.cpu)]));
  log(`  ${steps.map((s) => `${s.name} ${fmtMs(ms[s.name])}`).join(', ')} ms`);
  return { impl: peer.name, threads: peer.threads, T, reps, ms, min, cpuMin };
}
