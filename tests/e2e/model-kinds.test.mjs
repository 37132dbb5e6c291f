// The "Your model" part with an encoder, ViT and an encoder–decoder (#33 item 6): the tiny fixtures'
// folders (tests/fixtures/encoders/, tests/fixtures/seq2seq/) set on the file input with a tokenizer.json written by
// tests/js/demo/parts/model/tokenizer-fixtures.mjs; the views' data attributes against the same model run here in
// Node (attnlab's simd build): the [MASK] top 5, the generated ids and the cross-attention alignment; for ViT an
// image drawn in the page (four solid quadrants) dropped on the zone and then chosen from the keyboard, its pixels'
// normalisation checked at the corners. Screenshots: build/screenshots/model-<kind>-<lang>-<width>.png (en 1280, zh 400 px).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setUp, withPage, ROOT, attr, canvasInk, shot, overflow, stopAtFirstToken } from './harness.mjs';
import { init, readSafetensors } from '../../web/demo/attnlab.js';
import { wordPieceJson, unigramJson } from '../js/demo/parts/model/tokenizer-fixtures.mjs';

setUp();

const FIX = path.join(ROOT, 'tests', 'fixtures');
const json = (o) => Buffer.from(JSON.stringify(o));
/** A fixture folder as file payloads, with extra { name: object } files. */
const payloads = (dir, extra = {}) => [
  ...['config.json', 'model.safetensors'].map((name) => ({
    name,
    mimeType: 'application/octet-stream',
    buffer: fs.readFileSync(path.join(FIX, dir, name)),
  })),
  ...Object.entries(extra).map(([name, o]) => ({ name, mimeType: 'application/json', buffer: json(o) })),
];
/** The same fixture on attnlab's simd build here. */
async function nodeModel(dir) {
  const attn = await init({ variant: 'simd' });
  const config = JSON.parse(fs.readFileSync(path.join(FIX, dir, 'config.json'), 'utf8'));
  return attn.loadModel({
    config,
    tensors: readSafetensors(fs.readFileSync(path.join(FIX, dir, 'model.safetensors'))),
  });
}
const ckpt = (page) => page.$eval('#model-ckpt', (el) => ({ ...el.dataset }));

async function loadFiles(page, files) {
  const before = Number((await ckpt(page)).loads ?? 0);
  await page.setInputFiles('#model-file', files);
  await page.waitForFunction((n) => Number(document.getElementById('model-ckpt').dataset.loads ?? 0) > n, before, {
    timeout: 60000,
  });
  return ckpt(page);
}
async function settled(page) {
  await page.waitForFunction(
    () => ['done', 'error'].includes(document.getElementById('model-ckpt').dataset.state),
    null,
    {
      timeout: 60000,
    },
  );
  return ckpt(page);
}
const assertClose = (a, b, tol, label) =>
  a.forEach((x, i) => assert.ok(Math.abs(x - b[i]) <= tol, `${label}[${i}]: ${x} vs ${b[i]}`));

/** Clicks head (l, h) of a grid and checks the map below names it and has ink. */
async function pickHead(page, grid, l, hh) {
  await page.click(`#${grid} .poem-head[data-layer="${l}"][data-head="${hh}"]`);
  assert.equal(await attr(page, '#model-kind-map', 'data-stack'), grid);
  assert.equal(await attr(page, '#model-kind-map', 'data-layer'), String(l));
  assert.equal(await attr(page, '#model-kind-map', 'data-head'), String(hh));
  for (const c of await canvasInk(page, '#model-kind-map')) assert.ok(c.ink > 0.05, JSON.stringify(c));
}

/** The tooltip over the top-left cell of head (l, h)'s thumbnail in a grid. */
async function thumbTip(page, grid, l, hh) {
  const box = await page.$eval(`#${grid} .poem-head[data-layer="${l}"][data-head="${hh}"] canvas`, (c) => {
    const r = c.getBoundingClientRect();
    return { x: r.left, y: r.top };
  });
  await page.mouse.move(box.x + 1, box.y + 1);
  return page.$eval('.tooltip', (el) => el.textContent);
}

