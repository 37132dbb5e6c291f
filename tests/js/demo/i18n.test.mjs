// The demo page's two catalogues (web/demo/i18n/zh.js, en.js; mirrors web/demo/i18n.js): the same keys, no empty
// value, the same {name} placeholders, no English sentence left in 中文, and every key the page's modules (every .js
// under web/demo/) ask for exists.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zh from '../../../web/demo/i18n/zh.js';
import en from '../../../web/demo/i18n/en.js';
import { pickLang, fill, t, LANG } from '../../../web/demo/i18n.js';
import { DEMO } from './helpers.mjs';
const placeholders = (s) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

test('zh and en have the same keys, none empty, with the same placeholders', () => {
  assert.deepEqual(Object.keys(zh).sort(), Object.keys(en).sort());
  for (const [name, cat] of [
    ['zh', zh],
    ['en', en],
  ]) {
    for (const [k, v] of Object.entries(cat)) {
      assert.equal(typeof v, 'string', `${name}: ${k}`);
      assert.ok(v.trim().length > 0, `${name}: ${k} is empty`);
    }
  }
  for (const k of Object.keys(en)) assert.deepEqual(placeholders(zh[k]), placeholders(en[k]), `placeholders of ${k}`);
});

/** Three or more English words in a row, outside <code>…</code>, quotes, file names and identifiers. */
function englishSentence(s) {
  const text = s
    .replace(/<code>.*?<\/code>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/"[^"]*"/g, ' ');
  return text.match(/(?:\b[A-Za-z][a-z'’]+\b[ ,]+){2,}\b[A-Za-z][a-z'’]+\b/g) || [];
}

test('no English sentence is left in 中文', () => {
  const bad = Object.entries(zh)
    .filter(([, v]) => englishSentence(v).length)
    .map(([k, v]) => `${k}: ${englishSentence(v).join(' | ')} in "${v}"`);
  assert.deepEqual(bad, []);
  // the check itself finds an English sentence
  assert.ok(englishSentence('这是 the weights are wrong here').length > 0);
  assert.equal(englishSentence('用 <code>masked_fill(mask == 0, -1e9)</code> 和 nn.MultiheadAttention').length, 0);
});

test("every key the page asks for exists (t('…') and part.<id>.* in the source)", () => {
  const files = fs.readdirSync(DEMO, { recursive: true }).filter((f) => f.endsWith('.js'));
  assert.ok(files.length > 30, `found ${files.length} modules`);
  const keys = new Set();
  for (const f of files) {
    const src = fs.readFileSync(path.join(DEMO, f), 'utf8');
    for (const m of src.matchAll(/\bt\(\s*'([\w.-]+)'/g)) keys.add(m[1]);
  }
  const html = fs.readFileSync(path.join(DEMO, 'index.html'), 'utf8');
  for (const m of html.matchAll(/data-i18n(?:-html|-title|-aria)?="([\w.-]+)"/g)) keys.add(m[1]);
  assert.ok(keys.size > 200, `found ${keys.size} keys`);
  const missing = [...keys].filter((k) => !(k in en));
  assert.deepEqual(missing, []);
});

test('the language follows ?lang= first, then navigator.language (zh-* → 中文)', () => {
  assert.equal(pickLang('en', 'zh-CN'), 'en');
  assert.equal(pickLang('zh', 'en-US'), 'zh');
  assert.equal(pickLang(null, 'zh-TW'), 'zh');
  assert.equal(pickLang(null, 'zh'), 'zh');
  assert.equal(pickLang('fr', 'de-DE'), 'en');
  assert.equal(pickLang(null, 'en-GB'), 'en');
  assert.equal(fill('{a} of {b}', { a: 3, b: 5 }), '3 of 5');
});

test('t() fills placeholders from the page language (English in Node)', () => {
  assert.equal(LANG, 'en');
  assert.equal(t('why.picNote', { n: 7 }), fill(en['why.picNote'], { n: 7 }));
});
