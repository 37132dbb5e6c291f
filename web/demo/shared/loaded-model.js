// @ts-check
// The model loaded in "Your model" (parts/model/whole.js, an attnlab/worker model and its tokenizer), for the parts
// that offer their analysis on it too (parts/explain). No DOM: a store that whole.js sets when a model is loaded or
// disposed, and the other parts subscribe to.

import { createStore } from '../store.js';

/**
 * @typedef {object} LoadedModel
 * @property {any} model  an attnlab/worker model (every method returns a Promise), or null
 * @property {{ encode: (text: string) => number[], label: (id: number) => string } | null} tok
 * @property {string} label  what the page calls it (the folder's or file's name)
 */

/** @type {import('../store.js').Store<LoadedModel>} */
export const LOADED_MODEL = createStore({ model: null, tok: null, label: '' });