/** English at 1280 px, 中文 at 400 px (a phone): no horizontal scrolling either way. */
const WIDTH = { en: 1280, zh: 400 };
const LOADED = {
  en: {
    bert: /bert, an encoder, task masked-lm; 2 layers × 4 heads, E = 16/,
    t5: /encoder 2 layers × 3 heads, decoder 2 layers × 3 heads/,
  },
  zh: {
    bert: /bert，编码器，任务 masked-lm；2 层 × 每层 4 个头，E = 16/,
    t5: /编码器 2 层 × 每层 3 个头，解码器 2 层 × 每层 3 个头/,
  },
};

for (const lang of ['en', 'zh']) {
  test(`${lang}: BERT masked-LM with a WordPiece tokenizer: the [MASK]'s top 5 as attnlab's logits say, the encoder's grid`, async () => {
    await withPage(`?lang=${lang}`, WIDTH[lang], async (page) => {
      const d = await loadFiles(page, payloads('encoders/bert_mlm_f32', { 'tokenizer.json': wordPieceJson() }));
      assert.equal(d.state, 'ready', await page.textContent('#model-ckpt-msg'));
      assert.match(await page.textContent('#model-ckpt-msg'), LOADED[lang].bert);
      assert.deepEqual([d.kind, d.task], ['encoder', 'masked-lm']);
      assert.equal(await page.isVisible('#model-generate'), false, 'no generate for an encoder');
      await page.fill('#model-enc-text', 'The cats sat on the [MASK].');
      await page.click('#model-enc-run');
      const r = await settled(page);
      assert.equal(r.state, 'done', await page.textContent('#model-ckpt-msg'));
      const ids = JSON.parse(r.ids);
      assert.deepEqual(ids, [2, 5, 6, 13, 7, 8, 5, 4, 22, 3]);
      const model = await nodeModel('encoders/bert_mlm_f32');
      const { logits } = model.forward({ data: Int32Array.from(ids), shape: [1, 10] });
      model.dispose();
      const row = Array.from(logits.data.subarray(7 * 24, 8 * 24));
      const top = row
        .map((x, id) => ({ x, id }))
        .sort((a, b) => b.x - a.x)
        .slice(0, 5)
        .map((x) => x.id);
      assert.deepEqual(JSON.parse(r.mask), [{ i: 7, top }]);
      assert.deepEqual(JSON.parse(await attr(page, '#model-mask tr[data-i="7"]', 'data-top')), top);
      assert.equal(await page.$$eval('#model-enc-grid .poem-head', (b) => b.length), 8, '2 layers × 4 heads');
      await pickHead(page, 'model-enc-grid', 1, 2);
      const tip = await thumbTip(page, 'model-enc-grid', 0, 1);
      assert.ok(tip.includes('[CLS]') && !tip.includes('undefined'), `a thumbnail's tooltip names its tokens: ${tip}`);
      const m = JSON.parse(await attr(page, '#model-kind-map', 'data-matrix'));
      assert.equal(m.length, 10);
      assert.ok(
        m.every((row) => row.length === 10 && Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-5),
        'bidirectional rows',
      );
      assert.ok((await overflow(page)) <= 0, 'no horizontal scrolling');
      await shot(page, 'model', `model-bert-${lang}-${WIDTH[lang]}`);
    });
  });
}

/** A 2s × 2s PNG of four solid quadrants drawn in the page, as bytes (base64) and dropped on the zone. */
const QUADS = [
  [255, 0, 0],
  [0, 128, 255],
  [40, 200, 40],
  [250, 250, 10],
];

