// What the training tests (transformer_train, seq2seq_train) share: train.json's AdamW options and its rules for
// each step's loss and gradient norm and for the parameters after the steps.
import assert from 'node:assert/strict';

import { f32 } from './helpers.mjs';

/** AdamW options of a run of train.json, in trainStep's spelling. */
export function adamwOf(run) {
  const o = { lr: run.lr, weightDecay: run.weight_decay, betas: run.betas, eps: run.eps };
  if (run.clip_grad_norm !== null) o.clipGradNorm = run.clip_grad_norm;
  return o;
}

/** |a − e| ≤ rtol·|e| (train.json's rule for each step's loss and gradient norm). */
export function assertRelative(actual, expected, rtol, what) {
  assert.ok(
    Math.abs(actual - expected) <= rtol * Math.abs(expected),
    `${what}: ${actual}, expected ${expected} (rtol ${rtol})`,
  );
}

/**
 * train.json's rule for the parameters after AdamW steps, per tensor: the median of |a − e| / (atol + rtol·|e|) at
 * most 1, and every |a − e| at most maxAbs (Adam moves entries whose gradient is float32 noise by up to lr a step).
 */
export function assertParamsAfter(name, actual, expected, rule, maxAbs) {
  assert.deepEqual(actual.shape, expected.shape, `${name}: shape`);
  const e = f32(expected.data);
  const ratios = new Float64Array(e.length);
  let worst = 0;
  for (let i = 0; i < e.length; ++i) {
    const diff = Math.abs(actual.data[i] - e[i]);
    ratios[i] = diff / (rule.atol + rule.rtol * Math.abs(e[i]));
    worst = Math.max(worst, diff);
  }
  ratios.sort();
  const median = ratios[Math.floor(e.length / 2)];
  assert.ok(median <= 1, `${name}: median ratio ${median} > 1 (worst |a - e| ${worst})`);
  assert.ok(worst <= maxAbs, `${name}: worst |a - e| ${worst} > ${maxAbs}`);
}
