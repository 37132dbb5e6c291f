// @ts-check
// The page's term list (#28): which words of the field stay English in the 中文 catalogues and which have a Chinese
// word there (TERMS, checked; GLOSSARY, also code names). A term of TERMS may appear in English in a zh catalogue only inside <code>…</code> or as a gloss that
// opens full-width parentheses right after its Chinese word, e.g. 填充（padding）, 后台线程（Web Worker）.
// tests/js/demo/i18n/terms.test.mjs checks every zh*.js catalogue against it. No DOM.

/** Names and the field's usage: these stay in English (API names go in <code>). */
export const KEEP_ENGLISH = [
  'attnlab',
  'PyTorch',
  'NumPy',
  'softmax',
  'JavaScript',
  'WebAssembly',
  'SIMD',
  'Transformer',
  'RNN',
  'CNN',
  'KV',
  'BERT',
  'GPT-2',
  'ViT',
  'Hugging Face',
  'Llama',
  'Mistral',
  'Gemma',
  'Adam',
  'Xavier',
  'Kaiming',
  'safetensors',
  'JSON',
  'NaN',
  'float32',
  'float16',
];

/** English → the Chinese word the zh catalogues use. */
export const TERMS = [
  { en: 'token', zh: '词元' },
  { en: 'padding', zh: '填充' },
  { en: 'state dict', zh: '状态字典' },
  { en: 'loss', zh: '损失' },
  { en: 'logits', zh: 'softmax 之前的分数' },
  { en: 'Worker', zh: '后台线程' },
  { en: 'SDPA', zh: '缩放点积注意力' },
  { en: 'MHA', zh: '多头注意力' },
  { en: 'torch', zh: 'PyTorch' },
  { en: 'entropy', zh: '熵' },
  { en: 'nats', zh: '奈特' },
];

/**
 * Chinese words for terms that also name code (shapes like (batch, seq, dₖ), options like attnMask): used in prose,
 * not checked word by word.
 */
export const GLOSSARY = [
  { en: 'query', zh: '查询' },
  { en: 'key', zh: '键' },
  { en: 'value', zh: '值' },
  { en: 'head', zh: '头' },
  { en: 'mask', zh: '掩码' },
  { en: 'batch', zh: '批量' },
  { en: 'scale', zh: '缩放' },
  { en: 'weights', zh: '权重' },
];

/**
 * Words of the model chapters a learner meets without an explanation in the text (the glossary explains them; not
 * checked in the catalogues: RMSNorm, RoPE and SwiGLU are names and stay as glosses).
 */
export const LEARNER_TERMS = [
  { en: 'RMSNorm', zh: '均方根归一化' },
  { en: 'RoPE', zh: '旋转位置编码' },
  { en: 'SwiGLU', zh: '门控前馈层' },
  { en: 'residual', zh: '残差' },
  { en: 'causal mask', zh: '因果掩码' },
  { en: 'temperature', zh: '温度' },
  { en: '[BOS]', zh: '开头标记' },
  { en: '[EOS]', zh: '结尾标记' },
];

/**
 * The glossary the page opens (widgets/glossary.js): every term of TERMS, GLOSSARY and LEARNER_TERMS that is a word
 * of the field (not 'torch', a spelling of PyTorch), with the catalogue key of its one-line explanation.
 * @returns {{ en: string, zh: string, key: string }[]}
 */
export function glossaryTerms() {
  return [...TERMS, ...GLOSSARY, ...LEARNER_TERMS]
    .filter((x) => x.en !== 'torch')
    .map((x) => ({
      ...x,
      key: `glossary.def.${x.en
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-|-$/g, '')}`,
    }));
}

/**
 * attnlab's API names the catalogues mention: in code font (<code>…</code>) in every string that carries markup
 * (the page renders those as HTML); plain-text strings (errors, tooltips, aria labels) keep them as they are.
 */
export const API_NAMES = [
  'returnScores',
  'numHeads',
  'numKVHeads',
  'needWeights',
  'trainStep',
  'loadStateDict',
  'stateDict',
  'TinyTransformer',
  'keyPaddingMask',
  'attnMask',
  'isCausal',
  'headMask',
  'scaledDotProductAttention',
  'scaledDotProductAttentionBackward',
  'createMultiHeadAttention',
  'createKVCache',
  'createTinyTransformer',
  'readSafetensors',
  'loadModel',
  'fromHuggingFace',
  'outputAttentions',
  'mha.forward',
];

/**
 * The API names of API_NAMES outside <code>…</code> in a text.
 * @param {string} text
 * @returns {string[]}
 */
export function bareApi(text) {
  const prose = text.replace(/<code>[\s\S]*?<\/code>/g, ' ');
  return API_NAMES.filter((n) => new RegExp(`(?<![\\w.])${n.replace('.', '\\.')}(?![\\w])`).test(prose));
}

/** How a zh catalogue numbers heads: 头 1 … 头 H, never 第 0 个头. */
export const HEAD_LABEL = '头 {h}';

/**
 * The terms of TERMS left in English in a zh text: outside <code>…</code>, not a gloss '（en' or '（Web en'.
 * @param {string} text
 * @returns {string[]}
 */
export function untranslated(text) {
  const prose = text.replace(/<code>[\s\S]*?<\/code>/g, ' ').replace(/\{\w+\}/g, ' ');
  const found = [];
  for (const { en } of TERMS) {
    const word = en.replace(/ /g, '\\s');
    const re = new RegExp(`(?<![（A-Za-z_.]|（Web\\s)${word}(?![A-Za-z_])`, 'g');
    if (re.test(prose)) found.push(en);
  }
  return found;
}

/**
 * § in a zh text outside a badge: prose says 教程 4.4 节; § only opens a value ("§8.1 · …") or fills a badge.
 * @param {string} text
 */
export const proseSection = (text) => /§/.test(text.replace(/^(§[\d.–]+( · )?)+/, ''));
