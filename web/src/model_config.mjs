// @ts-check
// A model's configuration crosses to C++ as JSON text and comes back as model.config: which model types exist, their
// fields, defaults and config.json keys are C++'s (cpp/src/model/types/, one file per Hugging Face model_type). JS
// checks only what JSON cannot carry (a non-object, a non-finite number, a function); C++ checks every field
// (TypeError for a wrong JSON type, RangeError for a wrong value, each naming the field).

import { describe, readSafeInteger } from './validate.mjs';

/** @typedef {import('./index').ModelConfig} ModelConfig  model.config: made by C++ (cpp/src/model/types/) */

/**
 * `value` (a plain object) as JSON text; undefined fields are left out (the type's default).
 * @param {string} ctx
 * @param {unknown} value
 * @param {string} what how the message names it
 */
function jsonText(ctx, value, what) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TypeError(`${ctx}: ${what} must be an object, got ${describe(value)}`);
  }
  return JSON.stringify(value, (key, v) => {
    const name = key === '' ? what : key;
    if (typeof v === 'number' && !Number.isFinite(v)) {
      throw new RangeError(`${ctx}: ${name} must be a finite number, got ${v}`);
    }
    if (typeof v === 'bigint' || typeof v === 'function' || typeof v === 'symbol') {
      throw new TypeError(`${ctx}: ${name} must be a JSON value, got ${describe(v)}`);
    }
    return v;
  });
}

/**
 * createModel's options `{ arch, ...fields, seed }` → the configuration's JSON text and the seed.
 * @param {string} ctx
 * @param {unknown} options
 */
export function readCreateOptions(ctx, options) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${ctx}: options { arch, vocabSize, … } must be an object, got ${describe(options)}`);
  }
  const { seed, ...config } = /** @type {Record<string, unknown>} */ (options);
  return { json: jsonText(ctx, config, 'options'), huggingFace: false, seed: readSafeInteger(ctx, seed, 'seed', 0) };
}

/**
 * loadModel's config: a Hugging Face config.json object, or a normalised config with `arch` (model.config).
 * @param {string} ctx
 * @param {unknown} config
 */
export function readLoadConfig(ctx, config) {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new TypeError(`${ctx}: config must be a Hugging Face config.json object, got ${describe(config)}`);
  }
  const normalised = 'arch' in config && !('model_type' in config);
  return { json: jsonText(ctx, config, 'config'), huggingFace: !normalised, seed: 0 };
}
