// One colour code for Q, K and V (#28): web/demo/widgets/colours.js's QKV, readable on white, apart from the heads'
// first colours (attnlab/viz's headColour) and the diverging scale's ends, and used by every part that shows Q, K, V.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { QKV, luminance } from '../../../../web/demo/widgets/colours.js';
import { headColour } from '../../../../web/demo/attnlab-viz.js';
import { DEMO } from '../helpers.mjs';

const contrast = (/** @type {string} */ a, /** @type {string} */ b) => {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
};
/** Hue in degrees of '#rrggbb'. */
function hue(/** @type {string} */ hex) {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255);
  const max = Math.max(r, g, b);
  const d = max - Math.min(r, g, b);
  const h = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
  return (h * 60 + 360) % 360;
}
const hueGap = (/** @type {number} */ a, /** @type {number} */ b) => Math.min(Math.abs(a - b), 360 - Math.abs(a - b));

test('QKV: three colours, each readable on white, far apart in hue and from the heads and the sign scale', () => {
  const cols = [QKV.q, QKV.k, QKV.v];
  assert.equal(new Set(cols).size, 3);
  assert.equal(contrast('#ffffff', '#000000').toFixed(0), '21');
  for (const c of cols) assert.ok(contrast(c, '#ffffff') >= 4.5, `${c}: ${contrast(c, '#ffffff')}`);
  const others = [headColour(0), headColour(1), '#2166ac', '#b2182b'];
  for (const c of cols) {
    for (const d of cols) if (c !== d) assert.ok(hueGap(hue(c), hue(d)) >= 60, `${c} vs ${d}`);
    for (const o of others) assert.ok(hueGap(hue(c), hue(o)) >= 10, `${c} vs ${o}: ${hueGap(hue(c), hue(o))}°`);
  }
});

test('every part that shows Q, K or V takes their colours from QKV, none of its own', () => {
  for (const f of [
    'parts/dot/view.js',
    'parts/sbs/view.js',
    'parts/sbs/stages.js',
    'parts/heads/view.js',
    'parts/myths/view.js',
  ]) {
    const src = fs.readFileSync(path.join(DEMO, f), 'utf8');
    assert.match(src, /\bQKV\.[qkv]\b|QKV\[/, f);
  }
  const dot = fs.readFileSync(path.join(DEMO, 'parts/dot/view.js'), 'utf8');
  assert.doesNotMatch(dot, /arrow\('[qk]\d?', '#/, 'the dot part draws q and the keys in QKV colours');
});
