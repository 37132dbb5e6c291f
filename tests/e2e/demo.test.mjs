// End-to-end test of the demo page (web/demo/) in headless Chromium, served by scripts/serve.mjs exactly as
// `npm start` serves it. Drives Debian's /usr/bin/chromium with npm playwright-core (no browser downloads).
//
//   node --test tests/e2e/          (needs dist/ from `bash scripts/build.sh`; scripts/test-e2e.sh checks that)
//
// Screenshots of every part at 1280 and 400 px go to build/screenshots/ for a person to look at. The last test
// measures part 5's training speed (reversal task, SIMD and scalar builds) and writes build/train-speed.json.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SHOTS = path.join(ROOT, 'build', 'screenshots');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];
const PARTS = { sbs: 'part-sbs', mha: 'part-mha', speed: 'part-speed', pitfalls: 'part-pitfalls' };

let server;
let base;
let browser;
let tmp;

before(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attnlab-e2e-'));
  server = spawn(process.execPath, [path.join(ROOT, 'scripts', 'serve.mjs')], { env: { ...process.env, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  base = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`serve.mjs printed no URL: ${out}`)), 15000);
    server.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/http:\/\/127\.0\.0\.1:\d+\//);
      if (m) {
        clearTimeout(timer);
        resolve(m[0]);
      }
    });
    server.stderr.on('data', (d) => { out += d; });
    server.on('exit', (code) => reject(new Error(`serve.mjs exited (${code}): ${out}`)));
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
});

after(async () => {
  if (browser) await browser.close();
  if (server) server.kill('SIGTERM');
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** Open the page; records console errors, page errors, failed requests and HTTP errors. */
async function open(query = '', width = 1280) {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });
  await page.goto(base + query);
  await page.waitForFunction(() => document.body.dataset.ready, null, { timeout: 60000 });
  assert.equal(await page.evaluate(() => document.body.dataset.ready), '1', `page not ready: ${problems.join('\n')}`);
  return { page, problems };
}

const attr = (page, sel, name) => page.$eval(sel, (el, n) => el.getAttribute(n), name);

/** Weights of the step-by-step view, from the data-value attributes. */
async function sbsWeights(page) {
  return page.$$eval('#sbs-weights td[data-i]', (tds) => tds.map((td) => ({ i: +td.dataset.i, j: +td.dataset.j, v: Number(td.dataset.value) })));
}

/** Share of non-white pixels and number of distinct colours in every canvas matched. */
async function canvasInk(page, sel) {
  return page.$$eval(sel, (cs) => cs.map((c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let ink = 0;
    const colours = new Set();
    for (let i = 0; i < d.length; i += 4) {
      if (d[i + 3] > 0 && (d[i] < 245 || d[i + 1] < 245 || d[i + 2] < 245)) ink += 1;
      if (i % 64 === 0) colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
    }
    return { ink: ink / (d.length / 4), colours: colours.size, w: c.width, h: c.height };
  }));
}

test('the server: redirect, MIME types, isolation headers, no escape from the repo', async () => {
  const r = await fetch(base, { redirect: 'manual' });
  assert.equal(r.status, 302);
  assert.equal(r.headers.get('location'), '/web/demo/');
  const wasm = await fetch(base + 'dist/attnlab-simd.wasm');
  assert.equal(wasm.status, 200);
  assert.equal(wasm.headers.get('content-type'), 'application/wasm');
  assert.equal(wasm.headers.get('cross-origin-opener-policy'), 'same-origin');
  assert.equal(wasm.headers.get('cross-origin-embedder-policy'), 'require-corp');
  const mjs = await fetch(base + 'dist/index.mjs');
  assert.match(mjs.headers.get('content-type'), /^text\/javascript/);
  for (const p of ['%2e%2e/%2e%2e/etc/passwd', '.git/config', 'nope.js']) assert.equal((await fetch(base + p)).status, 404, p);
});

