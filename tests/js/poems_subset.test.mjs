// scripts/poems/subset.mjs (the page's training subset, docs/poem-model.md): the training split's quatrains of the
// first SUBSET_BUCKETS buckets; and the shipped train-subset.txt holds none of the poems the page holds out.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { SUBSET_BUCKETS, subsetOf } from '../../scripts/poems/subset.mjs';
import { readJsonl, root, splitBucket } from './helpers.mjs';

const FOLDER = join(root, 'web/demo/models/tang-song-quatrains-char-llama');

test('subsetOf: the training poems whose id falls in the first buckets, in order', () => {
  const train = Array.from({ length: 400 }, (_, i) => ({ id: `poem-${i}`, text: `t${i}` }));
  const expected = train.filter((p) => splitBucket(p.id) < SUBSET_BUCKETS).map((p) => p.text);
  assert.ok(expected.length > 0 && expected.length < 60, `${expected.length} of 400`);
  assert.deepEqual(subsetOf(train), expected);
});

test('train-subset.txt: quatrains only, none of them held out', () => {
  const lines = readFileSync(join(FOLDER, 'train-subset.txt'), 'utf8').split('\n').filter(Boolean);
  const heldOut = new Set(readJsonl(join(FOLDER, 'held-out.jsonl')).map((p) => p.text));
  assert.ok(lines.length > 4000, `${lines.length} poems`);
  for (const line of lines) {
    assert.ok(!heldOut.has(line), `held out: ${line}`);
    const parts = line.split(/[，。]/).filter(Boolean);
    assert.ok(parts.length === 4 && new Set(parts.map((s) => [...s].length)).size === 1, line);
    assert.ok([5, 7].includes([...parts[0]].length) && /^[^，。]+，[^，。]+。[^，。]+，[^，。]+。$/u.test(line), line);
  }
  assert.equal(new Set(lines).size, lines.length, 'each poem once');
});
