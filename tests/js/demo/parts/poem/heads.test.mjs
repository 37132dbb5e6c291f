// Mirrors web/demo/parts/poem/heads.js: where each character of a quatrain sits, the patterns' keys, and the head
// scores, entropies and names of synthetic attention whose answer is known (a head that always looks one back scores
// 1 on 'previous'; a uniform causal head scores the uniform baseline); the loss of known logits; heads.json's reader
// on a fixture of scripts/poems/heads.mjs's format; the "guess first" answer of the ablation table, from heads.json.
import assert from 'node:assert/strict';
import test from 'node:test';
import fs from 'node:fs';
import path from 'node:path';

import {
  ablationAnswer,
  bestPatternScores,
  NAME_MIN_LIFT,
  NAME_MIN_SCORE,
  PATTERNS,
  accumulateEntropy,
  accumulateHeadScores,
  nameHeads,
  poemFromText,
  poemPositions,
  readHeadsJson,
  sequenceEntropy,
  sequenceLoss,
} from '../../../../../web/demo/parts/poem/heads.js';
import { charTokenizer } from '../../../../../web/demo/shared/char-tokenizer.js';
import { DEMO } from '../../helpers.mjs';

// 床前明月光，疑是地上霜。举头望明月，低头思故乡。 with BOS and EOS
const POEM = ['[BOS]', ...'床前明月光，疑是地上霜。举头望明月，低头思故乡。', '[EOS]'];
const STRAINS = [...'平平平仄平，平仄仄仄平。仄平仄平仄，平平平仄平。'];

test('poemPositions: lines, columns, line ends and tones of a five-character quatrain', () => {
  const pos = poemPositions(POEM, STRAINS);
  assert.equal(pos.length, POEM.length);
  assert.equal(pos[0].special, true);
  assert.deepEqual([pos[1].line, pos[1].column], [0, 0]); // 床
  assert.deepEqual([pos[8].line, pos[8].column], [1, 1]); // 是
  assert.equal(pos[6].punct, true); // ，
  assert.deepEqual(
    pos.flatMap((p, i) => (p.lastChar ? [POEM[i]] : [])),
    ['光', '霜', '月', '乡'],
  );
  assert.equal(pos[2].tone, '平'); // 前
  assert.equal(pos[9].tone, '仄'); // 地
  assert.equal(pos[25].special, true); // [EOS]
});

test('patterns: the keys each query predicts', () => {
  const pos = poemPositions(POEM, STRAINS);
  const at = (ch, from = 0) => POEM.indexOf(ch, from);
  assert.deepEqual(PATTERNS.previous(pos, at('前')), [at('床')]);
  assert.deepEqual(PATTERNS.couplet(pos, at('是')), [at('前')]); // line 2, column 1 → line 1, column 1
  assert.deepEqual(PATTERNS.couplet(pos, at('举')), []); // line 3 answers nothing above it
  assert.deepEqual(PATTERNS.rhyme(pos, at('乡')), [at('光'), at('霜'), at('月', at('举'))]);
  assert.deepEqual(PATTERNS.rhyme(pos, at('思')), []);
  assert.deepEqual(PATTERNS.lineStart(pos, at('故')), [at('低')]);
  // 是 (仄) at column 1 of line 2 against 前 (平) at column 1 of line 1: the tones alternate
  assert.deepEqual(PATTERNS.tone(pos, at('是')), [at('前')]);
  // 头 (平) at column 1 of line 4 against 头 (平) of line 3: no alternation, not counted
  assert.deepEqual(PATTERNS.tone(pos, POEM.lastIndexOf('头')), []);
  assert.deepEqual(PATTERNS.bos(pos, at('月')), [0]);
  assert.deepEqual(PATTERNS.punctuation(pos, at('疑')), [0, at('，')]);
});

test('accumulateHeadScores: a look-one-back head scores 1 on previous, a uniform head the baseline', () => {
  const pos = poemPositions(POEM, STRAINS);
  const t = POEM.length;
  const data = new Float32Array(2 * t * t);
  for (let i = 0; i < t; i++) {
    data[i * t + Math.max(0, i - 1)] = 1; // head 0: the previous token
    for (let j = 0; j <= i; j++) data[(t + i) * t + j] = 1 / (i + 1); // head 1: uniform over the causal keys
  }
  const acc = Object.fromEntries(
    Object.keys(PATTERNS).map((name) => [name, { mass: new Float64Array(2), baseline: 0, count: 0 }]),
  );
  accumulateHeadScores([{ data, shape: [1, 2, t, t] }], pos, acc);
  const prev = acc.previous;
  assert.ok(prev.count > 20);
  assert.ok(Math.abs(prev.mass[0] / prev.count - 1) < 1e-6);
  assert.ok(Math.abs(prev.mass[1] / prev.count - prev.baseline / prev.count) < 1e-6);
  assert.ok(acc.couplet.mass[0] / acc.couplet.count < 0.01); // the look-back head never looks a line back
});

