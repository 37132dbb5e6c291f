// The page's "Your model" with a real-sized folder (not a test: it loads a 1.2 GB file; docs/benchmarks.md, "A
// Qwen3-0.6B-shaped checkpoint"): serves the repository as the e2e tests do (scripts/serve.mjs, COOP/COEP), opens
// the demo in headless Chromium (/usr/bin/chromium through playwright-core), sets the folder's four files (made by
// `qwen-shaped.mjs make DIR qwen3-0.6b`) on the part's file input, types the tutorial's sentence, generates a few
// tokens greedily and checks that the grid shows numLayers × numHeads heads over the 12 prompt tokens.
//   node scripts/bench/model/qwen-page.mjs DIR [--lang=en|zh] [--max=N] [--variant=simd|simd-threaded|scalar]
// (--variant: the page's ?variant=, default its own choice: simd-threaded where the page is cross-origin isolated).
// Prints one JSON line: the load and generate times, the page's wasm memory (the worker's instance, which holds the
// model, and the page's own), and the Chromium process tree's memory from /proc (summed RSS and PSS of every
// process, and the largest process's RSS; sampled every 250 ms: the peaks, after each step, and after a gc() in the
// page and its workers).
/* global window, document -- the functions handed to page.evaluate and addInitScript run in the page */
import fs from 'node:fs';
import path from 'node:path';

import { chromium } from 'playwright-core';

import { serve } from '../../serve.mjs';
import { repoRoot } from './files.mjs';
import { kSentence } from './qwen-shaped.mjs';

const kFiles = ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'];
const mib = (bytes) => Math.round(bytes / 2 ** 20);

/** The pids under `root` (its descendants, from /proc/<pid>/stat's parent field). */
function descendants(root) {
  const parent = new Map();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const out = [];
  const walk = (p) => {
    for (const [c, pp] of parent) if (pp === p) (out.push(c), walk(c));
  };
  walk(root);
  return out;
}

