// How attnlab/viz's views behave at T = 1,024 in Chromium (/usr/bin/chromium, or $CHROMIUM, through npm
// playwright-core), for docs/benchmarks.md ("Views at 1,024 tokens"): a 12-layer × 12-head model's attention maps
// (seeded random rows, a few strong keys each) on a blank page that loads dist/viz.mjs.
//   headMaps of one layer (12 heads + their mean): the call, its first map painted, the next frame; hover and
//     arrow-key handler times on a 1,024 × 1,024 map; toSVG and toPNG of the view
//   modelGrid of all 144 maps: its first thumbnail painted, all thumbnails near the viewport painted, and the longest
//     gap between frames meanwhile (how long the page could not respond)
// Medians of RUNS runs (default 5; each a fresh view), CPU from lscpu. Needs dist/ (npm run build, or a copy).
// Usage: node scripts/bench/viz.mjs [--runs N] [--json build/bench/viz.json]
/* global window, document, MutationObserver, requestAnimationFrame, MouseEvent, KeyboardEvent -- in the page */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

import { serve } from '../serve.mjs';
import { fmtMs, log, median } from './stats.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const RUNS = Number(arg('--runs', 5));
const JSON_OUT = arg('--json', path.join(ROOT, 'build', 'bench', 'viz.json'));
const T = 1024;
const LAYERS = 12;
const HEADS = 12;

/** In the page: window.viz, the weights (one { data, dims: [1, H, T, T] } a layer) and the timing helpers. */
async function setUpPage(page) {
  await page.evaluate(
    async ({ T, LAYERS, HEADS }) => {
      window.viz = await import('/dist/viz.mjs');
      const { makeRng } = await import('/tests/js/rng.mjs');
      const rng = makeRng(2026);
      window.layers = Array.from({ length: LAYERS }, () => {
        const data = new Float32Array(HEADS * T * T);
        for (let r = 0; r < HEADS * T; ++r) {
          let sum = 0;
          for (let j = 0; j < T; ++j) sum += data[r * T + j] = rng() ** 8;
          for (let j = 0; j < T; ++j) data[r * T + j] /= sum;
        }
        return { data, dims: [1, HEADS, T, T] };
      });
      window.untilPainted = (view, n) =>
        new Promise((resolve) => {
          if (Number(view.element.dataset.painted) >= n) return resolve(performance.now());
          const mo = new MutationObserver(() => {
            if (Number(view.element.dataset.painted) < n) return;
            mo.disconnect();
            resolve(performance.now());
          });
          mo.observe(view.element, { attributes: true, attributeFilter: ['data-painted'] });
        });
      window.median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
      window.fresh = () => {
        const host = document.getElementById('host');
        host.replaceChildren();
        window.scrollTo(0, 0);
        return host;
      };
      window.frame = () => new Promise((resolve) => requestAnimationFrame(() => resolve(performance.now())));
    },
    { T, LAYERS, HEADS },
  );
}

/** One headMaps run: first paint, hover and key handler times, exports. */
function headMapsRun(page) {
  return page.evaluate(async (T) => {
    const host = window.fresh();
    const t0 = performance.now();
    const view = window.viz.headMaps(host, window.layers[0]);
    const call = performance.now() - t0;
    const first = (await window.untilPainted(view, 1)) - t0;
    const frame = (await window.frame()) - t0;
    const painted = Number(view.element.dataset.painted);
    const canvas = view.element.querySelector('canvas');
    const b = canvas.getBoundingClientRect();
    const hover = [];
    for (let k = 0; k < 200; ++k) {
      const s = performance.now();
      const at = { clientX: b.left + ((k * 389) % T) + 0.5, clientY: b.top + ((k * 571) % T) + 0.5 };
      canvas.dispatchEvent(new MouseEvent('mousemove', at));
      hover.push(performance.now() - s);
    }
    canvas.focus();
    const key = [];
    for (let k = 0; k < 20; ++k) {
      const s = performance.now();
      canvas.dispatchEvent(new KeyboardEvent('keydown', { key: k % 2 ? 'ArrowRight' : 'ArrowDown' }));
      key.push(performance.now() - s);
    }
    let s = performance.now();
    const svg = view.toSVG();
    const toSVG = performance.now() - s;
    s = performance.now();
    const png = await view.toPNG();
    const toPNG = performance.now() - s;
    view.destroy();
    return {
      call,
      first,
      frame,
      painted,
      hover: window.median(hover),
      key: window.median(key),
      toSVG,
      toPNG,
      svgMiB: svg.length / 2 ** 20,
      pngMiB: png.size / 2 ** 20,
    };
  }, T);
}

/** One modelGrid run: first thumbnail, all near the viewport painted, the longest frame gap meanwhile. */
function gridRun(page) {
  return page.evaluate(async () => {
    const host = window.fresh();
    const t0 = performance.now();
    const view = window.viz.modelGrid(host, window.layers);
    const first = (await window.untilPainted(view, 1)) - t0;
    // Frames until no thumbnail has been painted for 300 ms.
    let last = performance.now();
    let count = Number(view.element.dataset.painted);
    let changed = last;
    let gap = 0;
    while (last - changed < 300) {
      const now = await window.frame();
      gap = Math.max(gap, now - last);
      last = now;
      const c = Number(view.element.dataset.painted);
      if (c !== count) [count, changed] = [c, now];
    }
    const hoverCanvas = view.element.querySelector('canvas');
    const b = hoverCanvas.getBoundingClientRect();
    const s = performance.now();
    hoverCanvas.dispatchEvent(new MouseEvent('mousemove', { clientX: b.left + 40, clientY: b.top + 40 }));
    const hover = performance.now() - s;
    view.destroy();
    return { first, all: changed - t0, painted: count, gap, hover };
  });
}

