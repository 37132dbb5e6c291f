// @ts-check
// Part "Your model", the half without DOM: reading a dropped file (a .safetensors checkpoint or the JSON state
// dict of shared/statedict.js), finding its attention layers, building that layer in attnlab, and reading the input
// (words, pasted vectors or seeded random hidden states). Every failure is an Error with a localised message.

import { readSafetensors, fromHuggingFace } from '../../attnlab.js';
export * from './checkpoint.js';
import { parseLayerFile, expectedShapes } from '../../shared/statedict.js';
import { tokenize, pseudoEmbed, causalMask } from '../../shared/inputs.js';
import { rng } from '../../shared/random.js';
import { errText } from '../../shared/format.js';
import { t } from '../../i18n.js';

/** @typedef {import('../../attnlab.js').Attnlab} Attnlab */
/** @typedef {import('../../attnlab.js').MultiHeadAttention} MultiHeadAttention */
/** @typedef {import('../../attnlab.js').MultiHeadAttentionOptions} MhaOptions */
/** @typedef {'bert' | 'gpt2' | 'vit'} Arch */
/** @typedef {{ prefix: string, layers: number[], embedDim: number }} Found where an architecture's layers are */
/**
 * A dropped file, read.
 * @typedef {{ kind: 'hf', name: string, tensors: Record<string, any>, count: number,
 *   found: Partial<Record<Arch, Found>>, metadata: Record<string, string> }
 *   | { kind: 'json', name: string, cfg: import('../../shared/statedict.js').LayerConfig }} ModelFile
 */
/** @typedef {{ mha: MultiHeadAttention, embedDim: number, numHeads: number, extraKeys: string[] }} Layer */

/** @type {Arch[]} */
export const ARCHS = ['bert', 'gpt2', 'vit'];
export const MAX_TOKENS = 64;

/** Where one layer's first attention tensor sits, per architecture (as in fromHuggingFace); group 1 = prefix. */
const PROBES = {
  bert: /^((?:.+\.)?)encoder\.layer\.(\d+)\.attention\.self\.query\.weight$/,
  vit: /^((?:.+\.)?)encoder\.layer\.(\d+)\.attention\.attention\.query\.weight$/,
  gpt2: /^((?:.+\.)?)h\.(\d+)\.attn\.c_attn\.weight$/,
};
/** Keys of __metadata__ (or config.json) that may say the number of heads. */
const HEAD_KEYS = ['num_attention_heads', 'n_head', 'num_heads'];

/**
 * The attention layers in a checkpoint: { arch: { prefix, layers: number[], embedDim } } for each architecture
 * with at least one layer.
 * @param {Record<string, { shape?: number[] }>} tensors
 */
export function scanLayers(tensors) {
  /** @type {Partial<Record<Arch, Found>>} */
  const found = {};
  for (const [name, tensor] of Object.entries(tensors)) {
    for (const arch of ARCHS) {
      const m = name.match(PROBES[arch]);
      if (!m || !Array.isArray(tensor.shape)) continue;
      const f = (found[arch] ??= { prefix: m[1], layers: [], embedDim: tensor.shape[0] });
      if (m[1] === f.prefix) f.layers.push(Number(m[2]));
    }
  }
  for (const f of Object.values(found)) f.layers.sort((a, b) => a - b);
  return found;
}

/**
 * numHeads is not stored in the weights: the file's metadata when it says so, else a head width of 64 (BERT,
 * GPT-2 and ViT base) when E allows, else the largest divisor of E up to 4 (small test layers).
 * @param {number} embedDim
 * @param {Record<string, string>} [metadata]
 */
export function guessHeads(embedDim, metadata = {}) {
  for (const k of HEAD_KEYS) {
    const n = Number(metadata[k]);
    if (Number.isInteger(n) && n > 0 && embedDim % n === 0) return { numHeads: n, from: 'metadata' };
  }
  if (embedDim % 64 === 0) return { numHeads: embedDim / 64, from: 'width64' };
  let n = Math.min(4, embedDim);
  while (embedDim % n) n -= 1;
  return { numHeads: n, from: 'small' };
}

/**
 * A dropped file's bytes → { kind: 'hf', name, tensors, count, found, metadata } or { kind: 'json', name, cfg }.
 * .json is read as a state dict, .safetensors as a checkpoint, anything else as whichever of the two it parses as.
 * @param {string} name
 * @param {Uint8Array} bytes
 * @returns {ModelFile}
 */
