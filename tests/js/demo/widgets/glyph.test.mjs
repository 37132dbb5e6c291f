// widgets/glyph.js outside a browser: code points written as U+XXXX (4 digits at least), one character only, and
// drawable() answers true where no canvas can tell (Node); the browser side is tests/e2e/sentence.test.mjs.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { codePoint, drawable } from '../../../../web/demo/widgets/glyph.js';

test('codePoint: BMP and astral characters', () => {
  assert.equal(codePoint('手'), 'U+624B');
  assert.equal(codePoint('𬬻'), `U+${(0x2cb3b).toString(16).toUpperCase()}`);
  assert.equal(codePoint('A'), 'U+0041');
  assert.equal(codePoint('\u{10FFFD}'), 'U+10FFFD');
});

test('drawable: one character (a surrogate pair is one), true without a document', () => {
  assert.equal(drawable('𬬻'), true);
  assert.throws(
    () => drawable('手种'),
    (e) => e instanceof RangeError && /ch:/.test(e.message),
  );
  assert.throws(() => drawable(''), RangeError);
});
