// Part 4: attention's troubleshooting table, live. Each row runs a deliberately wrong plain-JS variant next
// to attnlab (the right one) on the same numbers.

import { h, matrixTable, seqColor, fmt, rng, errText } from './util.js';
import { softmaxNoMax, softmaxCols, softmaxRows, entropy, matmulABt } from './reference.js';

/** attnlab weights for explicit logits: Q = [[1]], K = logits as a column, scale 1 → weights = softmax(logits). */
function attnSoftmax(attn, logits, keep = null) {
  const n = logits.length;
  const opts = { scale: 1, needWeights: true };
  if (keep) opts.attnMask = { data: Uint8Array.from(keep), shape: [1, n] };
  const r = attn.scaledDotProductAttention({ data: Float32Array.of(1), shape: [1, 1] }, { data: Float32Array.from(logits), shape: [n, 1] },
    { data: new Float32Array(n), shape: [n, 1] }, opts);
  return r.weights.data;
}

const sum = (a, o = 0, n = a.length) => { let s = 0; for (let j = 0; j < n; j++) s += a[o + j]; return s; };
const weightsTable = (w, rows, cols, labels, digits = 3) => matrixTable(w, {
  rows, cols, colLabels: labels, rowLabels: rows === 1 ? ['w'] : Array.from({ length: rows }, (_, i) => `q${i}`), digits,
  color: (v) => seqColor(v), rowExtra: (i) => `Σ ${fmt(sum(w, i * cols, cols), 4)}`, rowExtraLabel: 'row sum',
});

