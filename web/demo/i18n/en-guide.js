// @ts-check
// English strings: each part's guided path, "Try this" (widgets/guide.js, #28). guide.<part>.1, .2, .3 are HTML; every
// number in a card was checked against the panel's first state (tests/js/demo/i18n/guide.test.mjs checks 2–3 cards per
// part, each of at most 3 sentences). Spread into en.js.

export default {
  'guide.title': 'Try this',
  'guide.aria': 'Try this: steps through this part',
  'guide.count': 'step {k} of {n}',
  'guide.prev': 'Previous',
  'guide.next': 'Next',
  'guide.toPoem': 'How a trained model divides the work: the model that has read Tang poems →',

  'guide.simple.1':
    'Click “all scores equal”: all ten weights become 0.1 and every bar stops exactly at the red dashed line (1/n). Click “the tutorial’s scores” to go back.',
  'guide.simple.2':
    'Drag the slider of 猫 (cat) from 3 to 4: its gap to 喂食 (fed) grows from 1.5 to 2.5, and their weight ratio from e^1.5 ≈ 4.48 to e^2.5 ≈ 12.18. The sentence under ② follows.',
  'guide.simple.3':
    'Click “the tutorial’s scores” and read the table of ③: 猫 gets a weight of 0.574, so the “animal” feature of 叫’s new vector is 0.63. Its own vector has 0.1 there, the plain average 0.16.',

  'guide.why.1':
    'Count the red arrows in the top row: the first word reaches “crying” through 10 updates. The green lines in the bottom row join “crying” to every word in one step.',
  'guide.why.2':
    'Answer “Guess first”, then read the table’s CNN column: at L = 128 it takes 64 layers of convolutions, while the attention path stays 1. The last column is the price: L from 128 to 512 (4 times longer) means 16 times the scores.',

  'guide.dot.1':
    'At first q and k₀ point almost the same way (10° apart) and book 1 gets a weight of 0.845. Drag q until it points the way k₁ does: k₁’s dot product becomes the largest of the three, and so does its weight.',
  'guide.dot.2':
    'Turn q to a right angle with k₂ (90°): q · k₂ becomes 0. Its weight is not 0, though, but e⁰ = 1 divided by the sum of the three.',
  'guide.dot.3':
    'Drag q close to the origin, so that it is short: all three scores are near 0 and all three weights near 1/3. Then answer “Guess first”: what happens when q grows longer?',

  'guide.dk.1':
    'Read “largest weight in a row”: the red dashed line (unscaled) climbs with dₖ, to about 0.99 at dₖ = 1024. The solid blue line (scaled by 1/√dₖ) stays near 0.25 from dₖ = 2 on.',
  'guide.dk.2':
    'Set “Keys per row” to 64: the “uniform 1/64” line drops, the blue line drops to about 0.1, and the red dashed line still races to 1. The entropy chart agrees: unscaled, the entropy falls to nearly 0; scaled, it stays near 3.7 (at most ln 64 ≈ 4.16).',
  'guide.dk.3':
    'The bottom chart is the gradient: the blue line stays near 0.5 from dₖ = 8 on. The red one first rises above 1, then is almost 0 for dₖ ≥ 512; the note below it gives the share of draws with a gradient under 0.01.',

  'guide.sbs.1':
    'Answer “Guess first” on the example of Section 5 of the tutorial: which key should query q0 give its largest weight? Then compare the tutorial’s printed weights with attnlab’s in the table.',
  'guide.sbs.2':
    'In the mask matrix, click the first cell of the first row (q0 and k0) to mask it: the cell is filled with −1e9 and its weight becomes 0. q0’s weight goes to k1 and k2 (about 0.38 and 0.62), and the row still sums to 1.',
  'guide.sbs.3':
    'Click “Clear clicked masks”, then set the scale to “off (1)”: the scores are no longer divided by √4 = 2, and softmax gets sharper. q0’s weight on k0 rises from 0.506 to 0.665.',

  'guide.cross.1':
    'Read the 3 × 6 cross-attention table: each row peaks on the word it translates. “le” gives 0.84 of its weight to “the” and “miaule” 0.77 to “crying”; “chat” gives only 0.43 to “cat”, and 0.34 to “is”.',
  'guide.cross.2':
    'Switch to self-attention: the table becomes a square 3 × 3, and each word’s largest weight is on itself. Then look at the batch below: one call and one call per item give the same weights (largest |Δ| = 0).',

  'guide.heads.1':
    'Read the chain of shapes at the top: x (2, 4, 8) becomes (2, 4, 2, 4) through <code>view</code> and (2, 2, 4, 4) after <code>transpose(1, 2)</code>, a 4 × 4 for each head. At the Q.view step, the columns h1·0…h1·3 belong to head 1 and h2·0…h2·3 to head 2.',
  'guide.heads.2':
    'Set the batch size B to 3: the first dimension of every shape becomes 3. The last line still says ✓, the same as <code>mha.forward</code>.',
  'guide.heads.3':
    'Set B back to 2 and tick the wrong transpose, <code>K.transpose(0, 1)</code>: no error, yet head 1’s weights are off by up to 0.148. Set B to 3 and you get a shape error.',

  'guide.mha.1':
    'The first layer is untrained: most cells are near 1/n ≈ 0.09. In the row of “it”, the four heads’ brightest cells fall on four different words (tired, it, The, cross), none above 0.25.',
  'guide.mha.2':
    'Switch the weights to “Toy model: reverse”: in every row head 2 puts about 0.7 on position 5 − t, an anti-diagonal, and the table below has all 6 answers right. Tick “Causal mask”: the later letters are out of sight, and only 3 answers stay right.',
  'guide.mha.3':
    'Untrained maps only ripple at random. To see how a trained model divides the work on Chinese, go to <a href="#part-poem">the model that has read Tang poems</a>: some heads look at the previous character, some at punctuation and line starts.',

  'guide.decode.1':
    'Click “Step” three times: the prompt A B C enters the cache, cache.length reads 3 / 24, and every map gains a row. After the third step the model’s next token is A.',
  'guide.decode.2':
    'Click “Run” until the cache is full: head 1 puts all its weight on the position 2 back in every row, head 2 on the position just before. Head 3 shares its weight among the positions with the current letter, and head 4 is a plain average.',
  'guide.decode.3':
    'Read the two lines under the maps: the floats read per step grow with the cache, and with 2 query heads sharing each key/value head they are half of what they would be without groups. The check says the steps equal one causal forward over the whole sequence.',

  'guide.myths.1':
    'Look at the first box’s map: an untrained layer on 6 random tokens has a mean row entropy of 1.690 nats, against 1.792 when uniform. For a trained model, follow the box’s link to the model that has read Tang poems.',
  'guide.myths.2':
    'Answer the second box’s “Guess first”: k0 has the largest weight (0.443) and a short value. Then read the table: by weight k0 comes first, by zeroing v₀ it comes last, and by masking it comes second.',
  'guide.myths.3':
    'Read the last box’s table: from 1 to 16 heads, each head’s dₖ falls from 16 to 1, and the parameter count stays 1088.',

  'guide.pitfalls.1':
    'First row: drag the largest logit a down from 100. At a = 89 the wrong softmax still has one NaN, at a = 88 none; attnlab’s side keeps the same weights throughout.',
  'guide.pitfalls.2':
    'Third row: 10 dimensions for 3 heads, and attnlab refuses at once, naming the argument. Set <code>numHeads</code> to 2 or 5: 10 divides evenly and the layer is created.',
  'guide.pitfalls.3':
    'Last row: set the padding keys from 2 to 3. The wrong version, filled with 0, leaks 12.9 % and then 32.9 % of the weight to the padding keys; on attnlab’s side the masked keys get exactly 0.',

  'guide.and': ' and ',
  'guide.train.1':
    'Click “Train” (by default: reverse, 2 heads). In the entropy chart each head’s curve starts at <output data-guide="start">…</output>, a little below the red line (the entropy of uniform weights, ln 6 ≈ <output data-guide="uniform">…</output>), since untrained heads are already not quite uniform; once the task is learnt at least one head is far below it. Training stops by itself at 95 % accuracy.',
  'guide.train.2':
    'Once it stops, drag the “Maps at step” slider all the way left, then slowly right (or click “▶ Replay”): the maps go from near uniform to the anti-diagonal, query t looking at key 5 − t.',
  'guide.train.3':
    'Open “Advanced” and tick “Train without 1/√dₖ”: a new model is made, and before any training its maps are already sharper, with lower entropy. Train again and compare the steps it takes to reach 95 %.',

  'guide.poem.1':
    'Change the seed, click “Write a poem”, then click any character of the poem: its attention rows appear below, one per layer and head. They are the weights with which the model chose that character.',
  'guide.poem.2':
    'In the grid of “What each head looks at”, click layer 2 · head 2 (previous character): its map has a bright line just below the diagonal. On the held-out poems it puts about half its weight (0.48) on the previous character.',
  'guide.poem.3':
    'Open “Advanced: switch heads off”, answer its “Guess first”, then untick the head of the answer: see how much the held-out loss rises, and what the poem written with the same random draws becomes.',
  'guide.explain.1':
    'Answer the “Guess first”, then read the ρ table: how far is the raw-weight column’s order from gradient × input’s and occlusion’s? Try another position or head.',
  'guide.explain.2':
    'Press “Measure every head”: does the same head cost the same zeroed and replaced by its mean? And how does the gradient rank them?',
  'guide.explain.3':
    'Guess, then train both: how much lower is the held-out accuracy of the model whose attention is frozen to uniform?',

  'guide.model.1':
    "Click “Try it with the page's poem model”: it loads in a background thread, and the line under the buttons then gives its shape: 4 layers × 4 heads, E = 128. You can also choose a folder of your own: a GPT-2 or Llama-family model with config.json, model.safetensors and tokenizer.json.",
  'guide.model.2':
    'Type the start of a text and click “Generate”: each token appears as the model writes it. Click “Stop” at any time: the tokens written so far stay.',
  'guide.model.3':
    'When it is done, the grid shows every layer and head on the text. Click a head for its attention map, then a token above it for its links in every head of that layer: the earlier tokens it drew on.',
  'guide.speed.1':
    'Click “Run speed test”: it runs in a Web Worker, and the counter on the page keeps ticking, so the main thread is never blocked. When the results are in, the “simd vs plain JS” column says how many times faster attnlab is.',
  'guide.speed.2':
    'Read the cost table at the end: at E = 512 the attention term 4·L²·E catches up with the projections 8·L·E² only at L = 1024. So from L = 128 to 512 the whole layer does 5.3 times the work, not 16 times.',
};