export function readModelFile(name, bytes) {
  /** @returns {ModelFile} */
  const asJson = () => ({ kind: 'json', name, cfg: parseLayerFile(new TextDecoder().decode(bytes), name) });
  /** @returns {ModelFile} */
  const asSafetensors = () => {
    const tensors = readSafetensors(bytes);
    return {
      kind: 'hf',
      name,
      tensors,
      count: Object.keys(tensors).length,
      found: scanLayers(tensors),
      metadata: { ...tensors.__metadata__ },
    };
  };
  if (/\.json$/i.test(name)) return asJson();
  try {
    return asSafetensors();
  } catch (e) {
    if (/\.safetensors$/i.test(name)) throw new Error(t('model.badSafetensors', { f: name, err: e.message }));
    try {
      return asJson();
    } catch {
      throw new Error(t('model.unknownFile', { f: name }));
    }
  }
}

/**
 * What the file holds, in one line for the status message.
 * @param {ModelFile} src
 */
export function describeFile(src) {
  if (src.kind === 'json') {
    return t('model.loadedJson', { f: src.name, e: src.cfg.embedDim, h: src.cfg.numHeads });
  }
  const archs = Object.entries(src.found).map(([arch, f]) =>
    t('model.archLayers', {
      arch: t(`model.arch.${arch}`),
      from: f.layers[0],
      to: f.layers[f.layers.length - 1],
      e: f.embedDim,
    }),
  );
  if (!archs.length) return t('model.noLayers', { f: src.name, n: src.count });
  return t('model.loadedHf', { f: src.name, n: src.count, layers: archs.join('; ') });
}

/**
 * The attnlab layer for the choice { arch, layer, numHeads } → { mha, embedDim, numHeads, extraKeys }.
 * The caller owns mha (dispose it).
 * @param {Attnlab} attn
 * @param {ModelFile} src
 * @param {{ arch: string, layer: number, numHeads: number }} choice
 * @returns {Layer}
 */
export function buildLayer(attn, src, { arch, layer, numHeads }) {
  /** @type {MhaOptions} */
  let config;
  /** @type {import('../../attnlab.js').StateDict} */
  let stateDict;
  /** @type {string[]} */
  const extraKeys = [];
  if (src.kind === 'json') {
    const c = src.cfg;
    if (c.kdim !== c.embedDim || c.vdim !== c.embedDim) {
      throw new Error(t('model.crossDims', { e: c.embedDim, k: c.kdim, v: c.vdim }));
    }
    checkHeads(numHeads, c.embedDim);
    config = {
      embedDim: c.embedDim,
      numHeads,
      bias: c.bias,
      addBiasKV: c.addBiasKV,
      addZeroAttn: c.addZeroAttn,
      batchFirst: true,
    };
    stateDict = c.stateDict;
    if (c.addBiasKV) extraKeys.push('⟨bias_k⟩');
    if (c.addZeroAttn) extraKeys.push('⟨zero⟩');
  } else {
    const f = src.found[/** @type {Arch} */ (arch)];
    const archName = t(`model.arch.${arch}`);
    if (!f) throw new Error(t('model.archMissing', { arch: archName, f: src.name }));
    if (!f.layers.includes(layer)) {
      throw new Error(t('model.layerMissing', { arch: archName, layer, list: f.layers.join(', ') }));
    }
    checkHeads(numHeads, f.embedDim);
    try {
      ({ config, stateDict } = fromHuggingFace(src.tensors, {
        arch: /** @type {Arch} */ (arch),
        layer,
        numHeads,
        prefix: f.prefix,
      }));
    } catch (e) {
      throw new Error(t('model.layerFailed', { err: errText(e) }));
    }
  }
  const mha = attn.createMultiHeadAttention(config);
  try {
    mha.loadStateDict(stateDict);
  } catch (e) {
    mha.dispose();
    const want = src.kind === 'json' ? expectedShapes(src.cfg) : ''; // (the shapes do not depend on numHeads)
    throw new Error(t('model.loadFailed', { err: errText(e), want }));
  }
  return { mha, embedDim: config.embedDim, numHeads, extraKeys };
}

/**
 * @param {number} numHeads
 * @param {number} embedDim
 */
function checkHeads(numHeads, embedDim) {
  if (!Number.isInteger(numHeads) || numHeads < 1 || embedDim % numHeads !== 0) {
    throw new Error(t('model.headsDivide', { h: numHeads, e: embedDim }));
  }
}

