// Drawing for the multi-head part (mha.js): the per-head heat maps (heatmap.js), the token links (SVG) and
// the toy models' answer table. No state of its own: every function takes what it draws.

import { h, svg, legend, shortLabel, HEAD_COLORS } from './util.js';
import { drawHeatmap } from './heatmap.js';
import { expectedAnswers } from './toy.js';
import { t } from './i18n.js';

/** view: { grid, legendBox, width, perHead (bool), visible (Set), causal }; res: { weights (H·L·S), average, S, keyLabels }. */
export function drawHeatmaps(view, labels, res, H, padded) {
  const { grid } = view;
  grid.replaceChildren();
  const L = labels.length;
  const { S, keyLabels } = res;
  const maps = [];
  if (view.perHead)
    for (let hh = 0; hh < H; hh++)
      maps.push({
        head: hh,
        title: t('mha.head', { h: hh + 1 }),
        data: res.weights.subarray(hh * L * S, (hh + 1) * L * S),
      });
  maps.push({ head: 'avg', title: t('mha.average', { n: H }), data: res.average });
  const big = !view.perHead || H === 1;
  const avail = Math.max(160, Math.min(view.width, 1200) - 24);
  const perRow = Math.min(H, 4);
  const perHead =
    avail < 520 ? Math.floor((avail - 40) / 2) : Math.min(300, Math.floor((avail - perRow * 28) / perRow));
  const masked = (i, j) => (view.causal && j > i && j < L) || (j < L && padded[j]);
  for (const m of maps) {
    const target = m.head === 'avg' || big ? Math.min(440, avail - 14) : Math.min(perHead, avail - 14);
    const canvas = h('canvas', {
      'data-head': m.head,
      'data-rows': L,
      'data-cols': S,
      role: 'img',
      'aria-label': t('mha.mapAria', { title: m.title }),
    });
    canvas.dataset.tokens = JSON.stringify(labels);
    canvas.dataset.keys = JSON.stringify(keyLabels);
    drawHeatmap(canvas, m.data, {
      rows: L,
      cols: S,
      rowLabels: labels,
      colLabels: keyLabels,
      target,
      title: m.title,
      masked,
      dim: (k) => k < L && padded[k],
    });
    const titleEl =
      typeof m.head === 'number'
        ? h('h4', {}, h('span.swatch', { style: `background:${HEAD_COLORS[m.head % HEAD_COLORS.length]}` }), m.title)
        : h('h4', { title: t('mha.averageTitle') }, m.title);
    const off = typeof m.head === 'number' && !view.visible.has(m.head);
    grid.append(
      h(
        'div.heat' + (off ? '.off' : ''),
        { 'data-head': m.head },
        titleEl,
        canvas,
        m.head === 'avg' ? h('div.note.small.avg-note', { text: t('mha.averageNote') }) : '',
      ),
    );
  }
  view.legendBox.replaceChildren(
    h('div.controls', {}, legend('seq', 0, 1, t('mha.legend')), h('span.note', { text: t('mha.legendNote') })),
  );
}

