// The multi-head part (English page, whose messages the assertions read): the toy models' answers, untrained
// weights and the tokenizer, the average labelled as PyTorch's diagnostic, the causal mask, and a PyTorch
// state-dict file (good and broken).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setUp, withPage, ctx, attr, canvasInk, shot } from './harness.mjs';

setUp();

test('the head average is labelled as a diagnostic; causal zeroes the upper triangle', async () => {
  await withPage('?lang=en', async (page) => {
    assert.match(await page.textContent('#mha-heatmaps .heat[data-head="avg"]'), /diagnostic.*W_O/s);
    assert.match(await page.textContent('#mha-source-desc'), /Kaiming-uniform/);
    await page.check('#mha-causal');
    const maps = await page.$$eval('#mha-heatmaps canvas', (cs) => cs.map((c) => JSON.parse(c.dataset.matrix)));
    for (const m of maps)
      m.forEach((row, i) =>
        row.forEach((v, j) => {
          if (j > i) assert.equal(v, 0);
        }),
      );
  });
});

test("the toy models' answers are correct", async () => {
  await withPage('?lang=en', async (page) => {
    await page.check('#mha-src-toy-reverse');
    const check = async (label) => {
      const correct = Number(await attr(page, '#mha-answer-table', 'data-correct'));
      const total = Number(await attr(page, '#mha-answer-table', 'data-total'));
      assert.ok(total > 0, `${label}: answers shown`);
      assert.equal(correct, total, `${label}: ${correct}/${total}`);
      const cells = await page.$$eval('#mha-answer-table td[data-pos]', (tds) =>
        tds.map((td) => [td.dataset.predicted, td.dataset.expected]),
      );
      for (const [p, e] of cells) if (e) assert.equal(p, e);
      return total;
    };
    assert.equal(await check('reverse, first example'), 6);
    for (let n = 0; n < 5; n++) {
      await page.click('#mha-new-example');
      await check(`reverse, random example ${n}`);
    }
    // an example typed by hand
    await page.fill('#mha-text', 'A B C D E F');
    await page.press('#mha-text', 'Enter');
    assert.deepEqual(JSON.parse(await attr(page, '#mha-answer-table', 'data-predicted')), [...'FEDCBA']);
    await page.check('#mha-src-toy-recall');
    assert.equal(await check('recall, first example'), 3);
    for (let n = 0; n < 5; n++) {
      await page.click('#mha-new-example');
      await check(`recall, random example ${n}`);
    }
    // padding: keys masked, answers unchanged; per-head maps give padded keys weight 0
    await page.fill('#mha-pad', '12');
    await page.dispatchEvent('#mha-pad', 'change');
    await check('recall, padded to 12');
    const tokens = JSON.parse(await attr(page, '#mha', 'data-tokens'));
    assert.equal(tokens.length, 12);
    const m = JSON.parse(await attr(page, '#mha-heatmaps canvas[data-head="0"]', 'data-matrix'));
    for (const row of m) for (let j = 8; j < 12; j++) assert.equal(row[j], 0);
    // unknown tokens are reported in words
    await page.fill('#mha-text', 'a=1 zz?');
    await page.press('#mha-text', 'Enter');
    assert.match(await page.textContent('#mha-msg'), /Not in the toy vocabulary: "zz\?"/);
  });
});

