// Mirrors web/demo/shared/char-tokenizer.js, against @huggingface/tokenizers (the library the file is written for)
// on the poem model's tokenizer.json: the same ids on held-out poems, a character outside the BMP, unknowns; and
// fromText, a pasted text's vocabulary in the same WordLevel form.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import test from 'node:test';
import { Tokenizer } from '@huggingface/tokenizers';

import { charTokenizer, fromText } from '../../../../web/demo/shared/char-tokenizer.js';

const dir = new URL('../../../../web/demo/models/tang-song-quatrains-char-llama/', import.meta.url);
const json = JSON.parse(readFileSync(new URL('tokenizer.json', dir), 'utf8'));
const config = JSON.parse(readFileSync(new URL('tokenizer_config.json', dir), 'utf8'));
const poems = readFileSync(new URL('held-out.jsonl', dir), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l).text);

test('charTokenizer: the ids of @huggingface/tokenizers on the held-out poems and on edge cases', () => {
  const mine = charTokenizer(json);
  const theirs = new Tokenizer(json, config);
  const astral = mine.tokens.find((t) => t.codePointAt(0) > 0xffff);
  assert.ok(astral, 'the vocabulary has a character outside the BMP');
  for (const text of [...poems.slice(0, 200), `${astral}月，\u{2A6D6}α。`]) {
    assert.deepEqual(Array.from(mine.encode(text)), theirs.encode(text).ids, text);
  }
  const ids = mine.encode(`${astral}月`);
  assert.equal(ids.length, 3); // [BOS], one token for the astral character, 月
  assert.equal(mine.decode(ids), `${astral}月`);
  assert.equal(mine.encode('\u{2A6D6}', { bos: false })[0], mine.special.unk);
  assert.deepEqual(mine.special, { pad: 0, unk: 1, bos: 2, eos: 3 });
});

test('charTokenizer: refuses a tokenizer that is not word-level', () => {
  assert.throws(() => charTokenizer({ model: { type: 'BPE', vocab: {} } }), /WordLevel/);
});

test('fromText: the specials, then code points by count; the same tokenizer type as the shipped file', () => {
  const own = fromText('ab，cb。𠀀b', 100);
  // b three times, then the rest once each, by code point (a c 。 U+3002 ， U+FF0C 𠀀 U+20000)
  assert.deepEqual(own.tokens, ['[PAD]', '[UNK]', '[BOS]', '[EOS]', 'b', 'a', 'c', '。', '，', '𠀀']);
  assert.deepEqual(own.special, { pad: 0, unk: 1, bos: 2, eos: 3 });
  assert.deepEqual(Array.from(own.encode('𠀀a')), [2, 9, 5]); // [BOS] in front, one token outside the BMP
  assert.equal(own.decode(own.encode('𠀀a')), '𠀀a');
  assert.deepEqual(own.json.model.vocab, Object.fromEntries(own.tokens.map((t, i) => [t, i])));
  assert.deepEqual(charTokenizer(own.json).tokens, own.tokens);
  const small = fromText('abcabd', 6); // room for a and b only
  assert.deepEqual(small.tokens.slice(4), ['a', 'b']);
  assert.equal(small.encode('d', { bos: false })[0], small.special.unk);
});
