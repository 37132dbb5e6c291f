// scripts/poems/heads.mjs on the shipped poem model (web/demo/models/tang-song-quatrains-char-llama/): its held-out
// loss and the effect of removing each head against PyTorch's (tests/fixtures/poem-model/expected.json, float64
// from the same files), the committed heads.json against a fresh measurement, and the heads the model actually has,
// above the thresholds docs/poem-model.md states.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { init } from '../../dist/index.mjs';
import { loadPoemModel, measureHeads, readPoems } from '../../scripts/poems/heads.mjs';
import { root } from './helpers.mjs';

const dir = join(root, 'web/demo/models/tang-song-quatrains-char-llama');
const expected = JSON.parse(readFileSync(join(root, 'tests/fixtures/poem-model/expected.json'), 'utf8'));
const committed = JSON.parse(readFileSync(join(dir, 'heads.json'), 'utf8'));

let model;
let measured;
before(async () => {
  // The variant heads.mjs uses: wasm is deterministic across CPUs, so the measurement reproduces heads.json.
  const attn = await init({ variant: 'simd' });
  const loaded = await loadPoemModel(attn, dir);
  model = loaded.model;
  measured = measureHeads(model, readPoems(join(dir, 'held-out.jsonl'), loaded.tokenizer));
});
after(() => model?.dispose());

test('the held-out loss and every head ablation agree with PyTorch', () => {
  for (const split of ['test', 'neighbour']) {
    assert.ok(Math.abs(measured.loss[split] - expected.loss[split]) < 2e-4, `${split}: ${measured.loss[split]}`);
  }
  measured.ablation.delta.forEach((row, l) =>
    row.forEach((d, h) => {
      const want = expected.ablation_delta_test[l][h];
      assert.ok(Math.abs(d - want) < 2e-4, `layer ${l + 1} head ${h + 1}: ${d} vs PyTorch ${want}`);
    }),
  );
});

test('heads.json is what heads.mjs measures now', () => {
  const close = (a, b, path) => {
    if (typeof a === 'number') assert.ok(Math.abs(a - b) <= 1e-5 * Math.max(1, Math.abs(b)), `${path}: ${a} vs ${b}`);
    else if (Array.isArray(a) || (a && typeof a === 'object')) {
      assert.deepEqual(Object.keys(a).sort(), Object.keys(b).sort(), path);
      for (const k of Object.keys(a)) close(a[k], b[k], `${path}.${k}`);
    } else assert.equal(a, b, path);
  };
  const { model: name, ...rest } = committed;
  assert.equal(name, 'tang-song-quatrains-char-llama');
  close(rest, JSON.parse(JSON.stringify(measured)), 'heads.json');
});

test('the model beats the character bigram on held-out quatrains', () => {
  const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'));
  assert.ok(measured.loss.test < 4.4, `test loss ${measured.loss.test}`);
  assert.ok(measured.loss.test < summary.bigram.test - 1, `bigram ${summary.bigram.test}`);
});

test('the heads it has: previous-character, punctuation and 平仄 heads; a uniform-looking first layer that matters', () => {
  const score = (pattern, l, h) => measured.patterns[pattern].score[l - 1][h - 1];
  const lift = (pattern, l, h) => score(pattern, l, h) / measured.patterns[pattern].baseline;
  for (const [l, h] of [
    [2, 2],
    [3, 2],
    [4, 3],
  ]) {
    assert.ok(score('previous', l, h) >= 0.4, `previous ${l}.${h}: ${score('previous', l, h)}`);
  }
  assert.ok(score('punctuation', 2, 4) >= 0.6);
  assert.ok(score('tone', 3, 4) >= 0.25 && lift('tone', 3, 4) >= 3, `平仄 3.4: ${score('tone', 3, 4)}`);
  assert.equal(measured.names[2][3].pattern, 'tone');
  const { mean, uniform } = measured.entropy;
  for (const e of mean[0]) assert.ok(e >= 0.9 * uniform, `layer 1 entropy ${e} of ${uniform}`);
  assert.ok(measured.ablation.delta[0][0] >= 0.8, `removing 1.1: ${measured.ablation.delta[0][0]}`);
  assert.deepEqual(
    measured.names[0].map((n) => n.pattern),
    ['', '', '', ''],
  );
});
