#!/usr/bin/env node
// The poem model's heads, measured (issue 26 item 3; docs/poem-model.md): on held-out poems, each head's attention
// mass on the patterns of web/demo/parts/poem/heads.js (previous character, 对仗 column, rhyme, punctuation,
// line start, 平仄, self, BOS) against uniform attention, its attention entropy, its name (the pattern it clearly
// follows, if any), and the held-out loss with it removed (headMask 0). Runs the model through the package's public
// API (dist/, built by scripts/build.sh), the same code the page runs.
//
//   node scripts/poems/heads.mjs [--model DIR] [--poems FILE] [--out FILE]
//
// --model  the model folder (default web/demo/models/tang-song-quatrains-char-llama)
// --poems  JSON lines of poems {split, text, strains} (default <model>/held-out.jsonl; prepare.mjs's test.jsonl or
//          neighbour.jsonl work too, their lines lacking `split` count as "test")
// --out    where the measurements go (default <model>/heads.json)
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { init, readSafetensors } from '../../dist/index.mjs';
import { charTokenizer } from '../../web/demo/shared/char-tokenizer.js';
import { headAblation, headScores, meanLoss, nameHeads, poemFromText } from '../../web/demo/parts/poem/heads.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function parseArgs(argv) {
  const args = { model: join(ROOT, 'web/demo/models/tang-song-quatrains-char-llama'), poems: null, out: null };
  for (let i = 0; i < argv.length; i += 2) {
    const key = { '--model': 'model', '--poems': 'poems', '--out': 'out' }[argv[i]];
    if (!key || argv[i + 1] === undefined) throw new Error(`heads.mjs: unknown or incomplete argument ${argv[i]}`);
    args[key] = argv[i + 1];
  }
  args.poems ??= join(args.model, 'held-out.jsonl');
  args.out ??= join(args.model, 'heads.json');
  return args;
}

/** The model folder → a Transformer and its tokenizer, through the public API (as the page loads it). */
export async function loadPoemModel(attn, dir) {
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  const tensors = readSafetensors(readFileSync(join(dir, 'model.safetensors')));
  const tokenizer = charTokenizer(JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8')));
  return { model: attn.loadModel({ config, tensors }), tokenizer };
}

/** JSON lines → poems by split, each { ids, chars, strains? } (quatrains and regulated verses alike). */
export function readPoems(file, tokenizer) {
  const bySplit = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue;
    const p = JSON.parse(line);
    (bySplit[p.split ?? 'test'] ??= []).push(poemFromText(tokenizer, p.text, p.strains));
  }
  return bySplit;
}

/** Numbers rounded for the JSON file (6 significant digits are far below the noise between poems). */
const round = (x) => (Array.isArray(x) ? x.map(round) : typeof x === 'number' ? Number(x.toPrecision(6)) : x);

/** Every measurement of the heads on the test poems, and the loss on each split. */
export function measureHeads(model, bySplit) {
  const test = bySplit.test;
  const { patterns, entropy } = headScores(model, test);
  const ablation = headAblation(model, test);
  const loss = Object.fromEntries(Object.entries(bySplit).map(([s, poems]) => [s, round(meanLoss(model, poems))]));
  const named = nameHeads(patterns);
  return {
    poems: Object.fromEntries(Object.entries(bySplit).map(([s, poems]) => [s, poems.length])),
    loss,
    patterns: Object.fromEntries(
      Object.entries(patterns).map(([name, p]) => [
        name,
        { score: round(p.score), baseline: round(p.baseline), count: p.count },
      ]),
    ),
    entropy: { mean: round(entropy.mean), uniform: round(entropy.uniform), rows: entropy.rows },
    ablation: { base: round(ablation.base), delta: round(ablation.delta) },
    names: named.map((row) => row.map((n) => ({ pattern: n.pattern, score: round(n.score), lift: round(n.lift) }))),
  };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const attn = await init({ variant: 'simd' });
  const { model, tokenizer } = await loadPoemModel(attn, args.model);
  try {
    const result = measureHeads(model, readPoems(args.poems, tokenizer));
    writeFileSync(args.out, JSON.stringify({ model: args.model.split('/').pop(), ...result }, null, 1) + '\n');
    for (const [l, row] of result.names.entries()) {
      const cells = row.map((n, h) => `${h + 1}:${n.pattern || '-'}(${n.score.toFixed(2)})`);
      process.stderr.write(`layer ${l + 1}: ${cells.join('  ')}\n`);
    }
    process.stderr.write(`loss ${JSON.stringify(result.loss)}; wrote ${args.out}\n`);
  } finally {
    model.dispose();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    process.stderr.write(`${e.stack ?? e}\n`);
    process.exit(1);
  });
}
