// @ts-check
// Part "misconceptions" (§8): one box per misreading, each with the numbers of compute.js.

import { h } from '../../widgets/dom.js';
import { matrixTable } from '../../widgets/matrix-table.js';
import { seqColor, divColor, QKV } from '../../widgets/colours.js';
import { fmt } from '../../shared/format.js';
import { guessCard } from '../../widgets/guess.js';
import { partLink } from '../../widgets/guide.js';
import { t } from '../../i18n.js';
import { E, L, freshLayer, weightVsContribution, headCounts } from './compute.js';

/**
 * @param {string} id
 * @param {string} title
 * @param {string} note
 * @param {...(Node | Node[])} body
 */
const box = (id, title, note, ...body) =>
  h(
    'div.pitfall.myth',
    { 'data-myth': id },
    h('h3', { text: title }),
    h('p.why', { text: note }),
    h('div.scroll', {}, body),
  );

/** @param {string[]} cols */
const headRow = (cols) =>
  h(
    'tr',
    {},
    cols.map((c) => h('th', { scope: 'col', text: c })),
  );

/** 8.3's table: x₀ and its q₀, k₀, v₀ (labels in QKV's colours). @param {Float32Array} rows */
function qkvTable(rows) {
  const m = rows.reduce((acc, v) => Math.max(acc, Math.abs(v)), 0);
  return matrixTable(rows, {
    rows: 4,
    cols: E,
    digits: 2,
    rowLabels: ['x₀', 'q₀ = x₀W_Qᵀ', 'k₀ = x₀W_Kᵀ', 'v₀ = x₀W_Vᵀ'],
    rowAccent: (i) => [null, QKV.q, QKV.k, QKV.v][i],
    color: (v) => divColor(v, m),
  });
}

/** 8.1, 8.3, 8.4. @param {ReturnType<typeof freshLayer>} f */
function freshBoxes(f) {
  const e81 = box(
    'untrained',
    t('myths.m1'),
    t('myths.m1Note', { e: fmt(f.entropy, 3), u: fmt(f.uniform, 3) }),
    matrixTable(f.head0, { rows: L, cols: L, digits: 2, color: seqColor, caption: t('myths.m1Caption') }),
  );
  Object.assign(e81.dataset, { entropy: f.entropy, uniform: f.uniform });
  e81.querySelector('.why').append(' ', partLink('poem', 'guide.toPoem')); // §8.1's trained counterpart
  const e83 = box('qkv', t('myths.m3'), t('myths.m3Note'), h('div.scroll', {}, qkvTable(f.rows)));
  const count = f.params.reduce((s, p) => s + p.size, 0);
  const e84 = box(
    'params',
    t('myths.m4'),
    t('myths.m4Note', { n: count }),
    h(
      'ul.small',
      {},
      h('li', {}, h('code', { text: 'attn.scaledDotProductAttention(q, k, v)' }), ` — ${t('myths.m4Sdpa')}`),
      f.params.map((p) => h('li', {}, h('code', { text: p.name }), ` (${p.shape.join(' × ')}) = ${p.size}`)),
    ),
  );
  e84.dataset.params = String(count);
  return { e81, e83, e84 };
}

/** 8.2's table: α, ‖v‖ and the two interventions per key. @param {ReturnType<typeof weightVsContribution>} c */
function contributionTable(c) {
  return h(
    'table.answers',
    { id: 'myth-contrib' },
    headRow(['', 'α₀ⱼ', '‖vⱼ‖', t('myths.colZeroV'), t('myths.colMaskKey')]),
    [0, 1, 2, 3].map((j) =>
      h(
        'tr',
        { 'data-j': j, 'data-mask-effect': c.maskEffect[j], 'data-contrib': c.contrib[j] },
        h('th', { scope: 'row', text: `k${j}` }),
        h('td', { style: `background:${seqColor(c.weights[j])}`, text: fmt(c.weights[j], 3) }),
        h('td', { text: fmt(c.norms[j], 3) }),
        h('td', { text: fmt(c.contrib[j], 3) }),
        h('td', { text: fmt(c.maskEffect[j], 3) }),
      ),
    ),
  );
}

/**
 * 8.2, guess first: the most-weighted key has a short value; how far does masking it move the output? The table and
 * the explanation (computed numbers) appear with the answer.
 * @param {ReturnType<typeof weightVsContribution>} c
 */
function contributionBox(c) {
  const tbl = contributionTable(c);
  tbl.hidden = true;
  const a = c.topWeight;
  const ranks = { rc: c.rankOfTop.contrib, rm: c.rankOfTop.mask, n: c.weights.length };
  const vars = { a, ...ranks, z: fmt(c.contrib[a], 3), k: fmt(c.maskEffect[a], 3) };
  const question = t('myths.m2Guess', { a, w: fmt(c.weights[a], 3), n: fmt(c.norms[a], 3) });
  const guess = guessCard('myths', question, () => {
    tbl.hidden = false;
    return { html: t('myths.m2Note', vars), value: c.maskEffect[a] };
  });
  const e82 = box('explanation', t('myths.m2'), t('myths.m2Lead'), guess, tbl);
  Object.assign(e82.dataset, { topWeight: c.topWeight, topContribution: c.topContribution, topMask: c.topMaskEffect });
  return e82;
}

/** 8.5. @param {ReturnType<typeof headCounts>} heads */
function headsBox(heads) {
  return box(
    'heads',
    t('myths.m5'),
    t('myths.m5Note'),
    h(
      'table.answers',
      { id: 'myth-heads' },
      headRow([t('myths.colHeads'), 'dₖ = 16 / h', t('myths.colParams')]),
      heads.map((r) =>
        h(
          'tr',
          { 'data-h': r.H, 'data-params': r.params },
          h('td', { text: String(r.H) }),
          h('td', { text: String(r.dk) }),
          h('td', { text: String(r.params) }),
        ),
      ),
    ),
  );
}

/**
 * @param {HTMLElement} root
 * @param {import('../../attnlab.js').Attnlab} attn
 */
export function mount(root, attn) {
  const list = h('div.pitfalls');
  root.append(list);
  const { e81, e83, e84 } = freshBoxes(freshLayer(attn));
  list.append(e81, contributionBox(weightVsContribution(attn)), e83, e84, headsBox(headCounts(attn)));
}
