// What the page feeds to attnlab (mirrors web/demo/shared/inputs.js), and the small shared helpers beside it:
// shared/format.js, shared/random.js, shared/stats.js.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  positionalEncoding,
  pseudoEmbed,
  causalMask,
  tokenize,
  SENTENCES,
} from '../../../../web/demo/shared/inputs.js';
import { fmt, full, errText, shortLabel } from '../../../../web/demo/shared/format.js';
import { rng, hashString } from '../../../../web/demo/shared/random.js';
import { argmax, entropy } from '../../../../web/demo/shared/stats.js';

test('positional encoding: sin/cos pairs, position 0 is [0, 1, 0, 1, …]', () => {
  const pe = positionalEncoding(3, 4);
  assert.deepEqual(Array.from(pe.subarray(0, 4)), [0, 1, 0, 1]);
  assert.equal(pe[4], Math.fround(Math.sin(1)));
  assert.equal(pe[6], Math.fround(Math.sin(1 / 100)));
});

test('pseudo-embeddings: the same token, the same vector (plus its position); padding is the position only', () => {
  const x = pseudoEmbed(['cat', null, 'cat'], 4);
  const pe = positionalEncoding(3, 4);
  for (let e = 0; e < 4; e++) {
    assert.equal(x[4 + e], pe[4 + e]);
    assert.ok(Math.abs(x[e] - pe[e] - (x[8 + e] - pe[8 + e])) < 1e-6);
  }
  assert.notDeepEqual(Array.from(pseudoEmbed(['cat'], 4, 7)), Array.from(pseudoEmbed(['cat'], 4)));
});

test('causal mask and tokenizer', () => {
  assert.deepEqual(Array.from(causalMask(3).data), [0, 1, 1, 0, 0, 1, 0, 0, 0]);
  assert.deepEqual(tokenize('这只猫'), ['这', '只', '猫']);
  assert.deepEqual(tokenize("It didn't, cat."), ['It', "didn't", ',', 'cat', '.']);
  assert.ok(tokenize(SENTENCES.en).includes('animal'));
});

test('format, random and stats helpers', () => {
  assert.equal(fmt(-1.23456), '−1.235');
  assert.equal(fmt(0.0001), '1.0e−4');
  assert.equal(fmt(-Infinity), '−∞');
  assert.equal(full(-Infinity), '-Infinity');
  assert.equal(errText(new RangeError('bad')), 'RangeError: bad');
  assert.equal(shortLabel('abcdefgh', 4), 'abc…');
  const [a, b] = [rng(5), rng(5)];
  assert.deepEqual([a(), a.int(10), a.normal()], [b(), b.int(10), b.normal()]);
  assert.equal(hashString('cat'), hashString('cat'));
  assert.deepEqual(Array.from(argmax([0, 2, 1, 5, 4, 3], 2, 3)), [1, 0]);
  assert.ok(Math.abs(entropy([0.5, 0.5]) - Math.LN2) < 1e-12);
});
