// The tutorial's lessons part by part (English page, whose messages the assertions read): step by step with
// the tutorial's 0/1 mask and its −1e9 fill against −∞, the √dₖ charts, the 2-D dot product, self vs cross and
// the batch, "From X to heads and back" with the wrong transpose, the misconceptions and the §9 table.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setUp, withPage, attr } from './harness.mjs';

setUp();

const sbsWeights = (page) =>
  page.$$eval('#sbs-weights td[data-i]', (tds) =>
    tds.map((td) => ({ i: +td.dataset.i, j: +td.dataset.j, v: Number(td.dataset.value) })),
  );

test('step by step: causal, click-to-mask on the 0/1 mask, a fully masked row with −1e9 (uniform) and −∞ (zeros)', async () => {
  await withPage('?lang=en', async (page) => {
    await page.check('#sbs-causal');
    await page.waitForFunction(() => document.querySelector('#sbs-weights')?.dataset.causal === '1');
    const mask = await page.$$eval('#sbs-mask td[data-i]', (tds) =>
      tds.map((td) => [+td.dataset.i, +td.dataset.j, Number(td.dataset.value)]),
    );
    for (const [i, j, v] of mask) assert.equal(v, j > i ? 0 : 1, 'the mask shows 0 where masked');
    let w = await sbsWeights(page);
    for (const c of w) if (c.j > c.i) assert.ok(c.v < 1e-6, `weight[${c.i},${c.j}] under causal with −1e9: ${c.v}`);
    // mask the only visible key of row 0 by clicking the mask matrix: with −1e9 the row becomes uniform 1/Lk
    await page.click('#sbs-mask td[data-i="0"][data-j="0"]');
    assert.equal(await attr(page, '#sbs-weights', 'data-dead-rows'), '0');
    w = await sbsWeights(page);
    for (const c of w.filter((x) => x.i === 0))
      assert.ok(Math.abs(c.v - 1 / 3) < 1e-6, `−1e9: uniform 1/3, got ${c.v}`);
    assert.match(await page.textContent('[data-dead-row="0"]'), /1\/3/);
    // with −∞ (a bool mask) attnlab returns zeros for the row and its output; the note gives PyTorch's versions
    await page.check('#sbs-fill-inf');
    await page.waitForFunction(() => document.querySelector('#sbs-weights')?.dataset.fill === '-inf');
    w = await sbsWeights(page);
    assert.ok(
      w.filter((c) => c.i === 0).every((c) => c.v === 0),
      'fully masked row is all zeros',
    );
    const out = await page.$$eval('#sbs-output tr[data-row="0"] td[data-i]', (tds) =>
      tds.map((td) => Number(td.dataset.value)),
    );
    assert.ok(
      out.every((v) => v === 0),
      'its output row is zeros',
    );
    assert.match(await page.textContent('[data-dead-row="0"]'), /2\.4.*2\.5/s);
    // hover highlighting marks the query and key rows; the temperature is explained
    await page.hover('#sbs-weights td[data-i="2"][data-j="1"]');
    assert.ok(await page.$eval('#sbs-q tr[data-row="2"]', (el) => el.classList.contains('hl-row')));
    assert.ok(await page.$eval('#sbs-k tr[data-row="1"]', (el) => el.classList.contains('hl-row')));
    assert.match(await page.textContent('#sbs-temp-note'), /flattens/);
  });
});

test('√dₖ, the dot product in 2-D, self vs cross, the batch', async () => {
  await withPage('?lang=en', async (page) => {
    assert.ok((await page.$$('#dk-lab svg path[data-series]')).length >= 4, 'd_k lines');
    const dk = JSON.parse(await attr(page, '#dk-lab [data-chart="max-weight"]', 'data-series'));
    assert.ok(
      dk.unscaled.at(-1) > 0.8 && dk.scaled.at(-1) < 0.5,
      `saturation without the scale: ${dk.unscaled.at(-1)} vs ${dk.scaled.at(-1)}`,
    );
    // the dot product: q along k0, at a right angle to k1, opposite k2
    await page.evaluate(() => {
      const el = document.getElementById('dot');
      el.setVector('q', 1, 0);
      el.setVector('k0', 2, 0);
      el.setVector('k1', 0, 1.5);
      el.setVector('k2', -1, 0);
    });
    assert.deepEqual(JSON.parse(await attr(page, '#dot', 'data-scores')), [2, 0, -1]);
    const w = JSON.parse(await attr(page, '#dot', 'data-weights'));
    const e = [2, 0, -1].map((s) => Math.exp(s / Math.SQRT2));
    w.forEach((v, j) => assert.ok(Math.abs(v - e[j] / (e[0] + e[1] + e[2])) < 1e-6, `weight ${j}`));
    // dragging the query handle changes the scores
    await page.locator('#dot-plane').scrollIntoViewIfNeeded();
    const box = await page.locator('#dot-plane circle[data-name="q"]').boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width / 2, box.y - 60, { steps: 4 });
    await page.mouse.up();
    assert.notDeepEqual(JSON.parse(await attr(page, '#dot', 'data-scores')), [2, 0, -1]);
    // cross-attention: 3 queries, 6 keys; self: 3 × 3; the batch equals one call per item
    assert.deepEqual(JSON.parse(await attr(page, '#cross', 'data-weights-shape')), [3, 6]);
    const rows = await page.$$eval('#cross-weights tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td[data-j]')].map((td) => Number(td.dataset.value))),
    );
    assert.deepEqual(
      rows.map((r) => r.indexOf(Math.max(...r))),
      [0, 1, 3],
      'le → the, chat → cat, miaule → crying',
    );
    await page.check('#cross-mode-self');
    assert.deepEqual(JSON.parse(await attr(page, '#cross', 'data-weights-shape')), [3, 3]);
    assert.ok(Number(await attr(page, '#cross-batch', 'data-diff')) < 1e-6);
  });
});

