// Mirrors web/demo/parts/explain/compute.js: Spearman's table on a hand-computed example; the norm-weighted view
// against the package's own forward (with the MLP zeroed, block 0's output minus its input is the attention
// sublayer's output, so the per-key vectors must sum to it) and against a float64 recomputation of one head; one
// prediction read eight ways on a tiny Llama (rows against the returned maps, flow's length limit); head importance
// three ways, the ablations against forwards with a head mask and a cross-entropy computed here.
import assert from 'node:assert/strict';
import test from 'node:test';

import * as X from '../../../../../web/demo/parts/explain/compute.js';
import { initialWeights } from '../../../../../web/demo/parts/explain/baseline.js';
import { meanLoss } from '../../../../../web/demo/parts/poem/heads.js';
import { maxDiff, simd } from '../../helpers.mjs';

const TINY = { arch: 'llama', embedDim: 8, numLayers: 2, numHeads: 2, hiddenDim: 12, contextLength: 80, vocabSize: 11 };

/** A tiny Llama with our own seeded weights (so the test knows them), optionally with the MLP zeroed. */
async function tiny(zeroMlp = false, config = TINY) {
  const attn = await simd();
  const model = attn.createModel({ ...config, tieEmbeddings: true, normEps: 1e-5, seed: 3 });
  const w = initialWeights(config, 7, false);
  for (const [k, v] of Object.entries(w)) {
    if (/layernorm|norm\.weight/.test(k)) v.data.forEach((_, i) => (v.data[i] = 0.5 + ((i * 7) % 5) / 4));
    else v.data.forEach((x, i) => (v.data[i] = x * 25));
    if (zeroMlp && k.includes('mlp.down_proj')) v.data.fill(0);
  }
  model.loadStateDict(w);
  return { model, w };
}

const IDS = [2, 5, 7, 1, 9, 4, 4, 8, 3, 6];

test('rankTable: Spearman ρ on a hand-computed example, ties averaged, null for a missing reading', () => {
  const r = X.rankTable({ a: [1, 2, 3, 4], b: [4, 3, 2, 1], c: [1, 3, 2, 4], d: null, e: [1, 1, 2, 3] });
  assert.equal(r.a.b, -1);
  assert.ok(Math.abs(r.a.c - 0.8) < 1e-12); // d² = 0 + 1 + 1 + 0 → 1 − 6·2 / (4·15)
  assert.equal(r.a.d, null);
  // e's ranks (1.5, 1.5, 3, 4) against a's (1, 2, 3, 4): Pearson of the ranks = 4.5 / √(4.5·5) ≈ 0.9487
  assert.ok(Math.abs(r.a.e - 4.5 / Math.sqrt(4.5 * 5)) < 1e-12);
  assert.equal(r.c.c, 1);
});

test("normWeighted: the per-key vectors sum to the attention sublayer's output (MLP zeroed, from the package's forward)", async () => {
  const { model, w } = await tiny(true);
  const T = IDS.length;
  const fw = model.forward(
    { data: Int32Array.from(IDS), shape: [1, T] },
    { outputAttentions: true, outputHiddenStates: true },
  );
  const lw = X.llamaLayerWeights(w, 0);
  const E = TINY.embedDim;
  for (const position of [0, 4, T - 1]) {
    const { terms, byLayer } = X.normWeighted(fw.hiddenStates[0], fw.attentions[0], lw, {
      position,
      head: 1,
      eps: 1e-5,
    });
    const sum = new Float64Array(E);
    for (let j = 0; j < T; j++) for (let e = 0; e < E; e++) sum[e] += terms[j * E + e];
    const h0 = fw.hiddenStates[0].data.subarray(position * E, (position + 1) * E);
    const h1 = fw.hiddenStates[1].data.subarray(position * E, (position + 1) * E);
    const out = h1.map((x, e) => x - h0[e]);
    assert.ok(maxDiff(sum, out) < 1e-4 * (1 + Math.max(...out.map(Math.abs))), `position ${position}`);
    for (let j = position + 1; j < T; j++) assert.equal(byLayer[j], 0);
  }
  model.dispose();
});