test('random weights and the tokenizer (CJK per character, other text per word)', async () => {
  await withPage('?lang=en', async (page) => {
    await page.check('#mha-src-random');
    await page.click('#mha-example-zh');
    assert.deepEqual(JSON.parse(await attr(page, '#mha', 'data-tokens')), [...'这只猫因为没有及时喂食所以一直在叫']);
    assert.match(await page.textContent('#mha-source-desc'), /close to uniform/);
    assert.deepEqual(
      await page.$$eval('#mha-head-chips button', (bs) => bs.map((b) => b.getAttribute('aria-pressed'))),
      ['true', 'true', 'true', 'true'],
      'a new layer shows all its heads',
    );
    await page.selectOption('#mha-heads', '8');
    assert.equal(await page.$$eval('#mha-heatmaps canvas', (cs) => cs.length), 9);
    // token links (attnlab/viz): hover a query token → only its lines; click a head chip → that head's lines go
    const links = () =>
      page.$eval('#mha-links .attnlab-token-links', (el) => ({
        total: Number(el.dataset.links),
        byHead: JSON.parse(el.dataset.linksByHead),
        focus: Number(el.dataset.focus),
      }));
    const all = await links();
    assert.equal(all.byHead.length, 8);
    assert.ok(
      all.byHead.every((n) => n > 0),
      'lines of all 8 heads',
    );
    const box = await page.$eval('#mha-links canvas', (c) => {
      c.scrollIntoView({ block: 'center' });
      const r = c.getBoundingClientRect();
      return { x: r.left, y: r.top, w: r.width, h: r.height };
    });
    await page.mouse.move(box.x + 40, box.y + 4 + 3 * 22 + 11); // query token 3 (rows of 22 px, 4 px top margin)
    const focused = await links();
    assert.equal(focused.focus, 3, 'hover picks query 3');
    assert.ok(focused.total > 0 && focused.total < all.total, 'hover isolates a token');
    await page.mouse.move(0, 0);
    await page.click('#mha-head-chips button[data-head="0"]');
    assert.equal(await attr(page, '#mha-head-chips button[data-head="0"]', 'aria-pressed'), 'false');
    const rest = await links();
    assert.ok(rest.byHead[0] === 0 && rest.byHead.slice(1).every((n) => n > 0), 'head 1 hidden');
    await page.click('#mha-example-en');
    const toks = JSON.parse(await attr(page, '#mha', 'data-tokens'));
    assert.ok(toks.includes('animal') && toks.includes("didn't"), toks.join('|'));
    await page.check('input[name="mha-view"][value="average"]');
    assert.equal(await page.$$eval('#mha-heatmaps canvas', (cs) => cs.length), 1);
    for (const c of await canvasInk(page, '#mha-heatmaps canvas')) assert.ok(c.ink > 0.2, JSON.stringify(c));
  });
});

test('a PyTorch state-dict file loads; broken ones show an error in words', async () => {
  const E = 12;
  const H = 3;
  let seed = 5;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648 - 0.5;
  };
  const T = (shape) => ({
    shape,
    data: Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => Math.round(rnd() * 1e4) / 1e4),
  });
  const good = {
    embed_dim: E,
    num_heads: H,
    state_dict: {
      in_proj_weight: T([3 * E, E]),
      in_proj_bias: T([3 * E]),
      'out_proj.weight': T([E, E]),
      'out_proj.bias': T([E]),
    },
  };
  const files = {
    good: good,
    missing: { ...good, state_dict: { ...good.state_dict, in_proj_weight: undefined } },
    wrongSize: { ...good, state_dict: { ...good.state_dict, 'out_proj.weight': T([E, E + 1]) } },
    badHeads: { ...good, num_heads: 5 },
  };
  const paths = {};
  for (const [k, v] of Object.entries(files)) {
    paths[k] = path.join(ctx.tmp, `${k}.json`);
    fs.writeFileSync(paths[k], JSON.stringify(v));
  }
  paths.notJson = path.join(ctx.tmp, 'notjson.json');
  fs.writeFileSync(paths.notJson, '{"embed_dim": 12, "num_heads": ');

  await withPage('?lang=en', async (page) => {
    await page.setInputFiles('#mha-file', paths.good);
    await page.waitForSelector('#mha-file-ok');
    assert.equal(await attr(page, '#mha', 'data-source'), 'user');
    assert.equal(await attr(page, '#mha', 'data-heads'), String(H));
    const maps = await page.$$eval('#mha-heatmaps canvas', (cs) => cs.map((c) => JSON.parse(c.dataset.matrix)));
    assert.equal(maps.length, H + 1);
    for (const m of maps) for (const row of m) assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-4);
    for (const c of await canvasInk(page, '#mha-heatmaps canvas')) assert.ok(c.ink > 0.2, JSON.stringify(c));

    const expectError = async (file, pattern) => {
      await page.setInputFiles('#mha-file', []);
      await page.setInputFiles('#mha-file', file);
      await page.waitForSelector('#mha-file-error');
      const text = await page.textContent('#mha-file-error');
      assert.match(text, pattern, text);
      return text;
    };
    await expectError(paths.missing, /in_proj_weight/);
    await expectError(paths.wrongSize, /out_proj\.weight/);
    await expectError(paths.badHeads, /RangeError.*(embedDim|numHeads)/s);
    await expectError(paths.notJson, /not valid JSON/);
    await shot(page, 'mha', 'mha-file-error-en-1280');
  });
});
