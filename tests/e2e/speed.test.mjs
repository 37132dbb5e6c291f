// The speed part: a quick run (L = 32, 64, 128) in a module worker with all three implementations agreeing,
// its bar charts and table; in English at 1280 px and in 中文 at 400 px with the scalar build.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setUp, withPage, attr, shot, overflow } from './harness.mjs';

setUp();

test('the speed run completes in a worker and draws its bar chart', { timeout: 300000 }, async () => {
  await withPage('?lang=en&bench=quick', async (page) => {
    assert.equal(await page.$eval('#speed-set', (s) => s.value), 'quick');
    await page.click('#speed-run');
    await page.waitForFunction(() => document.querySelector('#speed').dataset.state !== 'running', null, {
      timeout: 280000,
    });
    assert.equal(await attr(page, '#speed', 'data-state'), 'done', await page.textContent('#speed'));
    const rows = JSON.parse(await attr(page, '#speed-results', 'data-json'));
    // (isolated page: the threaded build too, checked in threads.test.mjs)
    const single = rows.filter((r) => r.impl !== 'attnlab simd-threaded');
    assert.equal(single.length, 3 * 2 * 3, 'L x {SDPA, MHA} x {simd, scalar, plain JS}');
    for (const r of rows) {
      assert.ok(r.ms > 0 && r.gflops > 0, JSON.stringify(r));
      if (r.maxDiff !== null)
        assert.ok(r.maxDiff < 1e-3, `${r.impl} ${r.op} L=${r.L} disagrees with attnlab: ${r.maxDiff}`);
    }
    assert.deepEqual(new Set(single.map((r) => r.impl)), new Set(['attnlab simd', 'attnlab scalar', 'plain JS']));
    assert.ok((await page.$$('#speed-results svg rect[data-series]')).length >= 30, 'bars');
    assert.equal(await page.$eval('#speed-progress', (p) => p.value), 1);
    await shot(page, 'speed', 'speed-done-en-1280');
  });
});

test('the speed run at 400 px in 中文 with the scalar build', { timeout: 300000 }, async () => {
  await withPage('?lang=zh&bench=quick&variant=scalar', 400, async (page) => {
    assert.equal(await attr(page, '#build', 'data-variant'), 'scalar');
    await page.click('#speed-run');
    await page.waitForFunction(() => document.querySelector('#speed').dataset.state !== 'running', null, {
      timeout: 280000,
    });
    assert.equal(await attr(page, '#speed', 'data-state'), 'done');
    await shot(page, 'speed', 'speed-done-zh-400');
    assert.match(await page.textContent('#speed-status'), /完成/);
    const overflowAfter = await overflow(page);
    assert.ok(overflowAfter <= 0, `after the speed run the page is ${overflowAfter} px too wide`);
  });
});
