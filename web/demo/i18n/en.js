// @ts-check
// English catalogue of the demo page. Same keys as zh.js (tests/js/demo/i18n.test.mjs checks). {name} = a value
// filled in by t(); values of *.intro, pf.*.why and page.lede may hold simple HTML (<code>, <b>, <span class>).

import training from './en-train.js';
import model from './en-model.js';
import modern from './en-modern.js';
import poem from './en-poem.js';
import couplet from './en-couplet.js';
import arch from './en-arch.js';
import guide from './en-guide.js';
import glossary from './en-glossary.js';

export default {
  ...training,
  ...model,
  ...modern,
  ...poem,
  ...couplet,
  ...arch,
  ...guide,
  ...glossary,
  'page.title': 'attnlab — the attention tutorial, live',
  'page.sub': 'the attention tutorial, live',
  'page.lede':
    "A companion to the Chinese attention tutorial, its panels in the tutorial's order (the badge beside each title is the tutorial's section number). Every attention computation on the page is done by attnlab. The rest is plain JavaScript: making the inputs, statistics such as entropy and norms, counting path lengths, the toy models' embedding and residual, the deliberately wrong column of the troubleshooting table, and the reference implementation of the speed test. attnlab is C++/Highway compiled to WebAssembly, used here through its npm package (<code>import { init } from 'attnlab'</code>).",
  'page.buildTitle': 'attn.variant: which WebAssembly build init() loaded',
  'page.loading': 'loading attnlab…',
  'page.build': 'build',
  'page.buildAria': 'Which attnlab build to load',
  'page.langAria': 'Language',
  'page.tocAria': "Contents, in the tutorial's order",
  'page.secTitle': "the tutorial's sections this panel brings to life",
  'page.foot': "attnlab demo · uses only the package's public API",
  'page.footLink': 'about this page and the state-dict format',
  'page.notLoaded': 'attnlab not loaded',
  'page.importFailed':
    'Could not import /dist/index.mjs (the built attnlab package): {err}\nBuild it with `bash scripts/build.sh` (or `npm start`, which also builds), then reload.',
  'page.initFailed': "attnlab's init({ variant: '{variant}' }) failed: {err}",
  'page.badge': 'attnlab {version} · build: {build}',
  'page.simd': 'SIMD (WebAssembly SIMD128)',
  'page.scalar': 'scalar (no SIMD)',
  'page.partFailed': 'This part failed: {err}',
  'part.simple.toc': 'Simplified attention',
  'part.simple.title': 'No Q, K, V yet: score, normalise, take the weighted sum',
  'part.simple.intro':
    "The skeleton of attention is a weighted sum (tutorial section 2.2). First give every word a score: how much it matters to the word being processed. Then normalise the scores into weights that add up to 1. Finally add up the words' vectors, each times its weight, into a new vector. No queries, keys or values yet: you set the scores by hand.",

  'part.sbs.toc': 'Step by step',
  'part.sbs.title': 'Attention step by step: softmax(QKᵀ/√dₖ + mask) · V',
  'part.sbs.intro':
    "The parts before took the steps one at a time; here they join into the four steps of tutorial section 4.1: each query's dot product with every key gives the scores, the scores are scaled, softmax turns them into weights (each positive, every row summing to 1, section 4.5), and the output is the weighted sum of the values. It opens on the tutorial's section 5 NumPy example. Edit Q, K, V (one row per line); click a cell of the mask to hide a key from a query (the <code>masked_fill</code> of section 6.3). Every intermediate result comes straight from attnlab. The “Advanced” fold has the rules today's models add, and a temperature.",
  'part.why.toc': 'Why attention',
  'part.why.title': 'Why attention beats RNN and CNN',
  'part.why.intro':
    'An RNN passes information from word 1 to word n through n − 1 state updates, one after the other; a CNN sees only a window and needs layers to reach far. Attention links any two positions in one step, and all pairs are computed at once as matrix products (Section 3 of the tutorial). The price: L² scores per sequence, which the speed part (last) measures.',
  'part.dot.toc': 'Q/K/V and the dot product',
  'part.dot.title': 'The library: queries, keys, values, and the dot product as similarity',
  'part.dot.intro':
    "Think of a library (Section 4.2 of the tutorial): your question is the query, the titles on the spines are the keys you match against, and the books' contents are the values you take home, mixed by how well each title matched. The match is a dot product (Section 4.3): large when two vectors point the same way, zero when they are at right angles, negative when they point apart. Drag the query q and the keys; the scores and softmax weights follow.",
  'part.dk.toc': 'Why √dₖ',
  'part.dk.title': 'Why divide by √dₖ',
  'part.dk.intro':
    'A dot product of two random dₖ-long vectors with unit-variance entries has variance dₖ (Section 4.4 of the tutorial). Unscaled, the scores grow like √dₖ, softmax saturates (one key takes almost all the weight) and its gradients vanish. Dividing by √dₖ keeps the scores at variance 1 for every dₖ. The weights below come from attnlab with scale 1/√dₖ and with scale 1.',
  'part.cross.toc': 'Self vs cross, batches',
  'part.cross.title': 'Self-attention, cross-attention, and a batch of sequences',
  'part.cross.intro':
    'In self-attention Q, K and V all come from the same sequence; in cross-attention the queries come from one sequence (a decoder) and K = V from another (an encoder), which may be longer (Section 4.6 of the tutorial). The weights are then Lq × Lk, not square. In practice the inputs carry a batch dimension, (batch, seq, dₖ), and every item is attended on its own (Section 6.1).',
  'part.heads.toc': 'From X to heads and back',
  'part.heads.title': 'From X to heads and back: MultiHeadAttention(d_model=8, num_heads=2)',
  'part.heads.intro':
    "Q, K and V are not X: they are X times learned matrices W_Q, W_K, W_V (Section 6.2 of the tutorial). Multi-head attention splits each of them into heads with <code>view</code> + <code>transpose</code>, attends in every head on its own, and joins the heads back with <code>transpose</code> + <code>view</code> before W_O (Sections 6.3–6.4 and 7.2). Every tensor below carries its shape; columns are coloured by head, and each head's attention is run by attnlab. The last line checks the result against attnlab's own <code>mha.forward</code>.",
  'part.mha.toc': 'Multi-head on a sentence',
  'part.mha.title': 'Multi-head attention on a sentence',
  'part.mha.intro':
    "Each head projects the tokens with its own W_Q, W_K, W_V and attends on its own, so different heads can follow different relations (tutorial section 7.1): with one head everything must fit in one weighted average. Try the tutorial's sentence (section 2.3) with untrained weights: every row is close to uniform (about 1/n per cell) with small random ripples (section 8.1). The toy models' heads learned a crisp pattern.",
  'part.myths.toc': 'Misconceptions',
  'part.myths.title': 'Five misconceptions, live',
  'part.myths.intro':
    'Section 8 of the tutorial lists five misreadings of attention. Each box below shows one with numbers from attnlab.',
  'part.pitfalls.toc': 'Troubleshooting',
  'part.pitfalls.title': 'The troubleshooting table, live',
  'part.pitfalls.intro':
    'Every row of the table in Section 9 of the tutorial. The <span class="tag wrong">wrong</span> column is plain JavaScript written wrongly on purpose; the <span class="tag right">right</span> column is attnlab.',
  'part.train.toc': 'Train it yourself',
  'part.train.title': 'Train it yourself: from uniform to structured',
  'part.train.intro':
    "The tutorial's learning path ends with a small task where you watch the weights go from uniform to structured (Section 10 of the tutorial). Here a one-layer transformer (embedding + positional encoding + multi-head attention + residual + readout) trains in a Web Worker with attnlab's backward pass and Adam (<code>model.trainStep</code>), a fresh random batch every step. The entropy curve shows each head leaving the uniform level ln T.",
  'part.speed.toc': 'Speed',
  'part.speed.title': 'Speed: the O(L²) cost, measured',
  'part.speed.intro':
    "Scaled dot-product attention (SDPA) and a full <code>nn.MultiheadAttention</code> forward at E = 512, 8 heads, batch 1, timed in a Web Worker (the page stays responsive, even at L = 2048) with attnlab's threaded build (on a cross-origin-isolated page), its single-thread SIMD build, its scalar build and a plain-JavaScript reference. Four times the length costs sixteen times the attention term (4·L²·E); but a whole multi-head layer also projects (8·L·E²), which dominates below L = 2E, so the layer grows far less than sixteen times (see the table).",

  'sbs.errEmpty': '{name} is empty: write one row per line, e.g. "1 0 1 0".',
  'sbs.errNumber': '{name}, row {row}: "{tok}" is not a number.',
  'sbs.errRagged': '{name}: row {row} has {n} numbers but row 1 has {w}; every row needs the same length.',
  'sbs.errBig': '{name} is {r}×{c}; this view shows at most {max}×{max}.',
  'sbs.errDk': 'Q has {q} columns but K has {k}: queries and keys need the same dₖ.',
  'sbs.errKv': 'K has {k} rows but V has {v}: every key needs one value row.',
  'sbs.errScale': 'The custom scale must be a number.',
  'sbs.errAttn': "attnlab's scaledDotProductAttention threw {err}",
  'sbs.sec5Title': "The tutorial's section 5 example",
  'sbs.sec5Note':
    'Q = K = V = [[1,0,1,0],[0,1,0,1],[1,1,0,0]], dₖ = 4, scale 1/√4. The first row of each pair is the output the tutorial gives; the second is what attnlab computes (softmax of each row of QKᵀ/2).',
  'sbs.sec5Guess':
    "In row 0, q0·k0 = 2, q0·k1 = 0, q0·k2 = 1. Which key should get the largest weight? Think first, then see the tutorial's output in the table.",
  'sbs.sec5Answer':
    "<b>k{j}: the largest score gets the largest weight, {w} by attnlab.</b> Now the table: in the tutorial's row 0 the largest weight is k{p}'s ({pw}).",
  'sbs.printedRow': 'q{i} · the tutorial',
  'sbs.computedRow': 'q{i} · attnlab',
  'sbs.sec5Why':
    "The tutorial's numbers cannot be right: q0·k0 = 2 is the largest score in row 0 (q0·k1 = 0, q0·k2 = 1), so k0 must get the largest weight, yet the tutorial's row 0 gives k2 the most.",
  'sbs.liveTitle': 'Your own Q, K, V (starts on the same example)',
  'sbs.matrixAria': '{name} matrix, one row per line',
  'sbs.qTitle': 'queries: one row per query, dₖ columns',
  'sbs.kTitle': 'keys: one row per key, dₖ columns',
  'sbs.vTitle': 'values: one row per key, dᵥ columns',
  'sbs.reset': 'Reset Q, K, V',
  'sbs.scale': 'Scale',
  'sbs.scaleOff': 'off (1)',
  'sbs.scaleCustom': 'custom',
  'sbs.scaleCustomAria': 'custom scale',
  'sbs.scaleOffText': '× 1 (scale off)',
  'sbs.scaleCustomText': '× {s} (custom)',
  'sbs.temp': 'Temperature',
  'sbs.tempAria': 'temperature',
  'sbs.tempNote':
    "Temperature T is not in the tutorial's formula: it divides the scaled scores before softmax (scale ÷ T). A score gap Δ becomes Δ/T, so a weight ratio e^Δ becomes e^(Δ/T): T > 1 flattens the weights toward uniform, T < 1 sharpens them toward the largest score; T = 1 is plain attention.",
  'sbs.causal': 'Causal mask (isCausal)',
  'sbs.causalOff': 'off',
  'sbs.causalUpperLeft': 'upper-left: j ≤ i',
  'sbs.causalLowerRight': 'lower-right: j ≤ i + Lk − Lq',
  'sbs.window': 'Sliding window [left, right] (−1 = unbounded)',
  'sbs.windowLeftAria': 'window, left: how many keys before its position a query sees',
  'sbs.windowRightAria': 'window, right: how many keys after its position a query sees',
  'sbs.softcap': 'Softcap c',
  'sbs.softcapOn': 'on',
  'sbs.softcapAria': 'softcap c',
  'sbs.modernNote':
    "Today's models add rules of their own, and attnlab has them built in. The causal mask aligns top-left (training: query i is token i) or bottom-right (decoding with a cache: the Lq queries are the last Lq of the Lk positions, so query i sees keys j ≤ i + Lk − Lq; give Q fewer rows than K to see it). A sliding window (Mistral, Gemma 2) lets the query at aligned position p see only keys p − left … p + right. Soft-capping (Gemma 2) squeezes every score into (−c, c) with c·tanh(s / c) before the mask. The cells these rules remove are −∞ whatever the fill; the fill applies to the cells you click.",
  'sbs.lowerRightSquare':
    'Lq = Lk here, so lower-right is the same as upper-left: give Q fewer (or more) rows than K to see the difference.',
  'sbs.callNote':
    'Each stage below is one call of attnlab with the same options; only <code>returnScores</code> changes (and <code>scale</code> is 1 for QKᵀ):',
  'sbs.errWindow': 'Each side of the window must be a whole number ≥ −1 (−1 = unbounded), got "{v}".',
  'sbs.errSoftcap': 'The softcap c must be a number > 0, got "{v}".',
  'sbs.sCap': 'softcap',
  'sbs.legSoftcapped': 'softcapped score',
  'sbs.legKeep': '1: may attend',
  'sbs.legClick1e9': '0: clicked (−1e9)',
  'sbs.legClickInf': '0: clicked (−∞)',
  'sbs.legCausal': '0: isCausal (−∞)',
  'sbs.legWindow': '0: window (−∞)',
  'sbs.deadRowMixed':
    'Row q{i} is fully masked, but only isCausal and the window give −∞ here: the {n} keys you clicked are −1e9, one and the same score in float32, so softmax gives each of them 1/{n} = {u} and the −∞ keys 0. The keys you masked take all the weight. Switch the fill to −∞ to see what attnlab does with a true mask.',
  'sbs.tipSoftcap': ', softcapped = {c}',
  'sbs.whyClick': 'your click',
  'sbs.whyCausal': 'isCausal',
  'sbs.whyWindow': 'the window',
  'sbs.fill': 'Fill for mask == 0',
  'sbs.fill1e9': '−1e9 (the tutorial)',
  'sbs.fillInf': '−∞',
  'sbs.clearMasks': 'Clear clicked masks',
  'sbs.inputs': 'Inputs',
  'sbs.inputsNote': 'rows = tokens',
  'sbs.s1': 'QKᵀ',
  'sbs.s2': '× scale',
  'sbs.s3': 'mask',
  'sbs.s4': 'softmax (rows)',
  'sbs.s4Formula': 'each row sums to 1',
  'sbs.s5': '· V',
  'sbs.legScore': 'score',
  'sbs.legScaled': 'scaled score',
  'sbs.legMasked': 'masked score (hatched = masked, dark = −∞)',
  'sbs.legWeight': 'weight',
  'sbs.legOutput': 'output',
  'sbs.maskCaption': 'mask (1 = may attend, 0 = masked)',
  'sbs.maskedCaption': 'scores after the mask',
  'sbs.rowSum': 'row sum',
  'sbs.deadRow1e9':
    'Row q{i} is fully masked. With −1e9 every score in the row is the same −1e9, so softmax gives each key 1/{lk} = {u}: the masked keys get weight anyway, and the output is the plain mean of V. Switch the fill to −∞ to see what attnlab does with a true mask.',
  'sbs.deadRowInf':
    "Row q{i} is fully masked: every score is −∞, so softmax would compute 0/0. attnlab returns zeros for this row's weights and output. PyTorch's F.scaled_dot_product_attention gives NaN here up to version 2.4 and zeros from 2.5 on.",
  'sbs.tip':
    'weight[q{i}, k{j}] = {w}  (row q{i} of Q · row k{j} of K)\nscore q{i}·k{j} = {s}, × scale = {ss}{sc}, after the mask = {ms}{m}\nclick to {act} this pair',
  'sbs.tipMasked': ', masked by {why}',
  'sbs.tipMask': 'mask',
  'sbs.tipUnmask': 'unmask',
  'sbs.tagAttnTitle': 'from attn.scaledDotProductAttention',
  'sbs.advanced': 'Advanced: −∞ fill, temperature, causal alignment, sliding window, softcap',
  'simple.sentence':
    'The sentence of tutorial section 2.3: “这只猫因为没有及时喂食所以一直在<b>叫</b>。” (“this cat keeps crying because it was not fed in time”). We process 叫 (crying). The sentence is cut into tokens (the units a model reads; here one word each), and every token has a vector.',
  'simple.step1': '① Score: whom should 叫 (crying) attend to?',
  'simple.scoreAria': 'score of {w}',
  'simple.preset.tutorial': "the tutorial's scores: cat high, fed medium, because low",
  'simple.preset.equal': 'all scores equal',
  'simple.preset.close': 'all scores close',
  'simple.colScore': 'score',
  'simple.colWeight': "weight (red dashes = 1/n, each word's weight if shared equally)",
  'simple.step2': '② Normalise: softmax turns scores into weights',
  'simple.softmaxNote':
    'Softmax takes e^s of every score and divides by their sum, so every weight is positive and they add up to 1. It only sees differences: two words whose scores differ by Δ get weights in the ratio e^Δ. A gap of 1 is about 2.7 times the weight; a gap of 3 about 20 times. When the scores are close the weights are nearly equal: scores 0.2 and 0.1 give 0.525 and 0.475, flatter than sharing in proportion to the scores (0.667 and 0.333). So softmax “stretches the gaps” only when they are about 1 or more. The weights come from attnlab.',
  'simple.ratio':
    "The two largest weights now go to {a} and {b}: score gap Δ = {d}, e^Δ = {r}; their weights' ratio = {w}.",
  'guess.title': 'Guess first:',
  'simple.guessQ':
    "raise the cat's score by 1 and leave the others alone: by how much does the ratio of the cat's weight to fed's weight grow?",
  'guess.reveal': 'Show the answer',
  'simple.guessAnswer':
    "<b>About {r} times, that is e times.</b> Softmax only sees differences: the cat's lead over fed grows by 1, so the ratio of their weights is multiplied by e¹ ≈ 2.718, whatever the other scores are (attnlab computed this factor from the current scores and from the same scores with the cat's raised by 1). Drag the cat's slider to check.",
  'simple.step3': '③ Weighted sum: the new vector of 叫',
  'simple.mixNote':
    "Every word's vector has four features, written by hand (not learned) so that the mix can be read. The new vector of 叫 is the words' vectors added up, each times its weight: the larger a word's weight, the more of its features come in. With the tutorial's scores the cat has the largest weight, so the new vector's “animal” grows clearly. The last column is the plain average, for comparison.",
  'simple.colOwn': "叫's own vector",
  'simple.colMixed': 'new vector, the weighted sum (attnlab)',
  'simple.colMean': 'plain average',
  'simple.feature.animal': 'animal',
  'simple.feature.sound': 'sound',
  'simple.feature.cause': 'cause',
  'simple.feature.function': 'function word',
  'simple.residual': 'Add 叫’s own vector back (the residual connection)',
  'simple.colResidual': 'own + new (residual)',
  'simple.residualNote':
    'With the weighted sum alone, 叫’s “sound” feature is {s0} (its own vector has 1): how much of the word survives depends on the weight it gives itself. Add its own vector back and it is {s1}: the word stays the word, with its context added. Every layer of a real Transformer does this (output = x + attention(x): the residual connection of section 7.3).',
  'simple.next':
    'That is the whole skeleton of attention. The next parts answer three questions: why do it this way (tutorial section 3), where the scores come from (the dot product of a query and a key, sections 4.2–4.3), and why divide by √dₖ (section 4.4). Then “step by step” joins the whole pipeline.',

  'dk.note':
    'Random Q and K with N(0, 1) entries; averages over 32 query rows. Without the scale the largest weight climbs toward 1 and the entropy falls toward 0 as dₖ grows; with 1/√dₖ both stay level.',
  'dk.keys': 'Keys per row',
  'dk.guessQ':
    'Unscaled, dₖ goes from {a} to {b} ({x} times longer vectors): how many times wider does the spread (standard deviation) of random q · k scores get?',
  'dk.guessAnswer':
    '<b>About {r} times, that is √{x} = {s} times, not {x}.</b> A dot product is a sum of dₖ products of variance 1, so its variance is dₖ and its standard deviation √dₖ. Measured here by attnlab on {n} × {n} random pairs: {sa} at dₖ = {a}, {sb} at dₖ = {b}. Multiplying by 1/√dₖ brings it back to 1.',
  'dk.keysAria': 'number of keys',
  'dk.resample': 'New random Q, K',
  'dk.with': 'with 1/√dₖ',
  'dk.without': 'without (scale 1)',
  'dk.xTitle': 'dₖ (log scale)',
  'dk.yMax': 'largest weight in a row',
  'dk.yEntropy': 'row entropy (nats)',
  'dk.uniform': 'uniform 1/{n}',
  'dk.maxEntropy': 'max ln {n}',
  'dk.yGrad': 'median ‖∂output/∂q‖',
  'dk.gradNote':
    "Why the gradient vanishes: one query, 8 keys, q, K, V and the upstream gradient drawn from N(0, 1), {n} draws per dₖ; the chart is the median of the query gradient ‖∂output/∂q‖ (attnlab's backward pass). Scaled, it stays near 0.5 for dₖ ≥ 4; unscaled, it first grows, then falls towards 0: at dₖ = 256, {s256} % of the draws get a gradient below 0.01, at dₖ = 1024 {s1024} %. The mean would mislead: in a few draws the top two scores happen to be close and the gradient is large, which holds the mean up. Most steps barely learning and a few jumping is what makes training unstable.",

  'why.picAria': 'path length over {n} words: RNN against attention',
  'why.rnnLabel': 'RNN: the first word reaches the last through {steps} state updates, one after the other',
  'why.attnLabel': 'Attention: the last word looks at every word in one step, all pairs at once',
  'why.picNote':
    'The sentence of Section 2.3 of the tutorial, in English ({n} words; the Chinese page counts one character as one token from here on, as the poem model does). When the model reads "crying" it needs "cat": the RNN must carry the cat through every update in between and forgets a little each time; attention scores "crying" against "cat" directly.',
  'why.colRnnPath': 'RNN path, first → last',
  'why.colAttnPath': 'attention path',
  'why.colCnn': 'CNN layers of width 3, first ↔ last',
  'why.cnnNote':
    'The CNN of Section 3.2 of the tutorial: one convolution of width 3 sees 3 neighbouring words; every layer stacked on it widens what one output sees (its receptive field) by 2 words, so ℓ layers see 1 + 2ℓ words. Two words d apart first fall into one receptive field after ⌈d/2⌉ layers, more for longer sentences; attention links them in one layer at any distance.',
  'why.guessQ':
    'With convolutions of width 3, how many layers until "{a}" and "{b}", {d} words apart, first fall into one receptive field? And how many attention layers?',
  'why.guessAnswer':
    '<b>{n} layers; attention needs 1.</b> Each convolution widens the receptive field by 2 words: {n} layers see 1 + 2 × {n} = {rf} words, enough for the {span} words from "{a}" to "{b}"; {n1} layers see only {rf1}.',
  'why.colRnnSeq': 'RNN steps that must wait for each other',
  'why.colScores': 'attention scores per head (L²)',
  'why.costNote':
    'The price of the direct path: every query scores every key, L² numbers per head. Four times the length, sixteen times the scores; the speed part at the end times it.',

  'dot.aria': 'a query and three keys in the plane; drag them',
  'dot.drag': 'drag {name}',
  'dot.note':
    'Point q the same way as a key and its score and weight rise; turn it to a right angle and the score is 0; point it away and the score turns negative and the weight shrinks. A longer q makes the differences larger, and softmax sharper.',
  'dot.angle': 'angle',
  'dot.guessQ': 'Make q twice as long, same direction. Does the largest weight grow, shrink or stay the same?',
  'dot.guessUp':
    "<b>It grows: k{j}'s weight goes from {a} to {b}.</b> Every score doubles, so every gap Δ doubles and each weight ratio e^Δ is squared: the large get larger, the small smaller. It is the same as dividing the scores by a smaller number, which is what the √dₖ of Section 4.4 of the tutorial controls. attnlab computed both sets of weights.",
  'dot.guessSame':
    '<b>It stays: the three scores are equal now, each weight is {a}.</b> Doubled they are still equal: Δ = 0 and e^0 = 1. Drag a key away and ask again.',
  'dot.weight': 'weight (attnlab)',
  'dot.book': 'book {n}: key k{j}',
  'dot.formula': "weightⱼ = softmax(q · kⱼ / √2); with V = the identity, attnlab's output row is exactly these shares.",

  'cross.mode': 'Attention type',
  'cross.self': 'self-attention: Q = K = V = the decoder sequence',
  'cross.cross': 'cross-attention: Q from the decoder, K = V from the encoder',
  'cross.scores': 'scores',
  'cross.weights': 'weights',
  'cross.output': 'output',
  'cross.selfNote':
    'Each token of the sequence looks at the tokens of the same sequence: the weights are a square Lq × Lq matrix.',
  'cross.crossNote':
    "Each decoder token (a word being produced) looks at the encoder's tokens (the source sentence): 3 queries, 6 keys, so the weights are 3 × 6, and each row still sums to 1. This is how a translation model looks back at its source. Here each decoder word's vector is made close to that of the word it translates, as training would make it, so its row peaks on that word.",
  'cross.batchTitle': 'A batch: shape (batch, seq, dₖ)',
  'cross.item': 'item {b} of the batch',
  'cross.batchNote':
    'One attnlab call on the whole batch; every item is attended on its own, with no weight between items. Compared with one call per item: max |Δ| = {d}.',

  'heads.advanced': 'Advanced: each head’s output, the merge back to (B, L, 8), W_O',
  'heads.batch': 'Batch size B (the tutorial: 2)',
  'heads.batchAria': 'batch size',
  'heads.wrong': 'Wrong transpose: scores with',
  'heads.init':
    "The layer is a fresh attnlab <code>createMultiHeadAttention({ embedDim: 8, numHeads: 2 })</code> with nn.MultiheadAttention's default initialisation (Xavier-uniform <code>in_proj</code>, zero biases) from a seeded generator; x is seeded too, so the numbers stay the same on every visit.",
  'heads.item0':
    "Shapes are for the whole batch (B = {B}); the tables show its first item. The bar under a column header marks the column's head: blue = head 1, orange = head 2. A cell's colour is the sign of its value: red positive, blue negative.",
  'heads.head': 'head {h}',
  'heads.xNote': 'B = {B} sentences of 4 tokens, 8 features each (random, seeded).',
  'heads.projNote': 'Three learned linear maps of the same x: Q, K and V are different tensors, and none of them is x.',
  'heads.viewNote':
    'view only regroups the 8 features as 2 heads × 4: the numbers do not move. Features 0–3 go to head 1, 4–7 to head 2.',
  'heads.transposeNote':
    'transpose(1, 2) brings the head dimension forward, so that each head holds a (4, 4) matrix of its own: 4 tokens × dₖ = 4.',
  'heads.attnNote':
    "Each head's weights, by attnlab's <code>scaledDotProductAttention</code> on the (B, 2, 4, 4) tensors: one call for every batch item and head.",
  'heads.outNote': "Each head's weighted sum of its values: still 4 features per head.",
  'heads.mergeNote':
    "transpose back and view: the two heads' outputs are laid side by side again, 2 × 4 = 8 features. No averaging happens here.",
  'heads.woNote': "W_O mixes the heads' features into the layer's output.",
  'heads.checkOk': "✓ Equal to attnlab's <code>mha.forward</code> on the same x (all {B} items): max |Δ| = {d}.",
  'heads.checkBad': "✗ Differs from attnlab's <code>mha.forward</code>: max |Δ| = {d}.",
  'heads.errBatch': 'Shape error: the batch dimensions {a} and {b} (dimension {dim}) cannot be broadcast.',
  'heads.errInner': "Shape error: Q's last dimension {a} does not match the row count {b} of the right-hand side.",
  'heads.wrongFix':
    'transpose(0, 1) swapped batch and heads instead of the last two dimensions. Write K.transpose(-2, -1).',
  'heads.wrongSilent':
    "No error here, because B = H and L = dₖ make the shapes fit by accident, but the numbers are wrong: head 1's weights differ from the right ones by up to {d}. Try B = 3 to see the shape error.",
  'heads.wrongW': 'weights with the wrong transpose (first item, head 1)',

  'myths.m1': '§8.1 · Attention does not find the right thing by itself',
  'myths.m1Note':
    'A freshly initialised layer on random tokens: its mean row entropy is {e} nats, against {u} for perfectly uniform weights. Nothing has taught it where to look; only training on data shapes the projections (see the training part and “A model that has read Tang poems”).',
  'myths.m1Caption': 'untrained layer, head 1',
  'myths.m2': '§8.2 · A large weight is not a large effect',
  'myths.m2Note':
    '<b>Much more: masking k{a} moves the output by {k}; zeroing v{a} moves it by only {z}.</b> A weight α₀ⱼ says in what proportion vⱼ is mixed into the output, not how much vⱼ changes it. "Effect" depends on what you remove: set vⱼ to 0 and the output moves by ‖α₀ⱼ·vⱼ‖; mask key kⱼ and the softmax hands its weight to the other keys, and the output moves by the last column. k{a} has the largest weight but a short value: zeroing its value moves the output by {z}, masking the key moves it by {k}. The same k{a} ranks 1 of {n} by weight, {rc} by ‖α₀ⱼ·vⱼ‖ and {rm} by masking. Importance depends on the intervention. A weight map is a view, not an explanation.',
  'myths.m2Lead':
    'A weight α₀ⱼ says in what proportion vⱼ is mixed into the output. Is the most-weighted key the one that matters most?',
  'myths.m2Guess':
    'k{a} has the largest weight (α = {w}) but a short value (‖v{a}‖ = {n}). Zeroing v{a} moves the output by only α·‖v{a}‖, a small number. What if key k{a} is masked instead: does the output move much more, about as much, or less?',
  'myths.colZeroV': 'zero vⱼ: output moves',
  'myths.colMaskKey': 'mask kⱼ: output moves',
  'myths.m3': '§8.3 · Q, K and V are not the input',
  'myths.m3Note':
    "The same input row x₀ becomes three different vectors through three learned matrices (an untrained attnlab layer's W_Q, W_K, W_V here). What a query looks for and what a key offers are both learned.",
  'myths.m4': '§8.4 · The attention step has no parameters, and still matters',
  'myths.m4Note':
    'The attention step itself is a fixed rule. All {n} learned numbers of nn.MultiheadAttention(8, 2) are in the projections around it; training them is what teaches the step where to look.',
  'myths.m4Sdpa': 'takes only tensors: 0 parameters',
  'myths.m5': '§8.5 · More heads is not always better',
  'myths.m5Note':
    'Heads share the model width: with E = 16, more heads means fewer dimensions per head (dₖ), and a head with dₖ = 1 can only score along one direction. The parameter count does not change. Try 1, 2 and 16 heads in the training part.',
  'myths.colHeads': 'heads h',
  'myths.colParams': 'parameters (attnlab layer)',

  'pf.rowSum': 'row sum',
  'pf.wrongTag': 'wrong · plain JS',
  'pf.rightTag': 'right · attnlab',
  'pf.no-max.title': 'NaN loss: softmax without subtracting the max',
  'pf.no-max.symptom': 'Symptom: the loss turns NaN during training.',
  'pf.no-max.why':
    'exp(x) overflows float32 for x &gt; 88.7: the wrong softmax computes ∞/∞ = <b>NaN</b>. Softmax does not change when a constant is subtracted from every score, so the right one computes exp(x − max) ≤ 1. attnlab subtracts the row max.',
  'pf.no-max.aria': 'largest logit',
  'pf.no-max.ctl': 'Largest logit',
  'pf.no-max.bad': '{n} of 3 weights are NaN (exp overflowed)',
  'pf.no-max.fine': 'fine while a < 89, NaN above',
  'pf.no-max.good': 'finite, sums to {s}',
  'pf.wrong-axis.title': 'Row sums ≠ 1: softmax over the wrong dimension',
  'pf.wrong-axis.symptom': 'Symptom: the rows of the weights do not sum to 1 (check weights.sum(dim=-1)).',
  'pf.wrong-axis.why':
    'Weights must be normalised over the <b>keys</b>, the last dimension: each query row sums to 1. <code>softmax(scores, dim=0)</code> normalises over the queries instead, so the columns sum to 1 and the rows do not, and the outputs are no longer weighted averages of V. Here Q is 3×2 and K is 4×2.',
  'pf.wrong-axis.new': 'New random Q, K',
  'pf.wrong-axis.bad': 'row sums {s} (the columns sum to 1 instead)',
  'pf.wrong-axis.good': 'every row sums to 1',
  'pf.heads.title': 'Shapes do not match: d_model not divisible by num_heads',
  'pf.heads.symptom': 'Symptom: a dimension mismatch around view and transpose.',
  'pf.heads.why':
    'Each head gets head_dim = embedDim / numHeads features, so the split must be exact. Code that rounds down silently drops features, or fails later with a confusing shape error. attnlab, like PyTorch, refuses at construction with a message that names the arguments.',
  'pf.heads.positive': 'embedDim and numHeads must be whole numbers ≥ 1; there is nothing to split.',
  'pf.heads.exact': 'divides exactly: {H} heads × {hd} = {E}',
  'pf.heads.zero': '{H} heads for {E} features: each head gets 0 features, and every feature is lost',
  'pf.heads.dropped': '{H} heads × {hd} = {used} of {E} features used; {lost} silently dropped',
  'pf.heads.throws': 'throws {err}',
  'pf.heads.created': 'created: {H} heads of {d} features',
  'pf.transpose.title': 'Shape error after QKᵀ: transpose on the wrong dimensions',
  'pf.transpose.symptom': 'Symptom: torch reports a dimension error at the matmul of Q and K.',
  'pf.transpose.why':
    'Kᵀ must swap the <b>last two</b> dimensions (tokens and features): <code>k.transpose(-2, -1)</code>. <code>transpose(0, 1)</code> swaps batch and heads; with B = 3 the batch dimensions no longer match and the matmul fails. With B = 2 it fits by accident and gives wrong numbers silently (see "From X to heads and back"). Print q.shape and k.transpose(-2, -1).shape.',
  'pf.transpose.silent': 'no error, result ({s}), but the numbers are wrong',
  'pf.transpose.good': 'weights ({s}), one (4, 4) matrix per item and head',
  'pf.no-scale.title': 'The output barely changes: the 1/√dₖ scale is missing',
  'pf.no-scale.symptom': 'Symptom: training stalls; the attention output hardly reacts to its input.',
  'pf.no-scale.why':
    'Dot products of random dₖ-long vectors have standard deviation √dₖ. Unscaled, the scores spread over tens of units, softmax saturates to almost one-hot, and in most draws its gradient is almost zero: ‖∂/∂q‖ below is the gradient of the output with respect to the query. Shown: of 15 draws, the one with the median unscaled gradient; single draws vary, and the median over many draws per dₖ is plotted in the √dₖ part. Scaling by 1/√dₖ keeps the spread near 1 for every dₖ.',
  'pf.no-scale.ctl': 'dₖ (random q, 8 keys, N(0, 1) entries)',
  'pf.no-scale.stats': 'largest weight {m}, entropy {e} nats (uniform: {u}), ‖∂/∂q‖ = {g}',
  'pf.mask-zero.title': 'Masked positions still get weight: filled with 0 instead of a large negative number',
  'pf.mask-zero.symptom': 'Symptom: padding tokens receive attention.',
  'pf.mask-zero.why':
    "The last keys are padding and must get no weight. <code>scores.masked_fill(mask == 0, 0)</code> sets their scores to 0, an ordinary score: e⁰ = 1 still takes a share. Fill with −1e9 (the tutorial) or −∞ so that exp gives 0. Note that −1e9 is outside float16's range (largest ≈ 65504): in half precision PyTorch's <code>masked_fill</code> raises (<code>RuntimeError: value cannot be converted to type at::Half without overflow</code>), which is why real code writes <code>torch.finfo(scores.dtype).min</code>. attnlab takes a bool mask (SDPA: 1 = may attend) and never gives a masked key weight; nn.MultiheadAttention's masks use the opposite convention (1 = masked).",
  'pf.mask-zero.ctl': 'padding keys',
  'pf.mask-zero.pad': '{k} (pad)',
  'pf.mask-zero.rightCode': 'attnMask (1 = may attend)',
  'pf.mask-zero.bad': 'masked keys still get {p} % of the weight',
  'pf.mask-zero.good': 'masked keys get exactly 0',

  'speed.setFull': 'Full: L = 128, 512, 2048',
  'speed.setQuick': 'Quick: L = 32, 64, 128',
  'speed.plainJs': 'plain JS',
  'speed.sizes': 'Sizes',
  'speed.run': 'Run speed test',
  'speed.notRun': 'Not run yet.',
  'speed.progress': 'Progress',
  'speed.note':
    'FLOPs: MHA = 8·L·E² + 4·L²·E (projections + attention), SDPA = 4·L²·E (here as 8 heads × (L, 64)). attnlab runs with <code>needWeights: false</code>. Plain JS is a straightforward loop implementation; at L = 2048 it is not run (it would take tens of seconds): its bar is extrapolated from L = 512 at the same GFLOP/s and drawn hatched. Each timing is the median of up to 7 runs after a warm-up (single runs where one run is slow). The page clock keeps ticking while the worker runs:',
  'speed.alive': 'main thread alive · {n}',
  'speed.starting': 'Starting the worker…',
  'speed.doneShort': 'done',
  'speed.warmup': 'warming up',
  'speed.noteLoad': "attnlab's {variant} build could not load here: {err}",
  'speed.done': 'Done in {s} s ({cores} logical cores reported; attnlab here is single-threaded).',
  'speed.failed': 'Failed.',
  'speed.failedWorker': 'The speed test failed in the worker: {err}',
  'speed.crashed': 'The speed-test worker could not start or crashed: {err}',
  'speed.msTitle': 'time in ms',
  'speed.msAxis': 'ms (log scale, lower is better)',
  'speed.gfAxis': 'GFLOP/s (higher is better)',
  'speed.extrapolatedTag': ' (extrapolated)',
  'speed.hatched': 'hatched = extrapolated, not run',
  'speed.extrapolatedTitle': 'not run: extrapolated from L = 512 at the same GFLOP/s',
  'speed.cellTitle': 'median of {n} run(s); min {min} ms, max {max} ms',
  'speed.colOp': 'op',
  'speed.colRatio': 'simd vs plain JS',
  'speed.faster': '{x}× faster',
  'speed.check':
    "Every implementation's output was compared with the first build's on the same inputs and weights: max |Δ| = {d}.",
  'speed.timePerCall': 'Time per call',
  'speed.throughput': 'Throughput',
  'speed.costNote':
    'FLOPs alone: at E = {E} the attention term catches up with the projections at L = {L}. From L = 128 to 512 the whole layer grows only {x} times; only at larger L does it approach "4 × the length, 16 × the work". Units: GFLOP (10⁹ floating-point operations).',
  'speed.costProj': 'projections 8·L·E²',
  'speed.costAttn': 'attention 4·L²·E',
  'speed.costTotal': 'whole layer',
  'speed.costGrowth': 'vs the row above',

  'heat.tip': '{title}\nquery {i} “{q}” → key {j} “{k}”\nweight {w}  ({full}){m}',
  'heat.masked': ', masked',
  'legend.uniform': "red dashes: 1/{n}, each key's weight when {n} keys share equally",

  'toy.empty': 'Enter at least one token.',
  'toy.unknown.reverse': 'Not in the toy vocabulary: {bad}. Use letters A–L, separated by spaces.',
  'toy.unknown.recall':
    'Not in the toy vocabulary: {bad}. Use store tokens like c=7 (keys a–h, digits 0–9) and queries like c?, separated by spaces.',
  'sd.notJson': '{f} is not valid JSON ({err}).',
  'sd.notObject': '{f}: expected a JSON object with "embed_dim", "num_heads" and "state_dict".',
  'sd.missingInt': '{f}: missing "{key}" (a positive integer).',
  'sd.badInt': '{f}: "{key}" must be a positive integer, got {got}.',
  'sd.missingSd':
    '{f}: missing "state_dict" (an object mapping PyTorch parameter names to {"shape": [...], "data": [...]}).',
  'sd.emptySd': '{f}: "state_dict" is empty.',
  'sd.notNumber': '{where}: {x} is not a number.',
  'sd.ragged': '{where}: the nested arrays are ragged (not a rectangular {shape} block).',
  'sd.notTensor': '{where}: expected {"shape": [...], "data": [...]}, got {got}.',
  'sd.badShape': '{where}: "shape" must be a list of non-negative integers, got {got}.',
  'sd.badData': '{where}: "data" must be a flat list of numbers.',
  'sd.count': '{where}: shape [{shape}] needs {n} numbers, but "data" has {got}.',
  'mha.loadFailed': 'could not load {f} (HTTP {s})',
  'mha.src.random': 'Random weights (untrained)',
  'mha.src.toy-reverse': 'Toy model: reverse',
  'mha.src.toy-recall': 'Toy model: key-value recall',
  'mha.src.user': 'Your PyTorch layer (JSON file)',
  'mha.source': 'Weights from',
  'mha.fileAria': 'PyTorch layer state dict (JSON)',
  'mha.tokens': 'Tokens',
  'mha.heads': 'Heads',
  'mha.headsAria': 'number of heads',
  'mha.causal': 'Causal mask',
  'mha.pad': 'Pad to length (0 = no padding)',
  'mha.padAria': 'pad to length',
  'mha.show': 'Show',
  'mha.viewPerHead': 'per head + average',
  'mha.viewAverage': 'head average only',
  'mha.maskConvention':
    "Mask convention here: nn.MultiheadAttention's, where 1 = masked (<code>keyPaddingMask</code>, <code>attnMask</code>). The step-by-step part uses SDPA's, where 1 = may attend, as the tutorial's mask == 0 does.",
  'mha.linksTitle': 'Token links',
  'mha.linksNote':
    "Queries on the left, keys on the right; a line's opacity is the weight. Hover a token to show only its links; click a head below to show or hide it.",
  'mha.formatSummary': 'The state-dict file format (for "Your PyTorch layer")',
  'mha.formatNote':
    'A JSON object with the layer\'s constructor sizes and its state dict under PyTorch\'s names; each tensor is {"shape": [...], "data": [flat, row-major numbers]}. Separate q/k/v projection weights (kdim/vdim) and bias_k/bias_v are also read. This Python writes it:',
  'mha.fileUnreadable': 'Could not read {f}: {err}',
  'mha.fileBuild':
    'attnlab could not build this layer (createMultiHeadAttention with embed_dim {e}, num_heads {h}): {err}',
  'mha.fileRefused':
    'attnlab refused the state dict in {f}: {err}\nFor embed_dim {e}{nb} it expects: {want}.\nThe file has: {has}.',
  'mha.fileOk': 'Loaded {f}: {layer} with {n} tensors.',
  'mha.fileStill': '(The layer loaded before, {f}, is still the one shown.)',
  'mha.fetchFailed': 'Could not fetch {f}: {err}',
  'mha.newExample': 'New random example',
  'mha.exampleZh': 'Chinese example',
  'mha.exampleEn': 'English example',
  'mha.headsFixed': 'fixed by the model: {n}',
  'mha.toyBy': 'Trained by scripts/train_toy.py (PyTorch).',
  'mha.toyDesc.reverse':
    'Reverse the sequence: six letters A–L; the answer at position t is the letter at position 5 − t.',
  'mha.toyDesc.recall':
    'Key-value recall: five store tokens "k=v", then three queries "k?"; the answer at a query is the digit stored under its key.',
  'mha.toyArch':
    'Embedding + positional encoding + one nn.MultiheadAttention({e}, {h}{nb}) + residual + linear readout; {p} % right on {n} fresh examples in PyTorch. The attention runs in attnlab; the embedding and readout are plain JS. Tokens not seen in training are rejected.',
  'mha.untrained': 'Untrained:',
  'mha.randomDesc':
    "a freshly created attnlab layer (embed_dim {e}) with PyTorch's default initialisation: Xavier-uniform in_proj_weight, out_proj.weight Kaiming-uniform (nn.Linear's default, U(±1/√E)), zero biases; fed pseudo-random token embeddings + positional encoding.",
  'mha.noise': 'These maps are close to uniform:',
  'mha.noiseWhy':
    'every row stays near 1/n (n: the keys the row can see) with small random ripples, because nothing has taught the heads where to look (tutorial section 8.1). Compare the toy models, whose heads learned a crisp pattern; for a trained model reading Chinese, see the part “A model that has read Tang poems”.',
  'mha.userDesc':
    "Your layer from {f}. Its inputs are pseudo-random embeddings of the tokens (one fixed vector per distinct token) + positional encoding, because the file holds only the attention layer, not your model's embedding; so the maps show how your layer's projections treat these vectors.",
  'mha.userNone':
    'Choose a JSON state-dict file with the file picker (format below). Until then nothing is shown for this source.',
  'mha.typeText': 'Type some text: CJK text is split per character, other text per word.',
  'mha.tooMany': '{n} tokens; this view shows at most {max}. Shorten the text.',
  'mha.threw': 'attnlab threw {err}',
  'mha.head': 'head {h}',
  'mha.average': 'average of {n} heads (diagnostic)',
  'mha.averageTitle': "PyTorch's averaged attention weights (average_attn_weights=True)",
  'mha.averageNote':
    'PyTorch\'s diagnostic average of the heads\' weights. The layer never uses it: combining heads concatenates their outputs and applies W_O (see "From X to heads and back").',
  'mha.mapAria': 'attention weights, {title}',
  'mha.legend': 'attention weight',
  'mha.legendNote':
    'Rows: queries, columns: keys; each row sums to 1. Hover a cell for its number. Crossed cells are masked (padding or causal).',
  'mha.chipTitle': 'click to show or hide this head',
  'mha.avgOnly': 'Showing the head average (switch "Show" to per head to colour lines by head).',
  'mha.linksAria': 'token links: query tokens to key tokens',
  'mha.linksQuery': 'query {q}: {best}',
  'mha.rowInput': 'input',
  'mha.rowModel': 'model answers (attnlab)',
  'mha.rowRight': 'right answer',
  'mha.notStored': '(not stored)',
  'mha.score': 'The model got {right} of {n} answers right',
  'mha.scoreCausal':
    ' — with the causal mask on, queries cannot see later keys the model was trained to use, so answers break.',
  'mha.scorePad': ' Padding keys are masked with keyPaddingMask.',

  'mha.chooseFile': 'Choose a JSON file…',
  'mha.noFile': 'no file chosen',
};
