// The term list (mirrors web/demo/i18n/terms.js) applied to every 中文 catalogue (web/demo/i18n/zh*.js): no term of
// TERMS left in English outside <code> or a gloss, heads numbered 头 1…H, § only in badges, and every Chinese word
// of the list in use.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { TERMS, untranslated, proseSection } from '../../../../web/demo/i18n/terms.js';
import { DEMO } from '../helpers.mjs';

const DIR = path.join(DEMO, 'i18n');
const zhFiles = () => fs.readdirSync(DIR).filter((f) => /^zh(-[a-z]+)?\.js$/.test(f));
/** Every zh catalogue's own entries: [file, key, value]. */
async function entries() {
  const out = [];
  for (const f of zhFiles()) {
    const own = (await import(path.join(DIR, f))).default;
    for (const [k, v] of Object.entries(own)) out.push([f, k, v]);
  }
  return out;
}

test('the check finds what it should', () => {
  assert.deepEqual(untranslated('训练时 loss 变成 NaN，padding 词元'), ['padding', 'loss']);
  assert.deepEqual(untranslated('填充（padding）、后台线程（Web Worker）和 <code>state dict</code>'), []);
  assert.deepEqual(untranslated('keyPaddingMask 和 tokenizer.json 与 needWeights'), []);
  assert.equal(proseSection('§8.1 · 注意力'), false);
  assert.equal(proseSection('§10.1 · §11'), false);
  assert.equal(proseSection('见教程 §4.4'), true);
});

test('every 中文 catalogue uses the term list: no English term outside <code> or a gloss', async () => {
  const all = await entries();
  assert.ok(zhFiles().length >= 4 && all.length > 300, `${zhFiles()} ${all.length}`);
  const bad = all.filter(([, , v]) => untranslated(v).length).map(([f, k, v]) => `${f} ${k}: ${untranslated(v)}`);
  assert.deepEqual(bad, []);
  const text = all.map(([, , v]) => v).join('\n');
  for (const { zh } of TERMS) assert.ok(text.includes(zh), `${zh} is used`);
});

test('heads are 头 1…H, never counted from 0; § only in badges, prose says 教程 4.4 节', async () => {
  const all = await entries();
  const zeroHeads = all
    .filter(([, , v]) => /第 0 个头|头 0(?![.\d])|第 \{h\} 个头/.test(v))
    .map(([f, k]) => `${f} ${k}`);
  assert.deepEqual(zeroHeads, []);
  const sections = all.filter(([, , v]) => proseSection(v)).map(([f, k]) => `${f} ${k}`);
  assert.deepEqual(sections, []);
});
