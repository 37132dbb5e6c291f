// @ts-check
// English strings of the couplet chapter (parts/couplet/); the same keys as zh-couplet.js.

export default {
  'part.couplet.toc': 'Parallel couplets: cross-attention that aligns',
  'part.couplet.title': '对仗: an encoder–decoder writes the lower line of a couplet',
  'part.couplet.intro':
    'In a regulated verse (律诗) the second and third couplets (颔联, 颈联) must be parallel: character i of the lower line answers character i of the upper line (秦川 ↔ 函谷). Writing the lower line from the upper one is a small translation task whose alignment is known, the diagonal, so the cross-attention of an encoder–decoder (the tutorial’s section 6.1) can be scored. The model here is a small <code>marian</code> (the architecture of Helsinki-NLP’s opus-mt translators) that attnlab trained itself on Song-dynasty verses only; every couplet you can pick is Tang, never seen in training. The first and last couplets (首联, 尾联), which need not be parallel, are the control.',

  'couplet.loading':
    'Loading the couplet model (config.json, model.safetensors, tokenizer.json, the held-out poems) in a background thread…',
  'couplet.loadFailed': 'The couplet model failed to load: {err}',
  'couplet.failed': 'The couplet model failed: {err}',
  'couplet.httpError': '{f}: HTTP {s}',
  'couplet.loaded': 'The couplet model is loaded (in an attnlab/worker).',
  'couplet.facts':
    '<strong>The model</strong>: Marian, {L} encoder and {Ld} decoder layers of {H} heads, d_model = {E}, {V} tokens, one per character. The encoder reads the upper line and [EOS]; the decoder starts at [PAD] and writes one character per step. <strong>Held out</strong>: {poems} Tang verses ({pairs} couplets) shipped with the model.',
  'couplet.lh': 'layer {l} · head {h}',
  'couplet.k1': '首联 (1st couplet)',
  'couplet.k2': '颔联 (2nd couplet)',
  'couplet.k3': '颈联 (3rd couplet)',
  'couplet.k4': '尾联 (4th couplet)',
  'couplet.parallel': 'parallel',
  'couplet.control': 'control',
  'couplet.diag': 'mean weight on the aligned character: {w}',
  'couplet.steps': 'training step',

  'couplet.write.title': 'Write the lower line',
  'couplet.write.sec': '§6.1 · §11',
  'couplet.write.note':
    'Pick a Tang poem and one of its couplets, or type an upper line of 5 or 7 characters (a character outside the vocabulary becomes [UNK]). The model writes the lower line one character per step (<code>model.generate</code> in a worker, <code>onToken</code> per character; Stop aborts it): greedy takes the most likely character, sampled draws one from the distribution with the seed.',
  'couplet.poemAria': 'A Tang regulated verse (held out)',
  'couplet.kAria': 'Which couplet of the poem',
  'couplet.poem': 'Tang poem',
  'couplet.k': 'couplet',
  'couplet.upper': 'upper line',
  'couplet.mode': 'decoding',
  'couplet.greedy': 'greedy',
  'couplet.sample': 'sampled (temperature 1)',
  'couplet.seed': 'seed',
  'couplet.go': 'Write the lower line',
  'couplet.stop': 'Stop',
  'couplet.badLength': 'The upper line must have 5 or 7 characters; it has {n}.',
  'couplet.progress': '{n} of at most {max} tokens written',
  'couplet.done': 'Done: {n} tokens.',
  'couplet.stopped': 'Stopped after {n} tokens.',

  'couplet.align.title': 'Cross-attention: lower × upper',
  'couplet.align.sec': '§6.1 · §7',
  'couplet.align.note':
    'Each row is a step of the decoder (the character it wrote), each column a character of the upper line as the encoder read it. A head that aligns puts its weight on the diagonal: when writing character t it looks at upper character t.',
  'couplet.alignNote': 'The written line’s cross-attention at {lh}.',
  'couplet.layer': 'decoder layer',
  'couplet.head': 'head',
  'couplet.layerN': 'layer {n}',
  'couplet.headN': 'head {n}',
  'couplet.guess.q':
    'Of the decoder’s heads, which one puts the most weight on the aligned character of the upper line in the parallel couplets? And does it do the same in the control couplets?',
  'couplet.guess.answer':
    'Measured on {n} held-out parallel couplets: <b>{lh}</b>, with {par} of its weight on the aligned character (uniform: {u5} for five characters, {u7} for seven), against {ctl} in the control couplets.',
  'couplet.named':
    '<b>The aligning head: {lh}.</b> On the held-out parallel couplets its mean weight on the aligned character is {par} (control couplets: {ctl}; uniform: {u5} / {u7}). Masking it alone (<code>crossAttnHeadMask</code>) raises the loss by {dPar} nats per token ([EOS] included) on the parallel couplets and {dCtl} on the control ones.',
  'couplet.heads.head': 'head',
  'couplet.heads.par': 'aligned weight, parallel',
  'couplet.heads.ctl': 'aligned weight, control',
  'couplet.heads.abPar': 'ablation cost, parallel (nats)',
  'couplet.heads.abCtl': 'ablation cost, control (nats)',

  'couplet.pairs.title': 'Parallel couplets beside the control',
  'couplet.pairs.sec': '§6.1',
  'couplet.pairs.note':
    'The picked poem’s four couplets, each read with its own lower line (teacher forcing), at the layer and head chosen above. 颔联 and 颈联 must be parallel; 首联 and 尾联 need not be. Compare the diagonals.',

  'couplet.replay.title': 'Training replay: from uniform to the diagonal',
  'couplet.replay.sec': '§10.1',
  'couplet.replay.note':
    'The weights saved during training, each run on the held-out couplets (<code>scripts/couplet/snapshots.mjs</code>). Move the slider: the aligning head’s maps of a probe poem at that step, and the loss curve with the step marked (training loss solid, validation dashed).',
  'couplet.replay.step': 'snapshot',
  'couplet.replay.stepN': 'step {s}',
  'couplet.replay.probe': 'probe poem',
  'couplet.replay.numbers':
    'Step {s}: loss {lossPar} nats per token on the parallel couplets, {lossCtl} on the control ({n} held-out couplets); {lh}’s weight on the aligned character {par} (parallel), {ctl} (control).',

  'guide.couplet.1':
    'Pick a poem and its 颔联, then click “Write the lower line”: the characters appear one by one. Below, the cross-attention map of the written line opens at the aligning head.',
  'guide.couplet.2':
    'Answer the “Guess first” card, then compare the four couplets’ maps: is the diagonal brighter in 颔联 and 颈联 than in 首联 and 尾联?',
  'guide.couplet.3':
    'In the training replay, drag the slider from the first snapshot to the last: the maps start uniform, and the loss curve shows where that step lies.',
};
