// Hostile values of the modern SDPA options (web/src/sdpa_options.mjs and the C++ checks behind it), in every wasm
// variant: each bad option is a TypeError (wrong type) or RangeError (wrong size or value) naming it in its JS
// spelling with what was expected, never a trap, and the instance keeps computing correctly afterwards.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { init } from '../../dist/index.mjs';
import { VARIANTS, assertStillWorks, assertThrows, tensor } from './helpers.mjs';

// GQA-shaped problem: query (2, 4, 3, 8), key/value (2, 2, 5, 8): 5 keys, 2 items, 4 query heads over 2.
const q = () => tensor([2, 4, 3, 8], 1);
const k = () => tensor([2, 2, 5, 8], 2);
const v = () => tensor([2, 2, 5, 6], 3);
const gqa = { enableGQA: true };
const mhaK = () => tensor([2, 4, 5, 8], 2); // as many heads as query
const mhaV = () => tensor([2, 4, 5, 6], 3);

for (const variant of VARIANTS) {
  describe(`hostile SDPA options, ${variant} build`, async () => {
    const attn = await init({ variant });
    const sdpa = (options, key = k(), value = v()) => attn.scaledDotProductAttention(q(), key, value, options);
    const backward = (options) =>
      attn.scaledDotProductAttentionBackward(q(), k(), v(), tensor([2, 4, 3, 6], 4), { ...gqa, ...options });

    // [title, fn, Class, ...patterns]; one case a line, read as a table.
    // prettier-ignore
    const errorCases = [
      ['enableGQA a string', () => sdpa({ enableGQA: 'yes' }), TypeError, /enableGQA/, /boolean/],
      ['GQA without enableGQA', () => sdpa({}), RangeError, /key|enableGQA/],
      ['enableGQA with heads 4 over 3', () => sdpa(gqa, tensor([2, 3, 5, 8], 2), tensor([2, 3, 5, 6], 3)), RangeError, /enableGQA/, /\b3\b/, /\b4\b/],
      ['enableGQA with a batch dim that differs', () => sdpa(gqa, tensor([1, 2, 5, 8], 2), tensor([1, 2, 5, 6], 3)), RangeError, /enableGQA/, /\b1\b/, /\b2\b/],
      ['isCausal an unknown string', () => sdpa({ ...gqa, isCausal: 'lower_right' }), RangeError, /isCausal/, /lower-right/],
      ['isCausal a number', () => sdpa({ ...gqa, isCausal: 1 }), TypeError, /isCausal/],
      ['kvLengths a plain Array', () => sdpa({ ...gqa, kvLengths: [3, 4] }), TypeError, /kvLengths/, /Int32Array/, /Array\(2\)/],
      ['kvLengths a Float32Array', () => sdpa({ ...gqa, kvLengths: new Float32Array(2) }), TypeError, /kvLengths/, /Int32Array/],
      ['kvLengths a Uint32Array', () => sdpa({ ...gqa, kvLengths: Uint32Array.of(3, 4) }), TypeError, /kvLengths/],
      ['kvLengths wrapped as a tensor', () => sdpa({ ...gqa, kvLengths: { data: Int32Array.of(3, 4), shape: [2] } }), TypeError, /kvLengths/],
      ['kvLengths: 1 entry for 2 items', () => sdpa({ ...gqa, kvLengths: Int32Array.of(3) }), RangeError, /kvLengths/, /\b2 entries/, /got 1/],
      ['kvLengths: 8 entries (one per head is not it)', () => sdpa({ ...gqa, kvLengths: new Int32Array(8) }), RangeError, /kvLengths/, /got 8/],
      ['kvLengths: a length past the keys', () => sdpa({ ...gqa, kvLengths: Int32Array.of(3, 6) }), RangeError, /kvLengths\[1\]/, /\[0, 5\]/, /got 6/],
      ['kvLengths: a negative length', () => sdpa({ ...gqa, kvLengths: Int32Array.of(-1, 2) }), RangeError, /kvLengths\[0\]/, /-1/],
      ['window a number', () => sdpa({ ...gqa, window: 2 }), TypeError, /window/],
      ['window an Int32Array', () => sdpa({ ...gqa, window: Int32Array.of(1, 1) }), TypeError, /window/],
      ['window with 1 entry', () => sdpa({ ...gqa, window: [1] }), RangeError, /window/, /2 entries/],
      ['window [1, -2]', () => sdpa({ ...gqa, window: [1, -2] }), RangeError, /window\[1\]/, />= -1/, /-2/],
      ['window [1.5, 0]', () => sdpa({ ...gqa, window: [1.5, 0] }), RangeError, /window\[0\]/, /1\.5/],
      ['window [NaN, 0]', () => sdpa({ ...gqa, window: [NaN, 0] }), RangeError, /window\[0\]/],
      ['window ["1", 0]', () => sdpa({ ...gqa, window: ['1', 0] }), TypeError, /window\[0\]/],
      ['softcap 0', () => sdpa({ ...gqa, softcap: 0 }), RangeError, /softcap/, /> 0/],
      ['softcap -1', () => sdpa({ ...gqa, softcap: -1 }), RangeError, /softcap/],
      ['softcap NaN', () => sdpa({ ...gqa, softcap: NaN }), RangeError, /softcap/],
      ['softcap Infinity', () => sdpa({ ...gqa, softcap: Infinity }), RangeError, /softcap/],
      ['softcap beyond float32 (1e39)', () => sdpa({ ...gqa, softcap: 1e39 }), RangeError, /softcap/],
      ['softcap below float32 (1e-50)', () => sdpa({ ...gqa, softcap: 1e-50 }), RangeError, /softcap/],
      ['softcap a string', () => sdpa({ ...gqa, softcap: '2' }), TypeError, /softcap/],
      ['returnScores an unknown stage', () => sdpa({ ...gqa, returnScores: 'weights' }), RangeError, /returnScores/, /'masked'/],
      ['returnScores true', () => sdpa({ ...gqa, returnScores: true }), TypeError, /returnScores/],
      ['pastKey without pastValue', () => sdpa({ ...gqa, pastKey: tensor([2, 2, 3, 8], 5) }), TypeError, /pastValue/, /pastKey/],
      ['pastValue without pastKey', () => sdpa({ ...gqa, pastValue: tensor([2, 2, 3, 6], 5) }), TypeError, /pastKey/],
      ['pastKey with Float64Array data', () => sdpa({ ...gqa, pastKey: { data: new Float64Array(48), shape: [2, 2, 3, 8] }, pastValue: tensor([2, 2, 3, 6], 6) }), TypeError, /pastKey\.data/],
      ['pastKey with the wrong head size', () => sdpa({ ...gqa, pastKey: tensor([2, 2, 3, 7], 5), pastValue: tensor([2, 2, 3, 6], 6) }), RangeError, /pastKey/],
      ['pastValue longer than pastKey', () => sdpa({ ...gqa, pastKey: tensor([2, 2, 3, 8], 5), pastValue: tensor([2, 2, 4, 6], 6) }), RangeError, /pastValue|pastKey/],
      ['pastKey with other batch dims', () => sdpa({ ...gqa, pastKey: tensor([1, 2, 3, 8], 5), pastValue: tensor([1, 2, 3, 6], 6) }), RangeError, /pastKey/],
      ['attnMask that does not broadcast', () => sdpa({ attnMask: { data: new Uint8Array(12), shape: [3, 4] } }, mhaK(), mhaV()), RangeError, /attnMask/],
      ['attnMask of rank 5 over 4-D inputs', () => sdpa({ attnMask: { data: new Uint8Array(30), shape: [2, 1, 1, 3, 5] } }, mhaK(), mhaV()), RangeError, /attnMask/],
      ['backward: returnScores is not an option', () => backward({ returnScores: 'scaled' }), TypeError, /returnScores/],
      ['backward: kvLengths a plain Array', () => backward({ kvLengths: [1, 2] }), TypeError, /kvLengths/],
      ['backward: window [-3, 0]', () => backward({ window: [-3, 0] }), RangeError, /window\[0\]/],
    ];

    for (const [title, fn, Class, ...patterns] of errorCases) {
      test(title, () => {
        assertThrows(fn, Class, ...patterns);
        assertStillWorks(attn);
      });
    }

    test('memory does not grow over a second round of every bad option', () => {
      for (const [, fn] of errorCases) assert.throws(fn);
      const before = attn.memoryBytes();
      for (let i = 0; i < 3; ++i) for (const [, fn] of errorCases) assert.throws(fn);
      assert.equal(attn.memoryBytes(), before);
    });
  });
}
