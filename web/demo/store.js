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
