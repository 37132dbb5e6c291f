// Part "misconceptions" (§8): one box per misreading, each with numbers from attnlab.
// 8.1 an untrained layer's weights are close to uniform; 8.2 weights α_ij next to ‖α_ij·v_j‖; 8.3 Q, K, V are
// projections of x, not x; 8.4 the attention step has no parameters (they live in the projections);
// 8.5 more heads split the same width into thinner heads.

import { h, matrixTable, seqColor, divColor, rng, fmt } from './util.js';
import { entropy } from './reference.js';
import { t } from './i18n.js';

const box = (id, title, note, ...body) =>
  h(
    'div.pitfall.myth',
    { 'data-myth': id },
    h('h3', { text: title }),
    h('p.why', { text: note }),
    h('div.scroll', {}, body),
  );
const norm = (a) => Math.hypot(...a);

export function mount(root, attn) {
  const list = h('div.pitfalls');
  root.append(list);
  const E = 8;
  const L = 6;
  const x = Float32Array.from({ length: L * E }, rng(81).normal);
  const tx = { data: x, shape: [1, L, E] };

  // 8.1 untrained ≈ uniform
  const fresh = attn.createMultiHeadAttention({ embedDim: E, numHeads: 2, batchFirst: true });
  const w = fresh.forward(tx, tx, tx, { averageAttnWeights: false }).weights.data; // (1, 2, L, L)
  let ent = 0;
  for (let r = 0; r < 2 * L; r++) ent += entropy(w, r * L, L) / (2 * L);
  const e81 = box(
    'untrained',
    t('myths.m1'),
    t('myths.m1Note', { e: fmt(ent, 3), u: fmt(Math.log(L), 3) }),
    matrixTable(w.subarray(0, L * L), { rows: L, cols: L, digits: 2, color: seqColor, caption: t('myths.m1Caption') }),
  );
  e81.dataset.entropy = ent;
  e81.dataset.uniform = Math.log(L);

  // 8.2 weight ≠ contribution: the most-weighted key's value is short
  const q = Float32Array.of(1, 0);
  const K = Float32Array.of(1.2, 0, 0.6, 0.2, 0.3, -0.2, 0, 0.4);
  const V = Float32Array.of(0.05, 0.02, 1.5, -0.8, 1.0, 1.1, -0.6, 0.9);
  const a = attn.scaledDotProductAttention(
    { data: q, shape: [1, 2] },
    { data: K, shape: [4, 2] },
    { data: V, shape: [4, 2] },
    { needWeights: true, scale: 1 },
  ).weights.data;
  const contrib = [0, 1, 2, 3].map((j) => a[j] * norm([V[2 * j], V[2 * j + 1]]));
  const tbl = h(
    'table.answers',
    { id: 'myth-contrib' },
    h(
      'tr',
      {},
      ['', 'α₀ⱼ', '‖vⱼ‖', '‖α₀ⱼ·vⱼ‖'].map((c) => h('th', { scope: 'col', text: c })),
    ),
    [0, 1, 2, 3].map((j) =>
      h(
        'tr',
        { 'data-j': j },
        h('th', { scope: 'row', text: `k${j}` }),
        h('td', { style: `background:${seqColor(a[j])}`, text: fmt(a[j], 3) }),
        h('td', { text: fmt(norm([V[2 * j], V[2 * j + 1]]), 3) }),
        h('td', { text: fmt(contrib[j], 3) }),
      ),
    ),
  );
  const argmax = (arr) => arr.indexOf(Math.max(...arr));
  const e82 = box(
    'explanation',
    t('myths.m2'),
    t('myths.m2Note', { a: argmax(Array.from(a)), c: argmax(contrib) }),
    tbl,
  );
  e82.dataset.topWeight = argmax(Array.from(a));
  e82.dataset.topContribution = argmax(contrib);

  // 8.3 Q, K, V are not x
  const sd = fresh.stateDict();
  const W = sd.in_proj_weight.data;
  const row = (p) =>
    Float32Array.from({ length: E }, (_, o) => {
      let s = 0;
      for (let i = 0; i < E; i++) s += x[i] * W[(p * E + o) * E + i];
      return s;
    });
  const rows = Float32Array.from([...x.subarray(0, E), ...row(0), ...row(1), ...row(2)]);
  const m = rows.reduce((acc, v) => Math.max(acc, Math.abs(v)), 0);
  const e83 = box(
    'qkv',
    t('myths.m3'),
    t('myths.m3Note'),
    h(
      'div.scroll',
      {},
      matrixTable(rows, {
        rows: 4,
        cols: E,
        digits: 2,
        rowLabels: ['x₀', 'q₀ = x₀W_Qᵀ', 'k₀ = x₀W_Kᵀ', 'v₀ = x₀W_Vᵀ'],
        color: (v) => divColor(v, m),
      }),
    ),
  );

  // 8.4 no parameters in the attention step
  const names = Object.keys(sd);
  const count = names.reduce((s, n) => s + sd[n].data.length, 0);
  const e84 = box(
    'params',
    t('myths.m4'),
    t('myths.m4Note', { n: count }),
    h(
      'ul.small',
      {},
      h('li', {}, h('code', { text: 'attn.scaledDotProductAttention(q, k, v)' }), ` — ${t('myths.m4Sdpa')}`),
      names.map((n) => h('li', {}, h('code', { text: n }), ` (${sd[n].shape.join(' × ')}) = ${sd[n].data.length}`)),
    ),
  );
  e84.dataset.params = count;
  fresh.dispose();

  // 8.5 more heads: thinner heads, same parameters
  const E5 = 16;
  const heads = [1, 2, 4, 8, 16].map((H) => {
    const mh = attn.createMultiHeadAttention({ embedDim: E5, numHeads: H });
    const sdh = mh.stateDict();
    mh.dispose();
    return { H, dk: E5 / H, params: Object.values(sdh).reduce((s, v) => s + v.data.length, 0) };
  });
  const e85 = box(
    'heads',
    t('myths.m5'),
    t('myths.m5Note'),
    h(
      'table.answers',
      { id: 'myth-heads' },
      h(
        'tr',
        {},
        [t('myths.colHeads'), 'dₖ = 16 / h', t('myths.colParams')].map((c) => h('th', { scope: 'col', text: c })),
      ),
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
  list.append(e81, e82, e83, e84, e85);
}
