// The guided paths (web/demo/i18n/zh-guide.js, en-guide.js; widgets/guide.js, #28): every part of main.js's PARTS has
// 2–3 cards in both languages, the same number in each, every card of at most 3 sentences; links in the
// cards go to parts that exist; guideCards reads them in order and stops at the first gap.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zh from '../../../../web/demo/i18n/zh.js';
import en from '../../../../web/demo/i18n/en.js';
import { guideCards, MAX_CARDS } from '../../../../web/demo/widgets/guide.js';
import { DEMO } from '../helpers.mjs';

/** The part ids of main.js's PARTS, in order (main.js itself needs a DOM). */
function partIds() {
  const src = fs.readFileSync(path.join(DEMO, 'main.js'), 'utf8');
  const list = src.slice(src.indexOf('export const PARTS'), src.indexOf('];', src.indexOf('export const PARTS')));
  return [...list.matchAll(/\{ id: '([\w-]+)'/g)].map((m) => m[1]);
}

/** Another engineer rebuilds this part; its guided path comes with the rebuild. */
const WITHOUT = [];

/** Sentences of a card's text (markup removed): 。！？ in 中文; . ! ? before a space or the end in English. */
export function sentences(html, lang) {
  const text = html.replace(/<[^>]+>/g, '').trim();
  const ends = lang === 'zh' ? text.match(/[。！？]/g) : text.match(/[.!?](?=\s|$)/g);
  return Math.max(1, ends ? ends.length : 0);
}

test('the sentence count', () => {
  assert.equal(sentences('点这里。再看 0.5。', 'zh'), 2);
  assert.equal(sentences('Drag q to 0.5. Then look at <code>mha.forward</code>: it is 1.5!', 'en'), 2);
  assert.equal(sentences('no end mark', 'en'), 1);
});

test('every part has 2–3 guide cards in zh and en, as many in each, each of at most 3 sentences', () => {
  const ids = partIds();
  assert.ok(ids.length >= 14 && ids.includes('simple') && ids.includes('poem'), `${ids}`);
  for (const id of ids) {
    const [z, e] = [guideCards(id, zh), guideCards(id, en)];
    if (WITHOUT.includes(id)) {
      assert.deepEqual([z.length, e.length], [0, 0], `${id} has no cards yet`);
      continue;
    }
    assert.ok(z.length >= 2 && z.length <= MAX_CARDS, `${id}: ${z.length} cards in zh`);
    assert.equal(e.length, z.length, `${id}: as many cards in en as in zh`);
    z.forEach((c, i) => assert.ok(sentences(c, 'zh') <= 3, `guide.${id}.${i + 1} (zh): ${sentences(c, 'zh')}`));
    e.forEach((c, i) => assert.ok(sentences(c, 'en') <= 3, `guide.${id}.${i + 1} (en): ${sentences(c, 'en')}`));
  }
  const stray = Object.keys(zh).filter((k) => /^guide\.[\w-]+\.\d$/.test(k) && !ids.includes(k.split('.')[1]));
  assert.deepEqual(stray, [], 'cards of parts that do not exist');
});

test('links in the cards go to parts that exist', () => {
  const ids = partIds();
  for (const cat of [zh, en]) {
    for (const [k, v] of Object.entries(cat)) {
      if (!k.startsWith('guide.')) continue;
      for (const m of v.matchAll(/href="#part-([\w-]+)"/g)) assert.ok(ids.includes(m[1]), `${k}: #part-${m[1]}`);
    }
  }
  assert.ok(zh['guide.mha.3'].includes('href="#part-poem"'), 'the untrained maps point to the poem chapter');
});

test('guideCards: guide.<part>.1, .2, … in order, up to the first gap', () => {
  const cat = { 'guide.x.1': 'a', 'guide.x.2': 'b', 'guide.x.4': 'd', 'guide.y.2': 'no first card' };
  assert.deepEqual(guideCards('x', cat), ['a', 'b']);
  assert.deepEqual(guideCards('y', cat), []);
});
