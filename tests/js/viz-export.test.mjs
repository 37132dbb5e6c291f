// attnlab/viz's export helpers in Node (web/src/viz-export.mjs, viz-heatmap.mjs): where there is no canvas, toPNG's
// rasteriser rejects with an Error that says so; text is escaped for XML; an SVG document names its namespace and
// size.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { escapeXml, svgDocument, svgToPNG } from '../../web/src/viz-export.mjs';

test('toPNG without a browser canvas (Node) rejects, saying so', async () => {
  const svg = svgDocument(10, 10, '');
  await assert.rejects(svgToPNG(undefined, svg), { name: 'Error', message: /toPNG: needs a browser canvas/ });
  const noCanvas = { createElement: () => ({ getContext: () => null }) };
  await assert.rejects(svgToPNG(/** @type {any} */ (noCanvas), svg), /needs a browser canvas/);
  await assert.rejects(svgToPNG(undefined, svg, -1), { name: 'RangeError', message: /scale must be a positive/ });
});

test('escapeXml escapes markup and replaces what XML cannot hold', () => {
  assert.equal(escapeXml('<a href="x">&\'</a>'), '&#60;a href=&#34;x&#34;&#62;&#38;&#39;&#60;/a&#62;');
  assert.equal(escapeXml('a\u0000b\u001fc\td\ne'), 'a\uFFFDb\uFFFDc\td\ne');
  assert.equal(escapeXml('\uD800x 😀'), '\uFFFDx 😀', 'a lone surrogate goes, a pair stays');
  assert.equal(escapeXml(12), '12');
});

test('svgDocument: namespace, size and viewBox, rounded up to whole px', () => {
  assert.equal(
    svgDocument(10.2, 7, '<g/>'),
    '<svg xmlns="http://www.w3.org/2000/svg" width="11" height="7" viewBox="0 0 11 7"><rect width="11" height="7" fill="#fff"/><g/></svg>',
  );
});
