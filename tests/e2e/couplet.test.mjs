// The couplet chapter (issue 34 §1), in 中文 and English: the shipped marian loads in an attnlab/worker, a held-out Tang
// couplet's upper line goes into the box, the model writes the lower line token by token, and the drawn alignment
// (lower × upper, at the aligning head of heads.json) equals a node forward's of the same ids; the guess-first card
// answers with heads.json's head; the four couplets' diagonals equal node's; the replay slider moves by keyboard to
// the last snapshot; a typed line with an unknown character shows [UNK]; Stop; no horizontal scrolling at 400 px; no
// console error, no failed request.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setUp, withPage, ROOT, attr, canvasInk, shot, overflow } from './harness.mjs';
import { init, readSafetensors } from '../../web/demo/attnlab.js';
import * as C from '../../web/demo/parts/couplet/compute.js';
import { charTokenizer } from '../../web/demo/shared/char-tokenizer.js';
import { fmt } from '../../web/demo/shared/format.js';

setUp();

const DIR = path.join(ROOT, 'web/demo/models/song-couplet-char-marian');
const read = (f) => fs.readFileSync(path.join(DIR, f), 'utf8');
const HEADS = JSON.parse(read('heads.json'));
const SNAPS = JSON.parse(read('snapshots.json'));
const POEMS = C.parseCoupletHeldOut(read('held-out.jsonl'));
const tok = charTokenizer(JSON.parse(read('tokenizer.json')));
let model;
before(async () => {
  const attn = await init({ variant: 'simd' });
  const tensors = readSafetensors(fs.readFileSync(path.join(DIR, 'model.safetensors')));
  model = attn.loadModel({ config: JSON.parse(read('config.json')), tensors });
});
after(() => model?.dispose());

/** The chapter has loaded and written the first poem's 颔联 on its own. */
const ready = (page) =>
  page.waitForFunction(() => ['done', 'error'].includes(document.querySelector('#couplet')?.dataset.state), null, {
    timeout: 120000,
  });
const written = (page) =>
  page.waitForFunction(() => ['done', 'error'].includes(document.querySelector('#couplet')?.dataset.state), null, {
    timeout: 60000,
  });

/** The drawn alignment against node's forward of the same source and written ids. */
async function checkAlignment(page) {
  const source = JSON.parse(await attr(page, '#couplet-out', 'data-source'));
  const ids = JSON.parse(await attr(page, '#couplet-out', 'data-ids'));
  const { layer, head } = HEADS.aligning;
  assert.equal(await attr(page, '#couplet-align', 'data-layer'), String(layer));
  assert.equal(await attr(page, '#couplet-align', 'data-head'), String(head));
  const drawn = JSON.parse(await attr(page, '#couplet-align', 'data-matrix'));
  const want = C.headMatrix(await C.alignmentMaps(model, source, ids), layer, head);
  assert.equal(drawn.length, ids.length);
  const flat = drawn.flat();
  assert.equal(flat.length, want.length);
  for (let i = 0; i < flat.length; i++) assert.ok(Math.abs(flat[i] - want[i]) < 1e-4, `cell ${i}`);
  return { source, ids };
}

async function pickAndWrite(page, lang) {
  await page.selectOption('#couplet-poem', '1');
  await page.selectOption('#couplet-k', '2');
  const c = POEMS[1].couplets[1];
  assert.equal(await page.inputValue('#couplet-upper'), c.upper);
  await page.click('#couplet-write');
  await written(page);
  assert.equal(await attr(page, '#couplet', 'data-state'), 'done', await page.textContent('#couplet-progress'));
  const { source, ids } = await checkAlignment(page);
  assert.deepEqual(source, [...C.encodeLine(tok, c.upper)]);
  const greedy = await model.generate(Int32Array.from(source), { maxNewTokens: source.length, temperature: 0 });
  assert.deepEqual(ids, [...greedy], 'greedy in the worker = greedy in node');
  assert.equal(await page.$$eval('#couplet-lower .poem-char', (cs) => cs.length), ids.length);
  for (const ink of await canvasInk(page, '#couplet-align')) assert.ok(ink.ink > 0.05, JSON.stringify(ink));
  await shot(page, 'couplet', `couplet-${lang}-1280`);
}

