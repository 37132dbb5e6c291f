// Shared set-up of the demo page's end-to-end tests (tests/e2e/*.test.mjs): serves the repository with
// scripts/serve.mjs on a free port and drives Debian's /usr/bin/chromium with npm playwright-core (no browser
// downloads). Each test file calls setUp() once; open() gives a page that has finished mounting, with its
// console errors, page errors, failed requests (any requestfailed event, net::ERR_ABORTED included) and HTTP errors
// collected, and the requests that finished ('METHOD /path'). Screenshots go to build/screenshots/.

import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SHOTS = path.join(ROOT, 'build', 'screenshots');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
/** The page's parts, in the tutorial's order (web/demo/main.js PARTS). */
export const PARTS = [
  'simple',
  'why',
  'dot',
  'dk',
  'sbs',
  'cross',
  'heads',
  'mha',
  'decode',
  'myths',
  'pitfalls',
  'train',
  'poem',
  'explain',
  'couplet',
  'speed',
  'model',
];

export const ctx = { base: null, browser: null, tmp: null };

/** options.isolation (default true): false serves without COOP/COEP (scripts/serve.mjs --no-isolation). */
export function setUp({ isolation = true } = {}) {
  let server;
  before(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    ctx.tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'attnlab-e2e-'));
    const flags = isolation ? [] : ['--no-isolation'];
    server = spawn(process.execPath, [path.join(ROOT, 'scripts', 'serve.mjs'), ...flags], {
      env: { ...process.env, PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    ctx.base = await new Promise((resolve, reject) => {
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
      server.stderr.on('data', (d) => {
        out += d;
      });
      server.on('exit', (code) => reject(new Error(`serve.mjs exited (${code}): ${out}`)));
    });
    ctx.browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
  });
  after(async () => {
    if (ctx.browser) await ctx.browser.close();
    if (server) server.kill('SIGTERM');
    if (ctx.tmp) fs.rmSync(ctx.tmp, { recursive: true, force: true });
  });
}

/** Open the page (query: '?lang=en…'); waits until every part has mounted. */
export async function open(query = '', width = 1280) {
  const page = await ctx.browser.newPage({ viewport: { width, height: 900 } });
  const problems = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  // Every request of a working page completes: a failed one (net::ERR_ABORTED included) is a problem.
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText}`));
  const finished = [];
  page.on('requestfinished', (r) => finished.push(`${r.method()} ${new URL(r.url()).pathname}`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  await page.goto(ctx.base + query);
  await page.waitForFunction(() => document.body.dataset.ready, null, { timeout: 90000 });
  assert.equal(await page.evaluate(() => document.body.dataset.ready), '1', `page not ready: ${problems.join('\n')}`);
  return { page, problems, finished };
}

export const attr = (page, sel, name) => page.$eval(sel, (el, n) => el.getAttribute(n), name);

/** Share of non-white pixels and number of distinct colours in every canvas matched. */
export async function canvasInk(page, sel) {
  return page.$$eval(sel, (cs) =>
    cs.map((c) => {
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let ink = 0;
      const colours = new Set();
      for (let i = 0; i < d.length; i += 4) {
        if (d[i + 3] > 0 && (d[i] < 245 || d[i + 1] < 245 || d[i + 2] < 245)) ink += 1;
        if (i % 64 === 0) colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
      }
      return { ink: ink / (d.length / 4), colours: colours.size, w: c.width, h: c.height };
    }),
  );
}

/** Screenshot of one part: build/screenshots/<part>-<lang>-<width>.png (or a given name). */
export function shot(page, part, name) {
  return page.locator(`#part-${part}`).screenshot({ path: path.join(SHOTS, `${name}.png`) });
}

/**
 * Arms a click on button #stop as soon as #out holds a `tokenSel` (the first generated token): a Stop test.
 * @param {import('playwright-core').Page} page
 */
export const stopAtFirstToken = (page, out, tokenSel, stop) =>
  page.evaluate(
    ([out, tokenSel, stop]) => {
      const box = document.getElementById(out);
      const obs = new MutationObserver(() => {
        if (box.querySelector(tokenSel)) {
          obs.disconnect();
          document.getElementById(stop).click();
        }
      });
      obs.observe(box, { childList: true });
    },
    [out, tokenSel, stop],
  );

/** How far the page is wider than its window (≤ 0: no horizontal scrolling). */
export const overflow = (page) => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

/** Open the page, run fn(page, problems, finished), then check that nothing went wrong on it (console, requests) and
 * close it. */
export async function withPage(query, width, fn) {
  if (typeof width === 'function') [width, fn] = [1280, width];
  const { page, problems, finished } = await open(query, width);
  try {
    await fn(page, problems, finished);
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
}