test('normWeighted: one head against a float64 recomputation of α · W_O,h W_V,h RMSNorm(x)', async () => {
  const { model, w } = await tiny();
  const T = IDS.length;
  const fw = model.forward(
    { data: Int32Array.from(IDS), shape: [1, T] },
    { outputAttentions: true, outputHiddenStates: true },
  );
  const [E, D] = [TINY.embedDim, TINY.embedDim / TINY.numHeads];
  const layer = 1;
  const [position, head] = [7, 1];
  const { byHead } = X.normWeighted(fw.hiddenStates[layer], fw.attentions[layer], X.llamaLayerWeights(w, layer), {
    position,
    head,
    eps: 1e-5,
  });
  const g = w[`model.layers.${layer}.input_layernorm.weight`].data;
  const wv = w[`model.layers.${layer}.self_attn.v_proj.weight`].data;
  const wo = w[`model.layers.${layer}.self_attn.o_proj.weight`].data;
  for (let j = 0; j <= position; j++) {
    const x = Array.from(fw.hiddenStates[layer].data.subarray(j * E, (j + 1) * E));
    const rms = Math.sqrt(x.reduce((a, v) => a + v * v, 0) / E + 1e-5);
    const xn = x.map((v, e) => (v / rms) * g[e]);
    const v = Array.from({ length: D }, (_, d) => xn.reduce((a, xe, e) => a + wv[(head * D + d) * E + e] * xe, 0));
    const f = Array.from({ length: E }, (_, e) => v.reduce((a, vd, d) => a + wo[e * E + head * D + d] * vd, 0));
    const alpha = fw.attentions[layer].data[(head * T + position) * T + j];
    const want = alpha * Math.sqrt(f.reduce((a, x2) => a + x2 * x2, 0));
    assert.ok(Math.abs(byHead[j] - want) < 1e-9 + 1e-9 * want, `key ${j}: ${byHead[j]} vs ${want}`);
  }
  assert.equal(X.llamaLayerWeights({}, 0), null);
  model.dispose();
});

test("explainPrediction: eight readings of one logit, the maps' rows, attributions by magnitude, flow up to T = 64", async () => {
  const { model, w } = await tiny();
  const T = IDS.length;
  const [position, target, layer, head] = [6, 3, 1, 0];
  const r = await X.explainPrediction(model, IDS, {
    position,
    target,
    layer,
    head,
    weights: X.llamaLayerWeights(w, layer),
  });
  const tokens = { data: Int32Array.from(IDS), shape: [1, T] };
  const { attentions } = model.forward(tokens, { outputAttentions: true });
  const a = attentions[layer].data;
  assert.deepEqual(Object.keys(r.rows), X.READINGS);
  for (const k of X.READINGS) assert.equal(r.rows[k].length, position + 1, k);
  for (let j = 0; j <= position; j++) {
    assert.ok(Math.abs(r.rows.raw[j] - a[(head * T + position) * T + j]) < 1e-7);
    assert.ok(Math.abs(r.rows.layerMean[j] - (a[position * T + j] + a[(T + position) * T + j]) / 2) < 1e-7);
  }
  assert.ok(Math.abs(r.rows.rollout.reduce((s, x) => s + x, 0) - 1) < 1e-5);
  const occl = model.attribution(tokens, { position, target, method: 'occlusion' }).data;
  assert.deepEqual(Array.from(r.rows.occlusion), Array.from(occl.subarray(0, position + 1), Math.abs));
  for (const k of X.READINGS) assert.ok(Math.abs(r.rho[k][k] - 1) < 1e-12, k);
  assert.ok(Math.abs(r.rho.raw.gradient - r.rho.gradient.raw) < 1e-12);
  const long = Array.from({ length: X.FLOW_MAX_T + 1 }, (_, i) => (i * 5) % 11);
  const r2 = await X.explainPrediction(model, long, { position: 64, target: 1, layer: 0, head: 1 });
  assert.equal(r2.rows.flow, null);
  assert.equal(r2.rows.normWeighted, null);
  model.dispose();
});

test('headImportanceAll: zero ablation against forwards with a head mask and a loss computed here; ρ in [−1, 1]', async () => {
  const { model } = await tiny();
  const seqs = [Int32Array.from(IDS), Int32Array.from(IDS.map((x) => (x * 3 + 1) % 11))];
  const batch = X.nextTokenBatch(seqs);
  const r = await X.headImportanceAll(model, batch);
  const poems = seqs.map((ids) => ({ ids }));
  const base = meanLoss(model, poems);
  assert.ok(Math.abs(r.loss - base) < 1e-4);
  const LH = TINY.numLayers * TINY.numHeads;
  assert.equal(r.rows.length, LH);
  for (let i = 0; i < LH; i++) {
    const mask = new Float32Array(LH).fill(1);
    mask[i] = 0;
    assert.ok(Math.abs(r.rows[i].zero - (meanLoss(model, poems, mask) - base)) < 1e-4, `head ${i}`);
    assert.ok(r.rows[i].gradient >= 0);
  }
  for (const v of Object.values(r.rho)) assert.ok(v >= -1 - 1e-12 && v <= 1 + 1e-12);
  assert.throws(() => X.nextTokenBatch([seqs[0], seqs[0].subarray(1)]), RangeError);
  model.dispose();
});
