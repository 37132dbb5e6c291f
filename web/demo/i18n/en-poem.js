// @ts-check
// The English strings of the poem chapter (parts/poem/), the same keys as zh-poem.js.

export default {
  'part.poem.toc': 'A model that has read Tang poems',
  'part.poem.title': 'A small Transformer that has read Tang and Song quatrains',
  'part.poem.intro':
    'Everything so far ran on toy tasks or on random weights. Here is a real, if small, trained model: a character-level Llama (RMSNorm, RoPE, SwiGLU; 4 layers of 4 heads) that attnlab itself trained on about 89,000 Tang and Song quatrains (绝句). The page loads it like any checkpoint (<code>readSafetensors</code> + <code>loadModel</code>), lets it write, shows where each head looks, switches heads off, and finally trains a smaller one from scratch in your browser, as the learning path in Section 10.1 of the tutorial suggests.',

  'poem.loading': 'Loading the poem model (config.json, model.safetensors, tokenizer.json, held-out poems)…',
  'poem.loadFailed': 'The poem model could not be loaded: {err}',
  'poem.httpError': '{f}: HTTP {s}',
  'poem.waiting': 'Waiting for the model…',
  'poem.facts':
    '<strong>The model</strong>: {p} M parameters, {L} layers × {H} heads, E = {E}, a vocabulary of {V} characters. <strong>Held-out loss</strong>: on the {poems} held-out quatrains shipped with the model ({chars} predicted tokens: every character and each poem’s final [EOS]), {loss} nats per character; “held-out loss” in this chapter always means these poems. For reference, the training report gives, on the whole test split ({n} predicted tokens): {bigram} for a bigram model that sees only the previous character, {unigram} for character frequencies alone.',
  'poem.legend': 'attention weight ({bos} = [BOS], the start token)',
  'poem.layer': 'layer {l}',
  'poem.lh': 'layer {l} · head {h}',
  'poem.headN': 'head {h}',

  'poem.gen.title': 'Does it write poems?',
  'poem.gen.sec': '§10.1 · §11',
  'poem.gen.note':
    'The model writes one character at a time, each sampled from its predicted distribution (<code>model.generate</code>, seeded). With “keep the form” on, a character that breaks the form (a line too short or too long, punctuation in the wrong place) is replaced: the line-ending ，/。 where one is due, otherwise a sample of the model’s own distribution restricted to what the form allows; it stops after four lines. Replaced characters are marked. Click a character to see its attention rows: where every head looked when it chose that character.',
  'poem.len': 'Line length',
  'poem.lenAria': 'characters per line',
  'poem.lenAuto': 'the model chooses',
  'poem.len5': '5 characters (五言)',
  'poem.len7': '7 characters (七言)',
  'poem.temp': 'Temperature',
  'poem.seed': 'Seed',
  'poem.keepForm': 'keep the form',
  'poem.write': 'Write a poem',
  'poem.nextSeed': 'Another (seed + 1)',
  'poem.cellTip': 'character {i}: click for its attention rows',
  'poem.noGlyph': '(no font on this computer draws this character; its code point {u} is shown)',
  'poem.forcedTip': 'set by the form; the model had sampled “{want}”',
  'poem.form.none': 'The model kept the form on its own: nothing was replaced.',
  'poem.form.some': 'The form replaced {n} of the model’s characters (sampled → kept): {list}.',
  'poem.free.ok': 'Without help, this poem keeps the form of a quatrain.',
  'poem.free.broken': 'Without help, this poem breaks the form of a quatrain.',
  'poem.rowsTitle': 'attention rows of the chosen character',
  'poem.rowsNote':
    'Rows of “{c}” (character {n}): one row per layer and head, over the characters before it. They are the weights of the query that chose it.',
  'poem.measure': 'Measure: 100 poems without help',
  'poem.measuring': 'Sampling… {k} of {n}',
  'poem.rate':
    'Without help (model chooses the length, temperature {temp}, seeds {s}–{e}): {ok} of {n} poems keep the form of a quatrain.',

  'poem.switch.title': 'Trained, or the same architecture at random',
  'poem.switch.sec': '§8.1',
  'poem.switch.note':
    'The same architecture with freshly initialised weights (<code>createModel(model.config)</code>, seed 1) writes gibberish, and its causal attention is close to uniform over the characters so far: the lower triangle of the maps is the causal mask, not learning. The switch applies to the whole chapter.',
  'poem.model.trained': 'trained model',
  'poem.model.random': 'random initialisation',
  'poem.compare.trained': 'Trained: {loss} nats per character; mean attention entropy {e} (uniform: {u}).',
  'poem.compare.random': 'Random: {loss} nats; mean attention entropy {e} (uniform: {u}).',
  'poem.compare.lnV': 'Guessing uniformly among {V} characters costs ln V = {v} nats.',
  'poem.compare.sample': 'On the {n} held-out poems ({c} predicted tokens):',

  'poem.grid.title': 'What each head looks at, measured',
  'poem.grid.sec': '§7.1 · §7.2',
  'poem.grid.note':
    'Every layer and head on the poem above. A head’s name is measured, not guessed: over held-out poems, the mean attention it puts on a pattern’s keys (the previous character, the same column of the line before, …) is compared with uniform attention. Click a head for its map and its links.',
  'poem.namesNote':
    '{n} of {all} heads have a clear pattern ({src}: mean weight ≥ {s} on the pattern and ≥ {r} × uniform); the others are “no clear role”.',
  'poem.src.json': 'measured beforehand on {n} held-out quatrains',
  'poem.linksAria':
    'Token links of the chosen head: each character on the left, the characters it attends to on the right. Arrow keys pick a character.',
  'poem.src.live': 'measured here on {n} held-out poems',
  'poem.noRole': 'no clear role',
  'poem.pattern.previous': 'previous character',
  'poem.pattern.couplet': 'same column, line before',
  'poem.pattern.rhyme': 'rhyme positions',
  'poem.pattern.punctuation': 'punctuation and start',
  'poem.pattern.lineStart': 'start of the line',
  'poem.pattern.tone': 'same column of the line before (2nd/4th/6th character)',
  'poem.pattern.self': 'itself',
  'poem.pattern.bos': 'first token',
  'poem.headCaption': '{lh}: {name}',
  'poem.linkTip': 'query {q} → key {k}: {v}',
  'poem.linkQuery': 'query {tok}: {best}',

  'poem.sentence.title': 'The tutorial’s sentence, read by this model',
  'poem.sentence.sec': '§2.3 · §7.1',
  'poem.sentence.note':
    'Section 2.3 of the tutorial explains attention with “这只猫因为没有及时喂食，所以一直在叫。” (the cat, not fed in time, keeps crying): ideally 叫 (cry) should look at 猫 (cat: who cries) and 喂食 (feeding: why). Here the sentence goes through the poem model above: in its vocabulary one character is one token, [BOS] goes first, and one forward gives 叫’s attention row in every layer and head. Every number below is computed from the model on this page now, not typed in.',
  'poem.sentence.comma': 'as written (with its comma)',
  'poem.sentence.plain': 'without the comma',
  'poem.sentence.rowsTitle': 'attention rows of 叫 (one per layer and head)',
  'poem.sentence.named': '{lh} ({name})',
  'poem.sentence.other.comma': 'the sentence without its comma',
  'poem.sentence.other.plain': 'the sentence with its comma',
  'poem.sentence.card':
    '叫 sees {n} tokens ([BOS] and every character before it); uniform attention would give each {u}. Of the {heads} heads, the one that puts most weight on 喂 (feed) is {feed}: {fw}{feedTop}. The most any head puts on 猫 (cat) is {cat}: {cw}{catTop}. In {other}, the same {feed} looks mostly at “{ek}” ({ew}).',
  'poem.sentence.top.self': ', its largest weight of all',
  'poem.sentence.top.other': ', while its largest weight goes to “{k}” ({w})',
  'poem.sentence.moral':
    'No head links 叫 mainly to 猫 as the tutorial’s picture does. This model has read only quatrains, and its heads learned the structure of poems: punctuation, the previous character, the start of a line (see the grid above). Adding or removing one comma changes what the same head looks at: it looks for positions and punctuation, not for who is crying. The tutorial’s ideal reader is drawn to make a point; what a trained model learns depends on what it has read.',

  'poem.advanced': 'Advanced: switch heads off, and guess first which head matters most (Section 8.2 of the tutorial)',
  'poem.mask.title': 'Switch heads off',
  'poem.mask.sec': '§8.2',
  'poem.mask.note':
    'A head switched off has its attention weights multiplied by 0 (<code>headMask</code>). The change in loss, and two poems sampled with the same random numbers (one with every head, one with the chosen heads off; so that they differ only by those heads they come from this panel’s own sampler, not the poem written above), show what it did. The table compares how sharp each head’s attention is (how far its entropy is below the uniform level) with what removing it costs: attention weights alone do not tell which heads matter.',
  'poem.guessQ':
    'The table below switches the {n} heads off one at a time and measures how much the held-out loss rises. Which head, switched off, raises the loss most? The one whose attention is sharpest?',
  'poem.guessAnswer':
    '<b>{top}: zeroed, the loss rises by {d} nats, the most of the {n} heads.</b> Yet its attention is almost flat: entropy {e} against {u} for uniform, number {rank} by sharpness. The sharpest head, {sharp} (entropy {se}), costs only {sd} zeroed: attention weights alone do not tell which head matters (Section 8.2 of the tutorial). But “matters” also depends on how a head is removed: {top} replaced by its mean output instead costs {tm}, and by that intervention the costliest head is {mtop} ({mm}). Zeroing pushes the later layers off their usual inputs.',
  'poem.maskReset': 'All heads on',
  'poem.maskLoss':
    'With {off} off, the loss changes by {d} nats (measured on the first {n} held-out poems, {c} predicted tokens, so that each click answers at once).',
  'poem.maskNone':
    'Every head is on. Switch one off to see the change in loss (measured on the first {n} held-out poems, {c} predicted tokens).',
  'poem.maskIntact': 'every head on:',
  'poem.maskMasked': 'heads off:',
  'poem.col.head': 'head',
  'poem.col.name': 'measured pattern',
  'poem.col.entropy': 'entropy (nats)',
  'poem.col.sharp': 'sharpness ({u} − entropy)',
  'poem.col.delta': 'zeroed: loss change',
  'poem.col.mean': 'mean output: loss change',
  'poem.col.gradient': 'head-mask gradient',
  'poem.tableMeasuring':
    'Measuring each head’s effect here on {n} held-out seven-character quatrains (zeroed, replaced by its mean output, gradient)…',
  'poem.src.effects':
    'effects measured here on {n} held-out seven-character quatrains; names and entropy from heads.json, on {json} held-out quatrains',
  'poem.tableNote':
    'Loss with every head on: {base} ({src}). Rank correlation of sharpness with the zeroed effect: ρ = {rho}; zeroed vs mean output ρ = {am}, zeroed vs gradient ρ = {ag}. A head’s name says only where it looks; what removing it does is in these columns.',
  'poem.train.title': 'Train one from scratch, here',
  'poem.train.sec': '§10.1',
  'poem.train.note':
    'A smaller model of the same family (E = 64, 2 layers × 4 heads) trains in a Web Worker with <code>trainStep</code> (AdamW), on the model folder’s training subset: 5,023 quatrains taken from the poem model’s training split (about 470 KB, fetched when the panel is ready), or on any text you paste, one token per character. The dashed line is the loss on 16 held-out quatrains, which are never trained on. The middle chart follows the best head on each attention pattern: all start at the uniform level; as training goes on, a head that watches the punctuation appears first, then one that looks at the previous character.',
  'poem.lr': 'learning rate (AdamW)',
  'poem.lrAria': 'learning rate of the training from scratch',
  'poem.lrNote':
    'Measured on this page with seed 1 (16 probe poems): at 3e-3 the probes’ loss falls from 8.0 to 5.9 by step 100, 5.5 by step 400 and 5.2 by step 800, and does not rise again: there is enough data; a punctuation head appears around step 100 (score 0.57, uniform level 0.17), and a previous-character head forms between steps 200 and 400 (0.27 → 0.62, uniform level 0.10). 1e-3 learns more slowly (5.6 at step 400, no previous-character head yet); 1e-2 reaches 5.7 at step 400, worse than 3e-3. Changing the rate restarts the run.',
  'poem.src.poems': 'the quatrains',
  'poem.src.text': 'my text',
  'poem.textAria': 'your text (any language, one token per character)',
  'poem.textPlaceholder': 'Paste a text of at least a few hundred characters, in any language…',
  'poem.textShort': 'Your text has {n} characters; a run needs at least {min}.',
  'poem.train.start': 'Train',
  'poem.train.resume': 'Resume',
  'poem.train.pause': 'Pause',
  'poem.train.reset': 'Reset (new seed)',
  'poem.train.failed': 'Training failed: {err}',
  'poem.train.cfg': 'E {E}, {L} layers × {H} heads, V {V}',
  'poem.train.stats':
    'Step {s} · loss {loss} (probe {probe}) · {sps} steps/s · {sec} s · lowest head entropy {e} (uniform {u}) · {cfg}',
  'poem.lossCaption': 'Loss (nats): training batches, and the {n} held-out probe poems (dashed)',
  'poem.entropyCaption': 'Each head’s mean attention entropy on the probe (layer 2 dashed)',
  'poem.shipped.caption':
    'How the poem model above trained: {steps} steps, its training loss (solid) and its loss on 1,000 validation poems (dashed), in nats',
  'poem.shipped.note':
    'Its training loss fell from {t0} at step 50 to {t1}; its validation loss from {v0} at step {s0} to {v1} at step {s1}, still falling slowly at the end. The small model below walks the same road, much smaller and much shorter.',
  'poem.shipped.inside':
    'Inside that run: the weights saved at chosen steps while it trained, on the same {n} held-out probe poems. First the best head’s score on each attention pattern over the steps (0 to 1); then drag the slider to watch the first probe’s 16 maps change from step 0 to the end.',
  'poem.shipped.snapStep': 'weights after step {s} · loss on the probes {loss} nats',
  'poem.shipped.insideNote':
    'At step 0 the head closest to “look at the previous character” scores {p0}, about uniform attention’s {b}; by step {s1}, {p1}. The weights of steps 0–{r} come from a rerun of the same script (all {k} of its logged losses equal the original run’s, digit for digit); step {s1} is the model shipped above. Where the lines are dashed, there are no snapshots in between.',
  'poem.patternCaption': 'On the held-out probe poems, the score of the best head on each attention pattern (0 to 1)',
  'poem.steps': 'step',
  'poem.lnV': 'ln V = {v}',
  'poem.uniformLine': 'uniform {v}',
  'poem.snap': 'Snapshot',
  'poem.snapAria': 'snapshot of the maps',
  'poem.snapStep': 'maps at step {s}',
  'part.explain.toc': 'Weights are not explanations: an experiment',
  'part.explain.title': 'Are attention weights an explanation? An experiment on the poem model',
  'part.explain.intro':
    'Section 8.2 of the tutorial says attention weights are coefficients and a heat map “should not be the only evidence”. Here that becomes an experiment: one prediction, eight ways of scoring each position, and whether they rank the positions alike (Jain & Wallace’s test); every head scored by a gradient and by two ablations; and a small classifier trained twice in the page, once with learned attention and once with attention frozen to uniform (Wiegreffe & Pinter’s baseline).',
  'explain.reading.title': 'One prediction, eight readings',
  'explain.reading.note':
    'Pick a held-out seven-character quatrain, a position (it predicts the next character), a layer and a head. The columns: that head’s raw weights, the layer’s mean over heads, rollout (the layers’ weights multiplied through, residual included), attention flow (max flow, T ≤ 64), the norm-weighted view ‖α<sub>ij</sub>·f(x<sub>j</sub>)‖ (Kobayashi et al. 2020, f(x) = W<sub>O</sub>W<sub>V</sub>·RMSNorm(x), computed here from layer l’s input and the checkpoint’s v/o projections: the package returns no value vectors), gradient × input, gradient norm, and occlusion (the logit’s change when input j is set to zero). Attributions are taken in absolute value: a position can pull the logit down.',
  'explain.heads.title': 'Which head matters? Three measures',
  'explain.heads.note':
    'The head mask’s gradient (Michel et al. 2019, one backward pass), the loss change when the head is zeroed, and when its output is replaced by its mean over all positions. Zeroing pushes the later layers off their usual inputs; the mean keeps the head’s average contribution and removes only what depends on the input.',
  'explain.uniform.title': 'The uniform-attention baseline',
  'explain.uniform.note':
    'If a model does as well with attention replaced by a uniform distribution, the learned weights are not the explanation of its answers on that task (Wiegreffe & Pinter 2019).',
  'explain.r.raw': 'raw weight (the head)',
  'explain.r.layerMean': 'layer mean',
  'explain.r.rollout': 'rollout',
  'explain.r.flow': 'attention flow',
  'explain.r.normWeighted': '‖α·f(x)‖',
  'explain.r.gradXInput': '|gradient × input|',
  'explain.r.gradient': 'gradient norm',
  'explain.r.occlusion': '|occlusion|',
  'explain.col.gradient': 'gradient |∂loss/∂ξ|',
  'explain.col.zero': 'zeroed: loss change',
  'explain.col.mean': 'mean output: loss change',
  'explain.col.train': 'training accuracy',
  'explain.col.test': 'held-out accuracy',
  'explain.pick.seq': 'poem',
  'explain.pick.position': 'position → the character to predict',
  'explain.pick.layer': 'layer',
  'explain.pick.head': 'head',
  'explain.note.all':
    'The prediction: “{tok}” after position {p} (its logit). Each column is shaded by its own largest value.',
  'explain.note.noWeights':
    'The prediction: “{tok}” after position {p}. The weights of “Your model” went to its worker, so this page has no v/o projections and no ‖α·f(x)‖ column.',
  'explain.failed': 'Failed: {err}',
  'explain.guessRho':
    'Will the order in which the raw attention weights rank the positions agree with gradient × input’s and occlusion’s, a rank correlation ρ near 1?',
  'explain.answerRho':
    'Raw weights vs gradient × input: ρ = {rg}; vs occlusion: ρ = {ro}; gradient × input vs occlusion: ρ = {go}; raw weights vs rollout: ρ = {rr}. Try another position, layer or head: the readings often disagree, so one heat map cannot say why the model predicts what it does.',
  'explain.importanceLeadYours':
    'Measured on the sentence above (a batch of one row; zeroing and the mean each take L·H + 1 forwards).',
  'explain.importanceLead':
    'Measured on the first {n} seven-character quatrains (one batch of {n} × 34 tokens; zeroing and the mean each take L·H + 1 forwards, a few seconds).',
  'explain.importanceRun': 'Measure every head',
  'explain.running': 'Computing…',
  'explain.guessHeads':
    'Ranked by the gradient, by zeroing and by the mean output: will the most important head be the same?',
  'explain.answerHeads':
    'The largest gradient: {g}; the costliest to zero: {z} (+{dz} nats, +{dm} replaced by its mean); the costliest by the mean: {m}. Rank correlation of gradient and zeroing: ρ = {gz}. “Important” depends on the intervention that measures it.',
  'explain.importanceNote':
    'The loss on the {n} poems with every head: {loss} nats. Rank correlations: gradient vs zeroed ρ = {gz}, gradient vs mean ρ = {gm}, zeroed vs mean ρ = {zm}.',
  'explain.baselineLead':
    'The task: five-character verse of four lines, a whole quatrain (jueju) or the first four lines of an eight-line regulated poem (lüshi)? Both are 20 characters in 4 lines, so length and punctuation give nothing away. The data are the model folder’s held-out.jsonl, one in four of each class held out. A 2-layer × 2-head Llama reads it and answers “绝” or “律” at the last position. Uniform attention: W<sub>Q</sub> and W<sub>K</sub> set to 0, so every query gives 1/(i+1) to each key it may see; their gradients are exactly 0 and AdamW leaves them at 0, so the attention stays uniform for the whole run. Every other weight starts the same in both runs (one seed).',
  'explain.guessUniform':
    'Will the model whose attention is frozen to uniform reach a much lower held-out accuracy than the one that learns it?',
  'explain.answerUniform': 'Press the button below to train both models in a worker, then compare with your guess.',
  'explain.baselineRun': 'Train both ({steps} steps each, seed {seed})',
  'explain.baselineStep': '{kind}: step {step}, loss {loss}',
  'explain.kind.learned': 'learned attention',
  'explain.kind.uniform': 'uniform attention (frozen)',
  'explain.baselineNote':
    '{train} poems for training, {test} held out; always guessing the larger class scores {chance}. Took {s} s. With so few held-out poems, a difference of a few points is within the noise.',
  'explain.usePoem': 'The poem model',
  'explain.useYours': 'The model loaded in “Your model”',
  'explain.noYours': 'Load a whole checkpoint in “Your model” first',
  'explain.yoursText': 'The cat kept crying because nobody had fed it in time.',
};
