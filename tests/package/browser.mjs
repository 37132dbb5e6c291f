// Loads pages of the package-test consumer in headless Chromium (Debian's /usr/bin/chromium driven by
// playwright-core) and checks what each page computed (window.__result). Usage:
//   node tests/package/browser.mjs CONSUMER_DIR /app/dist/index.html /plain/index.html
// Prints one line per page; exits non-zero on any failure.
import { chromium } from 'playwright-core';

import { serve } from './serve.mjs';

const [root, ...pages] = process.argv.slice(2);
if (!root || pages.length === 0) {
  console.error('usage: node browser.mjs CONSUMER_DIR PAGE...');
  process.exit(2);
}

const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const args = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const server = await serve(root);
const browser = await chromium.launch({ executablePath, headless: true, args, timeout: 60_000 });
let failures = 0;
try {
  for (const page of pages) {
    const tab = await browser.newPage();
    const log = [];
    tab.on('console', (m) => log.push(`console.${m.type()}: ${m.text()}`));
    tab.on('pageerror', (e) => log.push(`pageerror: ${e.message}`));
    tab.on('requestfailed', (r) => log.push(`requestfailed: ${r.url()} ${r.failure()?.errorText ?? ''}`));
    tab.on('response', (r) => {
      if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) log.push(`HTTP ${r.status()}: ${r.url()}`);
    });
    const url = server.url + page;
    try {
      await tab.goto(url, { timeout: 30_000 });
      await tab.waitForFunction(() => window.__result, null, { timeout: 60_000 });
      const result = await tab.evaluate(() => window.__result);
      if (result.ok) {
        for (const line of result.lines) console.log(`  ${line}`);
      } else {
        failures++;
        console.log(`FAIL ${page}:\n  ${result.lines.join('\n  ')}`);
      }
    } catch (e) {
      failures++;
      console.log(`FAIL ${page}: ${e.message.split('\n')[0]}`);
    }
    if (failures && log.length) console.log(`  page log of ${page}:\n    ${log.join('\n    ').slice(0, 4000)}`);
    await tab.close();
  }
} finally {
  await browser.close();
  await server.close();
}
process.exit(failures ? 1 : 0);
