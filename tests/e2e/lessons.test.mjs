// The tutorial's lessons part by part (English page, whose messages the assertions read): step by step with
// the tutorial's 0/1 mask and its −1e9 fill against −∞, every stage of attnlab's (softcap, window, lower-right causal)
// against a float64 reference, the √dₖ charts, the 2-D dot product, self vs cross and
// the batch, "From X to heads and back" with the wrong transpose, the misconceptions and the §9 table.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setUp, withPage, attr } from './harness.mjs';
import { sdpaStages64 } from './reference64.mjs';

setUp();

/** Opens step by step's "Advanced" fold (closed at first), where the −∞ fill, temperature and attnlab's rules are. */
async function openAdvanced(page) {
  assert.equal(await page.$eval('#sbs-advanced', (d) => d.open), false, 'the fold starts closed');
  await page.click('#sbs-advanced > summary');
  assert.equal(await page.$eval('#sbs-advanced', (d) => d.open), true);
}

const sbsWeights = (page) =>
  page.$$eval('#sbs-weights td[data-i]', (tds) =>
    tds.map((td) => ({ i: +td.dataset.i, j: +td.dataset.j, v: Number(td.dataset.value) })),
  );

test('step by step: causal, click-to-mask on the 0/1 mask, a fully masked row with −1e9 (uniform) and −∞ (zeros)', async () => {
  await withPage('?lang=en', async (page) => {
    await openAdvanced(page);
    await page.check('#sbs-causal-upper-left');
    await page.waitForFunction(() => document.querySelector('#sbs-weights')?.dataset.causal === 'upper-left');
    const mask = await page.$$eval('#sbs-mask td[data-i]', (tds) =>
      tds.map((td) => [+td.dataset.i, +td.dataset.j, Number(td.dataset.value), td.dataset.why ?? null]),
    );
    for (const [i, j, v, why] of mask) {
      assert.equal(v, j > i ? 0 : 1, 'the mask shows 0 where masked');
      assert.equal(why, j > i ? 'causal' : null, 'isCausal is named as the reason');
    }
    let w = await sbsWeights(page);
    for (const c of w) if (c.j > c.i) assert.equal(c.v, 0, `weight[${c.i},${c.j}] under isCausal (a true mask)`);
    // with causal off, mask the whole of row 0 by clicking the mask matrix: with −1e9 the row becomes uniform 1/Lk
    await page.check('#sbs-causal-off');
    for (const j of [0, 1, 2]) await page.click(`#sbs-mask td[data-i="0"][data-j="${j}"]`);
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

const sbsCells = (page, id) =>
  page.$$eval(`#${id} td[data-i]`, (tds) =>
    tds.map((td) => ({
      i: +td.dataset.i,
      j: +td.dataset.j,
      v: Number(td.dataset.value),
      text: td.textContent,
      why: td.dataset.why ?? null,
    })),
  );

/** Types Q, K, V (rows of numbers) into the step-by-step boxes; returns them flat with their sizes. */
async function typeQKV(page, Q, K, V) {
  for (const [id, m] of [
    ['#sbs-in-q', Q],
    ['#sbs-in-k', K],
    ['#sbs-in-v', V],
  ])
    await page.fill(id, m.map((r) => r.join(' ')).join('\n'));
  return { q: Q.flat(), k: K.flat(), v: V.flat(), Lq: Q.length, Lk: K.length, dk: Q[0].length, dv: V[0].length };
}

/**
 * Every stage the page shows against sdpaStages64 within float32 tolerance: the stages in order (softcapped only
 * with a softcap), each cell of QKᵀ, × scale, softcap, the masked scores (−∞ exactly, shown as −∞, where a rule or a
 * −∞ fill removes the key), the weights and the output; the 0/1 mask and the reason of each 0; the fully masked rows.
 */
async function checkSbsStages(page, x, opts, clicked = []) {
  const { Lq, Lk, dk, dv } = x;
  const fill = opts.fill ?? '-1e9';
  const mask = (value) => {
    if (!clicked.length) return null;
    const m = new Array(Lq * Lk).fill(fill === '-1e9' ? 0 : 1);
    for (const [i, j] of clicked) m[i * Lk + j] = value;
    return m;
  };
  const ref = sdpaStages64(x.q, x.k, x.v, {
    Lq,
    Lk,
    dk,
    dv,
    scale: 1 / Math.sqrt(dk),
    softcap: opts.softcap ?? null,
    causal: opts.causal ?? 'off',
    window: opts.window ?? [-1, -1],
    boolMask: fill === '-inf' ? mask(0) : null,
    floatMask: fill === '-1e9' ? mask(-1e9) : null,
  });
  const w = await page.$eval('#sbs-weights', (el) => ({ ...el.dataset }));
  assert.deepEqual(
    [w.lq, w.lk, w.causal, w.window, w.softcap, w.fill],
    [Lq, Lk, opts.causal ?? 'off', (opts.window ?? [-1, -1]).join(), opts.softcap ?? 'off', fill].map(String),
    'the page runs the settings of the test',
  );
  assert.ok(Math.abs(Number(await attr(page, '#sbs-pipeline', 'data-scale')) - 1 / Math.sqrt(dk)) < 1e-12);
  assert.deepEqual(await page.$$eval('#sbs-pipeline .stage', (els) => els.map((e) => e.dataset.stage)), [
    'inputs',
    'scores',
    'scaled',
    ...(opts.softcap ? ['softcapped'] : []),
    'masked',
    'weights',
    'output',
  ]);
  const close = (got, want, what) => {
    if (want === -Infinity) assert.equal(got, -Infinity, what);
    else assert.ok(Math.abs(got - want) <= 1e-5 * Math.max(1, Math.abs(want)), `${what}: ${got}, float64 ${want}`);
  };
  const stages = [
    ['sbs-scores', 'scores', Lk],
    ['sbs-scaled', 'scaled', Lk],
    ...(opts.softcap ? [['sbs-softcapped', 'softcapped', Lk]] : []),
    ['sbs-masked', 'masked', Lk],
    ['sbs-weights', 'weights', Lk],
    ['sbs-output', 'output', dv],
  ];
  for (const [id, stage, cols] of stages) {
    const cells = await sbsCells(page, id);
    assert.equal(cells.length, Lq * cols, `${id}: one cell per entry`);
    for (const c of cells) {
      const want = ref[stage][c.i * cols + c.j];
      close(c.v, want, `${id}[${c.i}, ${c.j}]`);
      if (want === -Infinity) assert.equal(c.text, '−∞', `${id}[${c.i}, ${c.j}] reads −∞`);
    }
  }
  const isClicked = (i, j) => clicked.some(([a, b]) => a === i && b === j);
  const dead = [];
  for (const c of await sbsCells(page, 'sbs-mask')) {
    const r = ref.removed[c.i * Lk + c.j];
    const why = r === 'causal' || r === 'window' ? r : isClicked(c.i, c.j) ? 'click' : null;
    assert.equal(c.v, why ? 0 : 1, `mask[${c.i}, ${c.j}]`);
    assert.equal(c.why, why, `the reason of mask[${c.i}, ${c.j}]`);
  }
  for (let i = 0; i < Lq; i++) {
    let all = true;
    for (let j = 0; j < Lk; j++) all &&= ref.removed[i * Lk + j] !== null || isClicked(i, j);
    if (all) dead.push(i);
  }
  assert.equal(w.deadRows, dead.join(','), 'the fully masked rows');
  const weights = await sbsCells(page, 'sbs-weights');
  const output = await sbsCells(page, 'sbs-output');
  for (let i = 0; i < Lq; i++) {
    if (!ref.masked.subarray(i * Lk, (i + 1) * Lk).every((s) => s === -Infinity)) continue;
    // a row with no key left: exactly zero weights and output, never NaN
    assert.ok(
      weights.filter((c) => c.i === i).every((c) => c.v === 0),
      `weights of the masked row ${i}`,
    );
    assert.ok(
      output.filter((c) => c.i === i).every((c) => c.v === 0),
      `output of the masked row ${i}`,
    );
    assert.match(await page.textContent(`[data-dead-row="${i}"]`), /every score is −∞/);
  }
  return { ref, dead };
}

test('step by step from attnlab: softcap, a window and lower-right causal on non-square Q, K, every stage against float64', async () => {
  await withPage('?lang=en', async (page) => {
    // Lq 4 < Lk 6: lower-right puts query i at p = i + 2; window [1, 0] leaves it keys p − 1 and p
    let x = await typeQKV(
      page,
      [
        [1, 0, 2],
        [0, 2, 1],
        [2, 1, 0],
        [1, 1, 1],
      ],
      [
        [2, 0, 1],
        [0, 1, 2],
        [1, 2, 0],
        [2, 2, 0],
        [0, 0, 3],
        [1, 0, 1],
      ],
      [
        [1, 0],
        [0, 1],
        [1, 1],
        [2, 0],
        [0, 2],
        [1, -1],
      ],
    );
    await openAdvanced(page);
    await page.check('#sbs-causal-lower-right');
    await page.fill('#sbs-window-left', '1');
    await page.fill('#sbs-window-right', '0');
    await page.fill('#sbs-softcap-c', '2');
    assert.ok(await page.isChecked('#sbs-softcap'), 'typing c turns the softcap on');
    let opts = { causal: 'lower-right', window: [1, 0], softcap: 2 };
    const { ref } = await checkSbsStages(page, x, opts);
    assert.ok(
      ref.scaled.some((s) => Math.abs(s) > 2.5),
      'some scaled score lies beyond c, so the softcap changes it',
    );
    assert.match(await page.textContent('#sbs-call'), /isCausal: 'lower-right', window: \[1, 0\], softcap: 2/);

    // row 0 keeps keys 1 and 2; clicking both with −1e9 leaves them the whole row (1/2 each), with −∞ zeros
    await page.click('#sbs-mask td[data-i="0"][data-j="1"]');
    await page.click('#sbs-mask td[data-i="0"][data-j="2"]');
    const clicked = [
      [0, 1],
      [0, 2],
    ];
    await checkSbsStages(page, x, opts, clicked);
    const row0 = (await sbsWeights(page)).filter((c) => c.i === 0).map((c) => c.v);
    assert.ok(Math.abs(row0[1] - 0.5) < 1e-6 && Math.abs(row0[2] - 0.5) < 1e-6, `−1e9 keys share row 0: ${row0}`);
    assert.match(await page.textContent('[data-dead-row="0"]'), /1\/2/);
    await page.check('#sbs-fill-inf');
    await checkSbsStages(page, x, { ...opts, fill: '-inf' }, clicked);

    // Lq 5 > Lk 3: lower-right's offset is −2, so queries 0 and 1 see no key at all; window [1, −1]
    x = await typeQKV(
      page,
      [
        [1, 0],
        [0, 1],
        [2, 1],
        [1, 3],
        [-2, 1],
      ],
      [
        [3, 0],
        [1, 2],
        [0, -1],
      ],
      [
        [1, 2],
        [-1, 0],
        [0.5, 1],
      ],
    );
    await page.fill('#sbs-window-right', '-1');
    opts = { causal: 'lower-right', window: [1, -1], softcap: 2, fill: '-inf' };
    const { dead } = await checkSbsStages(page, x, opts);
    assert.deepEqual(dead, [0, 1]);
    // softcap off: no softcapped stage, the mask follows the scaled scores
    await page.uncheck('#sbs-softcap');
    await checkSbsStages(page, x, { ...opts, softcap: null });
    assert.equal(await page.$('#sbs-softcapped'), null);
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
    // the gradient over many draws: the unscaled median collapses, the scaled one does not
    const g = JSON.parse(await attr(page, '#dk-lab [data-chart="gradient"]', 'data-series'));
    assert.ok(g.unscaled.median.at(-1) < 0.01 && g.scaled.median.at(-1) > 0.4, JSON.stringify(g.unscaled.median));
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
    // §8.2's intervention: masking k0 moves the output far more than ‖α₀v₀‖
    const k0 = await page.$eval('#myth-contrib tr[data-j="0"]', (tr) => [tr.dataset.contrib, tr.dataset.maskEffect]);
    assert.deepEqual(
      k0.map((x) => Number(x).toFixed(3)),
      ['0.024', '0.359'],
    );
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
