// attnlab/viz's exports and scale in Chromium, on a blank page that loads dist/viz.mjs: toPNG gives a PNG Blob of
// the SVG's size (× scale) whose pixels at cell centres have the cells' weight colours; a 1,024-token headMaps view
// of 12 heads paints its first map, not all 13, hovers the right value, paints the mean of heads when it is scrolled
// into view (computed then), and exports it; a 1,024-token tokenLinks view shows a hovered query's links only and
// announces each head's strongest key.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { ctx, setUp } from './harness.mjs';

setUp({ isolation: false });

/** A blank page of the server's origin with window.viz and window.weights (row-stochastic, seeded). */
async function blankPage() {
  const page = await ctx.browser.newPage({ viewport: { width: 1200, height: 800 } });
  const blank = `${ctx.base}viz-e2e.html`;
  await page.route(blank, (route) =>
    route.fulfill({ contentType: 'text/html', body: '<!doctype html><html><body><div id="host"></div></body></html>' }),
  );
  await page.goto(blank);
  await page.evaluate(async () => {
    window.viz = await import('/dist/viz.mjs');
    const { makeRng } = await import('/tests/js/rng.mjs');
    window.weights = (dims, seed) => {
      const rng = makeRng(seed);
      const S = dims.at(-1);
      const data = new Float32Array(dims.reduce((a, b) => a * b, 1));
      for (let r = 0; r < data.length / S; ++r) {
        let sum = 0;
        for (let j = 0; j < S; ++j) sum += data[r * S + j] = rng() ** 4; // a few strong keys a row
        for (let j = 0; j < S; ++j) data[r * S + j] /= sum;
      }
      return { data, shape: dims };
    };
  });
  return page;
}

