// The browser half of the package test's bundler matrix: serves one consumer build the way its tool does, loads
// its page in headless Chromium (Debian's /usr/bin/chromium driven by playwright-core) and checks what the page
// computed (window.__result, see consumer/check.mjs). Usage:
//   node tests/package/browser.mjs CONSUMER_DIR CASE      CASE: one of the keys of kCases below
// Prints the page's lines; exits non-zero on a failure.
import { createRequire } from 'node:module';
import { createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

import { serve } from './serve.mjs';

const [root, name] = process.argv.slice(2);

// Loads a tool installed in the consumer folder (pinned by its package-lock.json), not the repository's copy.
async function tool(pkg) {
  const require = createRequire(join(root, 'package.json'));
  const entry = require.resolve(pkg);
  return import(pathToFileURL(entry).href);
}

// A static server of the consumer folder: `page` on it (with the COOP/COEP headers when `isolation`: then the page
// and its worker run the threaded variant too).
const staticPage =
  (page, isolation = false) =>
  async () => {
    const server = await serve(root, { isolation });
    return { urls: [server.url + page], close: server.close };
  };

/** A port free right now (Vite treats port 0 as "its default"). */
function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createNetServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
    probe.on('error', reject);
  });
}

/** A Vite dev server of consumer/app/ with `config` (a file in app/, or false for none). */
async function viteDev(pkg, config) {
  const vite = await tool(pkg);
  const server = await vite.createServer({
    root: join(root, 'app'),
    configFile: config && join(root, 'app', config),
    cacheDir: join(root, 'node_modules', `.vite-${pkg}-${config || 'none'}`), // one pre-bundle cache per setup
    logLevel: 'warn',
    server: { host: '127.0.0.1', port: await freePort(), strictPort: true },
  });
  await server.listen();
  return { url: server.resolvedUrls.local[0], close: () => server.close() };
}

const kCases = {
  // Vite 8's dev server needs no configuration at all.
  'vite8-dev': async () => {
    const dev = await viteDev('vite', false);
    return { urls: [dev.url], close: dev.close };
  },
  // Vite 7's needs docs/bundlers.md's optimizeDeps.exclude: without it the page fails.
  'vite7-dev': async () => {
    const [dev, plain] = [await viteDev('vite7', 'vite7.config.mjs'), await viteDev('vite7', false)];
    return { urls: [dev.url], mustFail: [plain.url], close: () => Promise.all([dev.close(), plain.close()]) };
  },
  'vite8-preview': async () => {
    const vite = await tool('vite');
    const server = await vite.preview({
      root: join(root, 'app'),
      configFile: join(root, 'app', 'vite.config.mjs'),
      preview: { host: '127.0.0.1', port: await freePort(), strictPort: true },
    });
    return { urls: [server.resolvedUrls.local[0]], close: () => new Promise((done) => server.httpServer.close(done)) };
  },
  webpack: staticPage('/webpack/index.html'),
  esbuild: staticPage('/esbuild/index.html'),
  rollup: staticPage('/rollup/index.html'),
  'import-map': staticPage('/plain/index.html'),
  'import-map-isolated': staticPage('/plain/index.html', true),
  // npm run build:demo's build/site/, served under a sub-path (/site/) of a plain static server.
  site: async () => {
    const server = await serve(join(root, '..'), { isolation: false });
    return { urls: [`${server.url}/site/`], close: server.close, ready: demoReady };
  },
  'cross-origin': async () => {
    // The page on one origin; the package on two others, with and without CORS headers.
    const page = await serve(root);
    const cdn = await serve(join(root, 'node_modules'), { cors: true });
    const noCors = await serve(join(root, 'node_modules'), { isolation: false });
    const at = (from) => `${page.url}/cross-origin/index.html?from=${encodeURIComponent(from.url + '/')}`;
    return {
      urls: [at(cdn)],
      mustFail: [at(noCors)],
      close: () => Promise.all([page.close(), cdn.close(), noCors.close()]),
    };
  },
};

// The demo page is ready when every part mounted (web/demo/main.js sets data-ready); it reports the package version.
function demoReady() {
  const ready = document.body.dataset.ready;
  if (!ready) return undefined;
  const parts = [...document.querySelectorAll('[data-ready]')].filter((el) => el !== document.body);
  const failed = parts.filter((el) => el.dataset.ready !== '1').map((el) => el.id);
  const attn = window.attnlabDemo?.attn;
  return {
    ok: ready === '1' && failed.length === 0 && parts.length > 0,
    lines: [
      `demo page: ${parts.length} parts mounted, failed: [${failed}], attnlab ${attn?.version} (${attn?.variant})`,
    ],
  };
}

if (!kCases[name]) {
  console.error(`usage: node browser.mjs CONSUMER_DIR CASE (CASE: ${Object.keys(kCases).join(', ')})`);
  process.exit(2);
}

/** Loads `url` and waits for `ready()` (run in the page) to return a result; resolves to { ok, lines, log }. */
async function load(browser, url, ready = () => window.__result) {
  const tab = await browser.newPage();
  const log = [];
  tab.on('console', (m) => log.push(`console.${m.type()}: ${m.text()}`));
  tab.on('pageerror', (e) => log.push(`pageerror: ${e.message}`));
  tab.on('requestfailed', (r) => log.push(`requestfailed: ${r.url()} ${r.failure()?.errorText ?? ''}`));
  tab.on('response', (r) => {
    if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) log.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  try {
    await tab.goto(url, { timeout: 30_000 });
    const result = await (await tab.waitForFunction(ready, null, { timeout: 60_000 })).jsonValue();
    const bad = log.filter((line) => line.startsWith('HTTP ') || line.startsWith('pageerror'));
    if (bad.length) return { ok: false, lines: [...result.lines, ...bad], log };
    return { ...result, log };
  } catch (e) {
    return { ok: false, lines: [e.message.split('\n')[0]], log };
  } finally {
    await tab.close();
  }
}

const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const args = ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'];
const site = await kCases[name]();
const browser = await chromium.launch({ executablePath, headless: true, args, timeout: 60_000 });
let failures = 0;
try {
  for (const url of site.urls) {
    const r = await load(browser, url, site.ready);
    console.log(`${r.ok ? 'ok' : 'FAIL'} ${url}\n  ${r.lines.join('\n  ')}`);
    if (!r.ok) {
      failures++;
      console.log(`  page log:\n    ${r.log.join('\n    ').slice(0, 4000)}`);
    }
  }
  for (const url of site.mustFail ?? []) {
    const r = await load(browser, url);
    console.log(`${r.ok ? 'FAIL (loaded, but should not)' : 'ok (fails as it must)'} ${url}\n  ${r.lines[0]}`);
    if (r.ok) failures++;
  }
} finally {
  await browser.close();
  await site.close();
}
process.exit(failures ? 1 : 0);
