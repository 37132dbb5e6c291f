// Part "why attention" (mirrors web/demo/parts/why/compute.js): path lengths and the L² scores.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SENTENCE, LENGTHS, pathRow } from '../../../../../web/demo/parts/why/compute.js';

test('an RNN needs L − 1 steps from the first word to the last, attention one; L² scores', () => {
  assert.deepEqual(pathRow(512), { L: 512, rnnPath: 511, attnPath: 1, rnnSteps: 512, scores: 262144 });
  assert.deepEqual(LENGTHS, [8, 128, 512, 2048]);
  assert.equal(SENTENCE.zh.length, 17);
  assert.equal(SENTENCE.en[1], 'cat');
});
