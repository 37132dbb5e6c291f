#!/usr/bin/env node
// The couplet model's data (issue 34 §1; docs/couplet-model.md): the couplets (联) of the regulated verses (五言/七言
// 律诗) of the npm package chinese-poetry 2.0.1 (MIT), in simplified characters, as (upper line → lower line) pairs.
// Song poems are the training domain, Tang poems the test domain: no Tang poem is trained on, chosen from, or
// counted in the vocabulary.
//
//   node scripts/couplet/prepare.mjs [--cache DIR] [--source DIST] [--out DIR] [--min-count N]
//
// --cache, --source  as scripts/poems/prepare.mjs (the same download cache and selection: scripts/poems/select.mjs)
// --out              where the prepared data goes (default <cache>/couplet/data)
// --min-count        Song training characters seen fewer times become [UNK] (default 2)
//
// Splits, by poem: Song regulated verses with bucket (scripts/poems/select.mjs bucketOf) < 95 → train, ≥ 95 →
// validation; every Tang regulated verse → test. A poem gives 4 pairs, its couplets k = 1 首联, 2 颔联, 3 颈联,
// 4 尾联 (颔联 and 颈联 must be parallel; 首联 and 尾联 are the control).
//
// Tokens: the poem model's conventions (scripts/poems/tokenizer.mjs: [PAD] 0, [UNK] 1, [BOS] 2 (unused here),
// [EOS] 3, "，", "。", then characters by count), framed as Hugging Face's seq2seq models are: the encoder reads the
// upper line + [EOS]; the labels are the lower line + [EOS]; the decoder reads [PAD] (decoder_start_token_id) + the
// lower line. The tokenizer.json's encode() appends [EOS].
//
// Output (--out): <split>.u16 (per pair, little-endian uint16: n, k, the upper line's n ids, the lower line's n ids,
// no specials), <split>.jsonl (id, era, form, couplet k, author, title, upper, lower), vocab.json, tokenizer.json,
// tokenizer_config.json (checked with @huggingface/tokenizers on every validation and test line), stats.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePoetry, importTool, parseDataArgs, POETRY } from '../poems/cache.mjs';
import { bucketOf, buildVocab, selectPoems, sha256 } from '../poems/select.mjs';
import { UNK, encodeChars, tokenizerJson, tokenizerConfigJson, verifyTokenizer } from '../poems/tokenizer.mjs';

const MAX_LINE = 8; // the longest encoder or decoder input: a 7-character line and [EOS] (or [PAD] first)
const COUPLET_NAMES = ['首联', '颔联', '颈联', '尾联'];

// Regulated verses by split: Song bucket < 95 train, Song ≥ 95 validation, Tang test.
export function splitVerses(regulated) {
  const splits = { train: [], validation: [], test: [] };
  for (const p of regulated) {
    if (p.era === 'tang') splits.test.push(p);
    else splits[bucketOf(p.id) < 95 ? 'train' : 'validation'].push(p);
  }
  return splits;
}

// A verse's 4 couplets as pairs { …record, couplet: k (1–4), upper, lower }.
export function pairsOf(poem) {
  const couplets = poem.text.match(/[^。]+。/gu) ?? [];
  return couplets.map((c, i) => {
    const [upper, lower] = c.slice(0, -1).split('，');
    const { id, era, form, author, title } = poem;
    return { id, era, form, couplet: i + 1, author, title, upper, lower };
  });
}

// <split>.u16 and <split>.jsonl; returns each split's counts.
function writeSplits(out, splits, idOf, written) {
  const stats = {};
  for (const [name, poems] of Object.entries(splits)) {
    const ids = [];
    const pairs = poems.flatMap(pairsOf);
    let unknown = 0;
    for (const p of pairs) {
      const upper = encodeChars(p.upper, idOf);
      const lower = encodeChars(p.lower, idOf);
      unknown += [...upper, ...lower].filter((x) => x === UNK).length;
      ids.push(upper.length, p.couplet, ...upper, ...lower);
    }
    const buf = Buffer.from(new Uint16Array(ids).buffer);
    writeFileSync(join(out, `${name}.u16`), buf);
    written[`${name}.u16`] = sha256(buf);
    const jsonl = pairs.map((p) => JSON.stringify(p)).join('\n') + '\n';
    writeFileSync(join(out, `${name}.jsonl`), jsonl);
    written[`${name}.jsonl`] = sha256(jsonl);
    const characters = pairs.reduce((s, p) => s + 2 * [...p.upper].length, 0);
    const forms = {};
    for (const p of poems) forms[p.form] = (forms[p.form] ?? 0) + 1;
    stats[name] = { poems: poems.length, pairs: pairs.length, forms, characters, unknown };
    stats[name].unknownRate = characters ? Number((unknown / characters).toFixed(6)) : 0;
  }
  return stats;
}

// vocab.json, tokenizer.json and tokenizer_config.json (frame 'eos'), checked with @huggingface/tokenizers.
async function writeTokenizer(out, vocab, counts, splits, written) {
  const vocabJson = JSON.stringify({ tokens: vocab, counts: vocab.map((t) => counts.get(t) ?? 0) }) + '\n';
  writeFileSync(join(out, 'vocab.json'), vocabJson);
  written['vocab.json'] = sha256(vocabJson);
  const tokenizer = tokenizerJson(vocab, { frame: 'eos' });
  const tokenizerConfig = tokenizerConfigJson(MAX_LINE, { frame: 'eos' });
  for (const [f, obj] of [
    ['tokenizer.json', tokenizer],
    ['tokenizer_config.json', tokenizerConfig],
  ]) {
    const s = JSON.stringify(obj, null, f === 'tokenizer.json' ? 0 : 2) + '\n';
    writeFileSync(join(out, f), s);
    written[f] = sha256(s);
  }
  const tok = await importTool('@huggingface/tokenizers');
  const lines = [...splits.validation, ...splits.test].flatMap(pairsOf).flatMap((p) => [p.upper, p.lower]);
  return verifyTokenizer(tok, tokenizer, tokenizerConfig, lines, vocab, { frame: 'eos' });
}

async function main() {
  const args = parseDataArgs(process.argv.slice(2), 'couplet/data');
  const dist = args.source ?? ensurePoetry(args.cache);
  const opencc = await importTool('opencc-js');
  const toSimplified = opencc.Converter({ from: 't', to: 'cn' });
  const source = args.source ? { dir: args.source } : { package: `${POETRY.name}@${POETRY.version}`, licence: 'MIT' };
  const stats = { source, files: 0, poems: 0, rejectedTwoOrFourParagraphs: 0 };
  for (const kind of ['quatrain', 'regulated']) stats[kind] = { kept: 0, changedByConversion: 0, duplicate: 0 };
  const splits = splitVerses(selectPoems(dist, toSimplified, stats).regulated);
  const { vocab, counts, info } = buildVocab(splits.train, args.minCount);
  const idOf = new Map(vocab.map((s, i) => [s, i]));
  mkdirSync(args.out, { recursive: true });
  const written = {};
  stats.couplets = COUPLET_NAMES;
  stats.splits = writeSplits(args.out, splits, idOf, written);
  stats.vocab = info;
  stats.tokenizerCheck = await writeTokenizer(args.out, vocab, counts, splits, written);
  stats.sha256 = written;
  writeFileSync(join(args.out, 'stats.json'), JSON.stringify(stats, null, 2) + '\n');
  process.stdout.write(JSON.stringify(stats, null, 2) + '\n');
  process.stderr.write(`couplet: wrote ${args.out}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((e) => {
    process.stderr.write(`${e.stack ?? e}\n`);
    process.exit(1);
  });
}