test('accumulateEntropy: a one-hot head has entropy 0, a uniform head ln(i + 1) on every row', () => {
  const t = 6;
  const data = new Float32Array(2 * t * t);
  for (let i = 0; i < t; i++) {
    data[i * t] = 1; // head 0: all on the first key
    for (let j = 0; j <= i; j++) data[(t + i) * t + j] = 1 / (i + 1);
  }
  const acc = { sum: new Float64Array(2), uniform: 0, rows: 0 };
  accumulateEntropy([{ data, shape: [1, 2, t, t] }], acc);
  let uniform = 0;
  for (let i = 1; i < t; i++) uniform += Math.log(i + 1);
  assert.equal(acc.rows, t - 1);
  assert.equal(acc.sum[0], 0);
  assert.ok(Math.abs(acc.sum[1] - uniform) < 1e-5);
  assert.ok(Math.abs(acc.uniform - uniform) < 1e-12);
});

test('sequenceEntropy: per head the mean of accumulateEntropy over the rows i ≥ 1, beside mean ln(i + 1)', () => {
  const t = 4;
  const data = new Float32Array(2 * t * t);
  for (let i = 0; i < t; i++) {
    data[i * t] = 1;
    for (let j = 0; j <= i; j++) data[(t + i) * t + j] = 1 / (i + 1);
  }
  const e = sequenceEntropy([{ data, shape: [1, 2, t, t] }]);
  const uniform = (Math.log(2) + Math.log(3) + Math.log(4)) / 3;
  assert.equal(e.rows, t - 1);
  assert.deepEqual(e.mean[0].length, 2);
  assert.equal(e.mean[0][0], 0);
  assert.ok(Math.abs(e.mean[0][1] - uniform) < 1e-6);
  assert.ok(Math.abs(e.uniform - uniform) < 1e-12);
});

test('sequenceLoss: the mean next-token cross-entropy of known logits', () => {
  const logits = new Float32Array([0, 0, Math.log(3), 0, 0, 0]); // V = 3, two rows
  assert.ok(Math.abs(sequenceLoss(logits, [0, 2, 1], 3) - (-Math.log(3 / 5) + Math.log(3)) / 2) < 1e-6);
});

/** heads.json as scripts/poems/heads.mjs writes it, for a model of 2 layers × 2 heads. */
function headsFixture() {
  const lh = (v) => [
    [v, v],
    [v, v],
  ];
  return {
    model: 'tang-song-quatrains-char-llama',
    poems: { test: 400, neighbour: 100 },
    loss: { test: 4.9, neighbour: 5.6 },
    patterns: Object.fromEntries(Object.keys(PATTERNS).map((n) => [n, { score: lh(0.2), baseline: 0.1, count: 99 }])),
    entropy: { mean: lh(1.1), uniform: 2.6, rows: 9000 },
    ablation: { base: 4.9, delta: lh(0.01) },
    names: lh({ pattern: 'previous', score: 0.6, lift: 6 }),
  };
}

test('readHeadsJson: exactly the fields heads.mjs writes, L × H tables; anything else throws', () => {
  const json = headsFixture();
  const cfg = { numLayers: 2, numHeads: 2 };
  const read = readHeadsJson(json, cfg);
  assert.deepEqual(read, json);
  assert.throws(() => readHeadsJson(json, { numLayers: 4, numHeads: 4 }), /4 × 4/);
  const { ablation, ...noAblation } = json;
  assert.ok(ablation);
  assert.throws(() => readHeadsJson(noAblation, cfg), /ablation/);
  assert.throws(() => readHeadsJson({ ...json, scores: json.patterns, patterns: undefined }, cfg), /patterns/);
  assert.throws(() => readHeadsJson({ ...json, entropy: [[1, 1]] }, cfg), /entropy\.mean/);
  const { tone, ...fewer } = json.patterns;
  assert.ok(tone);
  assert.throws(() => readHeadsJson({ ...json, patterns: fewer }, cfg), /tone/);
});

