// Part "poem" (mirrors web/demo/parts/poem/compute.js): the form of a quatrain and its enforcement, the restricted
// sampler, Spearman and the table of heads, the batches; against independent computations and the shipped poem model
// (read with shared/char-tokenizer.js; its heads measured with heads.js, tested in heads.test.mjs).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as C from '../../../../../web/demo/parts/poem/compute.js';
import { charTokenizer } from '../../../../../web/demo/shared/char-tokenizer.js';
import { headScores, meanLoss, poemFromText } from '../../../../../web/demo/parts/poem/heads.js';
import { readSafetensors } from '../../../../../web/demo/attnlab.js';
import { rng } from '../../../../../web/demo/shared/random.js';
import { DEMO, simd } from '../../helpers.mjs';

const DIR = path.join(DEMO, 'models/tang-song-quatrains-char-llama');
const read = (f) => fs.readFileSync(path.join(DIR, f));
const TOKJSON = JSON.parse(read('tokenizer.json'));

async function poemModel() {
  const attn = await simd();
  const model = attn.loadModel({
    config: JSON.parse(read('config.json')),
    tensors: readSafetensors(new Uint8Array(read('model.safetensors'))),
  });
  return { attn, model, tok: charTokenizer(TOKJSON) };
}

test('the form: checkForm, formNeed and allowed', () => {
  const chars = (s) => [...s];
  assert.deepEqual(C.checkForm(chars('白日依山尽，黄河入海流。欲穷千里目，更上一层楼。')), { ok: true, lineLen: 5 });
  assert.equal(C.checkForm([...chars('白日依山尽，黄河入海流。欲穷千里目，更上一层楼。'), '[EOS]']).ok, true);
  assert.equal(C.checkForm(chars('白日依山尽，黄河入海流。欲穷千里目，更上一层。')).ok, false);
  assert.equal(C.checkForm(chars('白日依山尽。黄河入海流，欲穷千里目，更上一层楼。')).ok, false);
  assert.equal(C.checkForm(chars('白日依山，黄河入海。欲穷千里，更上一层。')).ok, false);
  assert.deepEqual(C.formNeed(chars('白日依山尽'), 5), { chars: false, punct: '，', end: false });
  assert.deepEqual(C.formNeed(chars('白日依山尽，黄河'), 5), { chars: true, punct: null, end: false });
  assert.deepEqual(C.formNeed(chars('白日依山尽，黄河入海流'), 0), { chars: false, punct: '。', end: false });
  assert.deepEqual(C.formNeed(chars('白日依山尽'), 0), { chars: true, punct: '，', end: false });
  assert.deepEqual(C.formNeed(chars('白日依山尽依'), 0), { chars: true, punct: null, end: false });
  assert.equal(C.formNeed(chars('白日依山尽，黄河入海流。欲穷千里目，更上一层楼。'), 5).end, true);
  const need = C.formNeed([], 7);
  assert.ok(C.allowed(need, '白') && !C.allowed(need, '，') && !C.allowed(need, '[EOS]') && !C.allowed(need, '[UNK]'));
});

test('sampleRestricted: argmax at temperature 0, the inverse CDF of the restricted softmax otherwise', () => {
  const logits = [3, 1, 2, 0];
  assert.equal(
    C.sampleRestricted(logits, () => true, 0, 0.5),
    0,
  );
  assert.equal(
    C.sampleRestricted(logits, (i) => i !== 0, 0, 0.5),
    2,
  );
  const p = [1, 2].map((i) => Math.exp(logits[i])); // ids 1 and 2 only
  const p1 = p[0] / (p[0] + p[1]);
  assert.equal(
    C.sampleRestricted(logits, (i) => i === 1 || i === 2, 1, p1 - 1e-9),
    1,
  );
  assert.equal(
    C.sampleRestricted(logits, (i) => i === 1 || i === 2, 1, p1 + 1e-9),
    2,
  );
  const r = rng(5);
  const counts = [0, 0, 0, 0];
  for (let k = 0; k < 20000; k++) counts[C.sampleRestricted(logits, (i) => i > 0, 1, r())] += 1;
  const z = Math.exp(1) + Math.exp(2) + 1;
  assert.ok(Math.abs(counts[2] / 20000 - Math.exp(2) / z) < 0.02, String(counts));
  assert.equal(counts[0], 0);
});

