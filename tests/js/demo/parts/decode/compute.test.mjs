// Part "decoding" (mirrors web/demo/parts/decode/compute.js): the hand-written toy layer continues its pattern through
// attnlab's KV cache, every step equal to one causal forward over the whole sequence.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as M from '../../../../../web/demo/parts/decode/compute.js';
import { simd } from '../../helpers.mjs';

test('from "A B C" the model continues A B C A B C …, and the cached steps equal the causal forward', async () => {
  const model = M.createModel(await simd());
  const tokens = M.parsePrompt('A B C');
  const steps = [];
  for (let pos = 0; pos < 9; pos++) {
    const s = M.step(model, tokens[pos]);
    steps.push(s);
    if (pos + 1 >= tokens.length) tokens.push(s.next);
  }
  assert.equal(tokens.map((tk) => M.VOCAB[tk]).join(''), 'ABCABCABCA');
  assert.equal(model.cache.length, 9);
  assert.ok(M.check(model, steps, tokens) <= 1e-5);
  const map = M.headMap(steps, 0);
  assert.equal(map.length, 81);
  assert.equal(map[1], 0, 'step 0 sees one key');
  model.cache.reset();
  assert.equal(M.check(model, [], tokens), null);
  model.mha.dispose();
  model.whole.dispose();
});

test('prompts, heads and groups', () => {
  assert.deepEqual(M.parsePrompt('abc'), [0, 1, 2]);
  assert.equal(M.parsePrompt('A Z'), null);
  assert.equal(M.parsePrompt('ABCDEFGHA'), null);
  assert.deepEqual([0, 1, 2, 3].map(M.kvHeadOf), [0, 0, 1, 1]);
});
