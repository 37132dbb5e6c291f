// Part "troubleshooting" (§9): every row of the tutorial's table, live. Each row runs a deliberately wrong
// plain-JS variant next to attnlab (the right one) on the same numbers, in the table's order.

import { h, matrixTable, seqColor, fmt, rng, errText } from './util.js';
import { softmaxNoMax, softmaxCols, softmaxRows, entropy, matmulABt } from './reference.js';
import { wrongTransposeShapes } from './parts/heads/compute.js';
import { t } from './i18n.js';

/** attnlab weights for explicit logits: Q = [[1]], K = logits as a column, scale 1 → weights = softmax(logits). */
function attnSoftmax(attn, logits, keep = null) {
  const n = logits.length;
  const opts = { scale: 1, needWeights: true };
  if (keep) opts.attnMask = { data: Uint8Array.from(keep), shape: [1, n] };
  const r = attn.scaledDotProductAttention(
    { data: Float32Array.of(1), shape: [1, 1] },
    { data: Float32Array.from(logits), shape: [n, 1] },
    { data: new Float32Array(n), shape: [n, 1] },
    opts,
  );
  return r.weights.data;
}

const sum = (a, o = 0, n = a.length) => {
  let s = 0;
  for (let j = 0; j < n; j++) s += a[o + j];
  return s;
};
const weightsTable = (w, rows, cols, labels, digits = 3) =>
  matrixTable(w, {
    rows,
    cols,
    colLabels: labels,
    rowLabels: rows === 1 ? ['w'] : Array.from({ length: rows }, (_, i) => `q${i}`),
    digits,
    color: (v) => seqColor(v),
    rowExtra: (i) => `Σ ${fmt(sum(w, i * cols, cols), 4)}`,
    rowExtraLabel: t('pf.rowSum'),
  });
const kLabels = (n) => Array.from({ length: n }, (_, j) => `k${j}`);