/** A /proc/<pid> file's "Name: N kB" field in bytes (0 when absent). */
const field = (text, name) => Number(text.match(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm'))?.[1] ?? 0) * 1024;

/** Chromium's processes (this process's descendants): summed RSS and PSS (shared pages split between the processes
 *  that map them), and the largest process's RSS with its --type (renderer, gpu-process, …; browser: none). */
function chromiumMemory() {
  const m = { rss: 0, pss: 0, largest: 0, largestType: '' };
  for (const pid of descendants(process.pid)) {
    try {
      const rss = field(fs.readFileSync(`/proc/${pid}/status`, 'utf8'), 'VmRSS');
      m.rss += rss;
      m.pss += field(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'), 'Pss');
      if (rss > m.largest) {
        m.largest = rss;
        m.largestType = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').match(/--type=([\w-]+)/)?.[1] ?? 'browser';
      }
    } catch {
      // gone meanwhile
    }
  }
  return m;
}

const inMiB = (m) => ({ rssMiB: mib(m.rss), pssMiB: mib(m.pss), largestMiB: mib(m.largest), largest: m.largestType });

/** Samples chromiumMemory() every 250 ms; peak() gives the largest figures so far. */
function memorySampler() {
  const peak = { rss: 0, pss: 0, largest: 0, largestType: '' };
  const sample = () => {
    const m = chromiumMemory();
    peak.rss = Math.max(peak.rss, m.rss);
    peak.pss = Math.max(peak.pss, m.pss);
    if (m.largest > peak.largest) Object.assign(peak, { largest: m.largest, largestType: m.largestType });
    return inMiB(m);
  };
  const timer = setInterval(sample, 250);
  return { sample, peak: () => inMiB(peak), stop: () => clearInterval(timer) };
}

// Before the page's scripts: remember every Worker it starts (the part's attnlab/worker is one), so that the script
// can ask it for its wasm memory through the worker's own protocol (web/src/worker-host.mjs: a call of target 0).
const kRecordWorkers = () => {
  const Base = window.Worker;
  window.benchWorkers = [];
  window.Worker = class extends Base {
    constructor(...args) {
      super(...args);
      window.benchWorkers.push(this);
    }
  };
};

/** Every recorded worker's attn.memoryBytes() (those that answer), and the page's own instance's. */
function wasmMemory(page) {
  return page.evaluate(async () => {
    const ask = (w) =>
      new Promise((resolve) => {
        const id = 2 ** 30;
        const on = (e) => {
          if (e.data?.id !== id) return;
          w.removeEventListener('message', on);
          resolve(e.data.ok ? e.data.value : null);
        };
        w.addEventListener('message', on);
        w.postMessage({ id, op: 'call', target: 0, method: 'memoryBytes', args: [] });
        setTimeout(() => resolve(null), 5000);
      });
    const workers = (await Promise.all(window.benchWorkers.map(ask))).filter((x) => x !== null);
    return { workers, page: window.attnlabDemo.attn.memoryBytes() };
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A full garbage collection in the page and in each of its workers (Chromium runs with --js-flags=--expose-gc); a
 *  threaded build's pthread workers, blocked in Atomics.wait between calls, are given 2 s each and left alone. */
async function collect(page) {
  await page.evaluate(() => globalThis.gc());
  for (const w of page.workers()) await Promise.race([w.evaluate(() => globalThis.gc()), sleep(2000)]);
  await sleep(1000);
}

const ckpt = (page) => page.$eval('#model-ckpt', (el) => ({ ...el.dataset }));

/** Sets the folder's files on the part's input; waits for the load (ready or error). */
async function loadFolder(page, dir) {
  const before = Number((await ckpt(page)).loads ?? 0);
  await page.setInputFiles(
    '#model-file',
    kFiles.map((f) => path.join(dir, f)),
  );
  await page.waitForFunction((n) => Number(document.getElementById('model-ckpt').dataset.loads ?? 0) > n, before, {
    timeout: 600000,
  });
  const d = await ckpt(page);
  if (d.state !== 'ready') throw new Error(`load: ${d.state}: ${await page.textContent('#model-ckpt-msg')}`);
  return page.textContent('#model-ckpt-msg');
}

/** Types the sentence, generates `max` tokens greedily, waits for the grid. */
async function generate(page, max) {
  await page.fill('#model-prompt', kSentence);
  await page.fill('#model-max', String(max));
  await page.fill('#model-temp', '0');
  await page.setChecked('#model-eos', false);
  await page.click('#model-generate');
  await page.waitForFunction(
    () => ['done', 'error'].includes(document.getElementById('model-ckpt').dataset.state),
    null,
    {
      timeout: 600000,
    },
  );
  const d = await ckpt(page);
  if (d.state !== 'done') throw new Error(`generate: ${await page.textContent('#model-ckpt-msg')}`);
  return d;
}

async function main(dir, { lang = 'en', max = '4', variant } = {}) {
  const config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
  const server = await serve(repoRoot, { isolation: true });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--js-flags=--expose-gc'],
  });
  const mem = memorySampler();
  const out = { dir: path.relative(repoRoot, dir), lang };
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.addInitScript(kRecordWorkers);
    await page.goto(`${server.url}/web/demo/?lang=${lang}${variant ? `&variant=${variant}` : ''}`);
    await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 120000 });
    out.variant = await page.evaluate(() => window.attnlabDemo.variant);
    out.memPage = mem.sample();
    let t0 = performance.now();
    out.message = await loadFolder(page, dir);
    out.loadSeconds = +((performance.now() - t0) / 1000).toFixed(1);
    out.memAfterLoad = mem.sample();
    out.memPeakLoading = mem.peak();
    out.wasmAfterLoadMiB = mib(Math.max(...(await wasmMemory(page)).workers));
    t0 = performance.now();
    const d = await generate(page, Number(max));
    out.generateSeconds = +((performance.now() - t0) / 1000).toFixed(1);
    const heads = await page.$$eval('#model-grid .poem-head', (x) => x.length);
    Object.assign(out, { promptTokens: Number(d.promptLen), ids: JSON.parse(d.ids), heads });
    out.gridNote = await page.textContent('#model-grid-note');
    if (out.promptTokens !== 12) throw new Error(`the sentence gave ${out.promptTokens} tokens, not 12`);
    if (heads !== config.num_hidden_layers * config.num_attention_heads) throw new Error(`${heads} heads in the grid`);
    out.memAfterGenerate = mem.sample();
    await collect(page);
    out.memAfterGc = mem.sample();
    const wasm = await wasmMemory(page);
    Object.assign(out, { wasmWorkerMiB: wasm.workers.map(mib), wasmPageMiB: mib(wasm.page), memPeak: mem.peak() });
    if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
  } finally {
    mem.stop();
    await browser.close();
    await server.close();
  }
  console.log(JSON.stringify(out));
}

const [dir, ...flags] = process.argv.slice(2);
if (!dir) {
  console.error('usage: qwen-page.mjs DIR [--lang=en|zh] [--max=N] [--variant=NAME]');
  process.exit(2);
}
await main(path.resolve(dir), Object.fromEntries(flags.map((f) => f.replace(/^--/, '').split('='))));
