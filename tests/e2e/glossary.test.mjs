// The glossary (术语表, #37), in 中文 and English: the corner button stays on screen wherever the learner is (here,
// scrolled to the poem chapter), opens a modal with one entry per term of i18n/terms.js, each explained in the
// page's language, and closes with its button and with Esc; no console error, no failed request.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { setUp, withPage, SHOTS } from './harness.mjs';
import { glossaryTerms } from '../../web/demo/i18n/terms.js';

setUp();

for (const lang of ['zh', 'en']) {
  test(`glossary (${lang}): opens from any part, one entry per term, closes`, { timeout: 180000 }, () =>
    withPage(`?lang=${lang}`, async (page) => {
      await page.locator('#part-poem').scrollIntoViewIfNeeded();
      assert.equal(await page.isVisible('#glossary'), false);
      const box = await page.locator('#glossary-open').boundingBox();
      const vp = page.viewportSize();
      assert.ok(
        box && box.y >= 0 && box.y + box.height <= vp.height,
        `the button is on screen: ${JSON.stringify(box)}`,
      );
      await page.click('#glossary-open');
      await page.waitForSelector('#glossary[open]');
      const rows = await page.$$eval('#glossary-list dt', (dts) =>
        dts.map((d) => ({ en: d.dataset.term, text: d.textContent, def: d.nextElementSibling?.textContent ?? '' })),
      );
      const terms = glossaryTerms();
      assert.deepEqual(
        rows.map((r) => r.en),
        terms.map((x) => x.en),
      );
      rows.forEach((r, i) => {
        const [first, second] = lang === 'zh' ? [terms[i].zh, terms[i].en] : [terms[i].en, terms[i].zh];
        assert.ok(r.text.startsWith(first) && r.text.endsWith(second), `${r.text}: ${first} then ${second}`);
        assert.ok(r.def.length > 10, `${r.en} is explained`);
        if (lang === 'zh') assert.match(r.def, /[\u4e00-\u9fff]/);
      });
      await page.locator('#glossary').screenshot({ path: path.join(SHOTS, `glossary-${lang}.png`) });
      await page.click('#glossary-close');
      await page.waitForFunction(() => !document.querySelector('#glossary').open);
      await page.click('#glossary-open');
      await page.waitForSelector('#glossary[open]');
      await page.keyboard.press('Escape');
      await page.waitForFunction(() => !document.querySelector('#glossary').open);
    }),
  );
}