export function mount(root, attn) {
  const list = h('div.pitfalls');
  root.append(list);

  function pitfall(id, title, controls, why, update) {
    const wrong = h('div.col', {}, h('div', {}, h('span.tag.wrong', { text: 'wrong · plain JS' })));
    const right = h('div.col', {}, h('div', {}, h('span.tag.right', { text: 'right · attnlab' })));
    const wrongBody = h('div');
    const rightBody = h('div');
    wrong.append(wrongBody);
    right.append(rightBody);
    const el = h('div.pitfall', { 'data-pitfall': id }, h('h3', { text: title }), controls ? h('div.controls', {}, controls) : '', h('div.cols', {}, wrong, right), h('div.why', { html: why }));
    list.append(el);
    const run = () => {
      try {
        update(wrongBody, rightBody, el);
      } catch (e) {
        rightBody.replaceChildren(h('div.errmsg', { text: errText(e) }));
      }
    };
    run();
    return run;
  }
  const verdict = (ok, text) => h(`div.verdict.${ok ? 'good' : 'bad'}`, { text: `${ok ? '✓' : '✗'} ${text}` });

  // 1. softmax without subtracting the max ------------------------------------------------------------------
  const bigIn = h('input', { type: 'range', id: 'pf-big', min: '1', max: '200', step: '1', value: '100', 'aria-label': 'largest logit' });
  const bigVal = h('span.mono', { text: '100' });
  const runBig = pitfall('no-max', '1 · Softmax without subtracting the max',
    h('label.ctl', { for: 'pf-big' }, h('span', {}, 'Largest logit a = ', bigVal, '  (logits a, a − 1, a − 3)'), bigIn),
    'exp(x) overflows float32 for x &gt; 88.7: the wrong softmax computes ∞/∞ = <b>NaN</b>. Softmax is unchanged by subtracting a constant, so the right one computes exp(x − max) ≤ 1. attnlab subtracts the row max.',
    (wrongBody, rightBody, el) => {
      const a = Number(bigIn.value);
      bigVal.textContent = a;
      const logits = [a, a - 1, a - 3];
      const wrongW = softmaxNoMax(Float32Array.from(logits), 1, 3);
      const rightW = attnSoftmax(attn, logits);
      const nans = wrongW.filter(Number.isNaN).length;
      const labels = logits.map((x) => `${fmt(x, 1)}`);
      wrongBody.replaceChildren(h('div.scroll', {}, weightsTable(wrongW, 1, 3, labels)), verdict(nans === 0, nans ? `${nans} of 3 weights are NaN (exp overflowed)` : 'fine while a < 89, NaN above'));
      rightBody.replaceChildren(h('div.scroll', {}, weightsTable(rightW, 1, 3, labels)), verdict(rightW.every(Number.isFinite), `finite, sums to ${fmt(sum(rightW), 5)}`));
      el.dataset.wrong = JSON.stringify(Array.from(wrongW, String));
      el.dataset.right = JSON.stringify(Array.from(rightW));
    });
  bigIn.addEventListener('input', runBig);

  // 2. softmax over the wrong axis ------------------------------------------------------------------------
  const Q = [[1, 0], [0, 1], [1, 1]];
  const K = [[1, 0], [0, 2], [2, 1], [0, 0]];
  pitfall('wrong-axis', '2 · Softmax over the wrong axis', null,
    'Weights must be normalised over the <b>keys</b> (the last axis: each query row sums to 1). <code>softmax(scores, dim=0)</code> normalises over the queries instead, so the columns sum to 1 and the rows do not: outputs are no longer weighted averages of V. Here Q is 3×2 and K is 4×2.',
    (wrongBody, rightBody, el) => {
      const q = Float32Array.from(Q.flat());
      const k = Float32Array.from(K.flat());
      const s = matmulABt(q, k, 3, 4, 2).map((x) => x / Math.SQRT2);
      const wrongW = softmaxCols(s, 3, 4);
      const r = attn.scaledDotProductAttention({ data: q, shape: [3, 2] }, { data: k, shape: [4, 2] }, { data: new Float32Array(4), shape: [4, 1] }, { needWeights: true });
      const labels = ['k0', 'k1', 'k2', 'k3'];
      const wrongSums = [0, 1, 2].map((i) => sum(wrongW, i * 4, 4));
      wrongBody.replaceChildren(h('div.scroll', {}, weightsTable(wrongW, 3, 4, labels)), verdict(false, `row sums ${wrongSums.map((x) => fmt(x, 3)).join(', ')} (columns sum to 1 instead)`));
      rightBody.replaceChildren(h('div.scroll', {}, weightsTable(r.weights.data, 3, 4, labels)), verdict(true, 'every row sums to 1'));
      el.dataset.wrongRowSums = JSON.stringify(wrongSums);
      el.dataset.rightRowSums = JSON.stringify([0, 1, 2].map((i) => sum(r.weights.data, i * 4, 4)));
    });

  // 3. no scale ---------------------------------------------------------------------------------------------
  const dkSel = h('select', { id: 'pf-dk', 'aria-label': 'd_k' }, [4, 16, 64, 256, 1024].map((d) => h('option', { value: d, text: String(d), selected: d === 256 })));
  const runDk = pitfall('no-scale', '3 · No 1/√dₖ scale (saturation)',
    h('label.ctl', { for: 'pf-dk' }, h('span', { text: 'dₖ (random q and 8 keys, N(0, 1) entries)' }), dkSel),
    'Dot products of random dₖ-long vectors have standard deviation √dₖ. Unscaled, the logits spread over tens of units, softmax saturates to almost one-hot, and its gradient vanishes. Scaling by 1/√dₖ keeps the spread at about 1 for every dₖ (see the dₖ lab in part 1).',
    (wrongBody, rightBody, el) => {
      const dk = Number(dkSel.value);
      const r = rng(7);
      const q = Float32Array.from({ length: dk }, r.normal);
      const k = Float32Array.from({ length: 8 * dk }, r.normal);
      const wrongW = softmaxRows(matmulABt(q, k, 1, 8, dk), 1, 8);
      const right = attn.scaledDotProductAttention({ data: q, shape: [1, dk] }, { data: k, shape: [8, dk] }, { data: new Float32Array(8), shape: [8, 1] }, { needWeights: true }).weights.data;
      const labels = Array.from({ length: 8 }, (_, j) => `k${j}`);
      wrongBody.replaceChildren(h('div.scroll', {}, weightsTable(wrongW, 1, 8, labels, 2)),
        verdict(Math.max(...wrongW) < 0.9, `largest weight ${fmt(Math.max(...wrongW), 3)}, entropy ${fmt(entropy(wrongW), 2)} nats (uniform: ${fmt(Math.log(8), 2)})`));
      rightBody.replaceChildren(h('div.scroll', {}, weightsTable(right, 1, 8, labels, 2)),
        verdict(true, `largest weight ${fmt(Math.max(...right), 3)}, entropy ${fmt(entropy(right), 2)} nats`));
      el.dataset.wrongMax = Math.max(...wrongW);
      el.dataset.rightMax = Math.max(...right);
    });
  dkSel.addEventListener('change', runDk);

  // 4. masking with 0 ---------------------------------------------------------------------------------------
  pitfall('mask-zero', '4 · Masking with 0 instead of −∞ (or −1e9)', null,
    'Keys k2 and k3 are padding and must get no weight. <code>scores.masked_fill(mask, 0)</code> sets their logits to 0, which is an ordinary logit: e⁰ = 1 still takes a share. Fill with −∞ (or −1e9) so that exp gives exactly 0. attnlab takes a bool mask (SDPA: 1 = may attend) and never gives a masked key weight.',
    (wrongBody, rightBody, el) => {
      const logits = [1.5, 0.5, 2.0, -0.5];
      const keep = [1, 1, 0, 0];
      const wrongW = softmaxRows(Float32Array.from(logits.map((x, j) => (keep[j] ? x : 0))), 1, 4);
      const right = attnSoftmax(attn, logits, keep);
      const labels = ['k0', 'k1', 'k2 (pad)', 'k3 (pad)'];
      const leak = wrongW[2] + wrongW[3];
      wrongBody.replaceChildren(h('div.note', { text: 'logits 1.5, 0.5, 0 (was 2.0), 0 (was −0.5)' }), h('div.scroll', {}, weightsTable(wrongW, 1, 4, labels)),
        verdict(false, `masked keys still get ${(leak * 100).toFixed(1)} % of the weight`));
      rightBody.replaceChildren(h('div.note', { text: 'logits 1.5, 0.5, −∞, −∞ (bool mask)' }), h('div.scroll', {}, weightsTable(right, 1, 4, labels)),
        verdict(right[2] === 0 && right[3] === 0, 'masked keys get exactly 0'));
      el.dataset.wrongLeak = leak;
      el.dataset.rightLeak = right[2] + right[3];
    });

  // 5. embed dim not divisible by the number of heads -------------------------------------------------------
  const eIn = h('input', { type: 'number', id: 'pf-embed', min: '1', value: '10', 'aria-label': 'embedDim' });
  const hIn = h('input', { type: 'number', id: 'pf-heads', min: '1', value: '3', 'aria-label': 'numHeads' });
  const runDiv = pitfall('heads', '5 · Embed dim not divisible by the number of heads',
    [h('label.ctl', { for: 'pf-embed' }, h('span', { text: 'embedDim' }), eIn), h('label.ctl', { for: 'pf-heads' }, h('span', { text: 'numHeads' }), hIn)],
    'Each head gets head_dim = embedDim / numHeads features; the split must be exact. Code that rounds down silently drops features (or crashes later with a confusing shape error). attnlab, like PyTorch, refuses at construction with a message that names the arguments.',
    (wrongBody, rightBody, el) => {
      const E = Math.round(Number(eIn.value));
      const H = Math.round(Number(hIn.value));
      const hd = Math.floor(E / H);
      wrongBody.replaceChildren(h('div.mono.small', { text: `const headDim = Math.floor(${E} / ${H}); // ${hd}` }),
        E % H === 0 ? verdict(true, `divides exactly: ${H} heads × ${hd} = ${E}`)
          : verdict(false, `${H} heads × ${hd} = ${H * hd} of ${E} features used; ${E - H * hd} silently dropped`));
      let err = null;
      try {
        const m = attn.createMultiHeadAttention({ embedDim: E, numHeads: H });
        m.dispose();
      } catch (e) {
        err = e;
      }
      el.dataset.error = err ? errText(err) : '';
      rightBody.replaceChildren(h('div.mono.small', { text: `attn.createMultiHeadAttention({ embedDim: ${E}, numHeads: ${H} })` }),
        err ? h('div.errmsg', { id: 'pf-heads-error', text: `throws ${errText(err)}` }) : verdict(true, `created: ${H} heads of ${E / H} features`));
    });
  eIn.addEventListener('input', runDiv);
  hIn.addEventListener('input', runDiv);
}
