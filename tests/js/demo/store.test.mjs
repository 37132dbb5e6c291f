// The demo's state store (mirrors web/demo/store.js): set merges and notifies once, get returns the new state,
// unsubscribe stops the notifications; setElement replaces one entry of an array through a copy.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createStore, setElement } from '../../../web/demo/store.js';

test('set merges a patch, notifies each listener once, and unsubscribe stops it', () => {
  const store = createStore({ a: 1, b: 'x' });
  const seen = [];
  const off = store.subscribe((s) => seen.push({ ...s }));
  store.set({ a: 2 });
  assert.deepEqual(store.get(), { a: 2, b: 'x' });
  assert.deepEqual(seen, [{ a: 2, b: 'x' }]);
  off();
  store.set({ b: 'y' });
  assert.equal(seen.length, 1);
  assert.deepEqual(store.get(), { a: 2, b: 'y' });
});

test('the initial object is copied, and every set makes a new state object', () => {
  const initial = { n: 0 };
  const store = createStore(initial);
  const first = store.get();
  store.set({ n: 1 });
  assert.equal(initial.n, 0);
  assert.notEqual(store.get(), first);
  assert.equal(first.n, 0);
});

test('setElement replaces one entry of an array state through set, leaving the old array as it was', () => {
  const store = createStore({ scores: [1, 2, 3], name: 'x' });
  const before = store.get().scores;
  const seen = [];
  store.subscribe((s) => seen.push(s.scores));
  setElement(store, 'scores', 1, 7);
  assert.deepEqual(store.get(), { scores: [1, 7, 3], name: 'x' });
  assert.deepEqual(before, [1, 2, 3]);
  assert.notEqual(store.get().scores, before);
  assert.deepEqual(seen, [[1, 7, 3]]);
});
