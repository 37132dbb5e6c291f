// Part "self vs cross, batches" (§4.6, §6.1). Self: Q = K = V from one sequence. Cross: queries from a short
// "decoder" sequence, K = V from a second, longer "encoder" sequence (weights Lq × Lk). Batched: two sequences
// in one attnlab call of shape (B, L, dₖ), checked against one call per item. Token vectors are pseudo-random
// (one fixed vector per distinct token), as in the multi-head part.

import { h, matrixTable, seqColor, rng, hashString, fmt } from './util.js';
import { t, lang } from './i18n.js';

const D = 8;
// Each decoder word is given a vector close to that of the source word it translates (align), as a trained model's
// projections would make them, so that its cross-attention row peaks there.
const SEQS = {
  zh: { dec: ['猫', '在', '叫'], align: ['cat', 'is', 'crying'], enc: ['the', 'cat', 'is', 'crying', 'loudly', 'now'] },
  en: {
    dec: ['le', 'chat', 'miaule'],
    align: ['the', 'cat', 'crying'],
    enc: ['the', 'cat', 'is', 'crying', 'loudly', 'now'],
  },
};

/** One fixed N(0, 1) vector per token; with near, a token's vector is near's plus a little of its own. */
function embed(tokens, near = null, d = D) {
  const x = new Float32Array(tokens.length * d);
  tokens.forEach((tok, i) => {
    const r = rng(hashString(tok));
    const base = near ? rng(hashString(near[i])) : null;
    for (let c = 0; c < d; c++) x[i * d + c] = base ? base.normal() + 0.3 * r.normal() : r.normal();
  });
  return x;
}

const weightsTable = (w, rows, cols, rl, cl, id) =>
  matrixTable(w, { rows, cols, rowLabels: rl, colLabels: cl, id, color: (v) => seqColor(v), digits: 2 });

export function mount(root, attn) {
  const seqs = SEQS[lang];
  let mode = 'cross';
  const modeRadios = [
    ['self', t('cross.self')],
    ['cross', t('cross.cross')],
  ].map(([v, label]) =>
    h(
      'label',
      {},
      h('input', {
        type: 'radio',
        name: 'cross-mode',
        id: `cross-mode-${v}`,
        value: v,
        checked: v === mode,
        onchange: () => {
          mode = v;
          draw();
        },
      }),
      label,
    ),
  );
  const out = h('div', { id: 'cross-out' });
  const batch = h('div', { id: 'cross-batch' });
  root.append(
    h('div.controls', {}, h('div.ctl', {}, h('span', { text: t('cross.mode') }), h('div.radio-row', {}, modeRadios))),
    out,
    h('h3', { text: t('cross.batchTitle') }),
    batch,
  );

  function draw() {
    const qTok = seqs.dec;
    const kTok = mode === 'self' ? seqs.dec : seqs.enc;
    const [Lq, Lk] = [qTok.length, kTok.length];
    const q = embed(qTok, seqs.align);
    const kv = mode === 'self' ? q : embed(kTok);
    const r = attn.scaledDotProductAttention(
      { data: q, shape: [Lq, D] },
      { data: kv, shape: [Lk, D] },
      { data: kv, shape: [Lk, D] },
      { needWeights: true },
    );
    out.replaceChildren(
      h('p.mono.small', {
        id: 'cross-shapes',
        text: `Q (${Lq}, ${D}) · K (${Lk}, ${D})ᵀ → ${t('cross.weights')} (${Lq}, ${Lk}) · V (${Lk}, ${D}) → ${t('cross.output')} (${Lq}, ${D})`,
      }),
      h('div.table-scroll', {}, weightsTable(r.weights.data, Lq, Lk, qTok, kTok, 'cross-weights')),
      h('p.note', { text: t(mode === 'self' ? 'cross.selfNote' : 'cross.crossNote') }),
    );
    root.dataset.mode = mode;
    root.dataset.weightsShape = JSON.stringify(r.weights.shape);
  }

  function drawBatch() {
    const B = 2;
    const L = 4;
    const dk = 4;
    const rnd = rng(42);
    const x = Float32Array.from({ length: B * L * dk }, rnd.normal);
    const all = attn.scaledDotProductAttention(
      { data: x, shape: [B, L, dk] },
      { data: x, shape: [B, L, dk] },
      { data: x, shape: [B, L, dk] },
      { needWeights: true },
    );
    let diff = 0;
    const tables = [];
    for (let b = 0; b < B; b++) {
      const xb = x.subarray(b * L * dk, (b + 1) * L * dk);
      const one = attn.scaledDotProductAttention(
        { data: xb, shape: [L, dk] },
        { data: xb, shape: [L, dk] },
        { data: xb, shape: [L, dk] },
        { needWeights: true },
      );
      const wb = all.weights.data.subarray(b * L * L, (b + 1) * L * L);
      one.weights.data.forEach((v, i) => {
        diff = Math.max(diff, Math.abs(v - wb[i]));
      });
      const labels = Array.from({ length: L }, (_, i) => `${b}:${i}`);
      tables.push(
        h(
          'div',
          {},
          h('div.small.strong', { text: t('cross.item', { b }) }),
          weightsTable(wb, L, L, labels, labels, `cross-batch-${b}`),
        ),
      );
    }
    batch.dataset.diff = diff;
    batch.replaceChildren(
      h('p.mono.small', {
        text: `x (${B}, ${L}, ${dk}) → scores, ${t('cross.weights')} (${B}, ${L}, ${L}) → ${t('cross.output')} (${B}, ${L}, ${dk})`,
      }),
      h('div.inputs-row', {}, tables),
      h('p.note', { id: 'cross-batch-check', text: t('cross.batchNote', { d: diff === 0 ? '0' : fmt(diff, 2) }) }),
    );
  }
  draw();
  drawBatch();
}
