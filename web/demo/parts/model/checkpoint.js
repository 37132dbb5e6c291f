// @ts-check
// Part "Your model", the whole-checkpoint half without DOM: the files of a Hugging Face model folder (config.json,
// model.safetensors, tokenizer.json, tokenizer_config.json) read into what loadModel takes and a tokenizer
// (@huggingface/tokenizers, through ../../tokenizers.js), the generation options, generation token by token with
// attnlab's generate (a model of the main thread or of attnlab/worker: every call is awaited), and the layers × heads
// maps of one forward with outputAttentions. Every failure is an Error with a localised message.

import { readSafetensors } from '../../attnlab.js';
import { Tokenizer } from '../../tokenizers.js';
import { errText } from '../../shared/format.js';
import { t } from '../../i18n.js';
import { isVision } from './kinds.js';

/** The folder's files: the first three are required (tokenizer.json not for ViT, which reads an image). */
export const FOLDER_FILES = ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'];
/** A ViT folder's image settings (optional: ViTImageProcessor's defaults without it). */
export const PREPROCESSOR = 'preprocessor_config.json';
/** The most new tokens one generation asks for. */
export const MAX_NEW = 200;

/**
 * @typedef {object} Folder  a model folder, read
 * @property {Record<string, any>} config  config.json
 * @property {Record<string, any> | Blob} tensors  model.safetensors as loadModel takes it: a picked File itself
 *   (loadModel reads and copies in one tensor at a time), or readSafetensors of its bytes (16-bit data left unread)
 * @property {Record<string, any> | null} tokenizerJson  null for a vision model's folder without one
 * @property {Record<string, any>} tokenizerConfig  tokenizer_config.json ({} when the folder has none)
 * @property {Record<string, any> | null} preprocessor  preprocessor_config.json (null when the folder has none)
 */

/**
 * Whether dropped or picked files are a model folder (they hold a config.json) rather than one layer's file.
 * @param {{ name: string }[]} files
 */
export const isFolder = (files) => files.some((f) => baseName(f.name) === 'config.json');

/** @param {string} name  a file name, or a folder-relative path (webkitRelativePath) */
const baseName = (name) => name.split('/').pop();

/**
 * A model folder's files ({ name, bytes }: bytes read, or a Blob such as a picked File; in any order, other files
 * ignored) → Folder. A picked model.safetensors stays a Blob: loadModel reads it one tensor at a time, copying each
 * into the model before reading the next, so the page never holds the file's tensors beside the model's copy.
 * Names what is missing or cannot be read.
 * @param {{ name: string, bytes: Uint8Array | Blob }[]} files
 * @returns {Promise<Folder>}
 */
export async function readFolder(files) {
  /** @type {Record<string, Uint8Array | Blob>} */
  const byName = {};
  for (const f of files) byName[baseName(f.name)] ??= f.bytes;
  /** @param {string} n */
  const json = async (n) => {
    const b = byName[n];
    try {
      return JSON.parse(b instanceof Uint8Array ? new TextDecoder().decode(b) : await b.text());
    } catch (e) {
      throw new Error(t('model.ckpt.badJson', { f: n, err: e.message }));
    }
  };
  const config = byName['config.json'] ? await json('config.json') : null; // (its model_type: loadModel's to judge)
  const needed = FOLDER_FILES.slice(0, isVision(config) ? 2 : 3);
  const missing = needed.filter((n) => !byName[n]);
  if (missing.length) throw new Error(t('model.ckpt.missing', { list: missing.join(', ') }));
  const model = byName['model.safetensors'];
  let tensors;
  try {
    tensors = model instanceof Uint8Array ? readSafetensors(model) : model;
  } catch (e) {
    throw new Error(t('model.badSafetensors', { f: 'model.safetensors', err: errText(e) }));
  }
  /** @param {string} n */
  const optional = async (n) => (byName[n] ? json(n) : null);
  const tokenizerConfig = (await optional('tokenizer_config.json')) ?? {};
  return {
    config,
    tensors,
    tokenizerJson: await optional('tokenizer.json'),
    tokenizerConfig,
    preprocessor: await optional(PREPROCESSOR),
  };
}