test('page loads cleanly and every part renders (1280 px)', { timeout: 180000 }, async () => {
  const { page, problems } = await open('?bench=quick');
  try {
    const variant = await attr(page, '#build', 'data-variant');
    assert.ok(['simd', 'scalar'].includes(variant), `build badge shows ${variant}`);
    assert.equal(await page.evaluate(() => window.crossOriginIsolated), true, 'COOP/COEP headers make the page cross-origin isolated');
    for (const id of [...Object.keys(PARTS), 'train']) assert.equal(await attr(page, `#${id}`, 'data-ready'), '1', `part ${id} mounted`);

    // 1. step by step: default Q = K = V, weights from attnlab with row sums 1; d_k lab drawn
    const w = await sbsWeights(page);
    assert.equal(w.length, 9);
    assert.ok(Math.abs(w.find((c) => c.i === 0 && c.j === 0).v - 0.50648) < 1e-4, 'weight[0,0] of the textbook example');
    for (let i = 0; i < 3; i++) assert.ok(Math.abs(w.filter((c) => c.i === i).reduce((s, c) => s + c.v, 0) - 1) < 1e-5);
    assert.ok((await page.$$('#dk-lab svg path[data-series]')).length >= 4, 'd_k lab lines');
    assert.ok((await page.$$('#dk-lab svg circle')).length >= 40, 'd_k lab points');
    const dk = JSON.parse(await attr(page, '#dk-lab [data-chart="max-weight"]', 'data-series'));
    assert.ok(dk.unscaled.at(-1) > 0.8 && dk.scaled.at(-1) < 0.5, `saturation without the scale: ${dk.unscaled.at(-1)} vs ${dk.scaled.at(-1)}`);

    // 2. multi-head: heat maps with real pixels, token links, toy answers
    const ink = await canvasInk(page, '#mha-heatmaps canvas');
    assert.ok(ink.length >= 3, 'per-head maps + average');
    for (const c of ink) assert.ok(c.ink > 0.2 && c.colours > 5, `heat map drawn: ${JSON.stringify(c)}`);
    assert.ok(Number(await attr(page, '#mha-links', 'data-lines')) > 5, 'token-link lines');

    // 4. pitfalls: wrong variants misbehave, attnlab does not; the package's own error message is shown
    assert.equal(await page.$$eval('.pitfall', (els) => els.length), 5);
    assert.ok(JSON.parse(await attr(page, '[data-pitfall="no-max"]', 'data-wrong')).includes('NaN'));
    assert.ok(JSON.parse(await attr(page, '[data-pitfall="no-max"]', 'data-right')).every(Number.isFinite));
    assert.ok(Number(await attr(page, '[data-pitfall="mask-zero"]', 'data-wrong-leak')) > 0.1);
    assert.equal(Number(await attr(page, '[data-pitfall="mask-zero"]', 'data-right-leak')), 0);
    const sums = JSON.parse(await attr(page, '[data-pitfall="wrong-axis"]', 'data-wrong-row-sums'));
    assert.ok(sums.some((s) => Math.abs(s - 1) > 0.05));
    const err = await attr(page, '[data-pitfall="heads"]', 'data-error');
    assert.match(err, /^RangeError: /, `embedDim 10 / numHeads 3: ${err}`);
    assert.match(err, /embedDim/);

    for (const [id, el] of Object.entries(PARTS)) await page.locator(`#${el}`).screenshot({ path: path.join(SHOTS, `${id}-1280.png`) });
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

test('causal toggle zeroes the upper triangle; clicking a cell masks it; a fully masked row is explained', async () => {
  const { page, problems } = await open();
  try {
    await page.check('#sbs-causal');
    await page.waitForFunction(() => document.querySelector('#sbs-weights')?.dataset.causal === '1');
    let w = await sbsWeights(page);
    for (const c of w) {
      if (c.j > c.i) assert.equal(c.v, 0, `weight[${c.i},${c.j}] under causal`);
      if (c.j === 0 && c.i === 0) assert.equal(c.v, 1, 'the first query sees only itself');
    }
    // mask the only visible key of row 0: the row is fully masked → zeros and a note
    await page.click('#sbs-scores td[data-i="0"][data-j="0"]');
    w = await sbsWeights(page);
    assert.ok(w.filter((c) => c.i === 0).every((c) => c.v === 0), 'fully masked row is all zeros');
    assert.equal(await attr(page, '#sbs-weights', 'data-dead-rows'), '0');
    assert.ok(await page.isVisible('[data-dead-row="0"]'));
    const out = await page.$$eval('#sbs-output tr[data-row="0"] td[data-i]', (tds) => tds.map((td) => Number(td.dataset.value)));
    assert.ok(out.every((v) => v === 0), 'its output row is zeros');
    // hover highlighting marks the query and key rows
    await page.hover('#sbs-weights td[data-i="2"][data-j="1"]');
    assert.ok(await page.$eval('#sbs-q tr[data-row="2"]', (el) => el.classList.contains('hl-row')));
    assert.ok(await page.$eval('#sbs-k tr[data-row="1"]', (el) => el.classList.contains('hl-row')));
    // causal also applies in the multi-head view
    await page.check('#mha-causal');
    const maps = await page.$$eval('#mha-heatmaps canvas', (cs) => cs.map((c) => JSON.parse(c.dataset.matrix)));
    for (const m of maps) m.forEach((row, i) => row.forEach((v, j) => { if (j > i) assert.equal(v, 0); }));
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

test("the toy models' answers are correct", async () => {
  const { page, problems } = await open();
  try {
    const check = async (label) => {
      const correct = Number(await attr(page, '#mha-answer-table', 'data-correct'));
      const total = Number(await attr(page, '#mha-answer-table', 'data-total'));
      assert.ok(total > 0, `${label}: answers shown`);
      assert.equal(correct, total, `${label}: ${correct}/${total}`);
      const cells = await page.$$eval('#mha-answer-table td[data-pos]', (tds) => tds.map((td) => [td.dataset.predicted, td.dataset.expected]));
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
    assert.deepEqual(JSON.parse(await attr(page, '#mha-answer-table', 'data-predicted')), ['F', 'E', 'D', 'C', 'B', 'A']);
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
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

test('random weights and the tokenizer (CJK per character, other text per word)', async () => {
  const { page, problems } = await open();
  try {
    await page.check('#mha-src-random');
    assert.deepEqual(JSON.parse(await attr(page, '#mha', 'data-tokens')), [...'这只猫因为没有及时喂食所以一直在叫']);
    assert.match(await page.textContent('#mha-source-desc'), /look like noise/);
    assert.deepEqual(await page.$$eval('#mha-head-chips button', (bs) => bs.map((b) => b.getAttribute('aria-pressed'))), ['true', 'true', 'true', 'true'],
      'a new layer shows all its heads');
    await page.selectOption('#mha-heads', '8');
    assert.equal(await page.$$eval('#mha-heatmaps canvas', (cs) => cs.length), 9);
    // token links: hover a query token → only its lines; click a head chip → that head's lines go
    const visibleLines = () => page.$$eval('#mha-links line', (ls) => ls.filter((l) => l.style.display !== 'none').map((l) => [l.dataset.head, +l.dataset.i]));
    const all = await visibleLines();
    assert.ok(new Set(all.map(([hh]) => hh)).size === 8, 'lines of all 8 heads');
    await page.hover('#mha-links text[data-side="q"][data-idx="3"]');
    const focused = await visibleLines();
    assert.ok(focused.length > 0 && focused.length < all.length && focused.every(([, i]) => i === 3), 'hover isolates a token');
    await page.mouse.move(0, 0);
    await page.click('#mha-head-chips button[data-head="0"]');
    assert.equal(await attr(page, '#mha-head-chips button[data-head="0"]', 'aria-pressed'), 'false');
    const rest = await visibleLines();
    assert.ok(rest.length > 0 && rest.every(([hh]) => hh !== '0'), 'head 1 hidden');
    await page.click('#mha-example-en');
    const toks = JSON.parse(await attr(page, '#mha', 'data-tokens'));
    assert.ok(toks.includes('animal') && toks.includes("didn't"), toks.join('|'));
    await page.check('input[name="mha-view"][value="average"]');
    assert.equal(await page.$$eval('#mha-heatmaps canvas', (cs) => cs.length), 1);
    for (const c of await canvasInk(page, '#mha-heatmaps canvas')) assert.ok(c.ink > 0.2, JSON.stringify(c));
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

test('a PyTorch state-dict file loads; broken ones show an error in words', async () => {
  const E = 12;
  const H = 3;
  let seed = 5;
  const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 - 0.5; };
  const T = (shape) => ({ shape, data: Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => Math.round(rnd() * 1e4) / 1e4) });
  const good = { embed_dim: E, num_heads: H, state_dict: { in_proj_weight: T([3 * E, E]), in_proj_bias: T([3 * E]), 'out_proj.weight': T([E, E]), 'out_proj.bias': T([E]) } };
  const files = {
    good: good,
    missing: { ...good, state_dict: { ...good.state_dict, in_proj_weight: undefined } },
    wrongSize: { ...good, state_dict: { ...good.state_dict, 'out_proj.weight': T([E, E + 1]) } },
    badHeads: { ...good, num_heads: 5 },
  };
  const paths = {};
  for (const [k, v] of Object.entries(files)) {
    paths[k] = path.join(tmp, `${k}.json`);
    fs.writeFileSync(paths[k], JSON.stringify(v));
  }
  paths.notJson = path.join(tmp, 'notjson.json');
  fs.writeFileSync(paths.notJson, '{"embed_dim": 12, "num_heads": ');

  const { page, problems } = await open();
  try {
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
    await page.locator('#part-mha').screenshot({ path: path.join(SHOTS, 'mha-file-error-1280.png') });
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

test('the speed run completes in a worker and draws its bar chart', { timeout: 300000 }, async () => {
  const { page, problems } = await open('?bench=quick');
  try {
    assert.equal(await page.$eval('#speed-set', (s) => s.value), 'quick');
    await page.click('#speed-run');
    await page.waitForFunction(() => document.querySelector('#speed').dataset.state !== 'running', null, { timeout: 280000 });
    assert.equal(await attr(page, '#speed', 'data-state'), 'done', await page.textContent('#speed'));
    const rows = JSON.parse(await attr(page, '#speed-results', 'data-json'));
    assert.equal(rows.length, 3 * 2 * 3, 'L x {SDPA, MHA} x {simd, scalar, plain JS}');
    for (const r of rows) {
      assert.ok(r.ms > 0 && r.gflops > 0, JSON.stringify(r));
      if (r.maxDiff !== null) assert.ok(r.maxDiff < 1e-3, `${r.impl} ${r.op} L=${r.L} disagrees with attnlab: ${r.maxDiff}`);
    }
    assert.deepEqual(new Set(rows.map((r) => r.impl)), new Set(['attnlab simd', 'attnlab scalar', 'plain JS']));
    assert.ok((await page.$$('#speed-results svg rect[data-series]')).length >= 30, 'bars');
    assert.equal(await page.$eval('#speed-progress', (p) => p.value), 1);
    await page.locator('#part-speed').screenshot({ path: path.join(SHOTS, 'speed-1280.png') });
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

test('the layout works at 400 px wide (and the scalar build loads)', { timeout: 300000 }, async () => {
  const { page, problems } = await open('?bench=quick&variant=scalar', 400);
  try {
    assert.equal(await attr(page, '#build', 'data-variant'), 'scalar');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `page is ${overflow} px wider than the 400 px window`);
    await page.click('#speed-run');
    await page.waitForFunction(() => document.querySelector('#speed').dataset.state !== 'running', null, { timeout: 280000 });
    assert.equal(await attr(page, '#speed', 'data-state'), 'done');
    for (const [id, el] of Object.entries(PARTS)) await page.locator(`#${el}`).screenshot({ path: path.join(SHOTS, `${id}-400.png`) });
    const overflowAfter = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflowAfter <= 0, `after the speed run the page is ${overflowAfter} px too wide`);
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

// ---------------------------------------------------------------------------------------------------------
// Part 5: train it yourself
// ---------------------------------------------------------------------------------------------------------

/** Part 5's data- attributes as numbers (state, task and variant as strings). */
async function trainData(page) {
  const d = await page.$eval('#train', (el) => ({ ...el.dataset }));
  const out = {};
  for (const [k, v] of Object.entries(d)) out[k] = ['state', 'task', 'variant'].includes(k) ? v : Number(v);
  return out;
}
const trainState = (page, states, timeout = 90000) => page.waitForFunction((s) => s.includes(document.querySelector('#train')?.dataset.state),
  states, { timeout });
/** The live heat maps: one matrix (rows = queries) per head. */
const trainMaps = (page) => page.$$eval('#train-maps canvas', (cs) => cs.map((c) => JSON.parse(c.dataset.matrix)));
function maxDiff(a, b) {
  let m = 0;
  a.forEach((mat, hh) => mat.forEach((row, i) => row.forEach((v, j) => { m = Math.max(m, Math.abs(v - b[hh][i][j])); })));
  return m;
}
function assertRowsSumToOne(maps, what) {
  for (const m of maps) for (const row of m) assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-4, `${what}: row sums to 1`);
}

test('part 5: training runs in a worker, the loss falls, accuracy rises, the maps change; pause, replay, reset, heads', { timeout: 240000 }, async () => {
  const { page, problems } = await open('?trainseed=3');
  try {
    await trainState(page, ['ready']);
    let d = await trainData(page);
    assert.equal(d.step, 0);
    assert.equal(d.seed, 3);
    assert.equal(d.variant, await attr(page, '#build', 'data-variant'), 'the worker runs the build the page loaded');
    assert.match(await page.textContent('#train-build'), /^(SIMD|scalar)$/);
    assert.deepEqual(await page.$$eval('#train-heads option', (os) => os.map((o) => o.value)), ['1', '2', '4', '8', '16'], 'divisors of E = 16');
    for (const id of ['train-heads', 'train-lr', 'train-batch', 'train-pace', 'train-seed', 'train-stop']) {
      assert.ok(await page.$(`label[for="${id}"]`), `#${id} has a label`);
    }
    assert.equal(await page.$eval('#train-try-run', (b) => b.disabled), true, 'nothing to try before training');
    const untrained = await trainMaps(page);
    assert.equal(untrained.length, 2);
    assertRowsSumToOne(untrained, 'untrained');
    for (const c of await canvasInk(page, '#train-maps canvas')) assert.ok(c.ink > 0.2 && c.colours > 5, `heat map drawn: ${JSON.stringify(c)}`);
    const acc0 = d.accuracyInitial;

    // Train as a new user would (default pace, 30 steps/s): the maps change while it runs.
    await page.click('#train-start');
    await trainState(page, ['running']);
    await page.waitForFunction(() => Number(document.querySelector('#train').dataset.step) >= 25, null, { timeout: 30000 });
    const early = await trainMaps(page);
    assert.ok(maxDiff(untrained, early) > 0.02, `maps changed after 25 steps: ${maxDiff(untrained, early)}`);
    await trainState(page, ['done']);
    d = await trainData(page);
    const late = await trainMaps(page);
    console.log(`part 5, reverse (${d.variant}, 30 steps/s): ${(acc0 * 100).toFixed(1)} % → ${(d.accuracy * 100).toFixed(1)} % at step ${d.step}; ` +
      `loss ${d.lossInitial.toFixed(3)} → ${d.lossSmoothed.toFixed(3)} (smoothed); ${d.updates} map updates, ${d.updatesPerSecond.toFixed(1)}/s`);
    assert.ok(d.lossSmoothed < 0.7 * d.lossInitial, `loss fell: ${d.lossInitial} → ${d.lossSmoothed}`);
    assert.ok(d.accuracy >= 0.95 && acc0 < 0.3, `accuracy rose: ${acc0} → ${d.accuracy}`);
    assert.equal(d.reachedStep, d.step, 'stopped where it reached 95 %');
    assert.ok(maxDiff(early, late) > 0.05 && maxDiff(untrained, late) > 0.2, 'maps changed between snapshots');
    assertRowsSumToOne(late, 'trained');
    assert.ok(d.updatesPerSecond >= 8, `map updates per second: ${d.updatesPerSecond} (the worker posts ≈ 16/s)`);
    assert.ok(d.updates >= 20, `${d.updates} map updates`);
    assert.ok(Number(await attr(page, '#train-example-table', 'data-correct')) >= 5, 'the fixed example is (nearly) reversed');
    assert.ok(Number(await attr(page, '#train-loss-chart', 'data-points')) === d.step);
    assert.ok(JSON.parse(await attr(page, '#train-acc-chart', 'data-series')).length >= 10);

    // Try it: the trained model on the page next to the shipped toy model (loaded with loadStateDict).
    await page.waitForSelector('#train-try-table');
    assert.equal(await page.$eval('#train-try-run', (b) => b.disabled), false);
    await page.fill('#train-try-text', 'A B C D E F');
    await page.press('#train-try-text', 'Enter');
    assert.deepEqual(JSON.parse(await attr(page, '#train-try-table', 'data-toy-predicted')), ['F', 'E', 'D', 'C', 'B', 'A']);
    assert.ok(Number(await attr(page, '#train-try-table', 'data-trained-correct')) >= 4,
      `trained model on A..F: ${await attr(page, '#train-try-table', 'data-trained-predicted')}`);
    assert.equal(await page.$$eval('#train-try-maps canvas[data-model="toy"]', (cs) => cs.length), 2);
    assert.equal(await page.$$eval('#train-try-maps canvas[data-model="mine"]', (cs) => cs.length), 2);
    await page.fill('#train-try-text', 'A B zz');
    await page.press('#train-try-text', 'Enter');
    assert.match(await page.textContent('#train-try-msg'), /Not in the toy vocabulary: "zz"/);
    await page.fill('#train-try-text', 'L K J I H G');
    await page.click('#train-try-run');
    assert.deepEqual(JSON.parse(await attr(page, '#train-try-table', 'data-toy-predicted')), ['G', 'H', 'I', 'J', 'K', 'L']);
    await page.locator('#part-train').screenshot({ path: path.join(SHOTS, 'train-1280.png') });

    // Keep training at full speed (stopping at 95 % happens once), then pause: the step counter stops.
    await page.selectOption('#train-pace', '0');
    await page.click('#train-start');
    await trainState(page, ['running']);
    const s0 = d.step;
    await page.waitForFunction((s) => Number(document.querySelector('#train').dataset.step) > s + 20, s0, { timeout: 30000 });
    await page.click('#train-pause');
    await trainState(page, ['paused']);
    const s1 = (await trainData(page)).step;
    await page.waitForTimeout(800);
    d = await trainData(page);
    assert.equal(d.step, s1, 'paused: the step counter stands still');
    assert.equal(d.trainedStep, s1, 'the page holds the parameters of the step shown');
    assert.ok(d.stepsPerSecond > 0 && d.trainStepsPerSecond > 0);
    await page.click('#train-start');
    await page.waitForFunction((s) => Number(document.querySelector('#train').dataset.step) > s, s1, { timeout: 30000 });
    await page.click('#train-pause');
    await trainState(page, ['paused']);

    // Replay: the first kept snapshot is the untrained model.
    await page.$eval('#train-replay', (r) => { r.value = '0'; r.dispatchEvent(new Event('input')); });
    assert.equal(await attr(page, '#train-maps', 'data-replay'), '0');
    assert.ok(maxDiff(untrained, await trainMaps(page)) < 1e-6, 'replay at step 0 shows the untrained maps');

    // Reset with a new seed: back to step 0 with another model; the heads control rebuilds the model.
    await page.click('#train-reset');
    await trainState(page, ['ready']);
    d = await trainData(page);
    assert.equal(d.step, 0);
    assert.notEqual(d.seed, 3);
    assert.ok(maxDiff(untrained, await trainMaps(page)) > 1e-3, 'another seed, other maps');
    assert.equal(await page.$eval('#train-try-run', (b) => b.disabled), true);
    await page.selectOption('#train-heads', '4');
    await trainState(page, ['ready']);
    const four = await trainMaps(page);
    assert.equal(four.length, 4);
    assertRowsSumToOne(four, '4 heads');
    assert.equal(await attr(page, '#train', 'data-heads'), '4');
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

test('part 5: the causal next-token and recall tasks learn too; 400 px layout with the scalar build', { timeout: 240000 }, async () => {
  const { page, problems } = await open('?variant=scalar&trainseed=2', 400);
  try {
    await trainState(page, ['ready']);
    assert.equal((await trainData(page)).variant, 'scalar');
    await page.selectOption('#train-pace', '0');

    // next token (causal): nothing above the diagonal, ever
    await page.check('#train-task-next');
    await trainState(page, ['ready']);
    assert.equal(await attr(page, '#train', 'data-task'), 'next');
    await page.click('#train-start');
    await trainState(page, ['done']);
    let d = await trainData(page);
    console.log(`part 5, next token (scalar): ${(d.accuracy * 100).toFixed(1)} % at step ${d.step}, ${(d.reachedMs / 1000).toFixed(2)} s`);
    assert.ok(d.accuracy >= 0.95 && d.lossSmoothed < 0.7 * d.lossInitial);
    for (const m of await trainMaps(page)) m.forEach((row, i) => row.forEach((v, j) => { if (j > i) assert.equal(v, 0, 'causal'); }));
    await page.waitForSelector('#train-try-table');
    assert.equal(await page.$('#train-try-table[data-toy-predicted]'), null, 'no toy model for this task');

    // key-value recall, compared with the shipped recall toy model
    await page.check('#train-task-recall');
    await trainState(page, ['ready']);
    await page.click('#train-start');
    await trainState(page, ['done']);
    d = await trainData(page);
    console.log(`part 5, recall (scalar): ${(d.accuracy * 100).toFixed(1)} % at step ${d.step}, ${(d.reachedMs / 1000).toFixed(2)} s`);
    assert.ok(d.accuracy >= 0.95 && d.lossSmoothed < 0.7 * d.lossInitial);
    await page.waitForSelector('#train-try-table');
    const total = Number(await attr(page, '#train-try-table', 'data-total'));
    assert.equal(total, 3);
    assert.equal(Number(await attr(page, '#train-try-table', 'data-toy-correct')), total, 'the shipped recall model answers');

    // reversal, for the 400 px screenshot
    await page.check('#train-task-reverse');
    await trainState(page, ['ready']);
    await page.click('#train-start');
    await trainState(page, ['done']);
    await page.waitForSelector('#train-try-table');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `page is ${overflow} px wider than the 400 px window`);
    await page.locator('#part-train').screenshot({ path: path.join(SHOTS, 'train-400.png') });
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

test('part 5: training speed of the reversal task, SIMD and scalar builds (logged, build/train-speed.json)', { timeout: 240000 }, async () => {
  const results = [];
  for (const variant of ['simd', 'scalar']) {
    const { page, problems } = await open(`?variant=${variant}&trainseed=1`);
    try {
      await trainState(page, ['ready']);
      await page.selectOption('#train-pace', '0'); // full speed, batch 32, lr 0.01, 2 heads (the defaults)
      await page.click('#train-start');
      await trainState(page, ['done']);
      const at95 = await trainData(page);
      // keep training for a steady-state rate: the median of 8 one-second rates, sampled every 500 ms
      await page.click('#train-start');
      await trainState(page, ['running']);
      await page.waitForTimeout(1000);
      const wall = [];
      const inside = [];
      for (let k = 0; k < 8; k++) {
        await page.waitForTimeout(500);
        const x = await trainData(page);
        wall.push(x.stepsPerSecond);
        inside.push(x.trainStepsPerSecond);
      }
      await page.click('#train-pause');
      await trainState(page, ['paused']);
      const d = await trainData(page);
      const median = (a) => a.slice().sort((p, q) => p - q)[a.length >> 1];
      const r = { variant, stepsTo95: at95.reachedStep, secondsTo95: at95.reachedMs / 1000, trainStepSecondsTo95: at95.reachedTrainMs / 1000,
        stepsPerSecond: median(wall), trainStepOnlyStepsPerSecond: median(inside), samples: { wall, inside }, steps: d.step, warmUpMs: d.warmUpMs,
        batch: 32, T: 6, E: 16, heads: 2, lr: 0.01 };
      results.push(r);
      console.log(`part 5 speed [${variant}]: ${r.stepsPerSecond.toFixed(0)} steps/s (with evaluation and drawing), ` +
        `${r.trainStepOnlyStepsPerSecond.toFixed(0)} steps/s counting only trainStep (medians of 1-s windows); ` +
        `95 % at step ${r.stepsTo95} after ${r.secondsTo95.toFixed(2)} s (${r.trainStepSecondsTo95.toFixed(2)} s inside trainStep; evaluated every 10 steps)`);
      assert.equal(d.variant, variant);
      assert.ok(r.stepsPerSecond > 0 && r.stepsTo95 > 0);
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  }
  fs.writeFileSync(path.join(ROOT, 'build', 'train-speed.json'),
    JSON.stringify({ date: new Date().toISOString(), cores: os.cpus().length, loadavg: os.loadavg(), results }, null, 2) + '\n');
});