async function guessAndPairs(page, lang) {
  assert.equal(await page.isVisible('#couplet-answer'), false);
  await page.click('#couplet-reveal');
  const { layer, head } = HEADS.aligning;
  assert.equal(await attr(page, '#couplet-answer', 'data-value'), `${layer}.${head}`);
  assert.match(await page.textContent('#couplet-answer'), lang === 'zh' ? /第 \d 层 · 头 \d/ : /layer \d · head \d/);
  assert.equal(await page.$$eval('#couplet-heads tbody tr', (r) => r.length), HEADS.aligned.parallel.flat().length);
  const figs = await page.$$eval('#couplet-pairs figure', (fs) => fs.map((f) => Number(f.dataset.diagonal)));
  assert.equal(figs.length, 4);
  for (const [k, c] of POEMS[1].couplets.entries()) {
    const r = await C.alignmentMaps(model, C.encodeLine(tok, c.upper), [...C.encodeLine(tok, c.lower)]);
    const m = C.headMatrix(r, layer, head);
    let d = 0;
    for (let t = 0; t < r.T - 1; t++) d += m[t * r.S + t];
    assert.ok(Math.abs(figs[k] - d / (r.T - 1)) < 1e-4, `couplet ${k + 1}`);
  }
}

async function replay(page) {
  assert.equal(await attr(page, '#couplet-replay-panel', 'data-step'), String(SNAPS.steps[0].step));
  await page.focus('#couplet-step');
  await page.keyboard.press('End');
  const last = SNAPS.steps.at(-1);
  await page.waitForFunction(
    (s) => document.querySelector('#couplet-replay-panel')?.dataset.step === s,
    String(last.step),
  );
  const { layer, head } = HEADS.aligning;
  const text = await page.textContent('#couplet-replay-numbers');
  assert.ok(text.includes(fmt(last.aligned.parallel[layer][head], 3)), text);
  assert.equal(await page.$$eval('#couplet-replay-maps canvas', (c) => c.length), 4);
  for (const ink of await canvasInk(page, '#couplet-curve')) assert.ok(ink.ink > 0.01, JSON.stringify(ink));
}

for (const lang of ['zh', 'en']) {
  test(
    `couplet chapter (${lang}): write, alignment = node's, guess, control couplets, replay`,
    { timeout: 300000 },
    () =>
      withPage(`?lang=${lang}`, async (page) => {
        await ready(page);
        assert.equal(await attr(page, '#couplet', 'data-state'), 'done', await page.textContent('#couplet-status'));
        assert.equal(await page.inputValue('#couplet-upper'), POEMS[0].couplets[1].upper);
        await checkAlignment(page);
        await pickAndWrite(page, lang);
        await guessAndPairs(page, lang);
        await replay(page);
      }),
  );
}

test('couplet chapter at 400 px: a typed line with [UNK], sampled; no horizontal scrolling', { timeout: 300000 }, () =>
  withPage('?lang=zh', 400, async (page) => {
    await ready(page);
    const unknown = String.fromCodePoint(0x2a6d6);
    await page.fill('#couplet-upper', `春风${unknown}花落`);
    await page.selectOption('#couplet-mode', 'sample');
    await page.click('#couplet-write');
    await written(page);
    const up = await page.$$eval('#couplet-out .poem-char.up', (cs) => cs.map((c) => c.textContent));
    assert.deepEqual(up, ['春', '风', '[UNK]', '花', '落']);
    const { source } = await checkAlignment(page);
    assert.equal(source[2], tok.special.unk);
    // Stop: clicked at the first written character (the worker may finish a 6-token line before the abort arrives)
    await page.evaluate(() => {
      const box = document.getElementById('couplet-out');
      const obs = new MutationObserver(() => {
        if (!box.querySelector('.poem-char.low')) return;
        obs.disconnect();
        const stop = /** @type {HTMLButtonElement} */ (document.getElementById('couplet-stop'));
        box.dataset.stopWasEnabled = String(!stop.disabled);
        stop.click();
      });
      obs.observe(box, { childList: true, subtree: true });
    });
    await page.click('#couplet-write');
    await written(page);
    assert.equal(await attr(page, '#couplet-out', 'data-stop-was-enabled'), 'true');
    const n = JSON.parse(await attr(page, '#couplet-out', 'data-ids')).length;
    const stopped = await attr(page, '#couplet', 'data-stopped');
    assert.ok(stopped === '1' ? n >= 1 && n < 6 : n <= 6, `stopped ${stopped} after ${n} tokens`);
    await page.fill('#couplet-upper', '春风');
    await page.click('#couplet-write');
    assert.match(await page.textContent('#couplet-progress'), /5/);
    assert.ok((await overflow(page)) <= 0, `overflow ${await overflow(page)} px`);
    await shot(page, 'couplet', 'couplet-zh-400');
  }),
);
