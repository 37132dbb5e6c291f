// A short soak (scripts/soak.mjs): 10,000 mixed random valid and invalid calls per wasm variant, a sample checked
// against the float64 reference, and wasm memory that must not grow after warm-up.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { runSoak } from '../../scripts/soak.mjs';

test('soak: 10,000 mixed calls per variant, no mismatch, no error of the wrong class, no memory growth', async () => {
  const lines = [];
  const report = await runSoak({ calls: 10000, seed: 7, sample: 0.05, log: (line) => lines.push(line) });
  for (const line of lines) console.log(line);
  for (const [variant, r] of Object.entries(report.variants)) {
    assert.deepEqual(r.failures, [], `${variant}: failures`);
    assert.ok(r.checked >= 100, `${variant}: only ${r.checked} calls were checked against the reference`);
    assert.ok(r.memory.end <= r.memory.afterWarmup, `${variant}: wasm memory grew after warm-up`);
  }
  assert.ok(report.ok);
});
