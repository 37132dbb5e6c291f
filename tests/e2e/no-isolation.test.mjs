// The page served WITHOUT COOP/COEP (scripts/serve.mjs --no-isolation, what most static hosts send): not
// cross-origin isolated, so init({ variant: 'auto' }) falls back to the SIMD build without a console error; the
// speed part says why it has no threaded column and runs without one; the decoding part works.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setUp, withPage, attr, shot } from './harness.mjs';

setUp({ isolation: false });

for (const lang of ['en', 'zh']) {
  test(`not isolated (${lang}): auto falls back to simd, the speed part says why there are no threads`, async () => {
    await withPage(`?lang=${lang}&bench=quick`, async (page) => {
      assert.equal(await page.evaluate(() => crossOriginIsolated), false);
      assert.equal(await attr(page, '#build', 'data-variant'), 'simd');
      assert.equal(await attr(page, '#build', 'data-threads'), '1');
      assert.equal(await attr(page, '#speed-threads', 'data-isolated'), '0');
      const why = await page.textContent('#speed-threads');
      assert.match(why, /Cross-Origin-Opener-Policy: same-origin/);
      assert.match(why, /Cross-Origin-Embedder-Policy: require-corp/);
      assert.match(why, lang === 'zh' ? /跨源隔离/ : /not cross-origin isolated/);
      assert.ok(await page.isVisible('#speed-threads'));
      // decoding works with the single-thread build too
      await page.click('#decode-step');
      await page.click('#decode-step');
      assert.equal(await attr(page, '#decode', 'data-length'), '2');
      if (lang === 'en') {
        await page.click('#speed-run');
        await page.waitForFunction(() => document.querySelector('#speed').dataset.state !== 'running', null, {
          timeout: 280000,
        });
        assert.equal(await attr(page, '#speed', 'data-state'), 'done');
        const rows = JSON.parse(await attr(page, '#speed-results', 'data-json'));
        assert.deepEqual(new Set(rows.map((r) => r.impl)), new Set(['attnlab simd', 'attnlab scalar', 'plain JS']));
        assert.equal(await page.$$eval('#speed-results .warn-box', (els) => els.length), 0, 'no load note');
      }
      await shot(page, 'speed', `speed-not-isolated-${lang}-1280`);
    });
  });
}
