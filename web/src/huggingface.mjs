// @ts-check
// fromHuggingFace: one layer's attention weights of a Hugging Face checkpoint (e.g. from readSafetensors) →
// { config, stateDict } for createMultiHeadAttention / loadStateDict (torch.nn.MultiheadAttention's names).
//
//   BERT-style  {prefix}encoder.layer.{i}.attention.self.{query,key,value}.{weight,bias}   nn.Linear (E, E)
//               {prefix}encoder.layer.{i}.attention.output.dense.{weight,bias}
//   ViT         {prefix}encoder.layer.{i}.attention.attention.{query,key,value}.{weight,bias}
//               {prefix}encoder.layer.{i}.attention.output.dense.{weight,bias}
//   GPT-2       {prefix}h.{i}.attn.c_attn.{weight,bias}  Conv1D: y = x·W + b, W (E, 3E) → in_proj_weight = Wᵀ
//               {prefix}h.{i}.attn.c_proj.{weight,bias}  Conv1D (E, E)                  → out_proj.weight = Wᵀ
// Hugging Face layers are batch-first, hence `batchFirst: true`. GPT-2 attends causally: pass a causal attnMask.

import { describe, readDim, readOptions } from './validate.mjs';

const ctx = 'fromHuggingFace';

/** Per architecture: the default prefixes (tried in order), and where one layer's tensors are. */
const kArchitectures = {
  bert: {
    prefixes: ['bert.', 'roberta.', ''],
    layer: (/** @type {number} */ i) => `encoder.layer.${i}.attention.`,
    qkv: ['self.query', 'self.key', 'self.value'],
    out: 'output.dense',
    conv1d: false,
  },
  vit: {
    prefixes: ['vit.', ''],
    layer: (/** @type {number} */ i) => `encoder.layer.${i}.attention.`,
    qkv: ['attention.query', 'attention.key', 'attention.value'],
    out: 'output.dense',
    conv1d: false,
  },
  gpt2: {
    prefixes: ['transformer.', ''],
    layer: (/** @type {number} */ i) => `h.${i}.attn.`,
    qkv: ['c_attn'],
    out: 'c_proj',
    conv1d: true,
  },
};

/**
 * A float tensor of the checkpoint: { data: Float32Array, shape | dims }.
 * @param {Record<string, any>} tensors
 * @param {string} name
 */
function tensorAt(tensors, name) {
  const t = Object.hasOwn(tensors, name) ? tensors[name] : undefined;
  if (t === undefined) throw new RangeError(`${ctx}: the checkpoint has no tensor ${JSON.stringify(name)}`);
  const data = t?.data;
  const shape = t?.shape ?? t?.dims;
  if (Object.prototype.toString.call(data) !== '[object Float32Array]' || !Array.isArray(shape)) {
    const dtype = typeof t?.dtype === 'string' ? ` (dtype ${t.dtype})` : '';
    throw new RangeError(
      `${ctx}: tensor ${JSON.stringify(name)} must be float data { data: Float32Array, shape }${dtype}, got ${describe(data)}`,
    );
  }
  return { data: /** @type {Float32Array} */ (data), shape: shape.map(Number) };
}

/**
 * Checks a tensor's shape.
 * @param {string} name
 * @param {{ shape: number[] }} t
 * @param {number[]} expected
 */
function checkShape(name, t, expected) {
  if (t.shape.length !== expected.length || t.shape.some((d, i) => d !== expected[i])) {
    throw new RangeError(
      `${ctx}: tensor ${JSON.stringify(name)} has shape [${t.shape.join(', ')}], expected [${expected.join(', ')}]`,
    );
  }
}

/**
 * The transpose of a row-major (rows, cols) matrix.
 * @param {Float32Array} m
 * @param {number} rows
 * @param {number} cols
 */
function transpose(m, rows, cols) {
  const t = new Float32Array(m.length);
  for (let r = 0; r < rows; ++r) for (let c = 0; c < cols; ++c) t[c * rows + r] = m[r * cols + c];
  return t;
}

