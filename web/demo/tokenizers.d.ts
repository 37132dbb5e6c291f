// The types of tokenizers.js (which re-exports @huggingface/tokenizers' ES module): the package's own types.
export { Tokenizer } from '@huggingface/tokenizers';
