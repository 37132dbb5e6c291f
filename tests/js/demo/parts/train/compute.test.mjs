// Part "train it yourself" (mirrors web/demo/parts/train/compute.js): the tasks, the batches, the statistics of a
// run and "try it".

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as T from '../../../../../web/demo/parts/train/compute.js';
import { rng } from '../../../../../web/demo/shared/random.js';
import { simd } from '../../helpers.mjs';

test('every task: examples of length T, targets by its rule, the fixed example in its vocabulary', () => {
  for (const task of Object.values(T.TASKS)) {
    const ex = task.sample(rng(1));
    assert.equal(ex.tokens.length, task.T, task.id);
    assert.equal(ex.targets.length, task.T);
    const expected = task.answers(ex.tokens);
    ex.scored.forEach((s, i) => s && assert.equal(ex.targets[i], expected[i], `${task.id} ${i}`));
    assert.equal(T.fixedIds(task).length, task.T);
    assert.ok(T.fixedIds(task).every((id) => id >= 0 && id < task.V));
  }
  assert.deepEqual(T.TASKS.next.answers([1, 2, 3, 1, 2, 3]), [null, null, 1, 2, 3, 1]);
});

test('batches, accuracy, head statistics and the uniform entropy', () => {
  const task = T.TASKS.reverse;
  const batch = T.makeBatch(task, rng(2), 4);
  assert.deepEqual(batch.tokens.shape, [4, 6]);
  const perfect = new Float32Array(24 * task.V);
  batch.targets.data.forEach((id, i) => (perfect[i * task.V + id] = 1));
  assert.deepEqual(T.accuracy(perfect, batch, task.V), { answers: 1, sequences: 1 });
  const ids = T.fixedIds(task);
  const w = new Float32Array(36); // one head attending to the reversed position
  ids.forEach((_, i) => (w[i * 6 + (5 - i)] = 1));
  assert.deepEqual(T.headStats(task, ids, w, 1), { entropy: [0], mass: [1] });
  assert.equal(T.uniformEntropy(task), Math.log(6));
  assert.ok(T.uniformEntropy(T.TASKS.next) < Math.log(6));
});

test('the history: smoothed losses, thinned snapshots, updates per second', () => {
  const hist = T.newHistory();
  const tick = (step, losses, snaps = []) => ({
    step,
    losses: Float32Array.from(losses),
    evals: [[step, 0.5]],
    snapshots: snaps,
    heads: 1,
  });
  const snap = (step) => ({ step, weights: new Float32Array(36), predicted: [] });
  assert.equal(T.addTick(hist, tick(0, [], [snap(0)]), T.TASKS.reverse, 0), 0);
  T.addTick(hist, tick(1, [2], [snap(1)]), T.TASKS.reverse, 100);
  assert.equal(T.addTick(hist, tick(3, [1, 1], [snap(3)]), T.TASKS.reverse, 200), 10);
  assert.ok(Math.abs(hist.smooth[0] - 2) < 1e-12);
  assert.equal(hist.stats.length, 3);
  assert.equal(hist.rendered, 2);
  for (let s = 4; s < 4 + T.MAX_SNAPSHOTS; s++) hist.snaps.push(snap(s));
  T.addTick(hist, tick(9999, [1], [snap(9999)]), T.TASKS.reverse, 300);
  assert.equal(hist.snaps.length, 1503); // 3004 kept every other one, and the last
  assert.equal(hist.snaps.at(-1).step, 9999);
});

test('try it: a fresh model next to the shipped toy; rescaleInit multiplies W_Q and W_K', async () => {
  const attn = await simd();
  const trained = attn.createTinyTransformer({ vocabSize: 12, embedDim: T.EMBED_DIM, numHeads: 2 });
  const before = trained.stateDict()['attn.in_proj_weight'].data.slice();
  T.rescaleInit(trained, 2, 3);
  const after = trained.stateDict()['attn.in_proj_weight'].data;
  const E2 = T.EMBED_DIM * T.EMBED_DIM;
  assert.ok(Math.abs(after[0] - 6 * before[0]) < 1e-6 && Math.abs(after[E2] - 2 * before[E2]) < 1e-6);
  assert.equal(after[2 * E2], before[2 * E2]);
  trained.dispose();
});
