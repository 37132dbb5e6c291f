// @ts-check
// @huggingface/tokenizers (the pure-JS implementation of tokenizer.json, Apache-2.0) as the page gets it: the
// package's one ES module, from the repository's node_modules (a devDependency). `npm run build:demo` copies that
// module and its LICENCE into ./vendor/tokenizers/ beside the page and points this file there (scripts/build.sh
// --site): no CDN.

export { Tokenizer } from '../../node_modules/@huggingface/tokenizers/dist/tokenizers.mjs';
