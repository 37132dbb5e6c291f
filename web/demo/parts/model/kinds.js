// @ts-check
// Part "Your model", the encoders, ViT and encoder–decoders without DOM (#33 item 6): what a folder of each kind
// needs, one encoder forward with every map (BERT/RoBERTa on tokens, ViT on an image's pixels), the top predictions
// at each mask token and a classifier's label probabilities (softmax by attnlab, as pitfalls' attnSoftmax), an
// image's pixels normalised as preprocessor_config.json says (ViTImageProcessor's defaults without it), a head's
// [CLS] row laid out as the patch grid, and an encoder–decoder's encoder, decoder and cross-attention maps of the
// generated text (the cross-attention alignment: target × source). Models are the main thread's or a worker's:
// every call is awaited. Every failure is an Error with a localised message.

import { attnSoftmax } from '../pitfalls/compute.js';
import { errText } from '../../shared/format.js';
import { t } from '../../i18n.js';

/** ViTImageProcessor's defaults: mean and std 0.5 per channel, pixels × 1/255. */
export const VIT_DEFAULTS = { mean: 0.5, std: 0.5, scale: 1 / 255 };

/**
 * Whether a config.json is a vision model's (no tokenizer needed; an image instead).
 * @param {Record<string, any>} config
 */
export const isVision = (config) => config?.model_type === 'vit';

/**
 * @typedef {object} Maps  every layer's attention, maps[l] = layer l's (H, Tq, Tk) for one item
 * @property {Float32Array[]} maps
 * @property {number} T  queries
 * @property {number} S  keys
 * @property {number} H
 */

/**
 * Tensors (1, H, Tq, Tk) per layer → Maps.
 * @param {{ data: Float32Array, shape: number[] }[]} list
 * @returns {Maps}
 */
const toMaps = (list) => {
  const [, H, T, S] = list[0].shape;
  return { maps: list.map((a) => a.data), T, S, H };
};

/**
 * @param {() => any} call
 */
async function forwardOf(call) {
  try {
    return await call();
  } catch (e) {
    throw new Error(t('model.kind.forwardFailed', { err: errText(e) }));
  }
}

/**
 * One encoder forward with outputAttentions: on token ids (BERT, RoBERTa) or pixel values (ViT).
 * @param {{ forward: (x: any, o: any) => any }} model
 * @param {number[] | { data: Float32Array, shape: number[] }} input  ids, or pixelValues (1, C, S, S)
 * @returns {Promise<Maps & { logits: Float32Array | null }>}
 */
export async function encoderForward(model, input) {
  const x = Array.isArray(input) ? { data: Int32Array.from(input), shape: [1, input.length] } : input;
  const out = await forwardOf(() => model.forward(x, { outputAttentions: true }));
  return { ...toMaps(out.attentions), logits: out.logits?.data ?? null };
}

/**
 * The mask token's id: tokenizer_config.json's mask_token, else [MASK] or <mask> if the vocabulary has one.
 * @param {{ token_to_id: (s: string) => number | undefined }} tk
 * @param {Record<string, any>} tokenizerConfig
 */
export function maskTokenId(tk, tokenizerConfig) {
  const m = tokenizerConfig.mask_token;
  const named = typeof m === 'string' ? m : m?.content;
  for (const s of [named, '[MASK]', '<mask>']) {
    const id = typeof s === 'string' ? tk.token_to_id(s) : undefined;
    if (id !== undefined && id !== null) return id;
  }
  return null;
}

/**
 * The k most probable ids of one row of logits, with their probabilities (attnlab's softmax).
 * @param {import('../../attnlab.js').Attnlab} attn
 * @param {Float32Array} row
 * @param {number} k
 */
export function topK(attn, row, k) {
  const p = attnSoftmax(attn, Array.from(row));
  const order = Array.from(p.keys()).sort((a, b) => p[b] - p[a] || a - b);
  return order.slice(0, k).map((id) => ({ id, p: p[id] }));
}

/**
 * The top k predictions at every mask token of a masked-LM forward.
 * @param {import('../../attnlab.js').Attnlab} attn
 * @param {Float32Array} logits  (1, T, V)
 * @param {number[]} ids  the T input ids
 * @param {number} mask  the mask token's id
 * @param {number} k
 */
export function maskPredictions(attn, logits, ids, mask, k = 5) {
  const V = logits.length / ids.length;
  return ids.flatMap((id, i) => (id === mask ? [{ i, top: topK(attn, logits.subarray(i * V, (i + 1) * V), k) }] : []));
}

/**
 * A classifier's labels (config.json's id2label; LABEL_i where it names none) with their probabilities, most
 * probable first.
 * @param {import('../../attnlab.js').Attnlab} attn
 * @param {Float32Array} logits  (1, numLabels)
 * @param {Record<string, string> | undefined} id2label
 */
export function classProbabilities(attn, logits, id2label) {
  return topK(attn, logits, logits.length).map(({ id, p }) => ({ id, p, label: id2label?.[id] ?? `LABEL_${id}` }));
}

