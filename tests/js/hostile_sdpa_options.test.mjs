// Hostile values of the modern SDPA options (web/src/sdpa_options.mjs and the C++ checks behind it), in every wasm
// variant: each bad option is a TypeError (wrong type) or RangeError (wrong size or value) naming it in its JS
// spelling with what was expected, never a trap, and the instance keeps computing correctly afterwards. Then the
// NaN policy with the options: a row left with no key (kvLengths 0, a window past the keys, a negative lower-right
// offset) has zero weights and output and -Infinity 'masked' scores, never NaN; NaN in a key reaches only the rows
// that attend it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { init } from '../../dist/index.mjs';
import { VARIANTS, assertClose, assertStillWorks, assertThrows, tensor } from './helpers.mjs';
import { sdpaRef } from './reference.mjs';

// GQA-shaped problem: query (2, 4, 3, 8), key/value (2, 2, 5, 8): 5 keys, 2 items, 4 query heads over 2.
const q = () => tensor([2, 4, 3, 8], 1);
const k = () => tensor([2, 2, 5, 8], 2);
const v = () => tensor([2, 2, 5, 6], 3);
const gqa = { enableGQA: true };

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
      ['attnMask that does not broadcast', () => sdpa({ ...gqa, attnMask: { data: new Uint8Array(12), shape: [3, 4] } }), RangeError, /attnMask/],
      ['attnMask of rank 5 over 4-D inputs', () => sdpa({ ...gqa, attnMask: { data: new Uint8Array(30), shape: [2, 1, 1, 3, 5] } }), RangeError, /attnMask/],
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

    // ---- NaN policy
    const allZero = (t, from, n) => Array.from(t.data.subarray(from, from + n)).every((x) => x === 0);
    for (const needWeights of [true, false]) {
      const w = needWeights ? '' : ' (needWeights: false)';
      test(`kvLengths 0: that item's rows are zero, 'masked' scores -Infinity, no NaN${w}`, () => {
        const options = {
          ...gqa,
          kvLengths: Int32Array.of(0, 4),
          returnScores: 'masked',
          needWeights,
        };
        const r = sdpa(options);
        const perItem = 4 * 3;
        assert.ok(allZero(r.output, 0, perItem * 6), 'item 0 output is 0');
        if (needWeights) assert.ok(allZero(r.weights, 0, perItem * 5), 'item 0 weights are 0');
        assert.ok(
          r.scores.data.subarray(0, perItem * 5).every((x) => x === -Infinity),
          'item 0 scores are -Infinity',
        );
        assert.ok(r.output.data.every(Number.isFinite), 'no NaN anywhere');
        assertClose(r.output, sdpaRef(q(), k(), v(), options).output, {}, 'output');
      });
      test(`a window past the keys and a negative lower-right offset give zero rows${w}`, () => {
        // upper-left window [0, 0]: query 2 would see key 2 only, but kvLengths hides keys >= 2 in item 1
        const a = sdpa({
          ...gqa,
          window: [0, 0],
          kvLengths: Int32Array.of(5, 2),
          needWeights,
        });
        const perItem = 4 * 3 * 6;
        for (let h = 0; h < 4; ++h)
          assert.ok(allZero(a.output, perItem + (h * 3 + 2) * 6, 6), `item 1 head ${h} row 2`);
        // lower-right with kvLengths 1 < Lq 3: offset -2, rows 0 and 1 see nothing
        const b = sdpa({
          ...gqa,
          isCausal: 'lower-right',
          kvLengths: Int32Array.of(1, 1),
          needWeights,
        });
        for (let bh = 0; bh < 8; ++bh) assert.ok(allZero(b.output, bh * 18, 12), `item/head ${bh}: rows 0, 1`);
        for (const r of [a, b]) assert.ok(r.output.data.every(Number.isFinite), 'no NaN');
      });
    }
    test('NaN in a past key reaches only the rows whose window holds it', () => {
      const pastKey = tensor([2, 2, 3, 8], 5);
      pastKey.data[0] = NaN; // item 0, KV head 0, key 0
      const options = {
        ...gqa,
        pastKey,
        pastValue: tensor([2, 2, 3, 6], 6),
        isCausal: 'lower-right',
        window: [5, -1],
      };
      const r = sdpa(options);
      // 8 keys, 3 queries, lower-right: query i at p = i + 5 sees keys p-5 .. p: only query 0 sees key 0
      const clean = sdpaRef(q(), k(), v(), {
        ...options,
        pastKey: { ...pastKey, data: pastKey.data.map((x) => x || 0) },
      });
      for (let bh = 0; bh < 8; ++bh) {
        for (let i = 0; i < 3; ++i) {
          const row = r.output.data.subarray((bh * 3 + i) * 6, (bh * 3 + i + 1) * 6);
          const poisoned = bh < 2 && i === 0; // heads 0, 1 of item 0 read KV head 0
          if (poisoned) assert.ok(row.every(Number.isNaN), `row ${bh}/${i} is NaN`);
          else {
            const want = clean.output.data.subarray((bh * 3 + i) * 6, (bh * 3 + i + 1) * 6);
            row.forEach((x, d) => assert.ok(Math.abs(x - want[d]) < 1e-5, `row ${bh}/${i} unaffected`));
          }
        }
      }
    });
    test('logits around 1e3 with softcap 30 stay finite, scores within ±30, and match the reference', () => {
      const big = (t) => ({
        data: t.data.map((x) => x * 1000),
        shape: t.shape,
      });
      const options = {
        ...gqa,
        softcap: 30,
        isCausal: 'lower-right',
        returnScores: 'softcapped',
      };
      const r = attn.scaledDotProductAttention(big(q()), k(), v(), options);
      const want = sdpaRef(big(q()), k(), v(), options);
      assert.ok(r.output.data.every(Number.isFinite) && r.scores.data.every((x) => Math.abs(x) <= 30));
      assertClose(r.output, want.output, { atol: 1e-4, rtol: 1e-3 }, 'output');
    });
  });
}
