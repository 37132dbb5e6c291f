// The poem model's tokenizer: one token per Unicode code point (docs/poem-model.md). Written as a Hugging Face
// tokenizer.json that the Rust `tokenizers` and the pure-JS @huggingface/tokenizers both read:
//   pre_tokenizer  Split on the regex "." (any code point but "\n"), behavior Isolated: every character is a piece;
//   model          WordLevel over the vocabulary, unknown characters → [UNK] (@huggingface/tokenizers 0.2 reads a
//                  WordLevel model as its "Legacy" model, which takes [UNK] from tokenizer_config.json: it is there);
//   post_processor TemplateProcessing "[BOS] $A": encode() prepends [BOS], as the model was trained (every poem is
//                  [BOS] text [EOS]); generation stops at [EOS]. The couplet model's tokenizer (frame 'eos',
//                  docs/couplet-model.md) appends [EOS] instead, "$A [EOS]", as Marian's and T5's tokenizers do;
//   decoder        Fuse: the characters are joined without spaces.
export const SPECIALS = ['[PAD]', '[UNK]', '[BOS]', '[EOS]'];
export const [PAD, UNK, BOS, EOS] = [0, 1, 2, 3];

// The special token encode() adds: [BOS] before the text ('bos') or [EOS] after it ('eos').
function template(frame) {
  if (frame !== 'bos' && frame !== 'eos') throw new Error(`frame: 'bos' or 'eos', not ${frame}`);
  const special = frame === 'bos' ? '[BOS]' : '[EOS]';
  const piece = (typeId) => ({ SpecialToken: { id: special, type_id: typeId } });
  const seq = (id, typeId) => ({ Sequence: { id, type_id: typeId } });
  const single = frame === 'bos' ? [piece(0), seq('A', 0)] : [seq('A', 0), piece(0)];
  const pair = frame === 'bos' ? [...single, piece(1), seq('B', 1)] : [...single, seq('B', 1), piece(1)];
  const id = frame === 'bos' ? BOS : EOS;
  return {
    type: 'TemplateProcessing',
    single,
    pair,
    special_tokens: { [special]: { id: special, ids: [id], tokens: [special] } },
  };
}

// vocab: the tokens by id (SPECIALS first).
export function tokenizerJson(vocab, { frame = 'bos' } = {}) {
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
    post_processor: template(frame),
    decoder: { type: 'Fuse' },
    model: { type: 'WordLevel', vocab: ids, unk_token: '[UNK]' },
  };
}

export function tokenizerConfigJson(maxLength, { frame = 'bos' } = {}) {
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
    add_bos_token: frame === 'bos',
    add_eos_token: frame === 'eos',
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

// Checks the files with @huggingface/tokenizers (module `tok`): every text encodes to one id per code point (equal to
// encodeChars) framed by [BOS] before or [EOS] after, and decodes back (skipping specials) to itself when it has no
// unknown character. Throws on the first difference; returns counts.
export function verifyTokenizer(tok, tokenizer, tokenizerConfig, texts, vocab, { frame = 'bos' } = {}) {
  const t = new tok.Tokenizer(tokenizer, tokenizerConfig);
  const idOf = new Map(vocab.map((s, i) => [s, i]));
  const framed = (ids) => (frame === 'bos' ? [BOS, ...ids] : [...ids, EOS]);
  const special = frame === 'bos' ? '[BOS]' : '[EOS]';
  let roundTrips = 0;
  let withUnknown = 0;
  const check = (text, { expectUnknown = null } = {}) => {
    const want = framed(encodeChars(text, idOf));
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
      if (!shown.includes(special) || !shown.includes('[UNK]')) throw new Error(`tokenizer: decode shows ${shown}`);
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
  const ch = idOf.has('山') ? '山' : vocab[vocab.length - 1];
  if (t.decode([BOS, idOf.get(ch), EOS]) !== `[BOS]${ch}[EOS]`) throw new Error('tokenizer: decode with specials');
  return { roundTrips, withUnknown, astralInVocab: astral ?? null };
}
