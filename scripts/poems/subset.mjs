#!/usr/bin/env node
// The poem chapter's training subset (issue 37 item 1; docs/poem-model.md, "The page's training subset"): the
// quatrains of the poem model's training split whose id falls into the first SUBSET_BUCKETS of its 90 training
// buckets, one poem per line, for the page's "train from scratch" (§10.1), which must not train on the held-out
// poems it is probed on.
//
//   node scripts/poems/subset.mjs [--cache DIR] [--source DIST] [--out FILE]
//
// --cache, --source  as scripts/poems/prepare.mjs (the same selection: scripts/poems/select.mjs)
// --out              default web/demo/models/tang-song-quatrains-char-llama/train-subset.txt
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensurePoetry, importTool, parseDataArgs } from './cache.mjs';
import { bucketOf, selectPoems, sha256, splitPoems } from './select.mjs';

/** Training buckets 0 … SUBSET_BUCKETS − 1 of 90: about 5,000 quatrains. */
export const SUBSET_BUCKETS = 5;
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DEFAULT_OUT = join(root, 'web/demo/models/tang-song-quatrains-char-llama/train-subset.txt');

/** The subset's poems (text with punctuation), in the training split's order. */
export function subsetOf(train) {
  return train.filter((p) => bucketOf(p.id) < SUBSET_BUCKETS).map((p) => p.text);
}

async function main() {
  const argv = process.argv.slice(2);
  const i = argv.indexOf('--out');
  const out = i >= 0 ? argv.splice(i, 2)[1] : DEFAULT_OUT;
  const args = parseDataArgs(argv, 'poems/data');
  const dist = args.source ?? ensurePoetry(args.cache);
  const opencc = await importTool('opencc-js');
  const stats = { files: 0, poems: 0, rejectedTwoOrFourParagraphs: 0 };
  for (const kind of ['quatrain', 'regulated']) stats[kind] = { kept: 0, changedByConversion: 0, duplicate: 0 };
  const { train } = splitPoems(selectPoems(dist, opencc.Converter({ from: 't', to: 'cn' }), stats));
  const poems = subsetOf(train);
  const text = poems.join('\n') + '\n';
  writeFileSync(out, text);
  const chars = poems.reduce((n, p) => n + [...p].length, 0);
  const summary = { poems: poems.length, of: train.length, characters: chars, bytes: Buffer.byteLength(text) };
  process.stdout.write(JSON.stringify({ ...summary, sha256: sha256(text) }, null, 2) + '\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((e) => {
    process.stderr.write(`${e.stack ?? e}\n`);
    process.exit(1);
  });
}