/**
 * @param {Record<string, unknown>} tensors the checkpoint's tensors by name (e.g. readSafetensors' result)
 * @param {{ arch: 'bert' | 'gpt2' | 'vit', layer: number, numHeads: number, prefix?: string }} options
 */
export function fromHuggingFace(tensors, options) {
  if (tensors === null || typeof tensors !== 'object' || Array.isArray(tensors)) {
    throw new TypeError(`${ctx}: tensors must be an object { name: { data, shape } }, got ${describe(tensors)}`);
  }
  const o = readOptions(ctx, options, 'options', ['arch', 'layer', 'numHeads', 'prefix']);
  const arch = o.arch;
  if (typeof arch !== 'string' || !Object.hasOwn(kArchitectures, arch)) {
    throw new RangeError(
      `${ctx}: arch must be one of ${Object.keys(kArchitectures)
        .map((a) => `'${a}'`)
        .join(', ')}, got ${describe(arch)}`,
    );
  }
  const spec = kArchitectures[/** @type {keyof typeof kArchitectures} */ (arch)];
  const layer = readDim(ctx, o.layer, 'layer', { min: 0 });
  const numHeads = readDim(ctx, o.numHeads, 'numHeads');
  if (o.prefix !== undefined && typeof o.prefix !== 'string') {
    throw new TypeError(`${ctx}: prefix must be a string, got ${describe(o.prefix)}`);
  }
  const probe = `${spec.layer(layer)}${spec.qkv[0]}.weight`;
  const prefixes = o.prefix !== undefined ? [o.prefix] : spec.prefixes;
  const prefix = prefixes.find((p) => Object.hasOwn(/** @type {object} */ (tensors), p + probe));
  if (prefix === undefined) {
    const tried = prefixes.map((p) => JSON.stringify(p + probe)).join(', ');
    throw new RangeError(`${ctx}: no ${arch} attention layer ${layer}: the checkpoint has no tensor ${tried}`);
  }
  const base = prefix + spec.layer(layer);
  /** One tensor of this layer, with its full name. */
  const get = (/** @type {string} */ part) => ({
    name: base + part,
    ...tensorAt(/** @type {any} */ (tensors), base + part),
  });

  let inProjWeight;
  let inProjBias;
  let E;
  if (spec.conv1d) {
    const w = get(`${spec.qkv[0]}.weight`);
    E = w.shape[0];
    checkShape(w.name, w, [E, 3 * E]);
    inProjWeight = transpose(w.data, E, 3 * E);
    const b = get(`${spec.qkv[0]}.bias`);
    checkShape(b.name, b, [3 * E]);
    inProjBias = b.data.slice();
  } else {
    const parts = spec.qkv.map((p) => ({ w: get(`${p}.weight`), b: get(`${p}.bias`) }));
    E = parts[0].w.shape[0];
    inProjWeight = new Float32Array(3 * E * E);
    inProjBias = new Float32Array(3 * E);
    parts.forEach(({ w, b }, i) => {
      checkShape(w.name, w, [E, E]);
      checkShape(b.name, b, [E]);
      inProjWeight.set(w.data, i * E * E);
      inProjBias.set(b.data, i * E);
    });
  }
  const ow = get(`${spec.out}.weight`);
  checkShape(ow.name, ow, [E, E]);
  const ob = get(`${spec.out}.bias`);
  checkShape(ob.name, ob, [E]);
  if (E % numHeads !== 0) {
    throw new RangeError(`${ctx}: numHeads (${numHeads}) must divide the layer's embedding size ${E}`);
  }
  return {
    config: { embedDim: E, numHeads, batchFirst: true },
    stateDict: {
      in_proj_weight: { data: inProjWeight, shape: [3 * E, E] },
      in_proj_bias: { data: inProjBias, shape: [3 * E] },
      'out_proj.weight': { data: spec.conv1d ? transpose(ow.data, E, E) : ow.data.slice(), shape: [E, E] },
      'out_proj.bias': { data: ob.data.slice(), shape: [E] },
    },
  };
}
