// The term list (mirrors web/demo/i18n/terms.js) applied to every 中文 catalogue (web/demo/i18n/zh*.js): no term of
// TERMS left in English outside <code> or a gloss, heads numbered 头 1…H, § only in badges, and every Chinese word
// of the list in use. The English catalogues (en*.js) follow the same numbering (head 1…H, layers from 1) and say
// "Section 4.4 of the tutorial" in prose; the source passes 1-based numbers to every head or layer label.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { TERMS, untranslated, proseSection, bareApi } from '../../../../web/demo/i18n/terms.js';
import { DEMO } from '../helpers.mjs';

const DIR = path.join(DEMO, 'i18n');
const zhFiles = () => fs.readdirSync(DIR).filter((f) => /^zh(-[a-z]+)?\.js$/.test(f));
const enFiles = () => fs.readdirSync(DIR).filter((f) => /^en(-[a-z]+)?\.js$/.test(f));
/** Every zh (or en) catalogue's own entries: [file, key, value]. */
async function entries(files = zhFiles()) {
  const out = [];
  for (const f of files) {
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
  assert.deepEqual(bareApi('只有 returnScores 不同，<code>numHeads</code> 与 mha.forward'), [
    'returnScores',
    'mha.forward',
  ]);
  assert.deepEqual(bareApi('<code>scaledDotProductAttentionBackward</code> 和 numHeadsX'), []);
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

test('English: heads and layers counted from 1 (head {h}, never H0 or L{l}), § only in badges', async () => {
  const all = await entries(enFiles());
  assert.ok(enFiles().length >= 4 && all.length > 300, `${enFiles()} ${all.length}`);
  const zeroHeads = all
    .filter(([, , v]) => /\bhead 0\b|\bH0\b|\bL0\b|\bH\{h\}|\bL\{l\}/.test(v))
    .map(([f, k]) => `${f} ${k}`);
  assert.deepEqual(zeroHeads, []);
  const sections = all.filter(([, , v]) => proseSection(v)).map(([f, k]) => `${f} ${k}`);
  assert.deepEqual(sections, []);
});

/** Every JS file under web/demo/. */
function sources(dir = DEMO) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'models' ? [] : sources(p);
    return e.name.endsWith('.js') ? [p] : [];
  });
}

test('the source numbers heads and layers from 1: every label with 头 {h} or 第 {l} 层 gets an index + 1', async () => {
  const zh = Object.fromEntries((await entries()).map(([, k, v]) => [k, v]));
  const labels = Object.keys(zh).filter((k) => /头 \{h\}|第 \{l\} 层/.test(zh[k]));
  assert.ok(labels.includes('poem.lh') && labels.includes('poem.layer') && labels.includes('mha.head'), `${labels}`);
  const bad = [];
  let calls = 0;
  for (const file of sources()) {
    const src = fs.readFileSync(file, 'utf8');
    for (const m of src.matchAll(/\bt\(`?'?([\w.]+)'?`?,\s*([^)]*)\)/g)) {
      if (!labels.includes(m[1])) continue;
      if (!m[2].startsWith('{')) bad.push(`${path.relative(DEMO, file)}: ${m[0]} (not an object literal)`);
      calls++;
      for (const name of ['h', 'l']) {
        const arg = new RegExp(`\\b${name}: ([^,}]+)`).exec(m[2]);
        if (zh[m[1]].includes(`{${name}}`) && !(arg && /\+ 1\s*$/.test(arg[1])))
          bad.push(`${path.relative(DEMO, file)}: ${m[0]}`);
      }
    }
  }
  assert.ok(calls >= 8, `${calls} label calls`);
  assert.deepEqual(bad, []);
});

test('API names in code font wherever a string carries markup (zh and en)', async () => {
  const all = [...(await entries()), ...(await entries(enFiles()))];
  const marked = all.filter(([, , v]) => v.includes('<code>'));
  assert.ok(marked.length > 20, `${marked.length} strings with <code>`);
  const bad = marked.filter(([, , v]) => bareApi(v).length).map(([f, k, v]) => `${f} ${k}: ${bareApi(v)}`);
  assert.deepEqual(bad, []);
  for (const k of ['sbs.callNote', 'heads.init', 'speed.note', 'mha.maskConvention', 'decode.modelNote']) {
    assert.ok(
      all.filter(([, key]) => key === k).every(([, , v]) => v.includes('<code>')),
      k,
    );
  }
});
