// scripts/couplet/prepare.mjs (the couplet model's data, docs/couplet-model.md) on a fixture slice of chinese-poetry
// 2.0.1 (tests/fixtures/couplet/): Song regulated verses train (by bucket) or validate, Tang ones are the test domain
// only (never in the vocabulary), each verse's 4 couplets as (upper, lower) pairs, the token records, the tokenizer
// that appends [EOS], and determinism. Nothing is fetched (--source reads the slice).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Tokenizer } from '@huggingface/tokenizers';
import { pairsOf } from '../../scripts/couplet/prepare.mjs';
import { readJsonl, root, splitBucket } from './helpers.mjs';

function prepare(out) {
  const script = join(root, 'scripts/couplet/prepare.mjs');
  const source = join(root, 'tests/fixtures/couplet/dist');
  const args = [script, '--source', source, '--out', out, '--min-count', '1'];
  return JSON.parse(execFileSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
}

// <split>.u16 → [{ n, k, upper ids, lower ids }].
function records(file) {
  const ids = [...new Uint16Array(new Uint8Array(readFileSync(file)).buffer)];
  const out = [];
  for (let i = 0; i < ids.length;) {
    const n = ids[i];
    out.push({ n, k: ids[i + 1], upper: ids.slice(i + 2, i + 2 + n), lower: ids.slice(i + 2 + n, i + 2 + 2 * n) });
    i += 2 + 2 * n;
  }
  return out;
}

test('pairsOf: a regulated verse is 4 couplets, upper and lower lines of equal length', () => {
  const poem = { id: 'x', era: 'tang', form: 'lushi5', author: 'a', title: 't' };
  const pairs = pairsOf({
    ...poem,
    text: '国破山河在，城春草木深。感时花溅泪，恨别鸟惊心。烽火连三月，家书抵万金。白头搔更短，浑欲不胜簪。',
  });
  assert.deepEqual(
    pairs.map((p) => [p.couplet, p.upper, p.lower]),
    [
      [1, '国破山河在', '城春草木深'],
      [2, '感时花溅泪', '恨别鸟惊心'],
      [3, '烽火连三月', '家书抵万金'],
      [4, '白头搔更短', '浑欲不胜簪'],
    ],
  );
  assert.equal(pairs[0].id, 'x');
});

test('prepare.mjs on the fixture slice: Song trains, Tang tests', async () => {
  const out = mkdtempSync(join(tmpdir(), 'attnlab-couplet-'));
  const again = mkdtempSync(join(tmpdir(), 'attnlab-couplet-'));
  try {
    const stats = prepare(out);
    assert.deepEqual(stats.regulated, { kept: 8, changedByConversion: 0, duplicate: 0 });
    const counts = Object.fromEntries(Object.entries(stats.splits).map(([k, v]) => [k, [v.poems, v.pairs]]));
    assert.deepEqual(counts, { train: [5, 20], validation: [1, 4], test: [2, 8] });
    const split = Object.fromEntries(
      ['train', 'validation', 'test'].map((s) => [s, readJsonl(join(out, `${s}.jsonl`))]),
    );
    for (const p of split.train) assert.ok(p.era === 'song' && splitBucket(p.id) < 95, p.id);
    for (const p of split.validation) assert.ok(p.era === 'song' && splitBucket(p.id) >= 95, p.id);
    for (const p of split.test) assert.equal(p.era, 'tang');
    assert.deepEqual(
      split.test.filter((p) => p.title === '春望').map((p) => p.couplet),
      [1, 2, 3, 4],
    );

    // The vocabulary holds Song training characters only: a character of the Tang test lines alone is [UNK].
    const { tokens } = JSON.parse(readFileSync(join(out, 'vocab.json'), 'utf8'));
    const trainText = split.train.map((p) => p.upper + p.lower).join('');
    assert.ok(!trainText.includes('鹉') && !tokens.includes('鹉'));
    assert.ok(tokens.includes('松'));

    // The records: n, k, then the lines' ids, as the JSON lines say.
    const idOf = new Map(tokens.map((t, i) => [t, i]));
    for (const name of ['train', 'validation', 'test']) {
      const recs = records(join(out, `${name}.u16`));
      assert.equal(recs.length, split[name].length);
      recs.forEach((r, i) => {
        const p = split[name][i];
        assert.equal(r.n, [...p.upper].length);
        assert.equal(r.k, p.couplet);
        assert.deepEqual(
          r.upper,
          [...p.upper].map((c) => idOf.get(c) ?? 1),
        );
        assert.deepEqual(
          r.lower,
          [...p.lower].map((c) => idOf.get(c) ?? 1),
        );
      });
    }

    // The shipped tokenizer appends [EOS] (3), as the encoder reads the upper line.
    const tokenizer = JSON.parse(readFileSync(join(out, 'tokenizer.json'), 'utf8'));
    const config = JSON.parse(readFileSync(join(out, 'tokenizer_config.json'), 'utf8'));
    const { upper } = split.train[0];
    assert.deepEqual(new Tokenizer(tokenizer, config).encode(upper).ids, [...[...upper].map((c) => idOf.get(c)), 3]);
    // Every held-out line, and verifyTokenizer's own 2 probes (a character outside the BMP, a symbol).
    assert.equal(stats.tokenizerCheck.roundTrips + stats.tokenizerCheck.withUnknown, 2 * (4 + 8) + 2);

    assert.deepEqual(prepare(again).sha256, stats.sha256);
  } finally {
    rmSync(out, { recursive: true, force: true });
    rmSync(again, { recursive: true, force: true });
  }
});