test('From X to heads and back: the batch size, the wrong transpose (silent at B = 2, a shape error at B = 3)', async () => {
  await withPage('?lang=en', async (page) => {
    await page.selectOption('#heads-batch', '3');
    assert.equal(await attr(page, '#heads-check', 'data-ok'), '1', 'B = 3 also equals mha.forward');
    assert.equal(JSON.parse(await attr(page, '#heads-chain', 'data-shapes'))[3].join(), '3,2,4,4');
    await page.check('#heads-wrong');
    assert.equal(await attr(page, '#heads-wrong-result', 'data-error'), '1');
    assert.match(await page.textContent('#heads-wrong-result'), /Shape error.*transpose\(-2, -1\)/s);
    await page.selectOption('#heads-batch', '2');
    assert.equal(await attr(page, '#heads-wrong-result', 'data-error'), '0');
    assert.ok(Number(await attr(page, '#heads-wrong-result', 'data-diff')) > 0.01, 'silently wrong numbers');
  });
});

test('misconceptions and every row of the §9 table', async () => {
  await withPage('?lang=en', async (page) => {
    const m1 = await page.$eval('[data-myth="untrained"]', (el) => [
      Number(el.dataset.entropy),
      Number(el.dataset.uniform),
    ]);
    assert.ok(m1[0] > 0.8 * m1[1], `untrained entropy ${m1[0]} near uniform ${m1[1]}`);
    const m2 = await page.$eval('[data-myth="explanation"]', (el) => [
      el.dataset.topWeight,
      el.dataset.topContribution,
    ]);
    assert.notEqual(m2[0], m2[1], 'the largest weight is not the largest contribution');
    assert.equal(await attr(page, '[data-myth="params"]', 'data-params'), String(3 * 64 + 24 + 64 + 8));
    assert.deepEqual(
      await page.$$eval('#myth-heads tr[data-h]', (trs) => trs.map((tr) => tr.dataset.params)),
      Array(5).fill(String(4 * 256 + 4 * 16)),
    );

    assert.deepEqual(await page.$$eval('.pitfall[data-pitfall]', (els) => els.map((e) => e.dataset.pitfall)), [
      'no-max',
      'wrong-axis',
      'heads',
      'transpose',
      'no-scale',
      'mask-zero',
    ]);
    assert.ok(JSON.parse(await attr(page, '[data-pitfall="no-max"]', 'data-wrong')).includes('NaN'));
    assert.ok(JSON.parse(await attr(page, '[data-pitfall="no-max"]', 'data-right')).every(Number.isFinite));
    const sums = JSON.parse(await attr(page, '[data-pitfall="wrong-axis"]', 'data-wrong-row-sums'));
    assert.ok(sums.some((s) => Math.abs(s - 1) > 0.05));
    await page.click('#pf-axis-new');
    assert.notDeepEqual(
      JSON.parse(await attr(page, '[data-pitfall="wrong-axis"]', 'data-wrong-row-sums')),
      sums,
      'row 2 is live',
    );
    const err = await attr(page, '[data-pitfall="heads"]', 'data-error');
    assert.match(err, /^RangeError: .*embedDim/, `embedDim 10 / numHeads 3: ${err}`);
    for (const [e, hh] of [
      ['0', '3'],
      ['8', '0'],
    ]) {
      // no nonsense for E = 0 or H = 0
      await page.fill('#pf-embed', e);
      await page.fill('#pf-heads', hh);
      const text = await page.textContent('[data-pitfall="heads"] .cols');
      assert.doesNotMatch(text, /NaN|Infinity|-\d+ silently/, text);
      assert.match(text, /whole numbers ≥ 1/);
    }
    assert.equal(await attr(page, '[data-pitfall="transpose"]', 'data-wrong-error'), '1');
    assert.equal(await attr(page, '[data-pitfall="transpose"]', 'data-right-shape'), '[3,2,4,4]');
    const ns = await page.$eval('[data-pitfall="no-scale"]', (el) => ({ ...el.dataset }));
    assert.ok(Number(ns.wrongMax) > Number(ns.rightMax), 'unscaled softmax is more peaked');
    assert.ok(
      Number(ns.wrongGrad) < Number(ns.rightGrad),
      `the gradient vanishes without the scale: ${ns.wrongGrad} vs ${ns.rightGrad}`,
    );
    assert.ok(Number(await attr(page, '[data-pitfall="mask-zero"]', 'data-wrong-leak')) > 0.1);
    assert.equal(Number(await attr(page, '[data-pitfall="mask-zero"]', 'data-right-leak')), 0);
    await page.selectOption('#pf-pad', '1');
    assert.equal(Number(await attr(page, '[data-pitfall="mask-zero"]', 'data-right-leak')), 0);
  });
});
