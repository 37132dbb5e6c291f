// The glossary (mirrors web/demo/widgets/glossary.js): one row per term of the term list (terms.js), in both
// languages, each with its own explanation; the page language's word first; a missing explanation is named.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { glossaryEntries } from '../../../../web/demo/widgets/glossary.js';
import { TERMS, GLOSSARY, LEARNER_TERMS, glossaryTerms } from '../../../../web/demo/i18n/terms.js';
import en from '../../../../web/demo/i18n/en.js';
import zh from '../../../../web/demo/i18n/zh.js';

test('every term of the term list is in the glossary (torch, a spelling of PyTorch, is not a term)', () => {
  const all = [...TERMS, ...GLOSSARY, ...LEARNER_TERMS].map((x) => x.en);
  const shown = glossaryTerms().map((x) => x.en);
  assert.deepEqual(
    shown,
    all.filter((x) => x !== 'torch'),
  );
  const keys = glossaryTerms().map((x) => x.key);
  assert.equal(new Set(keys).size, keys.length, 'one explanation key per term');
  assert.ok(keys.includes('glossary.def.bos') && keys.includes('glossary.def.causal-mask'));
});

test('both languages: the page language first, the other after, an explanation of its own', () => {
  const z = glossaryEntries('zh', zh);
  const e = glossaryEntries('en', en);
  assert.equal(z.length, glossaryTerms().length);
  assert.equal(e.length, z.length);
  const token = z.find((x) => x.en === 'token');
  assert.deepEqual([token.term, token.other], ['词元', 'token']);
  assert.deepEqual([e.find((x) => x.en === 'token').term, e.find((x) => x.en === 'token').other], ['token', '词元']);
  z.forEach((x, i) => {
    assert.ok(/[\u4e00-\u9fff]/.test(x.def), `${x.en}: the zh explanation is Chinese`);
    assert.notEqual(x.def, e[i].def);
  });
  assert.equal(new Set(z.map((x) => x.def)).size, z.length, 'no two terms share an explanation');
});

test('a term without an explanation is a RangeError naming the key', () => {
  const { 'glossary.def.rope': _, ...missing } = zh;
  assert.throws(
    () => glossaryEntries('zh', missing),
    (err) => err instanceof RangeError && /glossary\.def\.rope/.test(err.message),
  );
});
