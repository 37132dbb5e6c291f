// Part 1: attention step by step on a small editable Q, K, V, opening on the tutorial's §5 example.
// Every number shown is attnlab's: scaledDotProductAttention is called once per stage with the same options and
// another returnScores ('scaled' with scale 1 for QKᵀ, 'scaled', 'softcapped' when softcap is on, 'masked', whose call
// also gives the weights and the output). The clicked cells are the tutorial's 0/1 mask, filled with −1e9 (as its
// masked_fill does: passed as an additive float mask) or −∞ (a bool mask); isCausal (upper-left or lower-right) and
// window are attnlab's own masks, always −∞.

import { h, matrixTable, divColor, seqColor, legend, fmt, full, showTip, hideTip, errText } from './util.js';
import { t } from './i18n.js';
import { DEFAULT, parseMatrix, parseSoftcap, parseWindowSide, sec5Box } from './sbs-example.js';

const STAGE_NUMBERS = ['①', '②', '③', '④', '⑤', '⑥'];
// The mask table's colours: may attend, and why a cell is masked.
const MASK_COLOURS = {
  keep: 'rgb(226, 244, 230)',
  click: 'rgb(253, 231, 229)',
  causal: 'rgb(232, 222, 248)',
  window: 'rgb(255, 236, 204)',
};

/**
 * Which of attnlab's rules removes key j from query i: 'causal', 'window' or null. Query i sits at the aligned
 * position p = i + offset (offset Lk − Lq with 'lower-right', else 0), as docs/api.md defines isCausal and window.
 */
function ruleAt(i, j, { causal, offset, window: [left, right] }) {
  const p = i + offset;
  if (causal !== 'off' && j > p) return 'causal';
  if ((left >= 0 && j < p - left) || (right >= 0 && j > p + right)) return 'window';
  return null;
}

/** "i + 2", "i − 1", "i" for the aligned position. */
const aligned = (offset) => (offset === 0 ? 'i' : offset > 0 ? `i + ${offset}` : `i − ${-offset}`);

/** The options as code, for the page. */
function optionsText(o) {
  const parts = [`scale: ${+o.scale.toPrecision(4)}`];
  if (o.isCausal) parts.push(`isCausal: '${o.isCausal}'`);
  if (o.window[0] !== -1 || o.window[1] !== -1) parts.push(`window: [${o.window.join(', ')}]`);
  if (o.softcap !== null) parts.push(`softcap: ${o.softcap}`);
  if (o.attnMask) parts.push(o.attnMask.data instanceof Uint8Array ? 'attnMask /* 0/1 */' : 'attnMask /* 0, -1e9 */');
  return `attn.scaledDotProductAttention(Q, K, V, { ${parts.join(', ')} })`;
}

