// The decoding part: token by token through attnlab's KV cache (4 query heads over 2 key/value heads). The steps'
// numbers, read from the page's test hook, equal one causal forward over the whole sequence (in the page, with
// attnlab, no cache) and a float64 reference (reference64.mjs); the model continues its period-3 pattern; the
// maps grow one row and one column per step, heads coloured by the key/value head they share; reset empties the cache.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setUp, withPage, attr, shot, canvasInk } from './harness.mjs';
import { gqaCausal64 } from './reference64.mjs';

setUp();

const trace = (page) =>
  page.evaluate(() => {
    const tr = document.getElementById('decode').trace;
    const sd = Object.fromEntries(Object.entries(tr.stateDict()).map(([k, v]) => [k, [...v.data]]));
    return { config: tr.config, sd, inputs: [...tr.inputs()], steps: tr.steps() };
  });

test('decoding steps equal one causal forward, in attnlab and in float64; the cache grows and resets', async () => {
  await withPage('?lang=en', async (page) => {
    assert.equal(await attr(page, '#decode', 'data-length'), '0');
    for (let n = 1; n <= 5; n++) {
      await page.click('#decode-step');
      assert.equal(await attr(page, '#decode', 'data-length'), String(n));
      assert.equal(await page.textContent('#decode-length'), `${n} / 24`);
      const dims = await page.$$eval('#decode-maps canvas', (cs) => cs.map((c) => [c.dataset.rows, c.dataset.cols]));
      assert.deepEqual(dims, Array(4).fill([String(n), String(n)]), 'one row and one column more per step');
    }
    await page.click('#decode-run');
    await page.waitForFunction(() => document.querySelector('#decode').dataset.length === '24', null, {
      timeout: 30000,
    });
    assert.ok(await page.$eval('#decode-step', (b) => b.disabled), 'a full cache takes no more steps');
    const tokens = JSON.parse(await attr(page, '#decode', 'data-tokens'));
    assert.equal(tokens.join(''), 'ABC'.repeat(8) + 'A', 'the pattern of period 3 continues');
    // the page's own check: the steps against attnlab's forward over all 24 tokens with a causal mask
    const pageDiff = Number(await attr(page, '#decode', 'data-max-diff'));
    assert.ok(pageDiff <= 1e-5, `steps vs one causal forward in the page: ${pageDiff}`);
    assert.match(await page.textContent('#decode-check'), /24 steps/);
    assert.match(await page.textContent('#decode-cost'), /O\(context\)/);
    // float64: every step's output row and every head's weights
    const { config, sd, inputs, steps } = await trace(page);
    const L = steps.length;
    const ref = gqaCausal64(inputs, L, config, sd);
    let worstOut = 0;
    let worstW = 0;
    steps.forEach((s, i) => {
      s.output.forEach((v, e) => (worstOut = Math.max(worstOut, Math.abs(v - ref.output[i * config.embedDim + e]))));
      for (let h = 0; h < config.numHeads; h++)
        for (let j = 0; j <= i; j++)
          worstW = Math.max(worstW, Math.abs(s.weights[h * (i + 1) + j] - ref.weights[(h * L + i) * L + j]));
    });
    assert.ok(worstOut < 1e-4 && worstW < 1e-4, `vs float64: output ${worstOut}, weights ${worstW}`);
    // head 0 puts its weight 2 positions back from step 2 on: the token it copies
    steps.slice(2).forEach((s, k) => {
      const i = k + 2;
      assert.ok(s.weights[i - 2] > 0.99, `step ${i}: head 0 on position ${i - 2}: ${s.weights[i - 2]}`);
    });
    // heads coloured by their key/value head: 0 and 1 share one colour, 2 and 3 another
    const colours = await page.$$eval('#decode-maps .heat h4 .swatch', (els) => els.map((e) => e.style.background));
    assert.equal(colours[0], colours[1]);
    assert.equal(colours[2], colours[3]);
    assert.notEqual(colours[0], colours[2]);
    assert.deepEqual(await page.$$eval('#decode-maps canvas', (cs) => cs.map((c) => c.dataset.kvHead)), [
      '0',
      '0',
      '1',
      '1',
    ]);
    for (const c of await canvasInk(page, '#decode-maps canvas')) assert.ok(c.ink > 0.3, `map painted: ${c.ink}`);
    await shot(page, 'decode', 'decode-full-en-1280');
    await page.click('#decode-reset');
    assert.equal(await attr(page, '#decode', 'data-length'), '0');
    await page.click('#decode-step');
    assert.equal(await attr(page, '#decode', 'data-length'), '1');
  });
});

test('a new prompt, a bad prompt, and the part in 中文 at 400 px', async () => {
  await withPage('?lang=zh', 400, async (page) => {
    await page.fill('#decode-prompt', 'H e b');
    await page.press('#decode-prompt', 'Enter');
    for (let n = 0; n < 6; n++) await page.click('#decode-step');
    assert.deepEqual(JSON.parse(await attr(page, '#decode', 'data-tokens')), ['H', 'E', 'B', 'H', 'E', 'B', 'H']);
    assert.match(await page.textContent('#decode-check'), /完全一致/);
    assert.match(await page.textContent('#part-decode h2'), /KV 缓存/);
    await page.fill('#decode-prompt', 'X Y');
    await page.press('#decode-prompt', 'Enter');
    assert.match(await page.textContent('#decode [role="alert"]'), /A–H/);
    assert.equal(await attr(page, '#decode', 'data-length'), '0');
    await shot(page, 'decode', 'decode-prompt-zh-400');
  });
});
