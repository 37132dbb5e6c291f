#!/usr/bin/env node
// The couplet chapter's picker (issue 34 §1; docs/couplet-model.md): regulated verses of the Tang test split (never
// trained on), chosen by the SHA-256 of their id (the smallest hashes first, as many 五言 as 七言), each with its 4
// couplets (k = 1 首联 … 4 尾联), author and title → the model folder's held-out.jsonl, one poem a line. The same
// data gives the same file.
//
//   node scripts/couplet/held-out.mjs [--data DIR] [--poems N] [--out FILE]
//
// --data   prepare.mjs's output (default <cache>/couplet/data; <cache> is $ATTNLAB_CACHE, else ~/.cache/attnlab)
// --poems  how many poems (default 48, half 五言, half 七言)
// --out    default web/demo/models/song-couplet-char-marian/held-out.jsonl
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultCache } from '../poems/cache.mjs';
import { MODEL, parseArgs } from './args.mjs';

const hashOf = (id) => createHash('sha256').update(id).digest('hex');

/** test.jsonl's pairs → poems { id, form, author, title, couplets } with all 4 couplets. */
export function poemsOf(jsonl) {
  const byId = new Map();
  for (const line of jsonl.split('\n')) {
    if (!line) continue;
    const p = JSON.parse(line);
    if (!byId.has(p.id)) byId.set(p.id, { id: p.id, form: p.form, author: p.author, title: p.title, couplets: [] });
    byId.get(p.id).couplets.push({ k: p.couplet, upper: p.upper, lower: p.lower });
  }
  return [...byId.values()].filter((p) => p.couplets.map((c) => c.k).join() === '1,2,3,4');
}

/** The first n / 2 poems of each form by hash of the id, then by form and hash. */
export function pick(poems, n) {
  const out = [];
  for (const form of ['lushi5', 'lushi7']) {
    const same = poems.filter((p) => p.form === form).map((p) => ({ p, h: hashOf(p.id) }));
    same.sort((a, b) => (a.h < b.h ? -1 : a.h > b.h ? 1 : 0));
    out.push(...same.slice(0, Math.ceil(n / 2)).map((x) => x.p));
  }
  return out;
}

function main() {
  const args = parseArgs(
    process.argv.slice(2),
    { data: join(defaultCache(), 'couplet/data'), poems: 48, out: join(MODEL, 'held-out.jsonl') },
    import.meta.url,
  );
  const poems = pick(poemsOf(readFileSync(join(args.data, 'test.jsonl'), 'utf8')), args.poems);
  writeFileSync(args.out, poems.map((p) => JSON.stringify(p)).join('\n') + '\n');
  process.stderr.write(`wrote ${args.out} (${poems.length} poems)\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