export function mount(root, attn) {
  const st = {
    scaleMode: 'default',
    custom: 0.5,
    temp: 1,
    causal: 'off',
    fill: '-1e9',
    masked: new Set(),
    softcapOn: false,
    softcap: '1',
    window: ['-1', '-1'],
  };

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
  const causalRadios = radios(
    'sbs-causal',
    [
      ['off', t('sbs.causalOff')],
      ['upper-left', t('sbs.causalUpperLeft')],
      ['lower-right', t('sbs.causalLowerRight')],
    ],
    st.causal,
    (v) => {
      st.causal = v;
    },
  );
  causalRadios.forEach((l) => {
    l.firstChild.id = `sbs-causal-${l.firstChild.value}`;
  });
  const windowIn = (side, index, aria) =>
    h('input', {
      type: 'number',
      id: `sbs-window-${side}`,
      step: '1',
      min: '-1',
      value: '-1',
      'aria-label': aria,
      oninput: (ev) => {
        st.window[index] = ev.target.value;
        render();
      },
    });
  const softcapIn = h('input', {
    type: 'checkbox',
    id: 'sbs-softcap',
    onchange: () => {
      st.softcapOn = softcapIn.checked;
      render();
    },
  });
  const softcapC = h('input', {
    type: 'number',
    id: 'sbs-softcap-c',
    step: '0.5',
    min: '0.1',
    value: st.softcap,
    'aria-label': t('sbs.softcapAria'),
    oninput: () => {
      st.softcap = softcapC.value;
      st.softcapOn = softcapIn.checked = true;
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
  const callLine = h('p.note', { id: 'sbs-call' });
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
      h('div.ctl', {}, h('span', { text: t('sbs.fill') }), h('div.radio-row', {}, fillRadios)),
      clearBtn,
      resetBtn,
    ),
    h(
      'div.controls',
      { id: 'sbs-modern' },
      h('div.ctl', {}, h('span', { text: t('sbs.causal') }), h('div.radio-row', {}, causalRadios)),
      h(
        'div.ctl',
        {},
        h('span', { text: t('sbs.window') }),
        h(
          'div.radio-row',
          {},
          h('span.mono', { text: '[' }),
          windowIn('left', 0, t('sbs.windowLeftAria')),
          h('span.mono', { text: ',' }),
          windowIn('right', 1, t('sbs.windowRightAria')),
          h('span.mono', { text: ']' }),
        ),
      ),
      h(
        'div.ctl',
        {},
        h('span', { text: t('sbs.softcap') }),
        h('div.radio-row', {}, h('label', { for: 'sbs-softcap' }, softcapIn, t('sbs.softcapOn')), softcapC),
      ),
    ),
    h('p.note', { id: 'sbs-temp-note', text: t('sbs.tempNote') }),
    h('p.note', { id: 'sbs-modern-note', text: t('sbs.modernNote') }),
    msg,
    callLine,
    pipeline,
  );
  for (const el of [qIn, kIn, vIn])
    el.addEventListener('input', () => {
      st.masked.clear();
      render();
    });

  function render() {
    msg.replaceChildren();
    callLine.replaceChildren();
    pipeline.replaceChildren();
    let Q;
    let K;
    let V;
    let win;
    let cap = null;
    try {
      Q = parseMatrix(qIn.value, 'Q');
      K = parseMatrix(kIn.value, 'K');
      V = parseMatrix(vIn.value, 'V');
      if (Q[0].length !== K[0].length) throw new Error(t('sbs.errDk', { q: Q[0].length, k: K[0].length }));
      if (K.length !== V.length) throw new Error(t('sbs.errKv', { k: K.length, v: V.length }));
      win = st.window.map(parseWindowSide);
      if (st.softcapOn) cap = parseSoftcap(st.softcap);
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
    const offset = st.causal === 'lower-right' ? Lk - Lq : 0;
    const rules = { causal: st.causal, offset, window: win };
    // why a cell is masked: attnlab's rules first (they are −∞ whatever the fill), then the clicked cells
    const why = (i, j) => ruleAt(i, j, rules) ?? (st.masked.has(`${i},${j}`) ? 'click' : null);
    const isMasked = (i, j) => why(i, j) !== null;
    // the clicked cells as the tutorial's mask (1 = may attend) and as masked_fill's additive −1e9
    const keep = new Uint8Array(Lq * Lk).fill(1);
    const add = new Float32Array(Lq * Lk);
    for (const key of st.masked) {
      const [i, j] = key.split(',').map(Number);
      keep[i * Lk + j] = 0;
      add[i * Lk + j] = -1e9;
    }
    const options = {
      scale,
      isCausal: st.causal === 'off' ? false : st.causal,
      window: win,
      softcap: cap,
      attnMask:
        st.masked.size === 0
          ? null
          : st.fill === '-1e9'
            ? { data: add, shape: [Lq, Lk] }
            : { data: keep, shape: [Lq, Lk] },
    };
    const call = (extra) =>
      attn.scaledDotProductAttention(
        { data: q, shape: [Lq, dk] },
        { data: k, shape: [Lk, dk] },
        { data: v, shape: [Lk, dv] },
        { ...options, needWeights: false, ...extra },
      );
    let raw;
    let scaled;
    let capped = null;
    let res;
    try {
      raw = call({ scale: 1, returnScores: 'scaled' }).scores.data;
      scaled = call({ returnScores: 'scaled' }).scores.data;
      if (cap !== null) capped = call({ returnScores: 'softcapped' }).scores.data;
      res = call({ returnScores: 'masked', needWeights: true });
    } catch (e) {
      msg.append(h('div.error-box', { text: t('sbs.errAttn', { err: errText(e) }) }));
      return;
    }
    const masked = res.scores.data;
    const W = res.weights.data;
    const O = res.output.data;
    if (st.causal === 'lower-right' && Lq === Lk) msg.append(h('p.note', { text: t('sbs.lowerRightSquare') }));
    callLine.append(t('sbs.callNote'), ' ', h('code', { text: optionsText(options) }));

    const deadRows = [];
    for (let i = 0; i < Lq; i++) {
      let all = true;
      for (let j = 0; j < Lk && all; j++) all = isMasked(i, j);
      if (all) deadRows.push(i);
    }

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
    const whyText = (w) =>
      w === 'causal' ? t('sbs.whyCausal') : w === 'window' ? t('sbs.whyWindow') : t('sbs.whyClick');

    const inputs = h(
      'div.stage',
      { 'data-stage': 'inputs' },
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
    const stages = [];
    const m1 = mAbs(raw);
    stages.push(
      stage(
        'scores',
        t('sbs.s1'),
        'scores[i, j] = q_i · k_j',
        "returnScores: 'scaled', scale: 1",
        matrixTable(raw, { ...scoreOpts(m1), id: 'sbs-scores' }),
        legend('div', -m1, m1, t('sbs.legScore')),
      ),
    );
    const baseText =
      st.scaleMode === 'default'
        ? `× 1/√${dk} = ${fmt(base, 4)}`
        : st.scaleMode === 'off'
          ? t('sbs.scaleOffText')
          : t('sbs.scaleCustomText', { s: fmt(base, 4) });
    const m2 = mAbs(scaled);
    stages.push(
      stage(
        'scaled',
        t('sbs.s2'),
        st.temp !== 1 ? `${baseText}, ÷ T ${fmt(st.temp, 3)} → × ${fmt(scale, 4)}` : baseText,
        "returnScores: 'scaled'",
        matrixTable(scaled, { ...scoreOpts(m2), id: 'sbs-scaled' }),
        legend('div', -m2, m2, t('sbs.legScaled')),
      ),
    );
    if (capped) {
      const mc = mAbs(capped);
      stages.push(
        stage(
          'softcapped',
          t('sbs.sCap'),
          `c · tanh(s / c), c = ${fmt(cap, 4)}`,
          "returnScores: 'softcapped'",
          matrixTable(capped, { ...scoreOpts(mc), id: 'sbs-softcapped' }),
          legend('div', -mc, mc, t('sbs.legSoftcapped')),
        ),
      );
    }
    const maskTable = matrixTable(
      Float32Array.from({ length: Lq * Lk }, (_, n) => (isMasked(Math.floor(n / Lk), n % Lk) ? 0 : 1)),
      {
        rows: Lq,
        cols: Lk,
        rowLabels: qL,
        colLabels: kL,
        id: 'sbs-mask',
        className: 'clickable.mask01',
        caption: t('sbs.maskCaption'),
        color: (x, i, j) => MASK_COLOURS[why(i, j) ?? 'keep'],
        digits: 0,
        noTitle: true,
        cellAttrs: (x, i, j) => (isMasked(i, j) ? { class: 'masked', 'data-why': why(i, j) } : {}),
      },
    );
    const swatch = (colour, text) =>
      h(
        'span',
        { style: 'white-space: nowrap; margin-right: 10px' },
        h('span', {
          'aria-hidden': 'true',
          style: `display: inline-block; width: 11px; height: 11px; margin-right: 4px; vertical-align: -1px; border: 1px solid #bbb; background: ${colour}`,
        }),
        text,
      );
    const maskKey = h(
      'div.note',
      { id: 'sbs-mask-key' },
      swatch(MASK_COLOURS.keep, t('sbs.legKeep')),
      swatch(MASK_COLOURS.click, st.fill === '-1e9' ? t('sbs.legClick1e9') : t('sbs.legClickInf')),
      st.causal !== 'off' && swatch(MASK_COLOURS.causal, t('sbs.legCausal')),
      (win[0] >= 0 || win[1] >= 0) && swatch(MASK_COLOURS.window, t('sbs.legWindow')),
    );
    const ruleText = [st.fill === '-1e9' ? 'masked_fill(mask == 0, -1e9)' : 'masked_fill(mask == 0, -inf)'];
    if (st.causal !== 'off') ruleText.push(`isCausal: j > ${aligned(offset)} → −∞`);
    if (win[0] >= 0 || win[1] >= 0) {
      const p = offset === 0 ? 'i' : 'p';
      const lo = win[0] >= 0 ? `${p} − ${win[0]} ≤ ` : '';
      const hi = win[1] >= 0 ? ` ≤ ${p} + ${win[1]}` : '';
      ruleText.push(`window: keeps ${lo}j${hi}${offset === 0 ? '' : `, p = ${aligned(offset)}`}, others → −∞`);
    }
    const m3 = mAbs(masked);
    stages.push(
      stage(
        'masked',
        t('sbs.s3'),
        ruleText.join('; '),
        "returnScores: 'masked', needWeights: true → result.scores",
        h(
          'div.inputs-row',
          {},
          maskTable,
          matrixTable(masked, { ...scoreOpts(m3), id: 'sbs-masked', caption: t('sbs.maskedCaption') }),
        ),
        maskKey,
        legend('div', -m3, m3, t('sbs.legMasked')),
      ),
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
      causal: st.causal,
      offset,
      window: win.join(','),
      softcap: cap === null ? 'off' : cap,
      fill: st.fill,
      deadRows: deadRows.join(','),
    });
    const deadNote = (i) => {
      // the masked scores attnlab returned: the −∞ ones get nothing, the −1e9 ones share the row
      let n = 0;
      for (let j = 0; j < Lk; j++) if (Number.isFinite(masked[i * Lk + j])) n++;
      const text =
        n === 0
          ? t('sbs.deadRowInf', { i })
          : n === Lk
            ? t('sbs.deadRow1e9', { i, lk: Lk, u: fmt(1 / Lk, 4) })
            : t('sbs.deadRowMixed', { i, n, u: fmt(1 / n, 4) });
      return h('div.row-note', { 'data-dead-row': i, text });
    };
    stages.push(
      stage(
        'weights',
        t('sbs.s4'),
        t('sbs.s4Formula'),
        'result.weights',
        wTable,
        legend('seq', 0, 1, t('sbs.legWeight')),
        deadRows.map(deadNote),
      ),
    );
    const mo = mAbs(O);
    stages.push(
      stage(
        'output',
        t('sbs.s5'),
        'output_i = Σ_j weight[i, j] · v_j',
        'result.output',
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
      ),
    );
    pipeline.append(inputs);
    stages.forEach((s, n) => {
      s.querySelector('h4').prepend(`${STAGE_NUMBERS[n]} `);
      pipeline.append(arrow(), s);
    });
    pipeline.dataset.scale = scale;

    pipeline.querySelectorAll('table.clickable td[data-i]').forEach((td) => {
      const i = Number(td.dataset.i);
      const j = Number(td.dataset.j);
      const ij = i * Lk + j;
      const tipText = () =>
        t('sbs.tip', {
          i,
          j,
          w: fmt(W[ij], 5),
          s: fmt(raw[ij], 4),
          ss: fmt(scaled[ij], 4),
          sc: capped ? t('sbs.tipSoftcap', { c: fmt(capped[ij], 4) }) : '',
          ms: fmt(masked[ij], 4),
          m: isMasked(i, j) ? t('sbs.tipMasked', { why: whyText(why(i, j)) }) : '',
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

  /** One stage: its title, formula, the returnScores (or result field) it shows, its table and notes. */
  function stage(name, title, formula, field, ...body) {
    return h(
      'div.stage',
      { 'data-stage': name },
      h('h4', {}, title, ' ', h('span.tag.attnlab', { text: 'attnlab', title: t('sbs.tagAttnTitle') })),
      h('div.formula', { text: formula }),
      h('div.formula', {}, h('code', { text: field })),
      h('div.scroll', {}, body[0]),
      body.slice(1),
    );
  }
  function arrow() {
    return h('div.arrow', { 'aria-hidden': 'true', text: '→' });
  }

  render();
}
