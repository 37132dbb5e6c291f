// The Chromium half of the attnlab/worker tests (worker, transformer, transformer_train): one server of the
// repository with COOP/COEP (the threaded build needs them) and one headless Chromium per describe, and a blank page
// of that origin so that the page can import /dist/*.mjs.
import { after, before } from 'node:test';

import { chromium } from 'playwright-core';

import { serve } from '../../scripts/serve.mjs';
import { root } from './helpers.mjs';

/** Call inside a describe: starts the server and the browser before its tests, closes both after them. */
export function setUpChromium() {
  const ctx = { server: null, browser: null };
  before(async () => {
    ctx.server = await serve(root, { isolation: true });
    ctx.browser = await chromium.launch({
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      headless: true,
      args: ['--no-sandbox', '--disable-gpu'],
    });
  });
  after(async () => {
    await ctx.browser?.close();
    await ctx.server?.close();
  });
  return ctx;
}

/**
 * A new page at `/${file}` of ctx's server, answered by the test itself with an empty document titled `title`;
 * `errors` collects the page's uncaught errors (each test expects none).
 */
export async function openBlankPage(ctx, file, title) {
  const page = await ctx.browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const blank = `${ctx.server.url}/${file}`;
  await page.route(blank, (r) =>
    r.fulfill({ contentType: 'text/html', body: `<!doctype html><title>${title}</title>` }),
  );
  await page.goto(blank);
  return { page, errors };
}
