// @ts-check
// Reading "your PyTorch layer": a JSON file holding the state dict of an nn.MultiheadAttention.
//
// FORMAT (what the README's export snippet writes; also accepted: a toy model file, which has it under "mha"):
//
//   {
//     "embed_dim": 32,                       // E, a positive integer
//     "num_heads": 4,                        // H, E must be divisible by H
//     "add_zero_attn": false,                // optional (cannot be seen in the weights)
//     "state_dict": {                        // PyTorch names, exactly as mha.state_dict() gives them
//       "in_proj_weight":  { "shape": [96, 32], "data": [ ...3072 numbers, row-major... ] },
//       "in_proj_bias":    { "shape": [96],     "data": [ ... ] },     // absent when bias=False
//       "out_proj.weight": { "shape": [32, 32], "data": [ ... ] },
//       "out_proj.bias":   { "shape": [32],     "data": [ ... ] }      // absent when bias=False
//       // kdim/vdim != embed_dim: q_proj_weight, k_proj_weight, v_proj_weight instead of in_proj_weight
//       // add_bias_kv=True: bias_k (1, 1, E) and bias_v (1, 1, E)
//     }
//   }
//
// Written from PyTorch with:
//   import json, torch
//   mha = torch.nn.MultiheadAttention(32, 4)          # your trained layer
//   sd = {k: {"shape": list(v.shape), "data": v.detach().flatten().tolist()} for k, v in mha.state_dict().items()}
//   json.dump({"embed_dim": mha.embed_dim, "num_heads": mha.num_heads, "state_dict": sd}, open("mha.json", "w"))
//
// A value may also be a nested array (its shape is then read from the nesting). Non-finite numbers may be
// written as the strings "NaN", "Infinity", "-Infinity".

import { t } from '../i18n.js';
import { errText } from './format.js';

/** @typedef {import('../attnlab.js').Attnlab} Attnlab */
/** @typedef {import('../attnlab.js').Tensor} Tensor */

/**
 * A parsed layer file.
 * @typedef {object} LayerConfig
 * @property {number} embedDim
 * @property {number} numHeads
 * @property {boolean} bias
 * @property {boolean} addBiasKV
 * @property {boolean} addZeroAttn
 * @property {number} kdim
 * @property {number} vdim
 * @property {Record<string, Tensor>} stateDict
 * @property {string[]} names
 * @property {string} [prefix] the module prefix taken off the names
 */

export const FORMAT_DOC = `{
  "embed_dim": 32,
  "num_heads": 4,
  "state_dict": {
    "in_proj_weight":  {"shape": [96, 32], "data": [... 3072 numbers, row-major ...]},
    "in_proj_bias":    {"shape": [96],     "data": [...]},
    "out_proj.weight": {"shape": [32, 32], "data": [...]},
    "out_proj.bias":   {"shape": [32],     "data": [...]}
  }
}`;

export const EXPORT_SNIPPET = `import json, torch
mha = torch.nn.MultiheadAttention(32, 4)   # your trained layer
sd = {k: {"shape": list(v.shape), "data": v.detach().flatten().tolist()}
      for k, v in mha.state_dict().items()}
json.dump({"embed_dim": mha.embed_dim, "num_heads": mha.num_heads,
           "state_dict": sd}, open("mha.json", "w"))`;

const KNOWN = [
  'in_proj_weight',
  'in_proj_bias',
  'out_proj.weight',
  'out_proj.bias',
  'q_proj_weight',
  'k_proj_weight',
  'v_proj_weight',
  'bias_k',
  'bias_v',
];

/**
 * Parse the text of a state-dict file. Returns { embedDim, numHeads, bias, addBiasKV, addZeroAttn, kdim, vdim,
 * stateDict: { name: { data: Float32Array, shape } }, names } or throws an Error whose message says, in words,
 * what is wrong and where.
 * @param {string} text
 * @returns {LayerConfig}
 */