/**
 * The layer's input (L, E) from the chosen source → { x: Float32Array, tokens: string[] }.
 *   words:   seeded pseudo-embeddings (one N(0, 1) vector per distinct word) plus sinusoidal positions
 *   vectors: one row per line, E numbers (spaces or commas), optionally "label: numbers"; or a JSON array (L, E)
 *   random:  count rows of N(0, 1) from the seed
 * @param {'words' | 'vectors' | 'random'} mode
 * @param {string} text
 * @param {number} embedDim
 * @param {{ count: number, seed: number }} random
 * @returns {{ x: Float32Array, tokens: string[] }}
 */
export function readInput(mode, text, embedDim, { count, seed }) {
  if (mode === 'random') {
    if (!Number.isInteger(count) || count < 1 || count > MAX_TOKENS)
      throw new Error(t('model.badCount', { max: MAX_TOKENS }));
    const r = rng(seed >>> 0);
    return {
      x: Float32Array.from({ length: count * embedDim }, () => r.normal()),
      tokens: Array.from({ length: count }, (_, i) => `x${i}`),
    };
  }
  if (mode === 'words') {
    const tokens = tokenize(text);
    checkCount(tokens.length);
    return { x: pseudoEmbed(tokens, embedDim), tokens };
  }
  const rows = text.trim().startsWith('[') ? jsonRows(text) : textRows(text);
  checkCount(rows.length);
  const x = new Float32Array(rows.length * embedDim);
  rows.forEach(({ values }, i) => {
    if (values.length !== embedDim) throw new Error(t('model.badWidth', { row: i + 1, n: values.length, e: embedDim }));
    x.set(values, i * embedDim);
  });
  return { x, tokens: rows.map(({ label }, i) => label ?? `x${i}`) };
}

/** @param {number} n */
function checkCount(n) {
  if (n === 0) throw new Error(t('model.noInput'));
  if (n > MAX_TOKENS) throw new Error(t('model.tooMany', { n, max: MAX_TOKENS }));
}

/**
 * @param {unknown} v
 * @param {number} row
 */
function finite(v, row) {
  const x = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  if (!Number.isFinite(x)) throw new Error(t('model.notNumber', { row, x: String(v).slice(0, 20) }));
  return x;
}

/**
 * @param {string} text
 * @returns {{ label?: string, values: number[] }[]}
 */
function textRows(text) {
  return text
    .split('\n')
    .filter((line) => line.trim())
    .map((line, i) => {
      const m = line.match(/^\s*([^:]*[^\s\d:.,+-][^:]*):(.*)$/); // "label: numbers" (a label holds a non-number character)
      const nums = (m ? m[2] : line)
        .trim()
        .split(/[\s,;]+/)
        .filter(Boolean);
      return { label: m ? m[1].trim() : undefined, values: nums.map((v) => finite(v, i + 1)) };
    });
}

/**
 * @param {string} text
 * @returns {{ label?: string, values: number[] }[]}
 */
function jsonRows(text) {
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new Error(t('model.badJsonInput', { err: e.message }));
  }
  while (Array.isArray(doc) && doc.length === 1 && Array.isArray(doc[0]) && Array.isArray(doc[0][0])) doc = doc[0]; // (1, L, E)
  if (!Array.isArray(doc) || !doc.every(Array.isArray))
    throw new Error(t('model.badJsonInput', { err: t('model.notRows') }));
  return doc.map((/** @type {unknown[]} */ row, /** @type {number} */ i) => ({
    values: row.map((v) => finite(v, i + 1)),
  }));
}

/**
 * attnlab's per-head weights of the layer on x (L, E): { data, shape: [H, L, S] }. GPT-2 style: causal.
 * @param {Layer} layer
 * @param {Float32Array} x
 * @param {number} L
 * @param {boolean} causal
 */
export function layerWeights(layer, x, L, causal) {
  const input = { data: x, shape: [1, L, layer.embedDim] };
  /** @type {import('../../attnlab.js').MultiHeadAttentionForwardOptions} */
  const opts = { needWeights: true, averageAttnWeights: false };
  if (causal) opts.attnMask = causalMask(L); // nn.MultiheadAttention's bool mask: 1 = masked
  const { weights } = layer.mha.forward(input, input, input, opts);
  return { data: weights.data, shape: weights.shape.slice(1) };
}