/**
 * A special token of tokenizer_config.json (a string or { content }) as an id, or null.
 * @param {Tokenizer} tk
 * @param {unknown} tok
 */
function specialId(tk, tok) {
  const s = typeof tok === 'string' ? tok : /** @type {{ content?: string }} */ (tok)?.content;
  return typeof s === 'string' ? (tk.token_to_id(s) ?? null) : null;
}

/**
 * @typedef {object} TextTokenizer
 * @property {(text: string) => number[]} encode  the prompt's ids, with the BOS tokenizer_config.json asks for
 * @property {(ids: number[]) => string} decode  text, special tokens left out
 * @property {(id: number) => string} label  one token as shown: its text, or its name when it has none
 * @property {number | null} bos
 * @property {number[]} eos  the ids that end a generation (config.json's eos_token_id, else the tokenizer's)
 * @property {Tokenizer} tk  the @huggingface/tokenizers object itself
 */

/**
 * tokenizer.json + tokenizer_config.json → a TextTokenizer. The tokenizer's post-processor adds the special tokens
 * it is written to add; add_bos_token (Llama-style configs) then decides about the BOS: true puts one in front when
 * the post-processor did not, false takes the post-processor's away. A prompt that encodes to nothing starts with
 * the BOS (GPT-2: <|endoftext|>), as Hugging Face's generate does.
 * @param {Record<string, any>} json
 * @param {Record<string, any>} config  tokenizer_config.json
 * @param {Record<string, any>} [modelConfig]  config.json
 * @returns {TextTokenizer}
 */
export function makeTokenizer(json, config, modelConfig = {}) {
  let tk;
  try {
    tk = new Tokenizer(json, config);
  } catch (e) {
    throw new Error(t('model.ckpt.badTokenizer', { err: errText(e) }));
  }
  // (the package reads a model of a type it does not know as its "legacy" one, whose ids can be undefined)
  if (!tk.encode('Hello, world. 你好').ids.every((id) => Number.isInteger(id)))
    throw new Error(t('model.ckpt.badTokenizer', { err: t('model.ckpt.noIds', { type: String(json.model?.type) }) }));
  const bos = specialId(tk, config.bos_token) ?? modelConfig.bos_token_id ?? null;
  const eosCfg = modelConfig.eos_token_id ?? specialId(tk, config.eos_token);
  const eos = [eosCfg].flat().filter((x) => Number.isInteger(x));
  return {
    bos,
    eos,
    tk,
    encode(text) {
      const ids = tk.encode(text).ids.slice();
      if (bos !== null && config.add_bos_token === true && ids[0] !== bos) ids.unshift(bos);
      if (
        bos !== null &&
        config.add_bos_token === false &&
        ids[0] === bos &&
        tk.encode(text, { add_special_tokens: false }).ids[0] !== bos
      )
        ids.shift();
      if (!ids.length && bos !== null) ids.push(bos);
      return ids;
    },
    decode: (ids) => (ids.length ? tk.decode(ids, { skip_special_tokens: true }) : ''),
    label: (id) => tk.decode([id]) || (tk.id_to_token(id) ?? `#${id}`),
  };
}

/**
 * A folder's model and tokenizer through `load` (attn.loadModel, or an attnlab/worker's): the library's own
 * RangeError / TypeError text (unsupported fields, wrong tensors, too big for memory) in the page's words.
 * @template M
 * @param {(o: { config: any, tensors: any }) => M | Promise<M>} load
 * @param {Folder} folder
 * @returns {Promise<{ model: M, tok: TextTokenizer | null }>}  tok: null for a ViT folder without tokenizer.json
 */
export async function loadFolder(load, folder) {
  const tok = folder.tokenizerJson && makeTokenizer(folder.tokenizerJson, folder.tokenizerConfig, folder.config);
  let model;
  try {
    model = await load({ config: folder.config, tensors: folder.tensors });
  } catch (e) {
    throw new Error(t('model.ckpt.loadFailed', { err: errText(e) }));
  }
  return { model, tok };
}

