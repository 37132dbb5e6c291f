// The §8.2 experiment chapter (issue 35 item 4), in 中文 and English: the poem model's prediction read eight ways
// (a table of the positions up to the query, ρ behind a guess with 1 on its diagonal), head importance three ways on
// demand, the uniform-attention baseline trained twice in its worker in under 30 s, and the same readings of the
// model loaded in "Your model"; no console error.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setUp, open, attr } from './harness.mjs';

setUp();

for (const lang of ['zh', 'en']) {
  test(`explain chapter (${lang}): readings, ρ, head importance, uniform baseline`, { timeout: 300000 }, async () => {
    const { page, problems } = await open(`?lang=${lang}`);
    try {
      await page.waitForFunction(() => document.querySelector('#explain')?.dataset.ready === '1', null, {
        timeout: 180000,
      });
      await page.waitForSelector('#explain-readings');
      const rows = await page.$$eval('#explain-readings tr', (r) => r.length);
      assert.equal(rows, 1 + 21, 'a header and the positions 0 … 20');
      const cols = await page.$$eval('#explain-readings tr:first-child th', (c) => c.length);
      assert.equal(cols, 1 + 8, 'eight readings, the norm-weighted one included');
      assert.equal(await page.isVisible('#explain-rho'), false);
      await page.click('#explain-reveal');
      await page.waitForSelector('#explain-rho', { state: 'visible' });
      const diag = await page.$$eval('#explain-rho tr[data-reading]', (rs) =>
        rs.map((r, i) => Number(r.querySelectorAll('td')[i].dataset.rho)),
      );
      assert.equal(diag.length, 8);
      for (const d of diag) assert.ok(Math.abs(d - 1) < 1e-9);
      const value = Number(await attr(page, '#explain-answer', 'data-value'));
      assert.ok(value >= -1 && value <= 1);
      await page.selectOption('#explain-position', '10');
      await page.waitForFunction(() => document.querySelector('#explain-readings-box')?.dataset.position === '10');
      assert.equal(await page.$$eval('#explain-readings tr', (r) => r.length), 1 + 11);
      await page.click('#explain-importance-run');
      await page.click('#explain-heads-reveal', { timeout: 120000 });
      assert.equal(await page.$$eval('#explain-importance tr', (r) => r.length), 1 + 16);
      await page.click('#explain-uniform-reveal');
      const t0 = Date.now();
      await page.click('#explain-baseline-run');
      await page.waitForSelector('#explain-baseline', { timeout: 60000 });
      const seconds = (Date.now() - t0) / 1000;
      const learned = Number(await attr(page, '#explain-baseline-out', 'data-learned'));
      const uniform = Number(await attr(page, '#explain-baseline-out', 'data-uniform'));
      assert.ok(learned > 0 && learned <= 1 && uniform > 0 && uniform <= 1, `${learned} ${uniform}`);
      console.log(
        `explain (${lang}): baseline in ${seconds.toFixed(1)} s, held-out ${learned} learned, ${uniform} uniform`,
      );
      assert.ok(seconds < 30, `the baseline took ${seconds} s`);
      // the model of "Your model" (the poem model loaded there by one click, in its worker): the same readings but
      // the norm-weighted one (its weights are in the worker), on the catalogue's sentence
      assert.equal(await page.isDisabled('#explain-yours'), true);
      await page.click('#model-poem');
      await page.waitForFunction(() => !document.querySelector('#explain-yours')?.disabled, null, { timeout: 60000 });
      await page.click('#explain-yours');
      await page.waitForFunction(
        () => document.querySelectorAll('#explain-readings tr:first-child th').length === 1 + 7,
        null,
        { timeout: 60000 },
      );
      await page.click('#explain-reveal');
      await page.waitForSelector('#explain-rho', { state: 'visible' });
      assert.equal(await page.$$eval('#explain-rho tr[data-reading]', (r) => r.length), 7);
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  });
}
