// @ts-check
// Part "explain" (tutorial §8.2 as an experiment): for one prediction of a decoder (the logit of `target` at
// `position`), every position's share by eight readings side by side — raw weights (one head, the layer mean),
// rollout and attention flow (attnlab/analysis), the norm-weighted view ‖α_ij · f(x_j)‖ (Kobayashi et al. 2020), and
// the package's attributions (gradient × input, gradient, occlusion) — and their Spearman rank correlations (Jain &
// Wallace's test); head importance by the head mask's gradient and by ablation (zero, mean), and their agreement.
// No DOM. The model may be a main-thread model or an attnlab/worker one: every call is awaited.
//
// The package returns no value vectors, so the norm-weighted view is computed here from what it does return:
// hiddenStates[l] (block l's input) and the checkpoint's own tensors of layer l (Llama: input_layernorm, v_proj,
// o_proj): f_h(x_j) = W_O[:, h] · W_V[h] · RMSNorm(x_j), the head's output projection of its value.

import { attentionFlow, rollout } from '../../attnlab-analysis.js';
import { spearman } from '../poem/compute.js';

export { spearman };

/** attentionFlow's cost grows fast with T: the page computes it up to this length. */
export const FLOW_MAX_T = 64;
/** The readings of one prediction, in the table's order. */
export const READINGS = ['raw', 'layerMean', 'rollout', 'flow', 'normWeighted', 'gradXInput', 'gradient', 'occlusion'];

/**
 * @typedef {{ data: Float32Array, shape: number[] }} Tensor
 * @typedef {{ norm: Float32Array, v: Float32Array, o: Float32Array, E: number, HD: number }} LayerWeights
 */

/**
 * Layer l's attention input norm and value/output projections from a Llama-family checkpoint's tensors (names with
 * or without the 'model.' prefix), or null where they are not there (another architecture).
 * @param {Record<string, { data: Float32Array, shape: number[] }>} tensors
 * @param {number} layer
 * @returns {LayerWeights | null}
 */
export function llamaLayerWeights(tensors, layer) {
  const get = (/** @type {string} */ name) => tensors?.[`model.${name}`] ?? tensors?.[name] ?? null;
  const pre = `layers.${layer}.`;
  const [norm, v, o] = ['input_layernorm', 'self_attn.v_proj', 'self_attn.o_proj'].map((n) => get(`${pre}${n}.weight`));
  if (!norm || !v || !o) return null;
  return { norm: norm.data, v: v.data, o: o.data, E: norm.shape[0], HD: v.shape[0] };
}

/**
 * Each head's f_h(x) = W_O[:, h·D:(h+1)·D] · (W_V · RMSNorm(x))[h·D:(h+1)·D], in float64: (H, E) row-major.
 * @param {ArrayLike<number>} x  one position's block input (E)
 * @param {LayerWeights} w
 * @param {number} H
 * @param {number} eps  the model's normEps
 */
export function headValues(x, w, H, eps) {
  const { E, HD } = w;
  let ms = 0;
  for (let e = 0; e < E; e++) ms += x[e] * x[e];
  const s = 1 / Math.sqrt(ms / E + eps);
  const v = new Float64Array(HD);
  for (let r = 0; r < HD; r++) {
    let acc = 0;
    for (let e = 0; e < E; e++) acc += w.v[r * E + e] * x[e] * s * w.norm[e];
    v[r] = acc;
  }
  const D = HD / H;
  const out = new Float64Array(H * E);
  for (let h = 0; h < H; h++) {
    for (let e = 0; e < E; e++) {
      let acc = 0;
      for (let d = 0; d < D; d++) acc += w.o[e * HD + h * D + d] * v[h * D + d];
      out[h * E + e] = acc;
    }
  }
  return out;
}

/**
 * The norm-weighted view of query `position` in one layer: per key j, ‖α^h_ij f_h(x_j)‖ for the chosen head and
 * ‖Σ_h α^h_ij f_h(x_j)‖ for the whole layer (what the attention sublayer adds to position i, split by key), and
 * the vectors Σ_h α^h_ij f_h(x_j) themselves (T, E) (their sum over j is the sublayer's output at i, before o_proj's
 * bias, which Llama has not).
 * @param {Tensor} hidden  hiddenStates[layer], (1, T, E)
 * @param {Tensor} attention  attentions[layer], (1, H, T, T)
 * @param {LayerWeights} w
 * @param {{ position: number, head: number, eps: number }} o
 */
export function normWeighted(hidden, attention, w, { position, head, eps }) {
  const [, H, T] = attention.shape;
  const E = hidden.shape[2];
  const byHead = new Float64Array(T);
  const byLayer = new Float64Array(T);
  const terms = new Float64Array(T * E);
  for (let j = 0; j <= position; j++) {
    const f = headValues(hidden.data.subarray(j * E, (j + 1) * E), w, H, eps);
    let nh = 0;
    for (let h = 0; h < H; h++) {
      const a = attention.data[(h * T + position) * T + j];
      for (let e = 0; e < E; e++) terms[j * E + e] += a * f[h * E + e];
      if (h === head) for (let e = 0; e < E; e++) nh += (a * f[h * E + e]) ** 2;
    }
    byHead[j] = Math.sqrt(nh);
    let nl = 0;
    for (let e = 0; e < E; e++) nl += terms[j * E + e] ** 2;
    byLayer[j] = Math.sqrt(nl);
  }
  return { byHead, byLayer, terms };
}

