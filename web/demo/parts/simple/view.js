// @ts-check
// Part "simplified attention" (§2.2–2.3): the tutorial's sentence, one score slider per word for 叫 (① score),
// the weights softmax makes of them with 1/n marked (② normalise), 叫's new vector as the weighted sum of the
// words' vectors (③ mix), and a guess-then-reveal question on e^Δ. Scores live in the part's store.

import { h } from '../../widgets/dom.js';
import { seqColor } from '../../widgets/colours.js';
import { createStore, setElement } from '../../store.js';
import { fmt } from '../../shared/format.js';
import { t, LANG } from '../../i18n.js';
import { WORDS, FEATURES, VECTORS, PRESETS, mix, weightRatio, argmax, ratioGain, withResidual } from './compute.js';
import { guessCard } from '../../widgets/guess.js';

/** @typedef {import('../../store.js').Store<{ scores: number[], residual: boolean }>} SimpleStore */

/** A word as the page shows it: the Chinese word, with its gloss on the English page. @param {number} j */
const word = (j) => (LANG === 'zh' ? WORDS[j][0] : `${WORDS[j][0]} (${WORDS[j][1]})`);

/**
 * One row per word: its score slider and, filled in by drawWeights, its weight bar and value.
 * @param {SimpleStore} store
 */
function scoreRows(store) {
  return WORDS.map((_, j) => {
    const out = h('output.mono', { id: `simple-score-${j}-value` });
    const slider = h('input', {
      type: 'range',
      id: `simple-score-${j}`,
      min: '-3',
      max: '5',
      step: '0.1',
      'aria-label': t('simple.scoreAria', { w: word(j) }),
    });
    slider.addEventListener('input', () => setElement(store, 'scores', j, Number(slider.value)));
    const bar = h('div.simple-bar', {}, h('i'), h('b.uniform'));
    const weight = h('td.mono');
    const row = h('tr', { 'data-j': j }, h('th', { scope: 'row', text: word(j) }), h('td', {}, slider, ' ', out));
    row.append(h('td', {}, bar), weight);
    return { row, slider, out, bar, weight };
  });
}

/** The preset buttons. @param {SimpleStore} store */
function presetButtons(store) {
  return h(
    'div.controls',
    {},
    Object.entries(PRESETS).map(([name, scores]) =>
      h('button', {
        type: 'button',
        id: `simple-preset-${name}`,
        text: t(`simple.preset.${name}`),
        onclick: () => store.set({ scores: [...scores] }),
      }),
    ),
  );
}

/**
 * Sliders, bars and values for the current scores and weights; 1/n marked on every bar.
 * @param {ReturnType<typeof scoreRows>} rows
 * @param {number[]} scores
 * @param {ReturnType<typeof mix>} m
 */
function drawWeights(rows, scores, m) {
  rows.forEach((r, j) => {
    r.slider.value = String(scores[j]);
    r.out.textContent = fmt(scores[j], 1);
    const fill = /** @type {HTMLElement} */ (r.bar.firstChild);
    fill.style.width = `${100 * m.weights[j]}%`;
    fill.style.background = seqColor(0.35 + 0.65 * m.weights[j]);
    /** @type {HTMLElement} */ (r.bar.lastChild).style.left = `${100 * m.uniform}%`;
    r.weight.textContent = fmt(m.weights[j], 3);
    r.row.dataset.weight = String(m.weights[j]);
  });
}

/**
 * The ratio of the two largest weights, read as e^Δ of their scores.
 * @param {number[]} scores
 * @param {number[]} w
 */
function ratioText(scores, w) {
  const a = argmax(w);
  const rest = w.map((x, j) => (j === a ? -1 : x));
  const b = argmax(rest);
  const d = scores[a] - scores[b];
  return t('simple.ratio', { a: word(a), b: word(b), d: fmt(d, 1), r: fmt(weightRatio(d), 2), w: fmt(w[a] / w[b], 2) });
}

/**
 * 叫's own vector, its new (weighted) vector and the plain average, feature by feature; with the residual, also
 * own + new.
 * @param {number[]} output
 * @param {boolean} residual
 */