/**
 * @typedef {object} GenSettings
 * @property {number} maxNewTokens
 * @property {number} temperature
 * @property {number} seed
 * @property {number} topK  0 = off
 * @property {number} topP  1 = off
 */

/**
 * The generation options of the controls, checked against the model's context: generate's options.
 * @param {GenSettings} s
 * @param {number} promptLength
 * @param {number} contextLength
 */
export function generateOptions(s, promptLength, contextLength) {
  const room = contextLength - promptLength;
  if (room < 1) throw new Error(t('model.gen.noRoom', { n: promptLength, ctx: contextLength }));
  if (!Number.isInteger(s.maxNewTokens) || s.maxNewTokens < 1 || s.maxNewTokens > MAX_NEW)
    throw new Error(t('model.gen.badMax', { max: MAX_NEW }));
  if (!(s.temperature >= 0) || !Number.isFinite(s.temperature)) throw new Error(t('model.gen.badTemp'));
  if (!Number.isSafeInteger(s.seed) || s.seed < 0) throw new Error(t('model.gen.badSeed'));
  if (!Number.isInteger(s.topK) || s.topK < 0) throw new Error(t('model.gen.badTopK'));
  if (!(s.topP > 0 && s.topP <= 1)) throw new Error(t('model.gen.badTopP'));
  /** @type {import('../../attnlab.js').GenerateOptions} */
  const o = { maxNewTokens: Math.min(s.maxNewTokens, room), temperature: s.temperature, seed: s.seed };
  if (s.topK > 0) o.topK = s.topK;
  if (s.topP < 1) o.topP = s.topP;
  return o;
}

/**
 * Generates after `prompt` with generate (awaited: a main-thread model or a worker's), calling onToken(id, step)
 * for each new id as it comes. An abort through `signal` ends it early without an error: the ids so far are
 * returned with stopped: true.
 * @param {{ generate: (prompt: Int32Array, o: any) => Int32Array | Promise<Int32Array> }} model
 * @param {number[]} prompt
 * @param {import('../../attnlab.js').GenerateOptions} options
 * @param {{ eos?: number[], onToken?: (id: number, step: number) => void, signal?: AbortSignal }} [o]
 */
export async function generateTokens(model, prompt, options, { eos = [], onToken, signal } = {}) {
  /** @type {number[]} */
  const ids = [];
  const opts = {
    ...options,
    onToken: (/** @type {number} */ id, /** @type {number} */ step) => {
      ids.push(id);
      onToken?.(id, step);
    },
  };
  if (eos.length) opts.eosTokenId = eos;
  if (signal) opts.signal = signal;
  try {
    const out = await model.generate(Int32Array.from(prompt), opts);
    return { ids: Array.from(out), stopped: false };
  } catch (e) {
    if (e?.name === 'AbortError') return { ids, stopped: true };
    throw new Error(t('model.gen.failed', { err: errText(e) }));
  }
}

/**
 * Every layer's attention over `ids` (one forward with outputAttentions): maps[l] is layer l's (H, T, T), row i =
 * token i's query.
 * @param {{ forward: (tokens: any, o: any) => any }} model
 * @param {number[]} ids
 * @returns {Promise<{ maps: Float32Array[], T: number, H: number }>}
 */
export async function attentionGrid(model, ids) {
  const T = ids.length;
  const { attentions } = await model.forward(
    { data: Int32Array.from(ids), shape: [1, T] },
    { outputAttentions: true, lastLogitsOnly: true },
  );
  const maps = attentions.map((/** @type {{ data: Float32Array }} */ a) => a.data);
  return { maps, T, H: attentions[0].shape[1] };
}

/**
 * One token's rows in a layer: (H, 1, i + 1), what token links draw for it.
 * @param {Float32Array} map  the layer's (H, T, T)
 * @param {number} T
 * @param {number} i
 */
export function tokenRows(map, T, i) {
  const H = map.length / (T * T);
  const data = new Float32Array(H * (i + 1));
  for (let h = 0; h < H; h++) data.set(map.subarray((h * T + i) * T, (h * T + i) * T + i + 1), h * (i + 1));
  return { data, shape: [H, 1, i + 1] };
}