/**
 * Row `position` of a (1, H?, T, T) map: of head `head` (a (1, H, T, T) layer), or the mean over heads, or of a
 * (1, T, T) rollout; float64.
 * @param {Tensor} m
 * @param {number} position
 * @param {number | 'mean'} head
 */
export function mapRow(m, position, head) {
  const T = m.shape[m.shape.length - 1];
  const H = m.shape.length === 4 ? m.shape[1] : 1;
  const heads = head === 'mean' ? Array.from({ length: H }, (_, h) => h) : [head];
  const row = new Float64Array(T);
  for (const h of heads) for (let j = 0; j < T; j++) row[j] += m.data[(h * T + position) * T + j] / heads.length;
  return row;
}

/**
 * One prediction read eight ways: each reading's share of every position j ≤ position (the later ones are 0 for a
 * causal model and left out), and their Spearman correlations. Attributions rank by magnitude (|·|: a position can
 * count against the logit). flow is null past FLOW_MAX_T; normWeighted null without the layer's weights.
 * @param {any} model  a decoder (main thread or attnlab/worker)
 * @param {ArrayLike<number>} ids  (T)
 * @param {{ position: number, target: number, layer: number, head: number, weights?: LayerWeights | null }} o
 */
export async function explainPrediction(model, ids, { position, target, layer, head, weights = null }) {
  const T = ids.length;
  const tokens = { data: Int32Array.from(ids), shape: [1, T] };
  const fw = await model.forward(tokens, { outputAttentions: true, outputHiddenStates: true, lastLogitsOnly: true });
  const keep = (/** @type {ArrayLike<number>} */ r) => Float64Array.from({ length: position + 1 }, (_, j) => r[j]);
  const attribution = async (/** @type {string} */ method) =>
    keep(Array.from((await model.attribution(tokens, { position, target, method })).data, Math.abs));
  /** @type {Record<string, Float64Array | null>} */
  const rows = {
    raw: keep(mapRow(fw.attentions[layer], position, head)),
    layerMean: keep(mapRow(fw.attentions[layer], position, 'mean')),
    rollout: keep(mapRow(rollout(fw.attentions), position, 0)),
    flow: T <= FLOW_MAX_T ? keep(attentionFlow(fw.attentions, { query: position }).data) : null,
    normWeighted: weights
      ? keep(
          normWeighted(fw.hiddenStates[layer], fw.attentions[layer], weights, {
            position,
            head,
            eps: model.config.normEps ?? 1e-5,
          }).byHead,
        )
      : null,
    gradXInput: await attribution('gradient-x-input'),
    gradient: await attribution('gradient'),
    occlusion: await attribution('occlusion'),
  };
  return { rows, rho: rankTable(rows) };
}

/**
 * Spearman's ρ between every two readings present (null where either is missing or has fewer than 3 positions).
 * @param {Record<string, ArrayLike<number> | null>} rows
 * @returns {Record<string, Record<string, number | null>>}
 */
export function rankTable(rows) {
  const names = Object.keys(rows);
  return Object.fromEntries(
    names.map((a) => [
      a,
      Object.fromEntries(
        names.map((b) => {
          const [x, y] = [rows[a], rows[b]];
          return [b, x && y && x.length >= 3 ? spearman(Array.from(x), Array.from(y)) : null];
        }),
      ),
    ]),
  );
}

/**
 * Head importance three ways on one batch (decoders: { tokens, targets }): the head mask's gradient (Michel et al.
 * 2019) and the loss change when the head is zeroed or replaced by its mean output; their rank agreement (ρ over
 * all L·H heads).
 * @param {any} model
 * @param {{ tokens: { data: Int32Array, shape: number[] }, targets: { data: Int32Array, shape: number[] } }} batch
 */
export async function headImportanceAll(model, batch) {
  const g = await model.headImportance(batch, { method: 'gradient' });
  const z = await model.headImportance(batch, { method: 'ablation', ablation: 'zero' });
  const m = await model.headImportance(batch, { method: 'ablation', ablation: 'mean' });
  const [gradient, zero, mean] = [g, z, m].map((r) => Array.from(r.importance.data, Number));
  const { numLayers: L, numHeads: H } = model.config;
  const rows = Array.from({ length: L * H }, (_, i) => ({
    layer: Math.floor(i / H),
    head: i % H,
    gradient: gradient[i],
    zero: zero[i],
    mean: mean[i],
  }));
  return {
    loss: g.loss,
    rows,
    rho: {
      gradientZero: spearman(gradient, zero),
      gradientMean: spearman(gradient, mean),
      zeroMean: spearman(zero, mean),
    },
  };
}

/**
 * A batch of equally long sequences for headImportance: tokens, and targets the next token (−100 at the end).
 * @param {Int32Array[]} seqs  each of the same length T
 */
export function nextTokenBatch(seqs) {
  const T = seqs[0].length;
  if (seqs.some((s) => s.length !== T)) throw new RangeError('nextTokenBatch: seqs must all have the same length');
  const tokens = new Int32Array(seqs.length * T);
  const targets = new Int32Array(seqs.length * T).fill(-100);
  seqs.forEach((s, b) => {
    tokens.set(s, b * T);
    targets.set(s.subarray(1), b * T);
  });
  return { tokens: { data: tokens, shape: [seqs.length, T] }, targets: { data: targets, shape: [seqs.length, T] } };
}
