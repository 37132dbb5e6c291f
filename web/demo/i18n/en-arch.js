// @ts-check
// The English strings of the poem chapter's architecture card and "this line only" experiment
// (parts/poem/arch-view.js), the same keys as zh-arch.js.

export default {
  'poem.arch.title': 'What the model is made of',
  'poem.arch.sec': '§11',
  'poem.arch.note':
    'Every step of the poem model from input to output, with the shapes and parameter counts computed from its config.json (T is the length of a five-character quatrain, {T}: [BOS], 20 characters, 4 punctuation marks and [EOS]). The steps in the middle repeat once per layer.',
  'poem.arch.col.stage': 'step',
  'poem.arch.col.shape': 'output shape',
  'poem.arch.col.params': 'parameters',
  'poem.arch.block': 'each of the {L} layers repeats these (parameters per layer)',
  'poem.arch.tied': 'shared with the embedding',
  'poem.arch.stage.embed': 'embedding: one row of vectors per character',
  'poem.arch.stage.norm1': 'RMSNorm',
  'poem.arch.stage.qkv': 'linear maps to Q, K and V ({H} query heads, {KV} key/value heads)',
  'poem.arch.stage.rope': 'RoPE: rotate Q and K by position',
  'poem.arch.stage.attn': 'attention weights softmax(QKᵀ/√d), one T × T map per head',
  'poem.arch.stage.out': 'weighted sums, heads concatenated, one more linear map',
  'poem.arch.stage.res1': "residual: add back the layer's input",
  'poem.arch.stage.norm2': 'RMSNorm',
  'poem.arch.stage.swiglu': 'SwiGLU: two linear maps, one through SiLU, multiplied',
  'poem.arch.stage.down': 'a linear map back to E dimensions',
  'poem.arch.stage.res2': 'residual: add back again',
  'poem.arch.stage.final': 'a last RMSNorm',
  'poem.arch.stage.head': 'output layer: a score for every character of the vocabulary at every position',
  'poem.arch.shares':
    '{total} parameters: embedding {embedding}, attention {attention}, MLP {mlp}, normalisation {norm}. Attention is a small part; most of it is the embedding table and the MLPs.',
  'poem.arch.rmsnorm':
    "<b>RMSNorm</b>: divides each position's vector by its root mean square, then multiplies by learned weights, keeping the numbers' size steady.",
  'poem.arch.rope':
    '<b>RoPE</b>: rotates each pair of dimensions of Q and K by an angle set by the position, so that QKᵀ only sees how far apart two characters are.',
  'poem.arch.swiglu':
    '<b>SwiGLU</b>: a form of MLP in which one branch computes a gate that decides how much of each dimension of the other branch passes.',
  'poem.arch.residual':
    "<b>Residual</b>: every sub-layer's output is added to its input, so information can go around a layer, and deep networks still train.",

  'poem.window.head': 'This line only: sliding-window attention',
  'poem.window.note':
    'Section 11 of the tutorial mentions window attention: each position looks only at the W tokens around it, and the cost drops from T² to T·W. This model was trained looking at the whole poem. Without retraining it, limit its attention to a window, or let it read only the current line, and see what happens to the loss.',
  'poem.window.run': 'Measure on {n} held-out poems',
  'poem.window.running': 'Computing…',
  'poem.window.lineOnly':
    "<b>This line only</b> ([BOS] and the line's characters and punctuation, none of the lines before): {only} nats per character; reading the whole poem, the same characters cost {full} nats ({n} characters, each line's first left out). The lines before save it {d} nats per character: parallelism, rhyme and sense all look back.",
  'poem.window.col.W': 'window W',
  'poem.window.col.loss': 'loss (nats per character)',
  'poem.window.col.delta': 'more than the whole poem',
  'poem.window.full': 'the whole poem (as trained)',
  'poem.window.after':
    'With a window shorter than the poem, the later characters no longer see the [BOS] at the start either, and several heads habitually put part of their attention there. The this-line-only experiment keeps [BOS], and the loss still jumps: the cost is mostly the context that is dropped.',
};
