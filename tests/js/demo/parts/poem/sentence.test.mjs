// Part "poem", the tutorial's sentence through the trained model (mirrors web/demo/parts/poem/sentence.js): 叫's
// rows against the model's full (H, T, T) attentions scanned here, the card's claims against a brute scan, and the
// teaching review's independent measurement (no comma: head 2.1 puts 0.958 on 喂, no head more than 0.138 on 猫).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as S from '../../../../../web/demo/parts/poem/sentence.js';
import { charTokenizer } from '../../../../../web/demo/shared/char-tokenizer.js';
import { readSafetensors } from '../../../../../web/demo/attnlab.js';
import { DEMO, simd } from '../../helpers.mjs';

const DIR = path.join(DEMO, 'models/tang-song-quatrains-char-llama');
const read = (f) => fs.readFileSync(path.join(DIR, f));

async function poemModel() {
  const attn = await simd();
  const model = attn.loadModel({
    config: JSON.parse(read('config.json')),
    tensors: readSafetensors(new Uint8Array(read('model.safetensors'))),
  });
  return { attn, model, tok: charTokenizer(JSON.parse(read('tokenizer.json'))) };
}

/** Every (layer, head, key) weight of query q, from the full attentions: the brute reference. */
function allWeights(model, tok, text, q) {
  const ids = tok.encode(text, { bos: true });
  const T = ids.length;
  const { attentions } = model.forward({ data: ids, shape: [1, T] }, { outputAttentions: true });
  return attentions.flatMap((a, layer) =>
    Array.from({ length: a.shape[1] }, (_, head) =>
      Array.from({ length: q + 1 }, (_, key) => ({ layer, head, key, w: a.data[(head * T + q) * T + key] })),
    ).flat(),
  );
}

test('the sentence: one token per character, no [UNK], 叫 sees [BOS] and every character before it', async () => {
  const { model, tok } = await poemModel();
  const s = S.sentenceRows(model, tok);
  assert.equal(s.unknown, 0);
  assert.equal(s.labels.join(''), '[BOS]这只猫因为没有及时喂食，所以一直在叫');
  assert.equal(s.q, 18);
  assert.equal(s.rows.length, 4);
  for (const r of s.rows) {
    assert.equal(r.length, 4 * 19);
    for (let h = 0; h < 4; h++)
      assert.ok(Math.abs(r.subarray(h * 19, h * 19 + 19).reduce((a, b) => a + b, 0) - 1) < 1e-4);
  }
  assert.throws(() => S.sentenceRows(model, tok, '这只猫', '叫'), /query/);
});

test("the card's claims are the brute scan of the model's attentions", async () => {
  const { model, tok } = await poemModel();
  const s = S.sentenceRows(model, tok);
  const c = S.sentenceClaims(s);
  const all = allWeights(model, tok, S.TUTORIAL_SENTENCE, s.q);
  const best = (key) => all.filter((x) => x.key === key).reduce((a, b) => (b.w > a.w ? b : a));
  for (const [claim, ch] of [
    [c.feed, '喂'],
    [c.cat, '猫'],
  ]) {
    const b = best(s.labels.indexOf(ch));
    assert.deepEqual([claim.layer, claim.head], [b.layer, b.head]);
    assert.ok(Math.abs(claim.weight - b.w) < 1e-7);
    const row = all.filter((x) => x.layer === b.layer && x.head === b.head);
    const top = row.reduce((a, x) => (x.w > a.w ? x : a));
    assert.equal(claim.top.key, s.labels[top.key]);
    assert.ok(Math.abs(claim.top.weight - top.w) < 1e-7);
  }
  assert.equal(c.uniform, 1 / 19);
  assert.equal(c.heads, 16);
  // every head's weight on 猫 is at most the claimed maximum
  assert.ok(all.filter((x) => x.key === 3).every((x) => x.w <= c.cat.weight));
});

test("the review's measurement (the sentence without its comma) is reproduced", async () => {
  const { model, tok } = await poemModel();
  const c = S.sentenceClaims(S.sentenceRows(model, tok, '这只猫因为没有及时喂食所以一直在叫。'));
  assert.deepEqual([c.feed.layer, c.feed.head], [1, 0]); // head 2.1
  assert.equal(c.feed.weight.toFixed(3), '0.958');
  assert.deepEqual([c.cat.layer, c.cat.head], [2, 2]); // head 3.3
  assert.equal(c.cat.weight.toFixed(3), '0.138');
  assert.equal(c.cat.top.key, '因');
  assert.equal(c.cat.top.weight.toFixed(2), '0.79');
  assert.equal(c.uniform.toFixed(3), '0.056');
});

test("sentenceStudy: both versions, and each 喂 head's top key in the other version", async () => {
  const { model, tok } = await poemModel();
  const st = S.sentenceStudy(model, tok);
  assert.equal(st.plain.text, '这只猫因为没有及时喂食所以一直在叫。');
  for (const [k, other] of [
    ['comma', 'plain'],
    ['plain', 'comma'],
  ]) {
    const own = S.sentenceClaims(S.sentenceRows(model, tok, st[k].text));
    assert.deepEqual(st[k].claims, own);
    const { layer, head } = own.feed;
    const all = allWeights(model, tok, st[other].text, st[other].q).filter((x) => x.layer === layer && x.head === head);
    const top = all.reduce((a, x) => (x.w > a.w ? x : a));
    assert.equal(st[k].feedElsewhere.key, st[other].labels[top.key]);
    assert.ok(Math.abs(st[k].feedElsewhere.weight - top.w) < 1e-7);
  }
  // with its comma the sentence reads differently: head 2.1 looks at the comma (as a punctuation head does)
  assert.equal(st.plain.feedElsewhere.key, '，');
  assert.ok(st.plain.feedElsewhere.weight > 0.9);
});