test('Spearman and the sharpness table', () => {
  assert.equal(C.spearman([1, 2, 3, 4], [10, 20, 30, 40]), 1);
  assert.equal(C.spearman([1, 2, 3], [3, 2, 1]), -1);
  assert.ok(Math.abs(C.spearman([1, 2, 2, 3], [1, 3, 2, 4]) - 0.9486832980505138) < 1e-12); // scipy.stats.spearmanr
  const names = [[{ pattern: 'previous' }, { pattern: '' }]];
  const tab = C.sharpnessTable([[0.5, 1.5]], 2, [[0.01, 0.3]], names);
  assert.deepEqual(
    tab.rows.map((r) => [r.head, r.sharpness, r.delta]),
    [
      [1, 0.5, 0.3],
      [0, 1.5, 0.01],
    ],
  );
  assert.equal(tab.rho, -1);
  assert.equal(tab.agree, null);
  // three heads measured three ways: zeroed 0.3 > 0.2 > 0.01; by the mean the order of the first two flips (ρ 0.5 by
  // hand: ranks (2, 3, 1) vs (3, 2, 1), d² = 2, 1 − 6·2/(3·8)); the gradient agrees (ρ 1)
  const three = C.sharpnessTable([[0.5, 1.5, 1]], 2, [[0.01, 0.3, 0.2]], [[...names[0], { pattern: '' }]], {
    mean: [[0.001, 0.05, 0.1]],
    gradient: [[0.1, 0.9, 0.5]],
  });
  assert.deepEqual(
    three.rows.map((r) => [r.head, r.delta, r.mean, r.gradient]),
    [
      [1, 0.3, 0.05, 0.9],
      [2, 0.2, 0.1, 0.5],
      [0, 0.01, 0.001, 0.1],
    ],
  );
  assert.ok(Math.abs(three.agree.mean - 0.5) < 1e-12);
  assert.ok(Math.abs(three.agree.gradient - 1) < 1e-12);
});

test('batches: whole poems padded with −100 targets; text windows shifted by one', () => {
  const poems = [Int32Array.of(2, 10, 11, 3), Int32Array.of(2, 12, 3)];
  const b = C.poemBatch(poems, rng(1), 8, 0);
  assert.deepEqual(b.tokens.shape, [8, 3]);
  for (let k = 0; k < 8; k++) {
    const row = Array.from(b.tokens.data.subarray(k * 3, k * 3 + 3));
    const tgt = Array.from(b.targets.data.subarray(k * 3, k * 3 + 3));
    if (row[1] === 10)
      assert.deepEqual(
        [row, tgt],
        [
          [2, 10, 11],
          [10, 11, 3],
        ],
      );
    else
      assert.deepEqual(
        [row, tgt],
        [
          [2, 12, 0],
          [12, 3, -100],
        ],
      );
  }
  const ids = Int32Array.from({ length: 50 }, (_, i) => i);
  const tb = C.textBatch(ids, rng(2), 4, 8);
  for (let k = 0; k < 4; k++)
    for (let i = 0; i < 8; i++) assert.equal(tb.targets.data[k * 8 + i], tb.tokens.data[k * 8 + i] + 1);
});