test('nameHeads: the most specific pattern (highest lift) above both thresholds, else none', () => {
  const patterns = {
    previous: { score: [[0.9, 0.2, 0.35, 0.4]], baseline: 0.2 },
    bos: { score: [[0.05, 0.25, 0.5, 0.3]], baseline: 0.2 },
    tone: { score: [[0, 0, 0, 0.32]], baseline: 0.05 },
  };
  const names = nameHeads(patterns)[0];
  assert.equal(names[0].pattern, 'previous');
  assert.ok(Math.abs(names[0].lift - 4.5) < 1e-12);
  assert.equal(names[1].pattern, ''); // 0.25 is below NAME_MIN_SCORE
  assert.equal(names[2].pattern, 'bos'); // 0.5 (lift 2.5) beats previous's 0.35 (lift 1.75, below NAME_MIN_LIFT)
  assert.equal(names[3].pattern, 'tone'); // lift 6.4 beats previous's 2: less mass, far more specific
  assert.ok(NAME_MIN_SCORE > 0.25 && NAME_MIN_LIFT > 1.75);
});

test('poemFromText: [BOS] text [EOS], tokens as strings, tone labels by character', () => {
  const tokens = ['[PAD]', '[UNK]', '[BOS]', '[EOS]', '，', '。', ...'床前明月光疑是地上霜'];
  const tokenizer = charTokenizer({
    model: { type: 'WordLevel', vocab: Object.fromEntries(tokens.map((t, i) => [t, i])), unk_token: '[UNK]' },
  });
  const poem = poemFromText(tokenizer, '床前明月光，疑是地上霜。', ['平平平仄平，平仄仄仄平。']);
  assert.deepEqual(Array.from(poem.ids), [2, 6, 7, 8, 9, 10, 4, 11, 12, 13, 14, 15, 5, 3]);
  assert.deepEqual(poem.chars, ['[BOS]', ...'床前明月光，疑是地上霜。', '[EOS]']);
  assert.deepEqual(poem.strains, [...'平平平仄平，平仄仄仄平。']);
  assert.equal(poemFromText(tokenizer, '床前', ['平平平']).strains, undefined); // misaligned labels are dropped
});

test('ablationAnswer: the head whose removal costs most, its sharpness rank and the sharpest head (synthetic)', () => {
  const heads = {
    entropy: {
      mean: [
        [2.0, 0.5],
        [1.0, 1.5],
      ],
      uniform: 2.2,
    },
    ablation: {
      delta: [
        [0.9, 0.01],
        [0.2, 0.3],
      ],
    },
  };
  const a = ablationAnswer(heads);
  assert.deepEqual(a.top, { layer: 0, head: 0, delta: 0.9, entropy: 2.0 });
  assert.deepEqual(a.sharpest, { layer: 0, head: 1, delta: 0.01, entropy: 0.5 });
  assert.equal(a.rank, 4, 'the flattest of four heads');
  assert.equal(a.heads, 4);
  assert.equal(a.uniform, 2.2);
});

test("ablationAnswer on the shipped heads.json: the answer is the ablation table's largest delta", () => {
  const file = path.join(DEMO, 'models/tang-song-quatrains-char-llama/heads.json');
  const json = readHeadsJson(JSON.parse(fs.readFileSync(file, 'utf8')), { numLayers: 4, numHeads: 4 });
  const a = ablationAnswer(json);
  const flat = json.ablation.delta.flat();
  const k = flat.indexOf(Math.max(...flat));
  assert.deepEqual([a.top.layer, a.top.head], [Math.floor(k / 4), k % 4]);
  assert.equal(a.top.delta, Math.max(...flat));
  assert.equal(a.top.entropy, json.entropy.mean[a.top.layer][a.top.head]);
  const ents = json.entropy.mean.flat();
  assert.equal(a.sharpest.entropy, Math.min(...ents));
  assert.equal(a.rank, 1 + ents.filter((e) => e < a.top.entropy).length);
  // what the answer says: the costliest head is not the sharpest, and the sharpest costs far less
  assert.ok(a.rank > 1 && a.sharpest.delta < a.top.delta / 10, JSON.stringify(a));
});

test('bestPatternScores: the highest head per pattern with queries, beside its baseline', () => {
  const patterns = {
    previous: {
      score: [
        [0.1, 0.7],
        [0.4, 0.2],
      ],
      baseline: 0.1,
      count: 20,
    },
    rhyme: {
      score: [
        [0.3, 0.05],
        [0.9, 0.2],
      ],
      baseline: 0.08,
      count: 2,
    },
    tone: {
      score: [
        [0, 0],
        [0, 0],
      ],
      baseline: 0,
      count: 0,
    },
  };
  assert.deepEqual(bestPatternScores(patterns), {
    previous: { best: 0.7, baseline: 0.1 },
    rhyme: { best: 0.9, baseline: 0.08 },
  });
});