describe('attnlab/viz exports and 1,024 tokens (Chromium)', () => {
  test('toPNG: a PNG Blob of the SVG size × scale whose pixels at cell centres are the cells’ colours', async () => {
    const page = await blankPage();
    const r = await page.evaluate(async () => {
      const host = document.getElementById('host');
      const w = window.weights([2, 3, 4], 11);
      const view = window.viz.headMaps(host, w, { queryTokens: ['a', 'b', 'c'], cellSize: 24, average: false });
      const svg = new DOMParser().parseFromString(view.toSVG(), 'image/svg+xml').documentElement;
      const blob = await view.toPNG();
      const big = await view.toPNG({ scale: 2 });
      const badScale = await view.toPNG({ scale: 0 }).catch((e) => `${e.name}: ${e.message}`);
      view.destroy();
      const bitmap = await createImageBitmap(blob);
      const canvas = Object.assign(document.createElement('canvas'), { width: bitmap.width, height: bitmap.height });
      const c2d = canvas.getContext('2d');
      c2d.drawImage(bitmap, 0, 0);
      // Each map's cells: its <g transform="translate(x y) ..."> and the rects inside, in row-major order.
      const samples = [];
      for (const [h, g] of [...svg.querySelectorAll('g[transform]')].entries()) {
        const [x0, y0] = g
          .getAttribute('transform')
          .match(/[\d.]+/g)
          .map(Number);
        const rects = [...g.querySelectorAll('rect')].filter((e) => e.getAttribute('fill').startsWith('rgb('));
        for (const k of [0, 5, 11]) {
          const e = rects[k];
          const x = Math.floor(x0 + Number(e.getAttribute('x')) + 11);
          const y = Math.floor(y0 + Number(e.getAttribute('y')) + 11);
          const expected = window.viz
            .weightColour(w.data[h * 12 + k])
            .match(/\d+/g)
            .map(Number);
          samples.push({ expected, got: [...c2d.getImageData(x, y, 1, 1).data.slice(0, 3)] });
        }
      }
      const head = [...new Uint8Array(await blob.slice(0, 8).arrayBuffer())];
      const bigBitmap = await createImageBitmap(big);
      return {
        type: blob.type,
        head,
        size: [bitmap.width, bitmap.height],
        svgSize: [Number(svg.getAttribute('width')), Number(svg.getAttribute('height'))],
        bigSize: [bigBitmap.width, bigBitmap.height],
        samples,
        badScale,
      };
    });
    await page.close();
    assert.equal(r.type, 'image/png');
    assert.deepEqual(r.head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'the PNG signature');
    assert.deepEqual(r.size, r.svgSize);
    assert.deepEqual(r.bigSize, [r.svgSize[0] * 2, r.svgSize[1] * 2]);
    assert.equal(r.samples.length, 6);
    for (const { expected, got } of r.samples) {
      for (let c = 0; c < 3; ++c) assert.ok(Math.abs(expected[c] - got[c]) <= 2, `pixel ${got} vs ${expected}`);
    }
    assert.match(r.badScale, /^RangeError: toPNG: scale must be a positive number/);
  });

  test('a 12-head headMaps view at T = 1,024 paints on demand, hovers the right value and exports', async () => {
    const page = await blankPage();
    await page.evaluate(() => {
      window.w = window.weights([12, 1024, 1024], 12);
      window.view = window.viz.headMaps(document.getElementById('host'), window.w);
    });
    await page.waitForFunction(() => Number(window.view.element.dataset.painted) >= 1);
    const r = await page.evaluate(() => {
      const { view, w } = window;
      const canvases = [...view.element.querySelectorAll('canvas')];
      const hover = (canvas, i, j) => {
        const b = canvas.getBoundingClientRect();
        // 1 px cells (1,024 px maps, no labels), one px of border right and below
        canvas.dispatchEvent(new MouseEvent('mousemove', { clientX: b.left + j + 0.5, clientY: b.top + i + 0.5 }));
        return view.element.querySelector('.attnlab-viz-tip').textContent;
      };
      canvases[0].focus();
      for (const key of ['ArrowDown', 'ArrowDown', 'ArrowRight']) {
        canvases[0].dispatchEvent(new KeyboardEvent('keydown', { key }));
      }
      const said = view.element.querySelector('.attnlab-viz-live').textContent;
      const corner = canvases[0].getContext('2d').getImageData(0, 0, 8, 8).data;
      let red = 0;
      for (let k = 0; k < corner.length; k += 4) red += corner[k] > 200 && corner[k + 1] < 60 && corner[k + 2] < 60;
      for (const key of ['PageDown', 'PageDown', 'End'])
        canvases[0].dispatchEvent(new KeyboardEvent('keydown', { key }));
      const jumped = view.element.querySelector('.attnlab-viz-live').textContent;
      return {
        said,
        saidExpected: w.data[1 * 1024 + 1].toFixed(4),
        jumped,
        jumpedExpected: w.data[129 * 1024 + 1023].toFixed(4),
        red,
        maps: canvases.length,
        painted: Number(view.element.dataset.painted),
        cells: view.element.dataset.cells,
        size: [canvases[0].width, canvases[0].height],
        hover: hover(canvases[0], 517, 803),
        expected: w.data[517 * 1024 + 803].toFixed(4),
      };
    });
    assert.equal(r.maps, 13);
    assert.ok(r.painted >= 1 && r.painted < 13, `${r.painted} maps painted at first, not all 13`);
    assert.equal(r.cells, String(13 * 1024 * 1024));
    assert.deepEqual(r.size, [1026, 1026]);
    assert.equal(r.hover, `head 0: query 517 → key 803: ${r.expected}`);
    assert.equal(r.said, `head 0: query 1 → key 1: ${r.saidExpected}`, 'arrow keys move a cursor cell by cell');
    assert.equal(r.jumped, `head 0: query 129 → key 1023: ${r.jumpedExpected}`, 'PageDown: 64 rows; End: the last key');
    assert.ok(r.red >= 4, `the cursor is visible on 1 px cells (${r.red} red pixels)`);
    // Scrolled to the mean of heads: it is computed and painted then; its value is the heads' mean.
    await page.evaluate(() => [...window.view.element.querySelectorAll('canvas')].at(-1).scrollIntoView());
    await page.waitForFunction(() => {
      const last = [...window.view.element.querySelectorAll('canvas')].at(-1);
      return last.dataset.rows === '1024';
    });
    const mean = await page.evaluate(() => {
      const { view, w } = window;
      const last = [...view.element.querySelectorAll('canvas')].at(-1);
      const b = last.getBoundingClientRect();
      last.dispatchEvent(new MouseEvent('mousemove', { clientX: b.left + 40.5, clientY: b.top + 1000.5 }));
      let sum = 0;
      for (let h = 0; h < 12; ++h) sum += w.data[h * 1024 * 1024 + 1000 * 1024 + 40];
      const svg = view.toSVG();
      const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
      view.destroy();
      return {
        tip: view.element.querySelector('.attnlab-viz-tip').textContent,
        expected: sum / 12,
        images: doc.querySelectorAll('image').length,
        errors: doc.getElementsByTagName('parsererror').length,
      };
    });
    await page.close();
    const m = mean.tip.match(/^mean of heads: query 1000 → key 40: (\d\.\d{4})$/);
    assert.ok(m, mean.tip);
    assert.ok(Math.abs(Number(m[1]) - mean.expected) <= 6e-5, `${m[1]} vs ${mean.expected}`);
    assert.equal(mean.errors, 0);
    assert.equal(mean.images, 13, 'every map exported, as one image each');
  });

  test('tokenLinks at T = 1,024: hovering a query shows its links only and each head’s strongest key', async () => {
    const page = await blankPage();
    const r = await page.evaluate(() => {
      const T = 1024;
      const w = window.weights([4, T, T], 13);
      const view = window.viz.tokenLinks(document.getElementById('host'), w, { threshold: 0.005 });
      const all = Number(view.element.dataset.links);
      const canvas = view.element.querySelector('canvas');
      const b = canvas.getBoundingClientRect();
      const i = 733;
      canvas.dispatchEvent(new MouseEvent('mousemove', { clientX: b.left + 50, clientY: b.top + 4 + i * 20 + 10 }));
      const links = Number(view.element.dataset.links);
      const said = view.element.querySelector('.attnlab-viz-live').textContent;
      view.destroy();
      // The reference: count and argmax of row i of every head, straight from the weights.
      let expected = 0;
      let expectedAll = 0;
      const best = [];
      for (let h = 0; h < 4; ++h) {
        let k = 0;
        for (let j = 0; j < T; ++j) {
          const v = w.data[(h * T + i) * T + j];
          if (v >= 0.005) expected += 1;
          if (v > w.data[(h * T + i) * T + k]) k = j;
        }
        best.push(`head ${h} → ${k} ${w.data[(h * T + i) * T + k].toFixed(3)}`);
      }
      for (const v of w.data) if (v >= 0.005) expectedAll += 1;
      return { all, expectedAll, links, expected, said, best: `query ${i}: ${best.join('; ')}` };
    });
    await page.close();
    assert.equal(r.all, r.expectedAll);
    assert.equal(r.links, r.expected);
    assert.ok(r.expected > 0);
    assert.equal(r.said, r.best);
  });
});