export function parseLayerFile(text, fileName = 'the file') {
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new Error(t('sd.notJson', { f: fileName, err: e.message }));
  }
  if (doc && doc.format === 'attnlab-toy-model' && doc.mha) doc = doc.mha;
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new Error(t('sd.notObject', { f: fileName }));
  for (const key of ['embed_dim', 'num_heads']) {
    if (!(key in doc)) throw new Error(t('sd.missingInt', { f: fileName, key }));
    if (!Number.isInteger(doc[key]) || doc[key] <= 0)
      throw new Error(t('sd.badInt', { f: fileName, key, got: JSON.stringify(doc[key]) }));
  }
  if (!doc.state_dict || typeof doc.state_dict !== 'object' || Array.isArray(doc.state_dict)) {
    throw new Error(t('sd.missingSd', { f: fileName }));
  }
  let entries = Object.entries(doc.state_dict);
  if (!entries.length) throw new Error(t('sd.emptySd', { f: fileName }));
  // Accept a common module prefix ("attn.in_proj_weight" → "in_proj_weight").
  const prefix = commonPrefix(entries.map(([n]) => n));
  if (prefix) entries = entries.map(([n, v]) => [n.slice(prefix.length), v]);

  /** @type {Record<string, Tensor>} */
  const stateDict = {};
  for (const [name, val] of entries) stateDict[name] = readTensor(val, `state_dict["${name}"]`, fileName);
  /** @param {string} n */
  const has = (n) => n in stateDict;
  const E = doc.embed_dim;
  const separate = has('q_proj_weight') || has('k_proj_weight') || has('v_proj_weight');
  /** @param {string} n @param {number} fallback */
  const dimOf = (n, fallback) => (has(n) && stateDict[n].shape.length === 2 ? stateDict[n].shape[1] : fallback);
  return {
    embedDim: E,
    numHeads: doc.num_heads,
    bias: typeof doc.bias === 'boolean' ? doc.bias : has('in_proj_bias') || has('out_proj.bias'),
    addBiasKV: typeof doc.add_bias_kv === 'boolean' ? doc.add_bias_kv : has('bias_k') || has('bias_v'),
    addZeroAttn: !!doc.add_zero_attn,
    kdim: separate ? dimOf('k_proj_weight', doc.kdim ?? E) : E,
    vdim: separate ? dimOf('v_proj_weight', doc.vdim ?? E) : E,
    stateDict,
    names: Object.keys(stateDict),
    prefix,
  };
}

/**
 * What the package expects, in words (shown next to a loadStateDict error).
 * @param {{ embedDim: number, kdim: number, vdim: number, bias: boolean, addBiasKV: boolean }} cfg
 */
export function expectedShapes(cfg) {
  const E = cfg.embedDim;
  const parts = [];
  if (cfg.kdim === E && cfg.vdim === E) parts.push(`in_proj_weight [${3 * E}, ${E}]`);
  else
    parts.push(`q_proj_weight [${E}, ${E}]`, `k_proj_weight [${E}, ${cfg.kdim}]`, `v_proj_weight [${E}, ${cfg.vdim}]`);
  if (cfg.bias) parts.push(`in_proj_bias [${3 * E}]`);
  parts.push(`out_proj.weight [${E}, ${E}]`);
  if (cfg.bias) parts.push(`out_proj.bias [${E}]`);
  if (cfg.addBiasKV) parts.push(`bias_k [1, 1, ${E}]`, `bias_v [1, 1, ${E}]`);
  return parts.join(', ');
}

/** @param {string[]} names */
function commonPrefix(names) {
  if (names.some((n) => KNOWN.includes(n))) return '';
  const first = names[0];
  for (const k of KNOWN) {
    if (first.endsWith('.' + k)) {
      const p = first.slice(0, first.length - k.length);
      if (names.every((n) => n.startsWith(p) && KNOWN.includes(n.slice(p.length)))) return p;
    }
  }
  return '';
}

/**
 * @param {unknown} x
 * @param {string} where
 */
function num(x, where) {
  if (typeof x === 'number') return x;
  if (x === 'NaN') return NaN;
  if (x === 'Infinity') return Infinity;
  if (x === '-Infinity') return -Infinity;
  throw new Error(t('sd.notNumber', { where, x: JSON.stringify(x) }));
}

