// Part "speed" (mirrors web/demo/parts/speed/compute.js): the timer, the flop counts, a small benchmark on the simd
// build against the plain-JS baseline, and the table's groups.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as Sp from '../../../../../web/demo/parts/speed/compute.js';
import { init } from '../../../../../web/demo/attnlab.js';

test('time() runs between 1 and 7 timed calls and reports their median', () => {
  let calls = 0;
  const t = Sp.time(() => calls++, { budget: 5 });
  assert.ok(t.runs >= 1 && t.runs <= 7 && calls >= t.runs);
  assert.ok(t.min <= t.ms && t.ms <= t.max);
  assert.equal(Sp.FLOPS.sdpa(128, 512), 4 * 128 * 128 * 512);
});

test('a tiny benchmark: simd and plain JS agree, plain JS past jsMaxL is extrapolated, rows group by op and L', async () => {
  const posts = [];
  const builds = await Sp.loadBuilds(
    (o) => (o.variant === 'scalar' ? Promise.reject(new Error('no')) : init(o)),
    false,
    (m) => posts.push(m),
  );
  assert.deepEqual(
    builds.map((b) => b.variant),
    ['simd'],
  );
  assert.deepEqual(posts, [{ type: 'note', variant: 'scalar', message: 'no' }]);
  const rows = await Sp.runBenchmark(builds, { sizes: [8, 16], E: 16, H: 2, jsMaxL: 8 }, (m) => posts.push(m));
  assert.equal(rows.length, 2 * 2 * 2);
  for (const r of rows.filter((x) => x.impl === Sp.PLAIN_JS && !x.extrapolated))
    assert.ok(r.maxDiff < 1e-4, `${r.op} ${r.L}`);
  assert.ok(rows.some((r) => r.impl === Sp.PLAIN_JS && r.L === 16 && r.extrapolated && r.runs === 0));
  assert.equal(posts.filter((m) => m.type === 'result').length, rows.length);
  const g = Sp.groupRows(rows);
  assert.deepEqual(g.impls, ['attnlab simd', Sp.PLAIN_JS]);
  assert.deepEqual(
    g.groups.map((x) => x.label),
    ['SDPA\nL=8', 'SDPA\nL=16', 'MHA\nL=8', 'MHA\nL=16'],
  );
  assert.equal(g.get(3, 1).op, 'mha');
  assert.equal(g.threads, undefined);
});

test('the cost split: the attention term overtakes the projections at L = 2E; 128 → 512 at E = 512 is ≈ 5.3 ×', () => {
  const rows = Sp.costSplit(512, [128, 512, 1024, 2048]);
  assert.equal(Sp.crossover(512), 1024);
  const r1024 = rows.find((r) => r.L === 1024);
  assert.equal(r1024.proj, r1024.attn);
  for (const r of rows) assert.equal(r.proj + r.attn, Sp.FLOPS.mha(r.L, 512));
  // independent: the whole layer at L = 512 over L = 128, E = 512
  const E = 512;
  const want = (8 * 512 * E * E + 4 * 512 * 512 * E) / (8 * 128 * E * E + 4 * 128 * 128 * E);
  assert.ok(Math.abs(rows[1].growth - want) < 1e-12);
  assert.equal(rows[1].growth.toFixed(1), '5.3');
  assert.ok(rows[1].growth < 16 && rows[0].attnShare < 0.15 && rows[3].attnShare > 0.6);
  assert.equal(rows[0].growth, null);
});