export function mount(root, attn) {
  const list = h('div.pitfalls');
  root.append(list);

  function pitfall(id, n, controls, update) {
    const wrongBody = h('div');
    const rightBody = h('div');
    const wrong = h('div.col', {}, h('div', {}, h('span.tag.wrong', { text: t('pf.wrongTag') })), wrongBody);
    const right = h('div.col', {}, h('div', {}, h('span.tag.right', { text: t('pf.rightTag') })), rightBody);
    const el = h(
      'div.pitfall',
      { 'data-pitfall': id },
      h('h3', { text: `${n} · ${t(`pf.${id}.title`)}` }),
      h('p.symptom.small', { text: t(`pf.${id}.symptom`) }),
      controls ? h('div.controls', {}, controls) : '',
      h('div.cols', {}, wrong, right),
      h('div.why', { html: t(`pf.${id}.why`) }),
    );
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
  const scroll = (el) => h('div.scroll', {}, el);

  // 1. NaN loss: softmax without subtracting the max
  const bigIn = h('input', {
    type: 'range',
    id: 'pf-big',
    min: '1',
    max: '200',
    step: '1',
    value: '100',
    'aria-label': t('pf.no-max.aria'),
  });
  const bigVal = h('span.mono', { text: '100' });
  const runBig = pitfall(
    'no-max',
    1,
    h('label.ctl', { for: 'pf-big' }, h('span', {}, t('pf.no-max.ctl'), ' a = ', bigVal, '  (a, a − 1, a − 3)'), bigIn),
    (wrongBody, rightBody, el) => {
      const a = Number(bigIn.value);
      bigVal.textContent = a;
      const logits = [a, a - 1, a - 3];
      const wrongW = softmaxNoMax(Float32Array.from(logits), 1, 3);
      const rightW = attnSoftmax(attn, logits);
      const nans = wrongW.filter(Number.isNaN).length;
      const labels = logits.map((x) => `${fmt(x, 1)}`);
      wrongBody.replaceChildren(
        scroll(weightsTable(wrongW, 1, 3, labels)),
        verdict(nans === 0, nans ? t('pf.no-max.bad', { n: nans }) : t('pf.no-max.fine')),
      );
      rightBody.replaceChildren(
        scroll(weightsTable(rightW, 1, 3, labels)),
        verdict(rightW.every(Number.isFinite), t('pf.no-max.good', { s: fmt(sum(rightW), 5) })),
      );
      el.dataset.wrong = JSON.stringify(Array.from(wrongW, String));
      el.dataset.right = JSON.stringify(Array.from(rightW));
    },
  );
  bigIn.addEventListener('input', runBig);

  // 2. row sums ≠ 1: softmax over the wrong axis (new random Q, K on demand)
  let axisSeed = 3;
  const axisBtn = h('button', { type: 'button', id: 'pf-axis-new', text: t('pf.wrong-axis.new') });
  const runAxis = pitfall('wrong-axis', 2, axisBtn, (wrongBody, rightBody, el) => {
    const r = rng(axisSeed);
    const q = Float32Array.from({ length: 6 }, r.normal);
    const k = Float32Array.from({ length: 8 }, r.normal);
    const s = matmulABt(q, k, 3, 4, 2).map((x) => x / Math.SQRT2);
    const wrongW = softmaxCols(s, 3, 4);
    const res = attn.scaledDotProductAttention(
      { data: q, shape: [3, 2] },
      { data: k, shape: [4, 2] },
      { data: new Float32Array(4), shape: [4, 1] },
      { needWeights: true },
    );
    const wrongSums = [0, 1, 2].map((i) => sum(wrongW, i * 4, 4));
    wrongBody.replaceChildren(
      scroll(weightsTable(wrongW, 3, 4, kLabels(4))),
      verdict(false, t('pf.wrong-axis.bad', { s: wrongSums.map((x) => fmt(x, 3)).join(', ') })),
    );
    rightBody.replaceChildren(
      scroll(weightsTable(res.weights.data, 3, 4, kLabels(4))),
      verdict(true, t('pf.wrong-axis.good')),
    );
    el.dataset.wrongRowSums = JSON.stringify(wrongSums);
    el.dataset.rightRowSums = JSON.stringify([0, 1, 2].map((i) => sum(res.weights.data, i * 4, 4)));
  });
  axisBtn.addEventListener('click', () => {
    axisSeed += 1;
    runAxis();
  });

  // 3. d_model not divisible by num_heads
  const eIn = h('input', { type: 'number', id: 'pf-embed', min: '1', value: '10', 'aria-label': 'embedDim' });
  const hIn = h('input', { type: 'number', id: 'pf-heads', min: '1', value: '3', 'aria-label': 'numHeads' });
  const runDiv = pitfall(
    'heads',
    3,
    [
      h('label.ctl', { for: 'pf-embed' }, h('span', { text: 'embedDim (d_model)' }), eIn),
      h('label.ctl', { for: 'pf-heads' }, h('span', { text: 'numHeads' }), hIn),
    ],
    (wrongBody, rightBody, el) => {
      const E = Math.round(Number(eIn.value));
      const H = Math.round(Number(hIn.value));
      if (!(E >= 1) || !(H >= 1)) {
        // the wrong column has nothing to compute: say so instead of dividing by 0
        wrongBody.replaceChildren(verdict(false, t('pf.heads.positive')));
      } else {
        const hd = Math.floor(E / H);
        wrongBody.replaceChildren(
          h('div.mono.small', { text: `const headDim = Math.floor(${E} / ${H}); // ${hd}` }),
          E % H === 0
            ? verdict(true, t('pf.heads.exact', { H, hd, E }))
            : verdict(
                false,
                hd === 0
                  ? t('pf.heads.zero', { H, E })
                  : t('pf.heads.dropped', { H, hd, used: H * hd, E, lost: E - H * hd }),
              ),
        );
      }
      let err = null;
      try {
        attn.createMultiHeadAttention({ embedDim: E, numHeads: H }).dispose();
      } catch (e) {
        err = e;
      }
      el.dataset.error = err ? errText(err) : '';
      rightBody.replaceChildren(
        h('div.mono.small', { text: `attn.createMultiHeadAttention({ embedDim: ${E}, numHeads: ${H} })` }),
        err
          ? h('div.errmsg', { id: 'pf-heads-error', text: t('pf.heads.throws', { err: errText(err) }) })
          : verdict(true, t('pf.heads.created', { H, d: E / H })),
      );
    },
  );
  eIn.addEventListener('input', runDiv);
  hIn.addEventListener('input', runDiv);

  // 4. shape error after QKᵀ: transpose on the wrong dimensions (the heads part's tensors)
  const tbSel = h(
    'select',
    { id: 'pf-transpose-b', 'aria-label': t('heads.batchAria') },
    [1, 2, 3].map((b) => h('option', { value: b, selected: b === 3, text: String(b) })),
  );
  const runT = pitfall(
    'transpose',
    4,
    h('label.ctl', { for: 'pf-transpose-b' }, h('span', { text: t('heads.batch') }), tbSel),
    (wrongBody, rightBody, el) => {
      const B = Number(tbSel.value);
      const w = wrongTransposeShapes(B);
      wrongBody.replaceChildren(
        h('div.mono.small', { text: `q ${JSON.stringify(w.q)} @ k.transpose(0, 1) ${JSON.stringify(w.k)}` }),
        w.error
          ? h('div.errmsg', { text: w.error })
          : verdict(false, t('pf.transpose.silent', { s: w.out.join(', ') })),
      );
      const shp = [B, 2, 4, 4];
      const x = { data: Float32Array.from({ length: B * 32 }, rng(5).normal), shape: shp };
      const r = attn.scaledDotProductAttention(x, x, x, { needWeights: true });
      rightBody.replaceChildren(
        h('div.mono.small', { text: `q ${JSON.stringify(shp)} @ k.transpose(-2, -1) [${B}, 2, 4, 4]` }),
        verdict(true, t('pf.transpose.good', { s: r.weights.shape.join(', ') })),
      );
      el.dataset.wrongError = w.error ? '1' : '0';
      el.dataset.rightShape = JSON.stringify(r.weights.shape);
    },
  );
  tbSel.addEventListener('change', runT);

  // 5. output barely changes: no 1/√dₖ (saturated softmax, vanishing gradient)
  const dkSel = h(
    'select',
    { id: 'pf-dk', 'aria-label': 'd_k' },
    [4, 16, 64, 256, 1024].map((d) => h('option', { value: d, text: String(d), selected: d === 256 })),
  );
  const runDk = pitfall(
    'no-scale',
    5,
    h('label.ctl', { for: 'pf-dk' }, h('span', { text: t('pf.no-scale.ctl') }), dkSel),
    (wrongBody, rightBody, el) => {
      const dk = Number(dkSel.value);
      const r = rng(7);
      const q = Float32Array.from({ length: dk }, r.normal);
      const k = Float32Array.from({ length: 8 * dk }, r.normal);
      const v = Float32Array.from({ length: 8 * 4 }, r.normal);
      const g = Float32Array.from({ length: 4 }, r.normal);
      const T = (d, s) => ({ data: d, shape: s });
      const gradNorm = (scale) =>
        Math.hypot(
          ...attn.scaledDotProductAttentionBackward(T(q, [1, dk]), T(k, [8, dk]), T(v, [8, 4]), T(g, [1, 4]), { scale })
            .gradQuery.data,
        );
      const wrongW = softmaxRows(matmulABt(q, k, 1, 8, dk), 1, 8);
      const right = attn.scaledDotProductAttention(T(q, [1, dk]), T(k, [8, dk]), T(v, [8, 4]), { needWeights: true })
        .weights.data;
      const [gWrong, gRight] = [gradNorm(1), gradNorm(undefined)];
      wrongBody.replaceChildren(
        scroll(weightsTable(wrongW, 1, 8, kLabels(8), 2)),
        verdict(
          Math.max(...wrongW) < 0.9,
          t('pf.no-scale.stats', {
            m: fmt(Math.max(...wrongW), 3),
            e: fmt(entropy(wrongW), 2),
            u: fmt(Math.log(8), 2),
            g: fmt(gWrong, 3),
          }),
        ),
      );
      rightBody.replaceChildren(
        scroll(weightsTable(right, 1, 8, kLabels(8), 2)),
        verdict(
          true,
          t('pf.no-scale.stats', {
            m: fmt(Math.max(...right), 3),
            e: fmt(entropy(right), 2),
            u: fmt(Math.log(8), 2),
            g: fmt(gRight, 3),
          }),
        ),
      );
      Object.assign(el.dataset, {
        wrongMax: Math.max(...wrongW),
        rightMax: Math.max(...right),
        wrongGrad: gWrong,
        rightGrad: gRight,
      });
    },
  );
  dkSel.addEventListener('change', runDk);

  // 6. masked positions still get weight: fill 0 instead of a large negative number
  const padSel = h(
    'select',
    { id: 'pf-pad', 'aria-label': t('pf.mask-zero.ctl') },
    [1, 2, 3].map((n) => h('option', { value: n, selected: n === 2, text: String(n) })),
  );
  const runMask = pitfall(
    'mask-zero',
    6,
    h('label.ctl', { for: 'pf-pad' }, h('span', { text: t('pf.mask-zero.ctl') }), padSel),
    (wrongBody, rightBody, el) => {
      const logits = [1.5, 0.5, 2.0, -0.5, 1.0];
      const n = logits.length;
      const pads = Number(padSel.value);
      const keep = logits.map((_, j) => (j < n - pads ? 1 : 0));
      const wrongW = softmaxRows(Float32Array.from(logits.map((x, j) => (keep[j] ? x : 0))), 1, n);
      const right = attnSoftmax(attn, logits, keep);
      const labels = logits.map((_, j) => (keep[j] ? `k${j}` : `k${j} (pad)`));
      const leak = sum(wrongW, n - pads, pads);
      const rightLeak = sum(right, n - pads, pads);
      wrongBody.replaceChildren(
        h('div.mono.small', { text: 'scores.masked_fill(mask == 0, 0)' }),
        scroll(weightsTable(wrongW, 1, n, labels)),
        verdict(false, t('pf.mask-zero.bad', { p: (leak * 100).toFixed(1) })),
      );
      rightBody.replaceChildren(
        h('div.mono.small', { text: 'attnMask (1 = may attend)' }),
        scroll(weightsTable(right, 1, n, labels)),
        verdict(rightLeak === 0, t('pf.mask-zero.good')),
      );
      el.dataset.wrongLeak = leak;
      el.dataset.rightLeak = rightLeak;
    },
  );
  padSel.addEventListener('change', runMask);
}