test('ViT: an image dropped, then one chosen from the keyboard; pixels by the defaults, [CLS] over the 3 × 3 patches', async () => {
  await withPage('?lang=en', async (page) => {
    const d = await loadFiles(page, payloads('encoders/vit_cls_f32'));
    assert.equal(d.state, 'ready', await page.textContent('#model-ckpt-msg'));
    assert.deepEqual([d.kind, d.task], ['encoder', 'image-classification']);
    assert.match(await page.textContent('#model-ckpt-facts'), /Each image is 10 tokens: \[CLS\] and its patches/);
    assert.match(
      await page.textContent('#model-vit-norm'),
      /no preprocessor_config\.json.*14 × 14.*mean \[0\.5, 0\.5, 0\.5\]/,
    );
    const png = await page.evaluate(async (quads) => {
      const c = new OffscreenCanvas(28, 28);
      const g = c.getContext('2d');
      quads.forEach(([r, gg, b], k) => {
        g.fillStyle = `rgb(${r}, ${gg}, ${b})`;
        g.fillRect((k % 2) * 14, Math.floor(k / 2) * 14, 14, 14);
      });
      const blob = await c.convertToBlob({ type: 'image/png' });
      const dataTransfer = new DataTransfer();
      dataTransfer.items.add(new File([blob], 'quads.png', { type: 'image/png' }));
      const zone = document.getElementById('model-image-drop');
      zone.dispatchEvent(new DragEvent('dragover', { dataTransfer, bubbles: true, cancelable: true }));
      zone.dispatchEvent(new DragEvent('drop', { dataTransfer, bubbles: true, cancelable: true }));
      const bytes = new Uint8Array(await blob.arrayBuffer());
      return btoa(String.fromCharCode(...bytes));
    }, QUADS);
    const r = await settled(page);
    assert.equal(r.state, 'done', await page.textContent('#model-ckpt-msg'));
    const corners = JSON.parse(r.pixelCorners);
    const want = [0, 1, 2, 3].map((k) => QUADS[k].map((v) => (v / 255 - 0.5) / 0.5));
    corners.forEach((c, k) => assertClose(c, want[k], 1e-5, `corner ${k}`));
    const labels = JSON.parse(r.labels);
    assert.equal(labels.length, 4);
    assert.ok(Math.abs(labels.reduce((a, x) => a + x.p, 0) - 1) < 1e-5);
    const overlay = async () => page.$eval('#model-vit-overlay', (c) => ({ ...c.dataset }));
    let o = await overlay();
    assert.deepEqual([o.layer, o.head, o.grid], ['0', '0', '3']);
    const cells = JSON.parse(o.cells);
    assert.equal(cells.length, 9);
    assert.ok(Math.abs(cells.reduce((a, b) => a + b, Number(o.cls)) - 1) < 1e-5, '[CLS] row sums to 1');
    const first = await page.$eval('#model-kind-map', (c) => c.dataset.layer ?? null);
    assert.equal(first, null, 'no head map before a click');
    await page.selectOption('#model-vit-layer', { value: '1' });
    await page.selectOption('#model-vit-head', { value: '3' });
    o = await overlay();
    assert.deepEqual([o.layer, o.head], ['1', '3']);
    assert.notDeepEqual(JSON.parse(o.cells), cells);
    for (const c of await canvasInk(page, '#model-vit-overlay')) assert.ok(c.ink > 0.5, JSON.stringify(c));
    assert.equal(await page.$$eval('#model-enc-grid .poem-head', (b) => b.length), 8);
    await pickHead(page, 'model-enc-grid', 0, 1);
    await shot(page, 'model', 'model-vit-en-1280');
    // the keyboard: the button's file input is reached with Tab, Enter opens the chooser
    await page.evaluate(() => delete document.getElementById('model-ckpt').dataset.pixelCorners);
    await page.focus('#model-image');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'model-image', 'focusable');
    const chooser = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no file chooser after Enter')), 20000);
      page.once('filechooser', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
      page.waitForTimeout(300).then(() => page.keyboard.press('Enter'));
    });
    await chooser.setFiles({ name: 'again.png', mimeType: 'image/png', buffer: Buffer.from(png, 'base64') });
    await page.waitForFunction(() => {
      const el = document.getElementById('model-ckpt');
      return el.dataset.state === 'done' && el.dataset.pixelCorners;
    });
    const again = await settled(page);
    assert.deepEqual(JSON.parse(again.pixelCorners), corners, 'the same image, the same pixels');
  });
});

