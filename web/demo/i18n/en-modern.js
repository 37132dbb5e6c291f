// @ts-check
// English catalogue, the strings of modern attention (issues 14 and 19): the decoding part (decode.*) and the
// threaded build; spread into en.js.
export default {
  'page.threaded': 'SIMD + {n} threads',

  'part.decode.toc': 'Decoding with a KV cache',
  'part.decode.title': 'Decoding token by token: the KV cache and grouped-query heads',
  'part.decode.intro':
    'A decoder writes one token at a time, and the causal mask (tutorial section 6.4: no peeking at later tokens) means earlier tokens never change. So their keys and values are kept in a cache, and each step projects only the new token and attends with its one query row over everything cached — <code>mha.forward(x, x, x, { kvCache })</code>. Grouped-query attention (GQA, used by Llama 2 70B, Llama 3 and Mistral) lets several query heads share one key/value head (section 7), which halves the cache here: 4 query heads, 2 key/value heads.',
  'decode.prompt': 'Prompt (letters A–H)',
  'decode.promptAria': 'prompt: one to eight letters A–H',
  'decode.promptBad': 'The prompt must be one to eight letters A–H (e.g. "A B C"); the previous prompt is kept.',
  'decode.step': 'Step',
  'decode.run': 'Run',
  'decode.pause': 'Pause',
  'decode.reset': 'Reset',
  'decode.cacheLength': 'cache.length',
  'decode.modelNote':
    'The toy model: one attention layer (E = 32, <code>numHeads</code> 4, <code>numKVHeads</code> 2, head size 8) with weights written by hand rather than trained, so that each head does one readable thing. It continues a pattern of period 3, like the causal task of the training part: the next token is the one 2 positions back. Each step feeds one token (the prompt first, then what the model wrote) and adds one row to every map.',
  'decode.tokens': 'tokens:',
  'decode.promptTok': 'position {i}: from the prompt',
  'decode.generatedTok': 'position {i}: written by the model',
  'decode.legend': 'weight of the new query on each cached position',
  'decode.gqaNote':
    'A map per query head: row t is the query of step t, columns are the cached positions (the cache grows to the right). Heads of one colour share one key/value head.',
  'decode.head': 'head {h} · K/V head {g}',
  'decode.role0': 'asks for position t − 2: the token it copies',
  'decode.role1': 'asks for position t − 1 (same keys as head 1)',
  'decode.role2': 'asks for its own token: earlier copies of it',
  'decode.role3': 'asks nothing (q = 0): the plain mean (same keys as head 3)',
  'decode.empty': 'empty cache: press Step',
  'decode.cost':
    'Step {t} read {n} cached positions: {kv} key/value heads × {n} × {d} numbers, twice (K and V) = {f} floats, instead of {full} without grouped heads. A step costs O(context): it grows with the cache, one row at a time; recomputing the whole sequence each step would cost O(L²).',
  'decode.costEmpty': 'Nothing cached yet.',
  'decode.check':
    'Check: these {n} steps give the same outputs and weights as one causal forward over all {n} tokens without a cache (max |Δ| = {d}).',

  'decode.checkBad':
    'Check failed: these {n} steps differ from one causal forward over all {n} tokens without a cache (max |Δ| = {d}). Decoding with a cache must give the same numbers; please report this.',
  'speed.threadedName': 'attnlab simd-threaded ({n} threads)',
  'speed.threadsOn':
    'This page is cross-origin isolated, so the threaded build (SharedArrayBuffer + a pool of workers) runs beside the single-thread ones.',
  'speed.threadsOff':
    'No threaded column: this page is not cross-origin isolated. The threaded build needs SharedArrayBuffer, which browsers allow only when the server sends Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp (npm start does). Here attnlab uses the single-thread SIMD build.',
  'speed.doneThreaded': 'Done in {s} s ({cores} logical cores reported; the threaded build used {n} threads).',
  'speed.colThreadRatio': 'threaded vs simd',
};
