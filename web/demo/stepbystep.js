// Part 1: attention step by step on a small editable Q, K, V, opening on the tutorial's §5 example.
// The stages QKᵀ, × scale and + mask are plain JS (labelled so); the weights and the output are attnlab's
// scaledDotProductAttention. The mask is the tutorial's 0/1 matrix (0 = masked), filled with −1e9 (as the
// tutorial's masked_fill does: passed to attnlab as an additive float mask) or −∞ (a bool mask).

import { h, matrixTable, divColor, seqColor, legend, fmt, full, showTip, hideTip, errText } from './util.js';
import { sdpaStages } from './reference.js';
import { t } from './i18n.js';
import { DEFAULT, parseMatrix, sec5Box } from './sbs-example.js';

export function mount(root, attn) {
  const st = { scaleMode: 'default', custom: 0.5, temp: 1, causal: false, fill: '-1e9', masked: new Set() };

  const ta = (name) =>
    h(
      'textarea',
      { id: `sbs-in-${name.toLowerCase()}`, spellcheck: 'false', 'aria-label': t('sbs.matrixAria', { name }) },
      DEFAULT,
    );
  const qIn = ta('Q');
  const kIn = ta('K');
  const vIn = ta('V');
  const resetBtn = h('button', {
    type: 'button',
    text: t('sbs.reset'),
    onclick: () => {
      qIn.value = kIn.value = vIn.value = DEFAULT;
      st.masked.clear();
      render();
    },
  });
  const radios = (name, options, current, set) =>
    options.map(([value, label]) =>
      h(
        'label',
        {},
        h('input', {
          type: 'radio',
          name,
          value,
          checked: value === current,
          onchange: () => {
            set(value);
            render();
          },
        }),
        label,
      ),
    );
  const scaleRadios = radios(
    'sbs-scale',
    [
      ['default', '1/√dₖ'],
      ['off', t('sbs.scaleOff')],
      ['custom', t('sbs.scaleCustom')],
    ],
    st.scaleMode,
    (v) => {
      st.scaleMode = v;
    },
  );
  const customIn = h('input', {
    type: 'number',
    id: 'sbs-scale-custom',
    step: '0.05',
    value: '0.5',
    'aria-label': t('sbs.scaleCustomAria'),
    oninput: () => {
      st.custom = Number(customIn.value);
      st.scaleMode = 'custom';
      scaleRadios[2].firstChild.checked = true;
      render();
    },
  });
  const tempVal = h('span.mono', { text: '1.00' });
  const tempIn = h('input', {
    type: 'range',
    id: 'sbs-temp',
    min: '0.1',
    max: '5',
    step: '0.05',
    value: '1',
    'aria-label': t('sbs.tempAria'),
    oninput: () => {
      st.temp = Number(tempIn.value);
      tempVal.textContent = st.temp.toFixed(2);
      render();
    },
  });
  const causalIn = h('input', {
    type: 'checkbox',
    id: 'sbs-causal',
    onchange: () => {
      st.causal = causalIn.checked;
      render();
    },
  });
  const fillRadios = radios(
    'sbs-fill',
    [
      ['-1e9', t('sbs.fill1e9')],
      ['-inf', t('sbs.fillInf')],
    ],
    st.fill,
    (v) => {
      st.fill = v;
    },
  );
  fillRadios.forEach((l) => {
    l.firstChild.id = `sbs-fill-${l.firstChild.value === '-1e9' ? '1e9' : 'inf'}`;
  });
  const clearBtn = h('button', {
    type: 'button',
    id: 'sbs-clear-masks',
    text: t('sbs.clearMasks'),
    onclick: () => {
      st.masked.clear();
      render();
    },
  });

  const msg = h('div');
  const pipeline = h('div.pipeline', { id: 'sbs-pipeline' });
  root.append(
    sec5Box(attn),
    h('h3', { text: t('sbs.liveTitle') }),
    h(
      'div.qkv-inputs',
      {},
      h('label', { for: 'sbs-in-q', title: t('sbs.qTitle') }, 'Q (Lq × dₖ)', qIn),
      h('label', { for: 'sbs-in-k', title: t('sbs.kTitle') }, 'K (Lk × dₖ)', kIn),
      h('label', { for: 'sbs-in-v', title: t('sbs.vTitle') }, 'V (Lk × dᵥ)', vIn),
    ),
    h(
      'div.controls',
      {},
      h('div.ctl', {}, h('span', { text: t('sbs.scale') }), h('div.radio-row', {}, scaleRadios, customIn)),
      h('label.ctl', { for: 'sbs-temp' }, h('span', {}, t('sbs.temp'), ' T = ', tempVal), tempIn),
      h('label.ctl.inline', { for: 'sbs-causal' }, causalIn, h('span', { text: t('sbs.causal') })),
      h('div.ctl', {}, h('span', { text: t('sbs.fill') }), h('div.radio-row', {}, fillRadios)),
      clearBtn,
      resetBtn,
    ),
    h('p.note', { id: 'sbs-temp-note', text: t('sbs.tempNote') }),
    msg,
    pipeline,
  );
  for (const el of [qIn, kIn, vIn])
    el.addEventListener('input', () => {
      st.masked.clear();
      render();
    });

  function render() {
    msg.replaceChildren();
    pipeline.replaceChildren();
    let Q;
    let K;
    let V;
    try {
      Q = parseMatrix(qIn.value, 'Q');
      K = parseMatrix(kIn.value, 'K');
      V = parseMatrix(vIn.value, 'V');
      if (Q[0].length !== K[0].length) throw new Error(t('sbs.errDk', { q: Q[0].length, k: K[0].length }));
      if (K.length !== V.length) throw new Error(t('sbs.errKv', { k: K.length, v: V.length }));
    } catch (e) {
      msg.append(h('div.error-box', { role: 'alert', text: e.message }));
      return;
    }
    const [Lq, Lk, dk, dv] = [Q.length, K.length, Q[0].length, V[0].length];
    const base = st.scaleMode === 'default' ? 1 / Math.sqrt(dk) : st.scaleMode === 'off' ? 1 : st.custom;
    if (!Number.isFinite(base)) {
      msg.append(h('div.error-box', { text: t('sbs.errScale') }));
      return;
    }
    const scale = base / st.temp;
    const [q, k, v] = [Q, K, V].map((m) => Float32Array.from(m.flat()));
    const isMasked = (i, j) => (st.causal && j > i) || st.masked.has(`${i},${j}`);
    const fillValue = st.fill === '-1e9' ? -1e9 : -Infinity;
    const keep = new Uint8Array(Lq * Lk); // the tutorial's mask: 1 = may attend, 0 = masked
    const add = new Float32Array(Lq * Lk);
    for (let i = 0; i < Lq; i++) {
      for (let j = 0; j < Lk; j++) {
        keep[i * Lk + j] = isMasked(i, j) ? 0 : 1;
        add[i * Lk + j] = isMasked(i, j) ? fillValue : 0;
      }
    }
    const js = sdpaStages(q, k, v, Lq, Lk, dk, dv, scale, add);
    let res;
    try {
      // −1e9: an additive float mask (what masked_fill computes); −∞: the bool mask itself
      const attnMask = st.fill === '-1e9' ? { data: add, shape: [Lq, Lk] } : { data: keep, shape: [Lq, Lk] };
      res = attn.scaledDotProductAttention(
        { data: q, shape: [Lq, dk] },
        { data: k, shape: [Lk, dk] },
        { data: v, shape: [Lk, dv] },
        { scale, attnMask, needWeights: true },
      );
    } catch (e) {
      msg.append(h('div.error-box', { text: t('sbs.errAttn', { err: errText(e) }) }));
      return;
    }
    const W = res.weights.data;
    const O = res.output.data;
    let maxDiff = 0;
    for (let i = 0; i < W.length; i++)
      if (Number.isFinite(js.weights[i])) maxDiff = Math.max(maxDiff, Math.abs(W[i] - js.weights[i]));
    const deadRows = [];
    for (let i = 0; i < Lq; i++) if (keep.subarray(i * Lk, (i + 1) * Lk).every((x) => x === 0)) deadRows.push(i);

    const qL = Array.from({ length: Lq }, (_, i) => `q${i}`);
    const kL = Array.from({ length: Lk }, (_, j) => `k${j}`);
    const dL = (n) => Array.from({ length: n }, (_, c) => `d${c}`);
    const mAbs = (a) =>
      a.reduce((m, x) => (Number.isFinite(x) && Math.abs(x) < 1e8 ? Math.max(m, Math.abs(x)) : m), 0) || 1;
    const cellMask = (x, i, j) => (isMasked(i, j) ? { class: 'masked' } : {});
    const scoreOpts = (m) => ({
      rows: Lq,
      cols: Lk,
      rowLabels: qL,
      colLabels: kL,
      color: (x) => divColor(x, m),
      className: 'clickable',
      noTitle: true,
      cellAttrs: cellMask,
    });
    const input = (data, r, c, rl, id, name) =>
      matrixTable(data, {
        rows: r,
        cols: c,
        rowLabels: rl,
        colLabels: dL(c),
        id,
        caption: name,
        cellTitle: (x, i, j) => `${name}[${i}, ${j}] = ${full(x)}`,
      });

    const inputs = h(
      'div.stage',
      {},
      h('h4', { text: t('sbs.inputs') }),
      h('div.formula', { text: t('sbs.inputsNote') }),
      h(
        'div.scroll.inputs-row',
        {},
        input(q, Lq, dk, qL, 'sbs-q', 'Q'),
        input(k, Lk, dk, kL, 'sbs-k', 'K'),
        input(
          v,
          Lk,
          dv,
          kL.map((s) => s.replace('k', 'v')),
          'sbs-v',
          'V',
        ),
      ),
    );
    const m1 = mAbs(js.scores);
    const m2 = mAbs(js.scaled);
    const s1 = stage(
      t('sbs.s1'),
      'scores[i, j] = q_i · k_j',
      'js',
      matrixTable(js.scores, { ...scoreOpts(m1), id: 'sbs-scores' }),
      legend('div', -m1, m1, t('sbs.legScore')),
    );
    const baseText =
      st.scaleMode === 'default'
        ? `× 1/√${dk} = ${fmt(base, 4)}`
        : st.scaleMode === 'off'
          ? t('sbs.scaleOffText')
          : t('sbs.scaleCustomText', { s: fmt(base, 4) });
    const s2 = stage(
      t('sbs.s2'),
      st.temp !== 1 ? `${baseText}, ÷ T ${fmt(st.temp, 3)} → × ${fmt(scale, 4)}` : baseText,
      'js',
      matrixTable(js.scaled, { ...scoreOpts(m2), id: 'sbs-scaled' }),
      legend('div', -m2, m2, t('sbs.legScaled')),
    );
    const maskTable = matrixTable(Float32Array.from(keep), {
      rows: Lq,
      cols: Lk,
      rowLabels: qL,
      colLabels: kL,
      id: 'sbs-mask',
      className: 'clickable.mask01',
      caption: t('sbs.maskCaption'),
      color: (x) => (x ? 'rgb(226, 244, 230)' : 'rgb(253, 231, 229)'),
      digits: 0,
      noTitle: true,
      cellAttrs: cellMask,
    });
    const s3 = stage(
      t('sbs.s3'),
      st.fill === '-1e9' ? 'masked_fill(mask == 0, -1e9)' : 'masked_fill(mask == 0, -inf)',
      'js',
      h(
        'div.inputs-row',
        {},
        maskTable,
        matrixTable(js.masked, { ...scoreOpts(m2), id: 'sbs-masked', caption: t('sbs.maskedCaption') }),
      ),
      legend('div', -m2, m2, t('sbs.legMasked')),
    );
    const sums = [];
    for (let i = 0; i < Lq; i++) sums.push(W.subarray(i * Lk, (i + 1) * Lk).reduce((a, b) => a + b, 0));
    const wTable = matrixTable(W, {
      rows: Lq,
      cols: Lk,
      rowLabels: qL,
      colLabels: kL,
      color: (x) => seqColor(x),
      id: 'sbs-weights',
      className: 'clickable',
      noTitle: true,
      rowExtra: (i) => `Σ ${fmt(sums[i], 4)}`,
      rowExtraLabel: t('sbs.rowSum'),
      cellAttrs: cellMask,
    });
    Object.assign(wTable.dataset, {
      lq: Lq,
      lk: Lk,
      causal: st.causal ? '1' : '0',
      fill: st.fill,
      deadRows: deadRows.join(','),
    });
    const s4 = stage(
      t('sbs.s4'),
      t('sbs.s4Formula'),
      'attnlab',
      wTable,
      legend('seq', 0, 1, t('sbs.legWeight')),
      h('div.check-note', {
        text: maxDiff === 0 ? t('sbs.checkExact') : t('sbs.checkDiff', { d: maxDiff.toExponential(1) }),
      }),
      deadRows.map((i) =>
        h('div.row-note', {
          'data-dead-row': i,
          text: t(st.fill === '-1e9' ? 'sbs.deadRow1e9' : 'sbs.deadRowInf', { i, lk: Lk, u: fmt(1 / Lk, 4) }),
        }),
      ),
    );
    const mo = mAbs(O);
    const s5 = stage(
      t('sbs.s5'),
      'output_i = Σ_j weight[i, j] · v_j',
      'attnlab',
      matrixTable(O, {
        rows: Lq,
        cols: dv,
        rowLabels: qL.map((s) => s.replace('q', 'o')),
        colLabels: dL(dv),
        id: 'sbs-output',
        color: (x) => divColor(x, mo),
        cellTitle: (x, i, j) => `output[${i}, ${j}] = ${full(x)}`,
      }),
      legend('div', -mo, mo, t('sbs.legOutput')),
    );
    pipeline.append(inputs, arrow(), s1, arrow(), s2, arrow(), s3, arrow(), s4, arrow(), s5);
    pipeline.dataset.scale = scale;

    pipeline.querySelectorAll('table.clickable td[data-i]').forEach((td) => {
      const i = Number(td.dataset.i);
      const j = Number(td.dataset.j);
      const tipText = () =>
        t('sbs.tip', {
          i,
          j,
          w: fmt(W[i * Lk + j], 5),
          s: fmt(js.scores[i * Lk + j], 4),
          ss: fmt(js.scaled[i * Lk + j], 4),
          m: isMasked(i, j) ? t('sbs.tipMasked') : '',
          act: t(st.masked.has(`${i},${j}`) ? 'sbs.tipUnmask' : 'sbs.tipMask'),
        });
      td.addEventListener('mouseenter', (ev) => {
        highlight(i, j, true);
        showTip(tipText(), ev.pageX, ev.pageY);
      });
      td.addEventListener('mousemove', (ev) => showTip(tipText(), ev.pageX, ev.pageY));
      td.addEventListener('mouseleave', () => {
        highlight(i, j, false);
        hideTip();
      });
      td.addEventListener('click', () => {
        const key = `${i},${j}`;
        if (st.masked.has(key)) st.masked.delete(key);
        else st.masked.add(key);
        hideTip();
        render();
      });
    });
    function highlight(i, j, on) {
      const tog = (sel, cls = 'hl-row') => pipeline.querySelectorAll(sel).forEach((e) => e.classList.toggle(cls, on));
      tog(`#sbs-q tr[data-row="${i}"]`);
      tog(`#sbs-k tr[data-row="${j}"]`);
      tog(`#sbs-v tr[data-row="${j}"]`);
      tog(`#sbs-output tr[data-row="${i}"]`);
      tog(`table.clickable td[data-i="${i}"][data-j="${j}"]`, 'hl');
    }
  }

  function stage(title, formula, who, ...body) {
    const tag =
      who === 'js'
        ? h('span.tag.js', { text: t('sbs.tagJs'), title: t('sbs.tagJsTitle') })
        : h('span.tag.attnlab', { text: 'attnlab', title: t('sbs.tagAttnTitle') });
    return h(
      'div.stage',
      {},
      h('h4', {}, title, ' ', tag),
      h('div.formula', { text: formula }),
      h('div.scroll', {}, body[0]),
      body.slice(1),
    );
  }
  function arrow() {
    return h('div.arrow', { 'aria-hidden': 'true', text: '→' });
  }

  render();
}