test('the shipped model: generatePoem keeps the form (forced only where needed), rows sum to 1; masks change the poem', async () => {
  const { attn, model, tok } = await poemModel();
  for (const lineLen of [5, 7]) {
    const r = C.generatePoem(model, tok, { lineLen, temperature: 1, seed: 3 });
    assert.deepEqual(r.form, { ok: true, lineLen });
    assert.equal(r.tokens.length, 4 * (lineLen + 1));
    for (const g of r.tokens.filter((x) => x.forced)) assert.notEqual(g.wanted, g.s);
    r.tokens.forEach((g, i) => {
      assert.equal(g.rows.length, 4);
      for (const row of g.rows) {
        assert.equal(row.length, 4 * (i + 1));
        for (let hh = 0; hh < 4; hh++) {
          const s = row.subarray(hh * (i + 1), (hh + 1) * (i + 1)).reduce((a, b) => a + b, 0);
          assert.ok(Math.abs(s - 1) < 1e-4);
        }
      }
    });
  }
  // unaided (no form): the same ids as model.generate itself, until [EOS]
  const free = C.generatePoem(model, tok, { temperature: 0.8, seed: 4, form: false });
  const direct = model.generate(Int32Array.of(tok.special.bos), {
    maxNewTokens: 60,
    temperature: 0.8,
    seed: 4000,
    eosTokenId: tok.special.eos,
  });
  assert.deepEqual(
    free.tokens.map((g) => g.id),
    Array.from(direct),
  );
  assert.equal(free.forced, 0);
  const a = C.samplePoemMasked(model, tok, { lineLen: 5, temperature: 0.8, seed: 1 });
  assert.equal(C.checkForm(a).ok, true);
  const mask = new Float32Array(16).fill(1);
  mask[0] = 0;
  const b = C.samplePoemMasked(model, tok, { lineLen: 5, temperature: 0.8, seed: 1, headMask: mask });
  assert.equal(C.checkForm(b).ok, true);
  assert.notDeepEqual(a, b);
  // §8.1: the same architecture at random is near uniform and near ln V
  const poems = C.parseHeldOut(read('held-out.jsonl').toString())
    .filter((p) => p.split === 'test')
    .slice(0, 4);
  const inputs = poems.map((p) => poemFromText(tok, p.text, p.strains));
  const trained = headScores(model, inputs).entropy;
  const random = attn.createModel({ ...model.config, seed: 1 });
  const rm = headScores(random, inputs).entropy;
  const mean = (e) => e.mean.flat().reduce((x, y) => x + y, 0) / e.mean.flat().length;
  assert.ok(Math.abs(mean(rm) - rm.uniform) < 0.01, `${mean(rm)} vs ${rm.uniform}`);
  assert.ok(mean(trained) < rm.uniform - 0.3);
  // the random model's poem stops at its fourth line too, even when the form forced the last 。 (no run of [EOS])
  for (const seed of [1, 2, 3]) {
    const rp = C.generatePoem(random, tok, { temperature: 0.8, seed, lineLen: 7 });
    assert.equal(rp.tokens.length, 32, rp.tokens.map((g) => g.s).join(''));
    assert.equal(rp.tokens.at(-1).s, '。');
    assert.ok(rp.tokens.every((g) => g.s !== '[EOS]'));
    assert.deepEqual(rp.form, { ok: true, lineLen: 7 });
  }
  random.dispose();
});

test("the chapter's one held-out loss: all held-out poems, their character count, and heads.json's PyTorch value", async () => {
  const { model, tok } = await poemModel();
  const poems = C.parseHeldOut(read('held-out.jsonl').toString()).filter((p) => p.split === 'test');
  const inputs = poems.map((p) => poemFromText(tok, p.text, p.strains));
  const heads = JSON.parse(read('heads.json'));
  assert.equal(inputs.length, heads.poems.test);
  // every character of every poem is a target, plus the [EOS] after it ([BOS] is only ever an input)
  const chars = poems.reduce((a, p) => a + [...p.text].length, 0);
  assert.equal(C.targetCount(inputs), chars + poems.length);
  // the page's facts line quotes heads.json's loss; it is meanLoss over the same poems (attnlab vs the PyTorch reference)
  const slices = [0, 100, 200, 300].map((i) => inputs.slice(i, i + 100));
  const sliced = slices.reduce((a, s) => a + meanLoss(model, s) * C.targetCount(s), 0) / C.targetCount(inputs);
  assert.ok(Math.abs(sliced - heads.loss.test) < 1e-4, `${sliced} vs ${heads.loss.test}`);
  assert.ok(Math.abs(meanLoss(model, inputs.slice(0, 100)) - meanLoss(model, slices[0])) < 1e-9);
});
