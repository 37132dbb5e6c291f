// Part "From X to heads and back" (§6.2–6.4, §7.2–7.3): the tutorial's MultiHeadAttention(d_model=8,
// num_heads=2) on a seeded x of shape (B, 4, 8), every tensor with its shape. The projections, view/transpose
// and W_O are plain JS on the weights of an attnlab layer (stateDict()); each head's attention is attnlab's
// scaledDotProductAttention on (B, 2, 4, 4); the result is checked against the same layer's mha.forward.
// The "wrong transpose" toggle writes K.transpose(0, 1) where K.transpose(-2, -1) belongs (§9, row 4).

import { headColour } from '/dist/viz.mjs';
import { h, matrixTable, divColor, seqColor, rng, fmt } from './util.js';
import { softmaxRows } from './reference.js';
import { t } from './i18n.js';

const L = 4;
const E = 8;
const H = 2;
const DK = E / H;

/** y = x Wᵀ + b for rows of x (n × inF), W (outF × inF) starting at row w0 of a packed matrix. */
function linear(x, n, inF, W, w0, outF, b) {
  const y = new Float32Array(n * outF);
  for (let r = 0; r < n; r++) {
    for (let o = 0; o < outF; o++) {
      let s = b ? b[w0 + o] : 0;
      for (let i = 0; i < inF; i++) s += x[r * inF + i] * W[(w0 + o) * inF + i];
      y[r * outF + o] = s;
    }
  }
  return y;
}

/** transpose(1, 2) of a contiguous (A, B, C, D) tensor → (A, C, B, D). */
export function transpose12(x, [A, B, C, D]) {
  const y = new Float32Array(x.length);
  for (let a = 0; a < A; a++)
    for (let b = 0; b < B; b++)
      for (let c = 0; c < C; c++)
        for (let d = 0; d < D; d++) {
          y[((a * C + c) * B + b) * D + d] = x[((a * B + b) * C + c) * D + d];
        }
  return y;
}

/** The matmul that Q @ K.transpose(0, 1) asks for: broadcast batch dims, inner sizes; null or an error text. */
export function wrongTransposeShapes(B) {
  const q = [B, H, L, DK];
  const k = [H, B, L, DK]; // (B, H, L, dk).transpose(0, 1): the last two dims stay (L, dk)
  const batch = [];
  for (let d = 0; d < 2; d++) {
    if (q[d] !== k[d] && q[d] !== 1 && k[d] !== 1)
      return { q, k, error: t('heads.errBatch', { a: q[d], b: k[d], dim: d }) };
    batch.push(Math.max(q[d], k[d]));
  }
  if (q[3] !== k[2]) return { q, k, error: t('heads.errInner', { a: q[3], b: k[2] }) };
  return { q, k, out: [...batch, q[2], k[3]] };
}

