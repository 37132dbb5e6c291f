// attnlab/viz (web/src/viz.mjs) in headless Chromium, on a plain page that loads dist/viz.mjs and nothing else of
// attnlab (beside the tests' seeded generator): cells and links drawn for given shapes, update, hover and keyboard read-outs, destroy leaving no listener,
// named errors, and a colour ramp whose lightness rises monotonically (readable without hue).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { chromium } from 'playwright-core';

import { serve } from '../../scripts/serve.mjs';
import { root } from './helpers.mjs';

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

describe('attnlab/viz in Chromium', () => {
  let server;
  let browser;
  let page;
  const requests = [];

  before(async () => {
    server = await serve(root, { isolation: false });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu'],
    });
    page = await browser.newPage({ viewport: { width: 1000, height: 800 } });
    page.on('request', (r) => requests.push(new URL(r.url()).pathname));
    // A blank page of the server's origin (answered by the test itself), so that /dist/viz.mjs is same-origin.
    const blank = `${server.url}/viz-test.html`;
    await page.route(blank, (route) =>
      route.fulfill({
        contentType: 'text/html',
        body: '<!doctype html><html><body><div id="host"></div></body></html>',
      }),
    );
    await page.goto(blank);
    // Count listeners added minus removed, page-wide, before viz.mjs is loaded.
    await page.evaluate(async () => {
      const add = EventTarget.prototype.addEventListener;
      const remove = EventTarget.prototype.removeEventListener;
      window.netListeners = 0;
      EventTarget.prototype.addEventListener = function (...args) {
        window.netListeners += 1;
        return add.apply(this, args);
      };
      EventTarget.prototype.removeEventListener = function (...args) {
        window.netListeners -= 1;
        return remove.apply(this, args);
      };
      window.viz = await import('/dist/viz.mjs');
      // What viz.mjs loaded, before the tests' generator adds its own modules.
      window.vizModules = performance
        .getEntriesByType('resource')
        .map((e) => new URL(e.name).pathname)
        .filter((p) => p.startsWith('/dist/'));
      const { makeRng } = await import('/tests/js/rng.mjs'); // the tests' one seeded generator
      window.weights = (dims, seed = 1) => {
        // Row-stochastic weights: each last-dimension row sums to 1.
        const rng = makeRng(seed);
        const n = dims.reduce((a, b) => a * b, 1);
        const data = Float32Array.from({ length: n }, () => rng() + 0.01);
        const S = dims.at(-1);
        for (let r = 0; r < n / S; ++r) {
          let sum = 0;
          for (let j = 0; j < S; ++j) sum += data[r * S + j];
          for (let j = 0; j < S; ++j) data[r * S + j] /= sum;
        }
        return { data, shape: dims };
      };
    });
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test('headMaps draws H maps plus their mean, accepts { data, dims } with a batch of one, and updates', async () => {
    const r = await page.evaluate(() => {
      const host = document.getElementById('host');
      const w = window.weights([3, 4, 5]);
      const view = window.viz.headMaps(host, w, {
        queryTokens: ['a', 'b', 'c', 'd'],
        keyTokens: ['p', 'q', 'r', 's', 't'],
      });
      const first = {
        canvases: host.querySelectorAll('canvas').length,
        cells: view.element.dataset.cells,
        captions: [...host.querySelectorAll('figcaption')].map((c) => c.textContent),
      };
      view.update({ data: window.weights([1, 2, 6, 6]).data, dims: [1, 2, 6, 6] });
      const second = { canvases: host.querySelectorAll('canvas').length, cells: view.element.dataset.cells };
      view.destroy();
      const noMean = window.viz.headMaps(host, w, { average: false });
      const third = host.querySelectorAll('canvas').length;
      noMean.destroy();
      return { first, second, third, left: host.childElementCount };
    });
    assert.deepEqual(r.first, { canvases: 4, cells: '80', captions: ['head 0', 'head 1', 'head 2', 'mean of heads'] });
    assert.deepEqual(r.second, { canvases: 3, cells: '108' });
    assert.equal(r.third, 3);
    assert.equal(r.left, 0);
  });

  test("hover shows the cell's number; arrow keys move a cursor and announce the value", async () => {
    const r = await page.evaluate(() => {
      const host = document.getElementById('host');
      const w = window.weights([2, 3, 4], 5);
      const view = window.viz.headMaps(host, w, {
        queryTokens: ['x', 'y', 'z'],
        keyTokens: ['k0', 'k1', 'k2', 'k3'],
        cellSize: 20,
      });
      const canvas = host.querySelector('canvas');
      const tip = host.querySelector('.attnlab-viz-tip');
      const live = host.querySelector('.attnlab-viz-live');
      // Cell (row 1, column 2): 20 px cells after the label margins, with a 2 px border right and below.
      const box = canvas.getBoundingClientRect();
      const left = box.width - 2 - 4 * 20;
      const top = box.height - 2 - 3 * 20;
      canvas.dispatchEvent(
        new MouseEvent('mousemove', { clientX: box.left + left + 2.5 * 20, clientY: box.top + top + 1.5 * 20 }),
      );
      const hover = tip.textContent;
      canvas.focus();
      canvas.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowDown', bubbles: true }));
      const firstKey = live.textContent;
      canvas.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true }));
      const secondKey = live.textContent;
      const tabbable = canvas.tabIndex === 0;
      view.destroy();
      return {
        hover,
        firstKey,
        secondKey,
        tabbable,
        v12: w.data[1 * 4 + 2].toFixed(4),
        v00: w.data[0].toFixed(4),
        v01: w.data[1].toFixed(4),
      };
    });
    assert.equal(r.hover, `head 0: query y → key k2: ${r.v12}`);
    assert.equal(r.firstKey, `head 0: query x → key k0: ${r.v00}`);
    assert.equal(r.secondKey, `head 0: query x → key k1: ${r.v01}`);
    assert.ok(r.tabbable);
  });

  test('tokenLinks draws one link per (head, query, key), toggles heads, and focuses one query', async () => {
    const r = await page.evaluate(() => {
      const host = document.getElementById('host');
      const view = window.viz.tokenLinks(host, window.weights([3, 4, 5]), { threshold: 0 });
      const all = view.element.dataset.links;
      host.querySelector('button').click(); // hide head 0
      const twoHeads = view.element.dataset.links;
      const canvas = host.querySelector('canvas');
      canvas.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowDown' }));
      const oneQuery = view.element.dataset.links;
      const announced = host.querySelector('.attnlab-viz-live').textContent;
      const pressed = host.querySelector('button').getAttribute('aria-pressed');
      view.destroy();
      return { all, twoHeads, oneQuery, announced, pressed };
    });
    assert.deepEqual([r.all, r.twoHeads, r.oneQuery], ['60', '40', '10']);
    assert.equal(r.pressed, 'false');
    assert.match(r.announced, /^query 0: head 1 → \d .*; head 2 → \d [^;]*$/); // hidden head 0 not announced
  });

  test('modelGrid draws layers × heads maps from one tensor or a per-layer array', async () => {
    const r = await page.evaluate(() => {
      const host = document.getElementById('host');
      const view = window.viz.modelGrid(host, window.weights([2, 3, 4, 4]));
      const one = { canvases: host.querySelectorAll('canvas').length, cells: view.element.dataset.cells };
      const layers = [
        window.weights([1, 3, 4, 4], 2),
        window.weights([1, 3, 4, 4], 3),
        window.weights([1, 3, 4, 4], 4),
      ];
      view.update(layers.map((l) => ({ data: l.data, dims: l.shape })));
      const array = { canvases: host.querySelectorAll('canvas').length, cells: view.element.dataset.cells };
      view.destroy();
      return { one, array };
    });
    assert.deepEqual(r.one, { canvases: 6, cells: '96' });
    assert.deepEqual(r.array, { canvases: 9, cells: '144' });
  });

  test('destroy leaves no element and no listener behind', async () => {
    const r = await page.evaluate(() => {
      const host = document.getElementById('host');
      const before = window.netListeners;
      const views = [
        window.viz.headMaps(host, window.weights([2, 3, 3])),
        window.viz.tokenLinks(host, window.weights([2, 3, 3])),
        window.viz.modelGrid(host, window.weights([2, 2, 3, 3])),
      ];
      views[0].update(window.weights([4, 3, 3]));
      const during = window.netListeners - before;
      views.forEach((v) => v.destroy());
      return { during, after: window.netListeners - before, children: host.childElementCount };
    });
    assert.ok(r.during > 0, 'the views listen while they live');
    assert.equal(r.after, 0, 'every listener added was removed');
    assert.equal(r.children, 0);
  });

  test('bad weights and elements are named errors', async () => {
    const r = await page.evaluate(() => {
      const host = document.getElementById('host');
      const attempt = (fn) => {
        try {
          fn();
          return 'no error';
        } catch (e) {
          return `${e.name}: ${e.message}`;
        }
      };
      return [
        attempt(() => window.viz.headMaps(host, { data: [0.5, 0.5], shape: [1, 1, 2] })),
        attempt(() => window.viz.headMaps(host, { data: new Float32Array(5), shape: [2, 2, 2] })),
        attempt(() => window.viz.modelGrid(host, { data: new Float32Array(8), dims: [2, 2, 2] })),
        attempt(() => window.viz.tokenLinks(null, window.weights([1, 2, 2]))),
        String(host.childElementCount),
      ];
    });
    assert.match(r[0], /^TypeError: headMaps: weights must be/);
    assert.match(r[1], /^RangeError: headMaps: weights of shape \[2, 2, 2\] \(5 values\)/);
    assert.equal(r[2], 'no error'); // (2, 2, 2) is one layer of (1, 2, 2, 2)
    assert.match(r[3], /^TypeError: tokenLinks: element must be a DOM element/);
    assert.equal(r[4], '1', 'only the modelGrid that succeeded left a root');
  });

  test('the weight ramp gets lighter from 0 to 1 (no hue needed to read it) and heads have distinct colours', async () => {
    const r = await page.evaluate(() => {
      const lum = (css) => {
        const [rr, g, b] = css.match(/\d+/g).map(Number);
        return 0.2126 * rr + 0.7152 * g + 0.0722 * b;
      };
      const ramp = Array.from({ length: 101 }, (_, i) => lum(window.viz.weightColour(i / 100)));
      const heads = new Set(Array.from({ length: 8 }, (_, h) => window.viz.headColour(h)));
      return { ramp, heads: heads.size };
    });
    for (let i = 1; i < r.ramp.length; ++i) assert.ok(r.ramp[i] >= r.ramp[i - 1], `lightness falls at ${i / 100}`);
    assert.ok(r.ramp[100] - r.ramp[0] > 150);
    assert.equal(r.heads, 8);
  });

  test('the page loaded viz.mjs (and its painter and exporter) and nothing else of attnlab', async () => {
    const viz = ['/dist/viz-export.mjs', '/dist/viz-heatmap.mjs', '/dist/viz.mjs'];
    assert.deepEqual((await page.evaluate(() => window.vizModules)).sort(), viz);
    // Over the whole run: the same, beside the tests' generator (tests/js/rng.mjs: the package's rng.mjs and the
    // argument checks it imports).
    const dist = requests.filter((p) => p.startsWith('/dist/'));
    assert.deepEqual(dist.sort(), ['/dist/rng.mjs', '/dist/validate.mjs', ...viz]);
  });

  test('headMaps.toSVG is a standalone SVG: one rect a cell in its colour, escaped labels, captions, the scale', async () => {
    const r = await page.evaluate(() => {
      const host = document.getElementById('host');
      host.replaceChildren();
      const w = window.weights([2, 3, 4], 7);
      const queryTokens = ['<b>', 'a&b', '"q\'s"'];
      const keyTokens = ['x', 'y', 'z', '\u0001w'];
      const view = window.viz.headMaps(host, w, { queryTokens, keyTokens, cellSize: 20 });
      const svg = view.toSVG();
      view.destroy();
      const doc = new DOMParser().parseFromString(svg, 'image/svg+xml'); // a strict XML parser
      const root = doc.documentElement;
      const cells = [...doc.querySelectorAll('rect')].filter((e) => e.getAttribute('fill').startsWith('rgb('));
      const mean = Array.from({ length: 12 }, (_, k) => (w.data[k] + w.data[12 + k]) / 2);
      const values = [...w.data, ...mean];
      return {
        errors: doc.getElementsByTagName('parsererror').length,
        name: root.localName,
        ns: root.namespaceURI,
        size: ['width', 'height', 'viewBox'].map((a) => root.getAttribute(a)),
        cells: cells.length,
        sides: [...new Set(cells.map((e) => e.getAttribute('width')))],
        fillsMatch: cells.every((e, k) => e.getAttribute('fill') === window.viz.weightColour(values[k])),
        texts: [...doc.querySelectorAll('text')].map((t) => t.textContent),
        raw: svg.includes('<b>'),
        scale: doc.querySelectorAll('linearGradient stop').length,
      };
    });
    assert.equal(r.errors, 0);
    assert.equal(r.name, 'svg');
    assert.equal(r.ns, 'http://www.w3.org/2000/svg');
    const [width, height, viewBox] = r.size;
    assert.ok(Number(width) >= 3 * 82 && Number(height) >= 62, `size ${width} × ${height}`); // 3 maps of 4 × 3 cells
    assert.equal(viewBox, `0 0 ${width} ${height}`);
    assert.equal(r.cells, 3 * 12, 'one rect per cell of 2 heads and their mean');
    assert.deepEqual(r.sides, ['19'], '20 px cells less the 1 px gap');
    assert.ok(r.fillsMatch, 'every cell has its weight colour, in row-major order, head by head');
    for (const label of ['<b>', 'a&b', '"q\'s"', 'head 0', 'head 1', 'mean of heads', '0', '1']) {
      assert.ok(r.texts.includes(label), `text ${label}`);
    }
    assert.ok(r.texts.includes('\uFFFDw'), 'a control character XML cannot hold is replaced');
    assert.equal(r.raw, false, 'the label <b> is escaped, not markup');
    assert.equal(r.scale, 11, 'the colour scale');
  });

  test('a map of more than 4,096 cells exports as one embedded PNG, one pixel a cell', async () => {
    const r = await page.evaluate(async () => {
      const host = document.getElementById('host');
      const view = window.viz.headMaps(host, window.weights([1, 80, 96], 8), { cellSize: 2 });
      const svg = view.toSVG();
      view.destroy();
      const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
      const images = [...doc.querySelectorAll('image')];
      const href = images[0]?.getAttribute('href') ?? '';
      const img = new Image();
      img.src = href;
      await img.decode();
      return {
        images: images.length,
        rgbRects: [...doc.querySelectorAll('rect')].filter((e) => e.getAttribute('fill').startsWith('rgb(')).length,
        size: [images[0].getAttribute('width'), images[0].getAttribute('height')],
        png: href.startsWith('data:image/png;base64,'),
        natural: [img.naturalWidth, img.naturalHeight],
      };
    });
    assert.deepEqual(r, { images: 1, rgbRects: 0, size: ['192', '160'], png: true, natural: [96, 80] });
  });

  test('tokenLinks.toSVG has one line a link drawn, in its head colour, the legend and the tokens', async () => {
    const r = await page.evaluate(() => {
      const host = document.getElementById('host');
      const view = window.viz.tokenLinks(host, window.weights([3, 4, 5], 9), {
        queryTokens: ['a', 'b', 'c', 'd'],
        keyTokens: ['<p>', 'q', 'r', 's', 't'],
        threshold: 0.2,
      });
      host.querySelector('button').click(); // hide head 0
      const svg = view.toSVG();
      const links = Number(view.element.dataset.links);
      const byHead = JSON.parse(view.element.dataset.linksByHead);
      view.destroy();
      const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
      const lines = [...doc.querySelectorAll('line')];
      const colours = [1, 2].map((h) => window.viz.headColour(h));
      return {
        errors: doc.getElementsByTagName('parsererror').length,
        lines: lines.length,
        links,
        byColour: colours.map((c) => lines.filter((l) => l.getAttribute('stroke') === c).length),
        byHead: byHead.slice(1),
        texts: [...doc.querySelectorAll('text')].map((t) => t.textContent),
      };
    });
    assert.equal(r.errors, 0);
    assert.ok(r.links > 0);
    assert.equal(r.lines, r.links);
    assert.deepEqual(r.byColour, r.byHead);
    for (const t of ['head 0', 'head 1', 'head 2', 'a', 'd', '<p>', 't']) assert.ok(r.texts.includes(t), t);
  });

  test('modelGrid.toSVG has every layer × head map with its caption', async () => {
    const r = await page.evaluate(() => {
      const host = document.getElementById('host');
      const view = window.viz.modelGrid(host, window.weights([2, 3, 4, 4], 10));
      const svg = view.toSVG();
      view.destroy();
      const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
      return {
        cells: [...doc.querySelectorAll('rect')].filter((e) => e.getAttribute('fill').startsWith('rgb(')).length,
        texts: [...doc.querySelectorAll('text')].map((t) => t.textContent).filter((t) => t.startsWith('layer')),
      };
    });
    assert.equal(r.cells, 2 * 3 * 16);
    assert.deepEqual(
      r.texts,
      ['0 0', '0 1', '0 2', '1 0', '1 1', '1 2'].map((s) => s.replace(/(\d) (\d)/, 'layer $1 head $2')),
    );
  });

  test('toSVG in a DOM without a 2-D canvas is an Error saying so, and toPNG rejects', async () => {
    const r = await page.evaluate(async () => {
      const host = document.getElementById('host');
      const getContext = HTMLCanvasElement.prototype.getContext;
      HTMLCanvasElement.prototype.getContext = () => null;
      try {
        const view = window.viz.headMaps(host, window.weights([2, 3, 3]));
        let svg;
        try {
          svg = view.toSVG();
        } catch (e) {
          svg = `${e.name}: ${e.message}`;
        }
        const png = await view.toPNG().then(
          () => 'resolved',
          (e) => `${e.name}: ${e.message}`,
        );
        view.destroy();
        return { svg, png };
      } finally {
        HTMLCanvasElement.prototype.getContext = getContext;
      }
    });
    assert.match(r.svg, /^Error: toSVG: needs a DOM with a 2-D canvas/);
    assert.match(r.png, /^Error: toSVG: needs a DOM with a 2-D canvas/);
  });

  test('options.text translates captions, tooltips and the legend', async () => {
    const r = await page.evaluate(() => {
      const host = document.getElementById('host');
      host.replaceChildren(); // (what the error test left)
      const text = { head: (h) => `头 ${h}`, mean: '各头平均', query: (q, best) => `查询 ${q}：${best}` };
      const maps = window.viz.headMaps(host, window.weights([2, 2, 2]), { text });
      const captions = [...host.querySelectorAll('figcaption')].map((c) => c.textContent);
      maps.destroy();
      const links = window.viz.tokenLinks(host, window.weights([2, 2, 2]), { text });
      const legend = [...host.querySelectorAll('button')].map((b) => b.textContent);
      host.querySelector('canvas').dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowDown' }));
      const announced = host.querySelector('.attnlab-viz-live').textContent;
      links.destroy();
      return { captions, legend, announced };
    });
    assert.deepEqual(r.captions, ['头 0', '头 1', '各头平均']);
    assert.deepEqual(r.legend, ['头 0', '头 1']);
    assert.match(r.announced, /^查询 0：头 0 → /);
  });
});
