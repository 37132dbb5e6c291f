// @ts-check
// English strings of the "Your model" part (parts/model/). Same keys as zh-model.js.

export default {
  'model.cellTip': '{caption}: query {q} → key {k}: {v}',
  'part.model.toc': 'Your model',
  'part.model.title': 'Your model: a whole checkpoint that writes, or one layer on made-up inputs',
  'part.model.intro':
    "Two ways to bring your own weights. <b>A whole model</b>: the files of a Hugging Face model folder, GPT-2, Llama-family (Llama, Mistral, Qwen2) or Qwen3: <code>config.json</code>, <code>model.safetensors</code>, <code>tokenizer.json</code>, <code>tokenizer_config.json</code>. attnlab runs the real network (<code>loadModel</code>) in a background thread on your prompt, writes token by token, and shows every layer's and head's attention on the text it actually read. <b>One layer</b>: a lone <code>.safetensors</code> file (BERT, GPT-2 or ViT names) or the JSON state dict of the “multi-head on a sentence” part; only that layer runs (<code>fromHuggingFace</code>), on made-up word vectors, random vectors or hidden states you paste, so its maps are not the model's attention on your text. Nothing leaves your browser.",

  'model.drop':
    "Drop a model folder's files (config.json, model.safetensors, tokenizer.json, tokenizer_config.json) for the whole model, or one .safetensors file or JSON state dict for one layer.",
  'model.pick': 'Choose files…',
  'model.fileAria': "Your model files: a model folder's four files, or one .safetensors file or JSON state dict",
  'model.sample': 'Try the sample (a small BERT, 2 layers, random weights)',
  'model.sampleRandom':
    'Note: this sample’s weights are random (a small test file, not a trained BERT); the stripes in its maps are not what BERT learns. For a trained model, see the poem chapter.',
  'model.noFile': 'No layer file yet: drop one, pick one, or try the sample.',
  'model.sampleFailed': 'Could not load the sample file: {err}',
  'model.readFailed': 'Could not read {f}: {err}',
  'model.badSafetensors': '{f} is not a usable .safetensors file: {err}',
  'model.unknownFile': '{f} is neither a .safetensors file nor a JSON state dict.',
  'model.loadedHf': '{f}: {n} tensors. Attention layers found: {layers}.',
  'model.archLayers': '{arch} layers {from}–{to} (E = {e})',
  'model.loadedJson': '{f}: an nn.MultiheadAttention state dict, E = {e}, {h} heads.',
  'model.noLayers':
    '{f} holds {n} tensors, but none of them is a BERT, GPT-2 or ViT attention layer (names such as encoder.layer.0.attention.self.query.weight or h.0.attn.c_attn.weight).',

  'model.arch': 'architecture',
  'model.archAria': 'Architecture of the checkpoint',
  'model.arch.bert': 'BERT',
  'model.arch.gpt2': 'GPT-2',
  'model.arch.vit': 'ViT',
  'model.arch.json': 'nn.MultiheadAttention (JSON)',
  'model.layer': 'layer',
  'model.layersInFile': 'layers in this file: {list}',
  'model.heads': 'heads (numHeads)',
  'model.headsFromFile': 'from the file',
  'model.headsGuess.metadata': "from the file's metadata",
  'model.headsGuess.width64': 'a guess: E = {e} in heads of 64 (not stored in the weights)',
  'model.headsGuess.small': "a guess for E = {e} (not stored in the weights; check your model's config)",
  'model.causal': 'causal mask (GPT-2)',

  'model.input': 'input',
  'model.inputAria': 'Input of the layer',
  'model.mode.words': 'words',
  'model.mode.vectors': 'hidden-state vectors',
  'model.mode.random': 'random vectors',
  'model.note.words':
    "Each word becomes a made-up vector of width {e} (the same word, the same vector) plus its position. The layer should receive the previous layer's output, but the page does not run the whole model layer by layer, so made-up vectors stand in. At most {max} words.",
  'model.note.vectors':
    'One token per line: {e} numbers separated by spaces or commas, optionally after "label:". A JSON array (L, {e}) also works. At most {max} lines.',
  'model.note.random': 'Hidden states drawn from N(0, 1), width {e}, from the seed: the same seed, the same input.',
  'model.count': 'tokens',
  'model.seed': 'seed',
  'model.run': 'Run the layer',

  'model.archMissing': '{f} has no {arch} attention layer. Pick the architecture its names belong to.',
  'model.layerMissing': 'There is no {arch} layer {layer} in this file; it has layers {list}.',
  'model.headsDivide': 'numHeads = {h} must divide the embedding size E = {e}.',
  'model.crossDims':
    'This part runs self-attention, so kdim and vdim must equal E = {e} (the file has kdim = {k}, vdim = {v}).',
  'model.layerFailed': 'This layer cannot be used: {err}',
  'model.loadFailed': 'attnlab refused the weights: {err} Expected: {want}',
  'model.badCount': 'The number of tokens must be a whole number from 1 to {max}.',
  'model.noInput': 'Type some words or paste some vectors first.',
  'model.tooMany': '{n} tokens is too many here: at most {max}.',
  'model.badWidth': 'Row {row} has {n} numbers, but this layer needs E = {e}.',
  'model.notNumber': 'Row {row}: "{x}" is not a finite number.',
  'model.badJsonInput': 'The pasted JSON cannot be used: {err}',
  'model.notRows': 'expected an array of rows, e.g. [[0.1, 0.2, …], …]',

  'model.summary':
    "{what}: E = {e}, {h} heads of width {d}, {l} queries × {s} keys{mask}. Each map is one head's softmax(QKᵀ/√d) (rows = queries, every row sums to 1); the last is their mean, a diagnostic.",
  'model.summaryCausal': ', causal',
  'model.mapsTitle': 'Per-head attention',
  'model.linksTitle': 'Token links (one colour a head)',

  'model.pickFolder': 'Choose a folder…',
  'model.folderAria': 'A Hugging Face model folder',
  'model.whole.title': 'A whole model: your prompt, its continuation, every head',
  'model.whole.note':
    "Pick or drop the folder's files, or try the page's poem model (a small Llama trained on Tang and Song quatrains, the one of the poem chapter). Type a prompt and generate: each token appears as <code>generate</code> produces it (tokens are the model's own tokenizer's: one character each for the poem model, as in the poem chapter; subwords for GPT-2 and most others), and Stop ends it. Then one <code>forward</code> with <code>outputAttentions</code> gives every layer's attention on the whole text: click a head in the grid for its map, and a token for its links.",
  'model.one.title': 'One attention layer, on made-up inputs',
  'model.one.note':
    "A lone <code>.safetensors</code> file or JSON state dict: the layer you pick runs by itself, on inputs made up here, not on the outputs of the model's earlier layers.",
  'model.ckpt.none': "No model yet: pick or drop a model folder's files, or try the poem model.",
  'model.ckpt.poem': "Try it with the page's poem model",
  'model.ckpt.poemName': 'the poem model (tang-song-quatrains-char-llama)',
  'model.ckpt.poemFailed': 'Could not fetch the poem model: {err}',
  'model.ckpt.yourFiles': 'your files',
  'model.ckpt.loading': 'Loading {f} in a background thread…',
  'model.ckpt.loaded': 'Loaded {f}: {arch}, {L} layers × {H} heads, E = {E}, vocabulary {V}.',
  'model.ckpt.facts':
    'Context up to {ctx} tokens. The model runs in a background thread (<code>attnlab/worker</code>, build {variant}), so the page stays responsive.',
  'model.ckpt.missing':
    'The model folder lacks {list} (it needs config.json, model.safetensors, tokenizer.json and, if it has one, tokenizer_config.json).',
  'model.ckpt.badJson': '{f} is not valid JSON: {err}',
  'model.ckpt.badTokenizer': 'tokenizer.json cannot be used: {err}',
  'model.ckpt.loadFailed': 'attnlab cannot load this checkpoint: {err}',
  'model.gen.prompt': 'prompt',
  'model.gen.promptAria': 'The prompt the model continues',
  'model.gen.max': 'new tokens',
  'model.gen.temp': 'temperature (0 = greedy)',
  'model.gen.seed': 'seed',
  'model.gen.topK': 'top-k (0 = off)',
  'model.gen.topP': 'top-p',
  'model.gen.eos': 'stop at the end-of-text token',
  'model.gen.go': 'Generate',
  'model.gen.stop': 'Stop',
  'model.gen.empty': 'The prompt gives no tokens, and this tokenizer has no start token: type something.',
  'model.gen.noRoom': "The prompt is {n} tokens long, and the model's context holds {ctx}: no room to generate.",
  'model.gen.badMax': 'New tokens: a whole number from 1 to {max}.',
  'model.gen.badTemp': 'The temperature must be a number of at least 0.',
  'model.gen.badSeed': 'The seed must be a whole number of at least 0.',
  'model.gen.badTopK': 'Top-k must be a whole number of at least 0 (0 = off).',
  'model.gen.badTopP': 'Top-p must be a number above 0 and at most 1.',
  'model.gen.failed': 'Generation failed: {err}',
  'model.gen.progress': '{n} of {max} tokens…',
  'model.gen.done': '{n} new tokens.',
  'model.gen.stopped': 'Stopped after {n} new tokens.',
  'model.gen.tokTip': 'token {i} (id {id}): click for its attention',
  'model.gen.gridTitle': 'Every layer and head on this text',
  'model.gen.gridNote':
    '{L} layers × {H} heads, each map {T} × {T} (rows = queries, causal). Click a head for its map; click a token above for its links.',
  'model.gen.headCaption': '{lh}; links of token {n} “{tok}” in every head of this layer',
  'model.gen.linksAria':
    "The chosen token's links: on the left the token, on the right the earlier tokens it attends to, one colour a head. Use the arrow keys to move.",
};