/** One tokenLinks run (one layer): the first paint (every link at least 0.01), hovering queries, leaving. */
function linksRun(page) {
  return page.evaluate(async (T) => {
    const host = window.fresh();
    const t0 = performance.now();
    const view = window.viz.tokenLinks(host, window.layers[0]);
    const first = performance.now() - t0;
    const links = Number(view.element.dataset.links);
    const canvas = view.element.querySelector('canvas');
    const b = canvas.getBoundingClientRect();
    const hover = [];
    for (let k = 0; k < 50; ++k) {
      const s = performance.now();
      const y = b.top + 4 + ((k * 389) % T) * 20 + 10;
      canvas.dispatchEvent(new MouseEvent('mousemove', { clientX: b.left + 50, clientY: y }));
      hover.push(performance.now() - s);
    }
    const s = performance.now();
    canvas.dispatchEvent(new MouseEvent('mouseleave'));
    const leave = performance.now() - s;
    view.destroy();
    return { first, links, hover: window.median(hover), leave };
  }, T);
}

/** Medians of each field over runs. */
const medians = (runs) => Object.fromEntries(Object.keys(runs[0]).map((k) => [k, median(runs.map((r) => r[k]))]));

async function main() {
  const cpu = execFileSync('lscpu', { encoding: 'utf8' }).match(/Model name:\s*(.+)/)?.[1] ?? 'unknown';
  const server = await serve(ROOT, { isolation: false });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const blank = `${server.url}/viz-bench.html`;
    const body = '<!doctype html><html><body style="margin:8px"><div id="host"></div></body></html>';
    await page.route(blank, (route) => route.fulfill({ contentType: 'text/html', body }));
    await page.goto(blank);
    log(`viz bench: generating ${LAYERS} × ${HEADS} maps at T = ${T} ...`);
    await setUpPage(page);
    const maps = [];
    for (let i = 0; i < RUNS; ++i) maps.push(await headMapsRun(page));
    const grids = [];
    for (let i = 0; i < RUNS; ++i) grids.push(await gridRun(page));
    const links = [];
    for (let i = 0; i < RUNS; ++i) links.push(await linksRun(page));
    const [headMaps, modelGrid, tokenLinks] = [maps, grids, links].map(medians);
    report({ cpu, chromium: browser.version(), runs: RUNS, headMaps, modelGrid, tokenLinks });
  } finally {
    await browser.close();
    await server.close();
  }
}

/** Prints the table (markdown) and writes the JSON. */
function report(r) {
  const h = r.headMaps;
  const g = r.modelGrid;
  const lines = [
    `Chromium ${r.chromium}, CPU ${r.cpu}; medians of ${r.runs} runs; T = ${T}, ${LAYERS} layers × ${HEADS} heads`,
    '',
    '| view | measure | time |',
    '|---|---|---:|',
    `| headMaps (1 layer) | call returns | ${fmtMs(h.call)} ms |`,
    `| headMaps | first map painted (${h.painted} of ${HEADS + 1} by the next frame) | ${fmtMs(h.first)} ms |`,
    `| headMaps | next frame | ${fmtMs(h.frame)} ms |`,
    `| headMaps | hover handler (median of 200) | ${fmtMs(h.hover)} ms |`,
    `| headMaps | arrow key (cursor repaint, median of 20) | ${fmtMs(h.key)} ms |`,
    `| headMaps | toSVG (all 13 maps; ${h.svgMiB.toFixed(1)} MiB) | ${fmtMs(h.toSVG)} ms |`,
    `| headMaps | toPNG (${h.pngMiB.toFixed(1)} MiB) | ${fmtMs(h.toPNG)} ms |`,
    `| modelGrid (144 maps) | first thumbnail painted | ${fmtMs(g.first)} ms |`,
    `| modelGrid | ${g.painted} thumbnails near the viewport painted | ${fmtMs(g.all)} ms |`,
    `| modelGrid | longest frame gap meanwhile | ${fmtMs(g.gap)} ms |`,
    `| modelGrid | hover handler | ${fmtMs(g.hover)} ms |`,
    `| tokenLinks (1 layer) | first paint (${r.tokenLinks.links} links ≥ 0.01) | ${fmtMs(r.tokenLinks.first)} ms |`,
    `| tokenLinks | hover a query (its links only; median of 50) | ${fmtMs(r.tokenLinks.hover)} ms |`,
    `| tokenLinks | mouse leaves (all links again) | ${fmtMs(r.tokenLinks.leave)} ms |`,
  ];
  console.log(lines.join('\n'));
  fs.mkdirSync(path.dirname(JSON_OUT), { recursive: true });
  fs.writeFileSync(JSON_OUT, `${JSON.stringify(r, null, 2)}\n`);
  log(`wrote ${path.relative(ROOT, JSON_OUT)}`);
}

await main();