/**
 * @param {any} val
 * @param {string} where
 * @param {string} fileName
 * @returns {Tensor}
 */
function readTensor(val, where, fileName) {
  where = `${fileName}, ${where}`;
  if (Array.isArray(val)) {
    // nested arrays
    /** @type {number[]} */
    const shape = [];
    for (let a = val; Array.isArray(a); a = a[0]) shape.push(a.length);
    const flat = val.flat(Infinity);
    const n = shape.reduce((p, d) => p * d, 1);
    if (flat.length !== n) throw new Error(t('sd.ragged', { where, shape: shape.join('×') }));
    return { data: Float32Array.from(flat, (x, i) => num(x, `${where}[${i}]`)), shape };
  }
  if (!val || typeof val !== 'object')
    throw new Error(t('sd.notTensor', { where, got: JSON.stringify(val)?.slice(0, 40) }));
  /** @type {unknown[]} */
  const shape = Array.isArray(val.shape) ? val.shape : null;
  if (!shape || !shape.every((d) => Number.isInteger(d) && /** @type {number} */ (d) >= 0)) {
    throw new Error(t('sd.badShape', { where, got: JSON.stringify(val.shape) }));
  }
  if (!Array.isArray(val.data)) throw new Error(t('sd.badData', { where }));
  const flat = val.data.flat(Infinity);
  const dims = /** @type {number[]} */ (shape);
  const n = dims.reduce((p, d) => p * d, 1);
  if (flat.length !== n) {
    throw new Error(t('sd.count', { where, shape: dims.join(', '), n, got: flat.length }));
  }
  return { data: Float32Array.from(flat, (x, i) => num(x, `${where}.data[${i}]`)), shape: dims.slice() };
}

/**
 * The user's layer, ready to run: parse the file, create the attnlab layer, load the state dict. Returns
 * { cfg, mha, summary } or throws an Error whose message says, in the page's language, what went wrong.
 * @param {Attnlab} attn
 * @param {string} text
 * @param {string} fileName
 */
export function buildUserLayer(attn, text, fileName) {
  let cfg;
  try {
    cfg = parseLayerFile(text, fileName);
  } catch (e) {
    throw new Error(t('mha.fileUnreadable', { f: fileName, err: e.message }));
  }
  let mha;
  try {
    mha = attn.createMultiHeadAttention({
      embedDim: cfg.embedDim,
      numHeads: cfg.numHeads,
      bias: cfg.bias,
      addBiasKV: cfg.addBiasKV,
      addZeroAttn: cfg.addZeroAttn,
      kdim: cfg.kdim,
      vdim: cfg.vdim,
      batchFirst: true,
    });
  } catch (e) {
    throw new Error(t('mha.fileBuild', { e: cfg.embedDim, h: cfg.numHeads, err: errText(e) }));
  }
  try {
    mha.loadStateDict(cfg.stateDict);
  } catch (e) {
    mha.dispose();
    const has = cfg.names.map((n) => `${n} [${cfg.stateDict[n].shape.join(', ')}]`).join(', ');
    throw new Error(
      t('mha.fileRefused', {
        f: fileName,
        err: errText(e),
        e: cfg.embedDim,
        nb: cfg.bias ? '' : ', bias=False',
        want: expectedShapes(cfg),
        has,
      }),
    );
  }
  const extras = [
    !cfg.bias && ', bias=False',
    cfg.addBiasKV && ', add_bias_kv=True',
    cfg.addZeroAttn && ', add_zero_attn=True',
    cfg.kdim !== cfg.embedDim && `, kdim=${cfg.kdim}`,
    cfg.vdim !== cfg.embedDim && `, vdim=${cfg.vdim}`,
  ]
    .filter(Boolean)
    .join('');
  const layer = `nn.MultiheadAttention(embed_dim=${cfg.embedDim}, num_heads=${cfg.numHeads}${extras})`;
  return { cfg, mha, summary: t('mha.fileOk', { f: fileName, layer, n: cfg.names.length }) };
}
