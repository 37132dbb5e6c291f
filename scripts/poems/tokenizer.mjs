// The poem model's tokenizer: one token per Unicode code point (docs/poem-model.md). Written as a Hugging Face
// tokenizer.json that the Rust `tokenizers` and the pure-JS @huggingface/tokenizers both read:
//   pre_tokenizer  Split on the regex "." (any code point but "\n"), behavior Isolated: every character is a piece;
//   model          WordLevel over the vocabulary, unknown characters → [UNK] (@huggingface/tokenizers 0.2 reads a
//                  WordLevel model as its "Legacy" model, which takes [UNK] from tokenizer_config.json: it is there);
//   post_processor TemplateProcessing "[BOS] $A": encode() prepends [BOS], as the model was trained (every poem is
//                  [BOS] text [EOS]); generation stops at [EOS];
//   decoder        Fuse: the characters are joined without spaces.
export const SPECIALS = ['[PAD]', '[UNK]', '[BOS]', '[EOS]'];
export const [PAD, UNK, BOS, EOS] = [0, 1, 2, 3];

// vocab: the tokens by id (SPECIALS first).
export function tokenizerJson(vocab) {
  SPECIALS.forEach((s, i) => {
    if (vocab[i] !== s) throw new Error(`vocab[${i}] must be ${s}`);
  });
  const ids = {};
  vocab.forEach((t, i) => (ids[t] = i));
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIALS.map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: null,
    pre_tokenizer: { type: 'Split', pattern: { Regex: '.' }, behavior: 'Isolated', invert: false },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[BOS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [
        { SpecialToken: { id: '[BOS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[BOS]', type_id: 1 } },
        { Sequence: { id: 'B', type_id: 1 } },
      ],
      special_tokens: { '[BOS]': { id: '[BOS]', ids: [BOS], tokens: ['[BOS]'] } },
    },
    decoder: { type: 'Fuse' },
    model: { type: 'WordLevel', vocab: ids, unk_token: '[UNK]' },
  };
}

export function tokenizerConfigJson(maxLength) {
  const decoder = {};
  SPECIALS.forEach(
    (content, id) =>
      (decoder[id] = { content, lstrip: false, normalized: false, rstrip: false, single_word: false, special: true }),
  );
  return {
    tokenizer_class: 'PreTrainedTokenizerFast',
    added_tokens_decoder: decoder,
    bos_token: '[BOS]',
    eos_token: '[EOS]',
    pad_token: '[PAD]',
    unk_token: '[UNK]',
    add_bos_token: true,
    add_eos_token: false,
    clean_up_tokenization_spaces: false,
    model_max_length: maxLength,
    padding_side: 'right',
  };
}

// Our own reference tokenisation (what prepare.mjs writes): code points, unknown → [UNK], no specials.
export function encodeChars(text, idOf) {
  const out = [];
  for (const ch of text) out.push(idOf.get(ch) ?? UNK);
  return out;
}

// Checks the files with @huggingface/tokenizers (module `tok`): every text encodes to [BOS] + one id per code point
// (equal to encodeChars), and decodes back (skipping specials) to itself when it has no unknown character. Throws on
// the first difference; returns counts.
export function verifyTokenizer(tok, tokenizer, tokenizerConfig, texts, vocab) {
  const t = new tok.Tokenizer(tokenizer, tokenizerConfig);
  const idOf = new Map(vocab.map((s, i) => [s, i]));
  let roundTrips = 0;
  let withUnknown = 0;
  const check = (text, { expectUnknown = null } = {}) => {
    const want = [BOS, ...encodeChars(text, idOf)];
    const got = t.encode(text).ids;
    if (got.length !== want.length || got.some((x, i) => x !== want[i])) {
      throw new Error(`tokenizer: ${JSON.stringify(text)} → ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
    }
    const raw = t.encode(text, { add_special_tokens: false }).ids;
    if (raw.length !== want.length - 1) throw new Error(`tokenizer: add_special_tokens false on ${text}`);
    const unknown = want.includes(UNK);
    if (expectUnknown !== null && unknown !== expectUnknown) {
      throw new Error(`tokenizer: ${JSON.stringify(text)}: expected ${expectUnknown ? 'an' : 'no'} [UNK]`);
    }
    const back = t.decode(got, { skip_special_tokens: true });
    const expected = unknown ? [...text].map((c) => (idOf.has(c) ? c : '')).join('') : text;
    if (back !== expected) throw new Error(`tokenizer: decode(encode(${JSON.stringify(text)})) = ${back}`);
    if (unknown) {
      withUnknown++;
      const shown = t.decode(got);
      if (!shown.startsWith('[BOS]') || !shown.includes('[UNK]')) throw new Error(`tokenizer: decode shows ${shown}`);
    } else {
      roundTrips++;
    }
  };
  for (const text of texts) check(text);
  // A character outside the BMP that is in the vocabulary (if any), and one that is not.
  const astral = vocab.find((s, i) => i >= SPECIALS.length && s.codePointAt(0) > 0xffff);
  if (astral) check(`${astral}山月，${astral}`, { expectUnknown: false });
  check('山\u{2A6D6}月', { expectUnknown: !idOf.has('\u{2A6D6}') });
  check('床前明月光ψ', { expectUnknown: true });
  if (t.decode([BOS, idOf.get('山'), EOS]) !== '[BOS]山[EOS]') throw new Error('tokenizer: decode with specials');
  return { roundTrips, withUnknown, astralInVocab: astral ?? null };
}
