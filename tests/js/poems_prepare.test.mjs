// scripts/poems/prepare.mjs (the poem model's data, docs/poem-model.md) on a fixture slice of chinese-poetry 2.0.1
// (tests/fixtures/poems/): the quatrain filter, the conversion to simplified characters, the split by poem, the
// vocabulary from the training split only, code-point tokens (one outside the BMP), the token files, the held-out
// JSON lines with their tone labels, and determinism. The dev-time tools opencc-js and @huggingface/tokenizers are
// devDependencies; nothing is fetched (--source reads the slice).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { readJsonl, root, splitBucket } from './helpers.mjs';

function prepare(out) {
  const stdout = execFileSync(
    process.execPath,
    [
      join(root, 'scripts/poems/prepare.mjs'),
      '--source',
      join(root, 'tests/fixtures/poems/dist'),
      '--out',
      out,
      '--min-count',
      '1',
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return JSON.parse(stdout);
}

test('prepare.mjs on the fixture slice', () => {
  const out = mkdtempSync(join(tmpdir(), 'attnlab-poems-'));
  const again = mkdtempSync(join(tmpdir(), 'attnlab-poems-'));
  try {
    const stats = prepare(out);
    // 17 poems: 10 distinct quatrains kept, 1 duplicate text (under another id) dropped, 3 regulated verses; □ and ？
    // rejected; 3 paragraphs ignored.
    assert.equal(stats.poems, 17);
    assert.deepEqual(stats.quatrain, { kept: 10, changedByConversion: 0, duplicate: 1 });
    assert.deepEqual(stats.regulated, { kept: 3, changedByConversion: 0, duplicate: 0 });
    assert.equal(stats.rejectedTwoOrFourParagraphs, 2);
    const counts = Object.fromEntries(Object.entries(stats.splits).map(([k, v]) => [k, v.poems]));
    assert.deepEqual(counts, { train: 6, validation: 2, test: 2, neighbour: 1 });

    // The held-out poems: in the split their id's bucket says, simplified, with the traditional text and strains.
    const validation = readJsonl(join(out, 'validation.jsonl'));
    const testSplit = readJsonl(join(out, 'test.jsonl'));
    const neighbour = readJsonl(join(out, 'neighbour.jsonl'));
    for (const p of validation) assert.ok(splitBucket(p.id) >= 90 && splitBucket(p.id) < 95, p.id);
    for (const p of [...testSplit, ...neighbour]) assert.ok(splitBucket(p.id) >= 95, p.id);
    const zhu = validation.find((p) => p.author === '朱存');
    assert.equal(zhu.text, '牛头天际碧凝岚，王导无稽亦妄谈。若指远山为上阙，长安应合指终南。');
    assert.equal(zhu.traditional, '牛頭天際碧凝嵐，王導無稽亦妄談。若指遠山爲上闕，長安應合指終南。');
    assert.equal(zhu.form, 'jueju7');
    assert.equal(zhu.strains.length, 2);
    assert.equal([...zhu.strains[0]].length, 16);
    assert.equal(neighbour[0].form, 'lushi7');
    assert.ok(!readJsonl(join(out, 'test.jsonl')).some((p) => p.text.includes('□')));

    // Vocabulary: specials, punctuation, then the training split's characters only.
    const { tokens } = JSON.parse(readFileSync(join(out, 'vocab.json'), 'utf8'));
    assert.deepEqual(tokens.slice(0, 6), ['[PAD]', '[UNK]', '[BOS]', '[EOS]', '，', '。']);
    assert.equal(tokens.length, stats.vocab.size);
    assert.ok(tokens.includes('𦋺'), 'a character outside the BMP is one token');
    assert.ok(!tokens.includes('岚'), 'a character seen only in validation is not in the vocabulary');
    assert.ok(tokens.includes('床') || tokens.includes('牀'));

    // The token files: [BOS] text [EOS] per poem, one id per code point; held-out characters not in train → [UNK].
    const ids = (f) => [...new Uint16Array(new Uint8Array(readFileSync(join(out, f))).buffer)];
    const decode = (arr) => arr.map((i) => tokens[i]).join('');
    const train = decode(ids('train.u16'));
    assert.equal(train.split('[BOS]').length - 1, 6);
    assert.ok(train.includes('[BOS]春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。[EOS]'));
    assert.ok(train.includes('珠落璀璀白𦋺袍。[EOS]'));
    const val = ids('validation.u16');
    assert.equal(
      val.length,
      validation.reduce((n, p) => n + [...p.text].length + 2, 0),
    );
    assert.ok(val.includes(1), '[UNK] for characters the training split lacks');

    // The tokenizer was checked with @huggingface/tokenizers on every held-out poem.
    assert.equal(stats.tokenizerCheck.roundTrips + stats.tokenizerCheck.withUnknown, 5 + 3);

    // Deterministic: a second run writes the same bytes.
    assert.deepEqual(prepare(again).sha256, stats.sha256);
  } finally {
    rmSync(out, { recursive: true, force: true });
    rmSync(again, { recursive: true, force: true });
  }
});
