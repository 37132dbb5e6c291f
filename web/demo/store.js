// @ts-check
// The demo's one state store: each part keeps its state in a store of its own (created in its view.js). Controls
// write to it with set(); the part's view subscribes and redraws. Synchronous, no framework.

/**
 * @template {object} S
 * @typedef {object} Store
 * @property {() => S} get the current state (do not mutate it: set a new value)
 * @property {(patch: Partial<S>) => void} set merges patch into the state, then calls every listener once
 * @property {(listener: (state: S) => void) => () => void} subscribe returns the unsubscribe function
 */

/**
 * @template {object} S
 * @param {S} initial
 * @returns {Store<S>}
 */
export function createStore(initial) {
  let state = { ...initial };
  /** @type {Set<(state: S) => void>} */
  const listeners = new Set();
  return {
    get: () => state,
    set(patch) {
      state = { ...state, ...patch };
      for (const f of listeners) f(state);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/**
 * Replaces element `index` of the array state[key] with `value`, through set() and a copy of the array (the state
 * is never mutated): what a control that edits one entry of a list does.
 * @template {object} S
 * @template {keyof S} K
 * @param {Store<S>} store
 * @param {K} key a key whose value is an array (or a tuple)
 * @param {number} index
 * @param {S[K] extends readonly (infer E)[] ? E : never} value
 */
export function setElement(store, key, index, value) {
  const array = [.../** @type {unknown[]} */ (store.get()[key])];
  array[index] = value;
  store.set(/** @type {Partial<S>} */ ({ [key]: array }));
}
