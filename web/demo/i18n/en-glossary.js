// @ts-check
// The glossary's English strings (widgets/glossary.js): one line per term, the same keys as zh-glossary.js; the
// terms themselves come from terms.js.

export default {
  'glossary.open': 'Glossary',
  'glossary.openAria': 'Open the glossary: the terms of this page, in English and Chinese',
  'glossary.title': 'Glossary',
  'glossary.note':
    'The terms of this page, English first, then the Chinese word, each with one line. Esc or “Close” returns.',
  'glossary.close': 'Close',
  'glossary.def.token':
    'The unit a model reads and writes. From part 2 on (the poem model included) one Chinese character is one token; part 1 counts words; GPT-2 and most models use subwords.',
  'glossary.def.padding':
    'Placeholder tokens appended to shorter sequences so that sequences of different lengths fit one batch; a mask keeps attention off them.',
  'glossary.def.state-dict': 'How PyTorch saves a model’s parameters: a map from parameter names to tensors.',
  'glossary.def.loss':
    'The number training lowers. Here the cross-entropy: minus the log of the probability the model gives the right next token, in nats.',
  'glossary.def.logits':
    'The output layer’s raw score for each candidate token; softmax turns them into probabilities.',
  'glossary.def.worker':
    'A browser thread apart from the page; training and big models run there so the page stays responsive.',
  'glossary.def.sdpa': 'The core of attention: softmax(QKᵀ / √dₖ) · V.',
  'glossary.def.mha':
    'Queries, keys and values projected into several parts (heads), scaled dot-product attention in each, concatenated and projected back.',
  'glossary.def.entropy':
    'How spread out a row of attention weights is: largest (ln n) when shared evenly over n keys, 0 on one key.',
  'glossary.def.nats':
    'The unit of loss or entropy measured with the natural log. Guessing uniformly among V tokens costs ln V nats.',
  'glossary.def.query':
    'A position’s vector of “what am I looking for”; its dot product with each key gives the scores.',
  'glossary.def.key': 'Each position’s vector of “what do I have”, compared with the query.',
  'glossary.def.value':
    'What is actually taken from each position; attention’s output is a weighted mean of the values.',
  'glossary.def.head':
    'One separate attention computation inside multi-head attention, with its own query, key and value projections.',
  'glossary.def.mask':
    'Which query–key pairs may not look: a masked score becomes −∞, so its weight after softmax is exactly 0.',
  'glossary.def.batch': 'Several sequences computed together; they do not attend to each other.',
  'glossary.def.scale':
    'Scores divided by √dₖ, so that softmax does not grow too sharp (and its gradient vanish) as the width grows.',
  'glossary.def.weights':
    'The attention distribution after softmax: each row non-negative, summing to 1. A model’s parameters are also called weights; “attention weights” means the former.',
  'glossary.def.rmsnorm':
    'Divides a vector by the root of the mean of its squared entries, times a learned scale, so each layer’s input keeps a steady size.',
  'glossary.def.rope':
    'Rotates each pair of query and key entries by an angle set by the position, so that position enters their dot product only through how far apart they are.',
  'glossary.def.swiglu':
    'The feed-forward layer after attention: one linear branch through SiLU, multiplied by another (the gate), projected back.',
  'glossary.def.residual': 'A layer’s input added to its output (x + f(x)): information can pass around the layer.',
  'glossary.def.causal-mask':
    'Each position sees only itself and the positions before it: no peeking at later tokens when generating.',
  'glossary.def.temperature':
    'Scores divided by the temperature before sampling: below 1 more cautious, above 1 more random, 0 always the most likely.',
  'glossary.def.bos':
    'A special token put first, meaning “start here”; heads with nothing to do often put their weight on it.',
  'glossary.def.eos': 'A special token meaning “the end”; when the model writes it, generation stops.',
};