/**
 * @typedef {object} ImageSettings  how the page turns an image into pixelValues
 * @property {number} size  image_size
 * @property {number} patch  patch_size
 * @property {number} channels  num_channels: 3 = RGB, 1 = grey (ITU-R 601 luma, as PIL's convert('L'))
 * @property {number[]} mean  per channel
 * @property {number[]} std  per channel
 * @property {number} scale  rescale_factor (1/255)
 * @property {boolean} fromFile  whether preprocessor_config.json gave mean and std
 */

/**
 * One preprocessor key as a per-channel list: a number or a list of 1 or `channels` numbers.
 * @param {unknown} v
 * @param {number} channels
 * @param {string} key
 */
function perChannel(v, channels, key) {
  const list = [v].flat();
  const ok = list.every((x) => typeof x === 'number' && Number.isFinite(x) && (key !== 'image_std' || x > 0));
  if (!ok || (list.length !== 1 && list.length !== channels))
    throw new Error(t('model.vit.badPreprocessor', { key, n: channels }));
  return list.length === 1 ? Array(channels).fill(list[0]) : list;
}

/**
 * config.json and preprocessor_config.json (null when the folder has none) → ImageSettings.
 * @param {Record<string, any>} config
 * @param {Record<string, any> | null} pre
 * @returns {ImageSettings}
 */
export function imageSettings(config, pre) {
  const channels = config.num_channels ?? 3;
  const size = config.image_size ?? 224;
  const p = pre ?? {};
  const normalise = p.do_normalize !== false;
  const rescale = p.do_rescale !== false;
  return {
    size,
    patch: config.patch_size ?? 16,
    channels,
    mean: normalise ? perChannel(p.image_mean ?? VIT_DEFAULTS.mean, channels, 'image_mean') : Array(channels).fill(0),
    std: normalise ? perChannel(p.image_std ?? VIT_DEFAULTS.std, channels, 'image_std') : Array(channels).fill(1),
    scale: rescale ? (p.rescale_factor ?? VIT_DEFAULTS.scale) : 1,
    fromFile: Boolean(pre && (pre.image_mean !== undefined || pre.image_std !== undefined)),
  };
}

/**
 * An image already resized to size × size (RGBA bytes, row-major, as canvas ImageData) → pixelValues (1, C, S, S):
 * (value · scale − mean) / std per channel; one channel is the luma 0.299 R + 0.587 G + 0.114 B.
 * @param {Uint8ClampedArray | Uint8Array} rgba
 * @param {ImageSettings} s
 */
export function pixelValues(rgba, s) {
  const n = s.size * s.size;
  if (rgba.length !== 4 * n) throw new Error(t('model.vit.badImage', { n: s.size }));
  const data = new Float32Array(s.channels * n);
  for (let i = 0; i < n; i++) {
    const [r, g, b] = [rgba[4 * i], rgba[4 * i + 1], rgba[4 * i + 2]];
    const values = s.channels === 1 ? [0.299 * r + 0.587 * g + 0.114 * b] : [r, g, b];
    for (let c = 0; c < s.channels; c++) data[c * n + i] = (values[c] * s.scale - s.mean[c]) / s.std[c];
  }
  return { data, shape: [1, s.channels, s.size, s.size] };
}

/**
 * A head's [CLS] row over the patches as the image's grid: cell (r, c) = the weight of patch token 1 + r·g + c,
 * g = ⌊size / patch⌋ (the convolution drops trailing pixels); also the weight [CLS] keeps on itself.
 * @param {Float32Array} map  the layer's (H, T, T), T = 1 + g²
 * @param {number} head
 * @param {number} grid  g
 */
export function clsPatches(map, head, grid) {
  const T = 1 + grid * grid;
  if (map.length % (T * T)) throw new Error(t('model.vit.badGrid', { g: grid, T }));
  const row = map.subarray(head * T * T, head * T * T + T);
  return { cells: row.slice(1), cls: row[0], grid };
}

/**
 * An encoder–decoder's maps of a generated text: one forward with the source ids and the decoder's inputs (the
 * start token, then every generated id but the last), so that decoder row i is the step that wrote generated[i].
 * @param {{ forward: (x: any, o: any) => any }} model
 * @param {number[]} source  encoder ids
 * @param {number[]} generated  generate's ids (start token excluded)
 * @param {number} start  decoder_start_token_id
 */
export async function seq2seqMaps(model, source, generated, start) {
  const dec = [start, ...generated.slice(0, -1)];
  const out = await forwardOf(() =>
    model.forward(
      { data: Int32Array.from(source), shape: [1, source.length] },
      { decoderInputIds: { data: Int32Array.from(dec), shape: [1, dec.length] }, outputAttentions: true },
    ),
  );
  return {
    decoderInput: dec,
    encoder: toMaps(out.encoderAttentions),
    decoder: toMaps(out.decoderAttentions),
    cross: toMaps(out.crossAttentions),
  };
}

/**
 * One head's cross-attention alignment: the (T, S) matrix, row i = target token i's weights over the source.
 * @param {Maps} cross
 * @param {number} layer
 * @param {number} head
 */
export function alignment(cross, layer, head) {
  const { T, S } = cross;
  return cross.maps[layer].subarray(head * T * S, (head + 1) * T * S);
}