function mixTable(output, residual) {
  const own = VECTORS[VECTORS.length - 1];
  const mean = FEATURES.map((_, f) => VECTORS.reduce((s, v) => s + v[f], 0) / VECTORS.length);
  const sum = withResidual(output);
  const cell = (/** @type {number} */ v) => h('td.mono', { style: `background:${seqColor(v)}`, text: fmt(v, 2) });
  const cols = ['', t('simple.colOwn'), t('simple.colMixed'), t('simple.colMean')];
  if (residual) cols.push(t('simple.colResidual'));
  return h(
    'table.answers',
    { id: 'simple-mix' },
    h(
      'tr',
      {},
      cols.map((c) => h('th', { scope: 'col', text: c })),
    ),
    FEATURES.map((f, i) =>
      h('tr', { 'data-feature': f }, h('th', { scope: 'row', text: t(`simple.feature.${f}`) }), [
        cell(own[i]),
        cell(output[i]),
        cell(mean[i]),
        ...(residual ? [cell(sum[i])] : []),
      ]),
    ),
  );
}

/**
 * The residual switch and what it changes: 叫's "sound" with and without its own vector added back.
 * @param {SimpleStore} store
 */
function residualSwitch(store) {
  const box = h('input#simple-residual', { type: 'checkbox' });
  box.addEventListener('change', () => store.set({ residual: box.checked }));
  return h('label.controls', {}, box, ' ', t('simple.residual'));
}

/**
 * "先猜再看": 猫 + 1, and the ratio of 猫's weight to 喂食's grows by the factor attnlab gives for the current scores.
 * @param {import('../../attnlab.js').Attnlab} attn
 * @param {SimpleStore} store
 */
function ratioGuess(attn, store) {
  const [cat, fed] = ['猫', '喂食'].map((w) => WORDS.findIndex(([zh]) => zh === w));
  return guessCard('simple', t('simple.guessQ'), () => {
    const r = ratioGain(attn, store.get().scores, cat, fed);
    return { html: t('simple.guessAnswer', { r: fmt(r, 3) }), value: r };
  });
}

/**
 * @param {HTMLElement} root
 * @param {import('../../attnlab.js').Attnlab} attn
 */
export function mount(root, attn) {
  const store = createStore({ scores: [...PRESETS.tutorial], residual: false });
  const rows = scoreRows(store);
  const ratio = h('p.note', { id: 'simple-ratio' });
  const residualNote = h('p.note', { id: 'simple-residual-note' });
  const mixBox = h('div.scroll-x');
  const head = h(
    'tr',
    {},
    ['', t('simple.colScore'), t('simple.colWeight'), ''].map((c) => h('th', { text: c })),
  );
  root.append(
    h('p.simple-sentence', { html: t('simple.sentence') }),
    h('h3', { text: t('simple.step1') }),
    presetButtons(store),
    h(
      'div.scroll-x',
      {},
      h(
        'table.answers.simple-table',
        { id: 'simple-table' },
        head,
        rows.map((r) => r.row),
      ),
    ),
    h('h3', { text: t('simple.step2') }),
    h('p.note', { text: t('simple.softmaxNote') }),
    ratio,
    ratioGuess(attn, store),
    h('h3', { text: t('simple.step3') }),
    h('p.note', { text: t('simple.mixNote') }),
    mixBox,
    residualSwitch(store),
    residualNote,
    h('p.note', { html: t('simple.next') }),
  );
  /** @param {{ scores: number[], residual: boolean }} st */
  const render = (st) => {
    const m = mix(attn, st.scores);
    drawWeights(rows, st.scores, m);
    ratio.textContent = ratioText(st.scores, m.weights);
    mixBox.replaceChildren(mixTable(m.output, st.residual));
    const sound = FEATURES.indexOf('sound');
    residualNote.textContent = st.residual
      ? t('simple.residualNote', { s0: fmt(m.output[sound], 2), s1: fmt(withResidual(m.output)[sound], 2) })
      : '';
    Object.assign(root.dataset, { weights: JSON.stringify(m.weights), output: JSON.stringify(m.output) });
  };
  store.subscribe(render);
  render(store.get());
}
