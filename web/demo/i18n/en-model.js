// @ts-check
// English strings of the "Your model" part (yourmodel.js, yourmodel-load.js). Same keys as zh-model.js.

export default {
  'model.cellTip': '{caption}: query {q} → key {k}: {v}',
  'part.model.toc': 'Your model',
  'part.model.title': 'Your model: one layer of a checkpoint, on made-up inputs',
  'part.model.intro':
    "Bring a layer of your own: a <code>.safetensors</code> checkpoint with Hugging Face names (BERT, GPT-2 or ViT) or the JSON state dict of the “multi-head on a sentence” part. attnlab reads it (<code>readSafetensors</code>, <code>fromHuggingFace</code>), runs that layer's attention exactly as PyTorch would, and draws each head with <code>attnlab/viz</code>. Note: only the layer you pick runs, on made-up word vectors, random vectors or hidden states you paste, not on the outputs of the model's earlier layers. So unless you paste real hidden states, the maps are not the model's attention on your text. Nothing leaves your browser.",

  'model.drop': 'Drop a .safetensors file or a JSON state dict here.',
  'model.pick': 'Choose a file…',
  'model.fileAria': 'Your model file (.safetensors or JSON state dict)',
  'model.sample': 'Try the sample (a small BERT, 2 layers)',
  'model.noFile': 'No file yet: drop one, pick one, or try the sample.',
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
};