/** Token links: queries left, keys right, a line's opacity = the weight; hover a token to show only its lines. */
export function drawLinks(view, labels, res, H, padded, onToggle) {
  const L = labels.length;
  const { S, keyLabels } = res;
  const { chips, links } = view;
  chips.replaceChildren();
  if (view.perHead) {
    for (let hh = 0; hh < H; hh++) {
      const color = HEAD_COLORS[hh % HEAD_COLORS.length];
      chips.append(
        h('button.head-chip', {
          type: 'button',
          'data-head': hh,
          'aria-pressed': view.visible.has(hh) ? 'true' : 'false',
          style: `border-color:${color}; color:${color}`,
          title: t('mha.chipTitle'),
          text: t('mha.head', { h: hh + 1 }),
          onclick: () => onToggle(hh),
        }),
      );
    }
  } else {
    chips.append(h('span.note', { text: t('mha.avgOnly') }));
  }
  const rowH = 22;
  const narrow = view.width < 520;
  const W = narrow ? 330 : 440;
  const colL = narrow ? 100 : 130;
  const colR = W - colL;
  const Ht = Math.max(L, S) * rowH + 30;
  const el = svg('svg', {
    viewBox: `0 0 ${W} ${Ht}`,
    width: W,
    height: Ht,
    role: 'img',
    'aria-label': t('mha.linksAria'),
  });
  const lineG = svg('g');
  const textG = svg('g');
  el.append(
    svg('text', {
      x: colL - 6,
      y: 13,
      'text-anchor': 'end',
      'font-size': 11,
      fill: '#667',
      'font-weight': 600,
      text: t('mha.queries'),
    }),
    svg('text', { x: colR + 6, y: 13, 'font-size': 11, fill: '#667', 'font-weight': 600, text: t('mha.keys') }),
  );
  const y = (i) => 38 + i * rowH;
  const heads = view.perHead ? [...view.visible].sort((a, b) => a - b) : ['avg'];
  for (const hh of heads) {
    const data = hh === 'avg' ? res.average : res.weights.subarray(hh * L * S, (hh + 1) * L * S);
    const color = hh === 'avg' ? '#1f3f7a' : HEAD_COLORS[hh % HEAD_COLORS.length];
    for (let i = 0; i < L; i++) {
      for (let j = 0; j < S; j++) {
        const w = data[i * S + j];
        if (!(w >= 0.01)) continue;
        lineG.append(
          svg('line', {
            x1: colL,
            y1: y(i) - 4,
            x2: colR,
            y2: y(j) - 4,
            stroke: color,
            'stroke-width': 1 + 2.5 * w,
            'stroke-opacity': Math.min(1, w).toFixed(3),
            'data-head': hh,
            'data-i': i,
            'data-j': j,
            'data-w': w,
          }),
        );
      }
    }
  }
  const focus = (kind, idx) => {
    lineG.querySelectorAll('line').forEach((ln) => {
      ln.style.display = kind === null || Number(ln.dataset[kind]) === idx ? '' : 'none';
    });
    textG
      .querySelectorAll('text')
      .forEach((tx) =>
        tx.classList.toggle(
          'dim',
          kind !== null && !(tx.dataset.side === (kind === 'i' ? 'q' : 'k') && Number(tx.dataset.idx) === idx),
        ),
      );
  };
  labels.forEach((s, i) =>
    textG.append(
      svg(
        'text',
        {
          x: colL - 6,
          y: y(i),
          'text-anchor': 'end',
          'data-side': 'q',
          'data-idx': i,
          class: padded[i] ? 'pad' : null,
          onmouseenter: () => focus('i', i),
          onmouseleave: () => focus(null),
        },
        svg('title', { text: t('mha.queryTip', { i, s }) }),
        shortLabel(s, 12),
      ),
    ),
  );
  keyLabels.forEach((s, j) =>
    textG.append(
      svg(
        'text',
        {
          x: colR + 6,
          y: y(j),
          'data-side': 'k',
          'data-idx': j,
          class: j < L && padded[j] ? 'pad' : null,
          onmouseenter: () => focus('j', j),
          onmouseleave: () => focus(null),
        },
        svg('title', { text: t('mha.keyTip', { j, s }) }),
        shortLabel(s, 12),
      ),
    ),
  );
  el.append(lineG, textG);
  links.replaceChildren(el);
  links.dataset.lines = lineG.childElementCount;
}

/** The toy model's answers under the tokens, scored against the task's rule. */
export function answersTable(toy, ids, predicted, { causal, padded }) {
  const expected = expectedAnswers(toy, ids);
  const scored = ids.map((_, i) => expected[i] !== null && (toy.task === 'reverse' || ids[i] >= 90));
  let right = 0;
  let n = 0;
  const word = (tk) => toy.vocab[tk];
  const row = (label, cells) => h('tr', {}, h('th', { scope: 'row', text: label }), cells);
  const table = h(
    'table.answers',
    { id: 'mha-answer-table' },
    row(
      t('mha.rowInput'),
      ids.map((tk) => h('td', { text: word(tk) })),
    ),
    row(
      t('mha.rowModel'),
      ids.map((_, i) => {
        if (toy.task === 'recall' && ids[i] < 90) return h('td', { text: '·' });
        const ok = scored[i] && predicted[i] === expected[i];
        if (scored[i]) {
          n += 1;
          if (ok) right += 1;
        }
        return h(`td.${scored[i] ? (ok ? 'ok' : 'bad') : 'x'}`, {
          'data-pos': i,
          'data-predicted': word(predicted[i]),
          'data-expected': expected[i] === null ? '' : word(expected[i]),
          text: `${word(predicted[i])} ${scored[i] ? (ok ? '✓' : '✗') : ''}`,
        });
      }),
    ),
    row(
      t('mha.rowRight'),
      ids.map((_, i) =>
        h('td', {
          text:
            toy.task === 'recall' && ids[i] < 90 ? '·' : expected[i] === null ? t('mha.notStored') : word(expected[i]),
        }),
      ),
    ),
  );
  Object.assign(table.dataset, { correct: right, total: n, predicted: JSON.stringify(predicted.map(word)) });
  const summary = h(
    'p.note',
    { id: 'mha-answer-summary' },
    h('strong', { text: t('mha.score', { right, n }) }),
    causal ? t('mha.scoreCausal') : '',
    padded ? t('mha.scorePad') : '',
  );
  return [summary, table];
}