for (const lang of ['en', 'zh']) {
  test(`${lang}: T5 with a Unigram tokenizer: generate, the cross-attention alignment is forward's, both stacks' grids`, async () => {
    await withPage(`?lang=${lang}`, WIDTH[lang], async (page) => {
      const d = await loadFiles(page, payloads('seq2seq/t5_v10_f32', { 'tokenizer.json': unigramJson() }));
      assert.equal(d.state, 'ready', await page.textContent('#model-ckpt-msg'));
      assert.match(await page.textContent('#model-ckpt-msg'), LOADED[lang].t5);
      assert.deepEqual([d.kind, d.task], ['encoder-decoder', 'seq2seq-lm']);
      await page.fill('#model-src', 'the cat sat on the mat.');
      await page.fill('#model-s2s-max', '6');
      await page.click('#model-translate');
      const r = await settled(page);
      assert.equal(r.state, 'done', await page.textContent('#model-ckpt-msg'));
      const source = JSON.parse(r.source);
      const ids = JSON.parse(r.ids);
      assert.deepEqual(source, [3, 4, 5, 6, 3, 7, 18, 1]);
      const model = await nodeModel('seq2seq/t5_v10_f32');
      try {
        const gen = Array.from(model.generate(Int32Array.from(source), { maxNewTokens: 6, temperature: 0 }));
        assert.deepEqual(ids, gen, 'greedy, as generate here');
        const dec = [0, ...ids.slice(0, -1)];
        const out = model.forward(
          { data: Int32Array.from(source), shape: [1, 8] },
          { decoderInputIds: { data: Int32Array.from(dec), shape: [1, dec.length] }, outputAttentions: true },
        );
        const [T, S] = [dec.length, 8];
        for (const [l, hh] of [
          [0, 0],
          [1, 2],
        ]) {
          await page.selectOption('#model-align-layer', { value: String(l) });
          await page.selectOption('#model-align-head', { value: String(hh) });
          const a = await page.$eval('#model-align', (c) => ({ ...c.dataset }));
          assert.deepEqual([a.layer, a.head, a.rows, a.cols], [l, hh, T, S].map(String));
          const want = Array.from(out.crossAttentions[l].data.subarray(hh * T * S, (hh + 1) * T * S));
          assertClose(JSON.parse(a.matrix).flat(), want, 1e-5, `cross l${l} h${hh}`);
        }
      } finally {
        model.dispose();
      }
      assert.equal(await page.$$eval('#model-enc-grid .poem-head', (b) => b.length), 6);
      assert.equal(await page.$$eval('#model-dec-grid .poem-head', (b) => b.length), 6);
      await pickHead(page, 'model-dec-grid', 1, 0);
      const m = JSON.parse(await attr(page, '#model-kind-map', 'data-matrix'));
      m.forEach((row, i) => row.forEach((w, j) => j > i && assert.equal(w, 0, `causal (${i}, ${j})`)));
      await pickHead(page, 'model-enc-grid', 0, 2);
      assert.ok((await overflow(page)) <= 0, 'no horizontal scrolling');
      await shot(page, 'model', `model-t5-${lang}-${WIDTH[lang]}`);
      // Stop after the first generated token: the ids so far, then the maps of those
      await stopAtFirstToken(page, 'model-s2s-out', '.model-tok', 'model-s2s-stop');
      await page.fill('#model-s2s-max', '30');
      await page.click('#model-translate');
      const s = await settled(page);
      assert.equal(s.state, 'done', await page.textContent('#model-ckpt-msg'));
      assert.equal(s.stopped, '1');
      const n = JSON.parse(s.ids).length;
      assert.ok(n >= 1 && n < 30, `${n} tokens`);
      assert.equal(await attr(page, '#model-align', 'data-rows'), String(n));
    });
  });
}

test('a tokenizer.json the package cannot read is named; the part goes on with a good folder', async () => {
  await withPage('?lang=en', async (page) => {
    const bad = { ...unigramJson(), model: { type: 'BPEv9', vocab: {} } };
    const d = await loadFiles(page, payloads('seq2seq/t5_v10_f32', { 'tokenizer.json': bad }));
    assert.equal(d.state, 'error');
    assert.match(
      await page.textContent('#model-ckpt-msg .error-box'),
      /tokenizer\.json cannot be read by @huggingface\/tokenizers.*type BPEv9/,
    );
    const g = await loadFiles(page, payloads('encoders/bert_mlm_f32', { 'tokenizer.json': wordPieceJson() }));
    assert.equal(g.state, 'ready');
  });
});