export function mount(root, attn) {
  const st = { B: 2, wrong: false };
  const bSel = h(
    'select',
    { id: 'heads-batch', 'aria-label': t('heads.batchAria') },
    [1, 2, 3].map((b) => h('option', { value: b, selected: b === st.B, text: String(b) })),
  );
  const wrongIn = h('input', { type: 'checkbox', id: 'heads-wrong' });
  bSel.addEventListener('change', () => {
    st.B = Number(bSel.value);
    draw();
  });
  wrongIn.addEventListener('change', () => {
    st.wrong = wrongIn.checked;
    draw();
  });
  const mha = attn.createMultiHeadAttention({ embedDim: E, numHeads: H, batchFirst: true });
  const sd = mha.stateDict();
  const Win = sd.in_proj_weight.data;
  const bIn = sd.in_proj_bias?.data;
  const Wo = sd['out_proj.weight'].data;
  const bO = sd['out_proj.bias']?.data;
  const out = h('div', { id: 'heads-out' });
  root.append(
    h(
      'div.controls',
      {},
      h('label.ctl', { for: 'heads-batch' }, h('span', { text: t('heads.batch') }), bSel),
      h(
        'label.ctl.inline',
        { for: 'heads-wrong' },
        wrongIn,
        h('span', {}, t('heads.wrong'), ' ', h('code', { text: 'K.transpose(0, 1)' })),
      ),
    ),
    h('p.note', { text: t('heads.init') }),
    out,
  );

  const headCol = (c, n = E) => headColour(Math.floor(c / (n / H)));
  const table = (data, rows, cols, opts = {}) => {
    const m = data.reduce((a, v) => Math.max(a, Math.abs(v)), 0) || 1;
    const tb = matrixTable(data, {
      rows,
      cols,
      digits: 2,
      color: opts.seq ? seqColor : (v) => divColor(v, m),
      caption: opts.caption,
      id: opts.id,
      rowLabels: opts.rowLabels || Array.from({ length: rows }, (_, i) => `t${i}`),
      colLabels: opts.colLabels || Array.from({ length: cols }, (_, c) => `${c}`),
    });
    if (opts.headCols)
      tb.querySelectorAll('th.col').forEach((th, c) => {
        th.style.boxShadow = `inset 0 -3px 0 ${headCol(c, cols)}`;
      });
    if (opts.head !== undefined)
      tb.querySelectorAll('th.col').forEach((th) => {
        th.style.boxShadow = `inset 0 -3px 0 ${headColour(opts.head)}`;
      });
    return tb;
  };
  const step = (code, shape, note, ...body) =>
    h(
      'div.stage.heads-step',
      { 'data-shape': JSON.stringify(shape) },
      h('h4', {}, h('code', { text: code }), ' → ', h('span.shape', { text: `(${shape.join(', ')})` })),
      note ? h('div.formula', { text: note }) : '',
      h('div.scroll.inputs-row', {}, body),
    );

  function draw() {
    const B = st.B;
    const x = Float32Array.from({ length: B * L * E }, rng(2024).normal);
    const N = B * L;
    const [Q, K, V] = [0, 1, 2].map((p) => linear(x, N, E, Win, p * E, E, bIn)); // (B, L, E)
    const [Qh, Kh, Vh] = [Q, K, V].map((m) => transpose12(m, [B, L, H, DK])); // view (B, L, H, dk) → (B, H, L, dk)
    const shp = [B, H, L, DK];
    const r = attn.scaledDotProductAttention(
      { data: Qh, shape: shp },
      { data: Kh, shape: shp },
      { data: Vh, shape: shp },
      { needWeights: true },
    );
    const merged = transpose12(r.output.data, [B, H, L, DK]); // (B, L, H, dk) → view (B, L, E)
    const y = linear(merged, N, E, Wo, 0, E, bO);
    const ref = mha.forward(
      { data: x, shape: [B, L, E] },
      { data: x, shape: [B, L, E] },
      { data: x, shape: [B, L, E] },
      { needWeights: false },
    ).output.data;
    let diff = 0;
    ref.forEach((v, i) => {
      diff = Math.max(diff, Math.abs(v - y[i]));
    });

    const item = (d, size) => d.subarray(0, size); // batch item 0
    const perHead = (d, opts = {}) =>
      Array.from({ length: H }, (_, hh) =>
        table(d.subarray(hh * L * DK, (hh + 1) * L * DK), L, DK, {
          ...opts,
          head: hh,
          caption: t('heads.head', { h: hh }),
          id: opts.id ? `${opts.id}-${hh}` : undefined,
        }),
      );
    const wHead = (hh) => r.weights.data.subarray(hh * L * L, (hh + 1) * L * L);
    const chain = [
      ['x', [B, L, E]],
      ['W_Q / W_K / W_V', [B, L, E]],
      ['.view', [B, L, H, DK]],
      ['.transpose(1, 2)', [B, H, L, DK]],
      ['softmax(QKᵀ/√dₖ)', [B, H, L, L]],
      ['· V', [B, H, L, DK]],
      ['.transpose(1, 2).view', [B, L, E]],
      ['W_O', [B, L, E]],
    ];
    const chainEl = h(
      'p.mono.shape-chain',
      { id: 'heads-chain', 'data-shapes': JSON.stringify(chain.map((c) => c[1])) },
      chain.map(([name, s], i) => [i ? ' → ' : '', h('span', { text: `${name} (${s.join(', ')})` })]),
    );
    const steps = [
      step('x', [B, L, E], t('heads.xNote', { B }), table(item(x, L * E), L, E, { id: 'heads-x' })),
      step(
        'Q = x W_Qᵀ, K = x W_Kᵀ, V = x W_Vᵀ',
        [B, L, E],
        t('heads.projNote'),
        ['Q', 'K', 'V'].map((n, p) => table(item([Q, K, V][p], L * E), L, E, { caption: n, headCols: true })),
      ),
      step(
        'Q.view(B, L, 2, 4)',
        [B, L, H, DK],
        t('heads.viewNote'),
        table(item(Q, L * E), L, E, {
          headCols: true,
          colLabels: Array.from({ length: E }, (_, c) => `h${Math.floor(c / DK)}·${c % DK}`),
        }),
      ),
      step('.transpose(1, 2)', [B, H, L, DK], t('heads.transposeNote'), perHead(Qh, { id: 'heads-qh' })),
    ];
    let middle;
    if (st.wrong) {
      const w = wrongTransposeShapes(B);
      const qk = `Q (${w.q.join(', ')}) @ K.transpose(0, 1) (${w.k.join(', ')})`;
      if (w.error) {
        middle = h('div.error-box', {
          id: 'heads-wrong-result',
          'data-error': '1',
          text: `${qk}\n${w.error}\n${t('heads.wrongFix')}`,
        });
      } else {
        // the shapes happen to fit: compute what it gives (batch item 0, head 0) and compare
        const kt = new Float32Array(Kh.length);
        for (let a = 0; a < H; a++)
          for (let b = 0; b < B; b++)
            kt.set(Kh.subarray((b * H + a) * L * DK, (b * H + a + 1) * L * DK), (a * B + b) * L * DK);
        const s = new Float32Array(L * L); // Q[0, 0] (L, dk) @ K'[0, 0] (L, dk) as a matrix: inner dk against L
        for (let i = 0; i < L; i++)
          for (let j = 0; j < L; j++) {
            let a = 0;
            for (let c = 0; c < DK; c++) a += Qh[i * DK + c] * kt[c * DK + j];
            s[i * L + j] = a / Math.sqrt(DK);
          }
        const wrongW = softmaxRows(s, L, L);
        let d = 0;
        wrongW.forEach((v, i) => {
          d = Math.max(d, Math.abs(v - wHead(0)[i]));
        });
        middle = h(
          'div.error-box',
          { id: 'heads-wrong-result', 'data-error': '0', 'data-diff': d },
          h('div', { text: `${qk} → (${w.out.join(', ')})\n${t('heads.wrongSilent', { d: fmt(d, 3) })}` }),
          table(wrongW, L, L, { seq: true, caption: t('heads.wrongW') }),
        );
      }
    } else {
      middle = step(
        'softmax(Q Kᵀ / √dₖ)',
        [B, H, L, L],
        t('heads.attnNote'),
        Array.from({ length: H }, (_, hh) =>
          table(wHead(hh), L, L, {
            seq: true,
            head: hh,
            caption: t('heads.head', { h: hh }),
            id: `heads-w-${hh}`,
            colLabels: ['t0', 't1', 't2', 't3'],
          }),
        ),
      );
    }
    const okBox = diff < 1e-5;
    const rest = st.wrong
      ? []
      : [
          step('weights · V', [B, H, L, DK], t('heads.outNote'), perHead(r.output.data, { id: 'heads-oh' })),
          step(
            '.transpose(1, 2).contiguous().view(B, L, 8)',
            [B, L, E],
            t('heads.mergeNote'),
            table(item(merged, L * E), L, E, { headCols: true, id: 'heads-merged' }),
          ),
          step('W_O', [B, L, E], t('heads.woNote'), table(item(y, L * E), L, E, { id: 'heads-y' })),
          h(
            `div.${okBox ? 'ok-box' : 'error-box'}`,
            { id: 'heads-check', 'data-ok': okBox ? '1' : '0', 'data-diff': diff },
            t(okBox ? 'heads.checkOk' : 'heads.checkBad', { d: diff.toExponential(1), B }),
          ),
        ];
    out.replaceChildren(
      chainEl,
      h('p.note', { text: t('heads.item0', { B }) }),
      h('div.heads-steps', {}, steps, middle, rest),
    );
  }
  draw();
}
