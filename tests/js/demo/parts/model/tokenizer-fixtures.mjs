// Small tokenizer.json files for the tiny encoder and encoder–decoder fixtures (tests/fixtures/encoders/,
// tests/fixtures/seq2seq/, whose folders hold no tokenizer): a BERT WordPiece tokenizer over bert_mlm_f32's 24 ids and
// a T5-style Unigram tokenizer (Metaspace ▁, </s> appended) over t5_v10_f32's 24 ids (and Marian's order of them), written as Hugging Face's
// tokenizers library writes them, for the node tests and the page tests (tests/e2e/model-kinds.test.mjs).

/** An added token's flags as tokenizer.json writes them for a special token. */
const SPECIAL = { single_word: false, lstrip: false, rstrip: false, normalized: false, special: true };
/** @param {string} content @param {number} id */
const special = (content, id) => ({ id, content, ...SPECIAL });

/** BERT's five specials, then 19 words and pieces: 24 ids. */
export const WORDPIECE_VOCAB = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'].concat(
  'the cat sat on mat a dog ran ##s big red is in house bird sang and . ,'.split(' '),
);

/** A BERT tokenizer.json (BertNormalizer lower-casing, BertPreTokenizer, [CLS] … [SEP]). */
export function wordPieceJson(vocab = WORDPIECE_VOCAB) {
  const ids = Object.fromEntries(vocab.map((w, i) => [w, i]));
  const tok = (/** @type {string} */ id) => ({ SpecialToken: { id, type_id: 0 } });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: vocab.slice(0, 5).map(special),
    normalizer: {
      type: 'BertNormalizer',
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [tok('[CLS]'), { Sequence: { id: 'A', type_id: 0 } }, tok('[SEP]')],
      pair: [
        tok('[CLS]'),
        { Sequence: { id: 'A', type_id: 0 } },
        tok('[SEP]'),
        { Sequence: { id: 'B', type_id: 1 } },
        tok('[SEP]'),
      ],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [ids['[CLS]']], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [ids['[SEP]']], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: ids,
    },
  };
}

/** T5's three specials (pad 0, eos 1, unk 2), then 21 pieces: 24 ids. */
export const UNIGRAM_VOCAB = ['<pad>', '</s>', '<unk>'].concat(
  '▁the ▁cat ▁sat ▁on ▁mat ▁a ▁dog s ▁ ▁die ▁katze ▁sitzt ▁auf ▁der ▁matte . , t a e ▁ran'.split(' '),
);

/** Marian's (opus-mt) order of the same pieces: eos 0, unk 1, pad last (marian_mt_f32: pad 23). */
export const MARIAN_VOCAB = ['</s>', '<unk>', ...UNIGRAM_VOCAB.slice(3), '<pad>'];

/** A T5- or Marian-style Unigram tokenizer.json (Metaspace pre-tokenizer and decoder, </s> after the text). */
export function unigramJson(vocab = UNIGRAM_VOCAB) {
  const isSpecial = (/** @type {string} */ p) => /^<.*>$/.test(p);
  const scores = vocab.map((p, i) => [p, isSpecial(p) ? 0 : -1 - (p.length > 2 ? 0 : 3) - i / 100]);
  const eos = vocab.indexOf('</s>');
  const meta = { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true };
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: vocab.flatMap((p, i) => (isSpecial(p) ? [special(p, i)] : [])),
    normalizer: null,
    pre_tokenizer: meta,
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } }],
      pair: [
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '</s>', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 0 } },
        { SpecialToken: { id: '</s>', type_id: 0 } },
      ],
      special_tokens: { '</s>': { id: '</s>', ids: [eos], tokens: ['</s>'] } },
    },
    decoder: meta,
    model: { type: 'Unigram', unk_id: vocab.indexOf('<unk>'), vocab: scores, byte_fallback: false },
  };
}
