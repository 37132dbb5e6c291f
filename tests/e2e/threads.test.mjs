// The page served with COOP/COEP (cross-origin isolated, as `npm start` serves it): init({ variant: 'auto' })
// chooses the threaded build, whose results equal the single-thread SIMD build's; the speed part runs it in a column
// of its own (quick sizes), its outputs agreeing with the other implementations.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setUp, withPage, attr, shot } from './harness.mjs';

setUp();

test('isolated: auto picks simd-threaded, and its results equal simd', async () => {
  await withPage('?lang=en', async (page) => {
    assert.equal(await page.evaluate(() => crossOriginIsolated), true);
    assert.equal(await attr(page, '#build', 'data-variant'), 'simd-threaded');
    const threads = Number(await attr(page, '#build', 'data-threads'));
    assert.ok(threads >= 1, `threads: ${threads}`);
    assert.match(await page.textContent('#build'), /threads/);
    assert.equal(await attr(page, '#speed-threads', 'data-isolated'), '1');
    // the same SDPA (with the modern options) and MHA through the page's threaded instance and a simd one
    const diff = await page.evaluate(async () => {
      const { init } = await import('/dist/index.mjs');
      const threaded = window.attnlabDemo.attn;
      const simd = await init({ variant: 'simd' });
      let s = 1;
      const r = (n) => Float32Array.from({ length: n }, () => ((s = (s * 16807) % 2147483647) / 2147483647) * 2 - 1);
      const [B, H, L, d] = [2, 8, 96, 32];
      const q = { data: r(B * H * L * d), shape: [B, H, L, d] };
      const k = { data: r(B * H * L * d), shape: [B, H, L, d] };
      const v = { data: r(B * H * L * d), shape: [B, H, L, d] };
      const opts = { isCausal: true };
      const a = threaded.scaledDotProductAttention(q, k, v, opts);
      const b = simd.scaledDotProductAttention(q, k, v, opts);
      const cfg = { embedDim: 64, numHeads: 8, numKVHeads: 2, batchFirst: true };
      const m1 = threaded.createMultiHeadAttention(cfg);
      const m2 = simd.createMultiHeadAttention(cfg);
      m2.loadStateDict(m1.stateDict());
      const x = { data: r(2 * 128 * 64), shape: [2, 128, 64] };
      const c = m1.forward(x, x, x);
      const e = m2.forward(x, x, x);
      m1.dispose();
      m2.dispose();
      const maxDiff = (u, w) => u.reduce((m, z, i) => Math.max(m, Math.abs(z - w[i])), 0);
      return {
        variants: [threaded.variant, simd.variant],
        sdpa: maxDiff(a.output.data, b.output.data),
        weights: maxDiff(a.weights.data, b.weights.data),
        mha: maxDiff(c.output.data, e.output.data),
      };
    });
    assert.deepEqual(diff.variants, ['simd-threaded', 'simd']);
    for (const key of ['sdpa', 'weights', 'mha']) assert.ok(diff[key] <= 1e-5, `${key}: ${diff[key]}`);
  });
});

test('isolated: the speed part times the threaded build in its own column', { timeout: 300000 }, async () => {
  await withPage('?lang=en&bench=quick', async (page) => {
    await page.click('#speed-run');
    await page.waitForFunction(() => document.querySelector('#speed').dataset.state !== 'running', null, {
      timeout: 280000,
    });
    assert.equal(await attr(page, '#speed', 'data-state'), 'done', await page.textContent('#speed'));
    const rows = JSON.parse(await attr(page, '#speed-results', 'data-json'));
    const threaded = rows.filter((r) => r.impl === 'attnlab simd-threaded');
    assert.equal(threaded.length, 3 * 2, 'L x {SDPA, MHA}');
    for (const r of threaded) {
      assert.ok(r.ms > 0 && r.threads >= 1, JSON.stringify(r));
      if (r.maxDiff !== null) assert.ok(r.maxDiff < 1e-3, `threaded ${r.op} L=${r.L}: ${r.maxDiff}`);
    }
    for (const r of rows.filter((x) => x.impl !== 'attnlab simd-threaded' && x.maxDiff !== null))
      assert.ok(r.maxDiff < 1e-3, `${r.impl} ${r.op} L=${r.L} disagrees with the threaded build: ${r.maxDiff}`);
    assert.match(await page.textContent('#speed-table thead'), /simd-threaded \(\d+ threads\).*threaded vs simd/s);
    assert.equal((await page.$$('#speed-table td[data-ratio]')).length, 6);
    assert.match(await page.textContent('#speed-status'), /threaded build used \d+ threads/);
    await shot(page, 'speed', 'speed-threaded-en-1280');
  });
});
