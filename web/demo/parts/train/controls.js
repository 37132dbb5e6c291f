// @ts-check
// The training part's controls and layout (view.js holds the state and the worker): builds every element once and
// returns them by name. Changing a control writes to the part's store and calls on.reset() (a new model) or
// on.send() (a setting the running worker takes from its next step).

import { h } from '../../widgets/dom.js';
import { radios, select, inline, group } from '../../widgets/controls.js';
import { t } from '../../i18n.js';
import { TASKS, HEAD_CHOICES, EMBED_DIM, STOP_AT } from './compute.js';

/**
 * @typedef {object} TrainState
 * @property {'reverse' | 'next' | 'recall'} task
 * @property {number} heads
 * @property {number} lr
 * @property {number} batch
 * @property {number} pace steps a second (0 = as fast as it goes)
 * @property {boolean} stopAt stop at 95 %
 * @property {boolean} noScale start without 1/√dₖ
 * @property {number} initScale
 * @property {number} seed
 * @property {'loading' | 'ready' | 'running' | 'paused' | 'done' | 'error'} state
 */
/** @typedef {import('../../store.js').Store<TrainState>} TrainStore */
/** @typedef {{ reset: () => void, send: (m: Record<string, any>) => void }} On */

const LRS = [0.001, 0.003, 0.01, 0.03, 0.1];
const BATCHES = [8, 16, 32, 64, 128];
const PACES = [0, 100, 30, 5];
const INIT_SCALES = [0.1, 0.3, 1, 3, 10];

/**
 * A captioned control: <label class="ctl" for=id><span>caption (E filled in)</span>el</label>.
 * @param {string} id
 * @param {string} key the caption's catalogue key
 * @param {HTMLElement} el
 */
const ctl = (id, key, el) => h('label.ctl', { for: id }, h('span', { text: t(key, { e: EMBED_DIM }) }), el);

/**
 * The settings: heads, learning rate, batch, pace, seed, stop at 95 %, initial scale, without 1/√dₖ.
 * @param {TrainStore} store
 * @param {On} on
 */
function settings(store, on) {
  const st = store.get();
  /** @param {string} id @param {string} label @param {number[]} values @param {(v: number) => string} text @param {number} value @param {(v: number) => void} set */
  const choice = (id, label, values, text, value, set) =>
    select({ id, label, options: values.map((v) => [v, text(v)]), value, onChange: (v) => set(Number(v)) });
  /** @param {keyof TrainState} key @param {number} v */
  const resetWith = (key, v) => {
    store.set({ [key]: v });
    on.reset();
  };
  /** @param {'lr' | 'batch' | 'pace'} key @param {number} v */
  const sendWith = (key, v) => {
    store.set({ [key]: v });
    on.send({ type: 'set', [key]: v });
  };
  const headsSel = choice('train-heads', t('train.headsAria'), HEAD_CHOICES, String, st.heads, (v) =>
    resetWith('heads', v),
  );
  const lrSel = choice('train-lr', t('train.lr'), LRS, String, st.lr, (v) => sendWith('lr', v));
  const batchSel = choice('train-batch', t('train.batch'), BATCHES, String, st.batch, (v) => sendWith('batch', v));
  const paceSel = choice(
    'train-pace',
    t('train.pace'),
    PACES,
    (v) => t(`train.pace${v}`),
    st.pace,
    (v) => sendWith('pace', v),
  );
  const initSel = choice(
    'train-init',
    t('train.init'),
    INIT_SCALES,
    (v) => `× ${v}`,
    st.initScale,
    (v) => resetWith('initScale', v),
  );
  const noScaleIn = h('input', { type: 'checkbox', id: 'train-noscale' });
  noScaleIn.addEventListener('change', () => {
    store.set({ noScale: noScaleIn.checked });
    on.reset();
  });
  const seedIn = h('input', {
    type: 'number',
    id: 'train-seed',
    min: '0',
    max: '999999',
    step: '1',
    value: String(st.seed),
    'aria-label': t('train.seed'),
  });
  const stopIn = h('input', { type: 'checkbox', id: 'train-stop', checked: st.stopAt });
  const rows = [
    h('div.controls', {}, ctl('train-heads', 'train.heads', headsSel)),
    h(
      'div.controls',
      {},
      ctl('train-lr', 'train.lr', lrSel),
      ctl('train-batch', 'train.batch', batchSel),
      ctl('train-pace', 'train.pace', paceSel),
      ctl('train-seed', 'train.seed', seedIn),
      inline(stopIn, t('train.stopAt', { p: STOP_AT * 100 })),
    ),
    h('div.controls', {}, ctl('train-init', 'train.init', initSel), inline(noScaleIn, t('train.noScale'))),
  ];
  return { rows, seedIn, stopIn };
}

/** The numbers of the run: build, step, speed, loss, accuracy, time, page updates. */
function statsRow() {
  /** @param {string} key */
  const stat = (key) => {
    const v = h('span.v', { id: `train-${key}`, text: '—' });
    const box = h('div.stat', { title: t(`train.stat.${key}Title`) }, h('span.k', { text: t(`train.stat.${key}`) }), v);
    return { box, v };
  };
  const s = Object.fromEntries(['build', 'step', 'speed', 'loss', 'acc', 'time', 'updates'].map((k) => [k, stat(k)]));
  const values = {
    buildV: s.build.v,
    stepV: s.step.v,
    speedV: s.speed.v,
    lossV: s.loss.v,
    accV: s.acc.v,
    timeV: s.time.v,
    updV: s.updates.v,
  };
  return {
    el: h(
      'div.stats',
      { id: 'train-stats' },
      Object.values(s).map((x) => x.box),
    ),
    ...values,
  };
}

/** The four curves' canvases in their boxes. */
function chartsBox() {
  /** @param {string} id @param {string} aria */
  const canvas = (id, aria) => h('canvas', { id, role: 'img', 'aria-label': t(aria) });
  const charts = {
    loss: canvas('train-loss-chart', 'train.lossAria'),
    acc: canvas('train-acc-chart', 'train.accAria'),
    entropy: canvas('train-entropy-chart', 'train.entropyAria'),
    mass: canvas('train-mass-chart', 'train.massAria'),
  };
  /** @param {string} title @param {HTMLCanvasElement} c @param {...Node} notes */
  const chart = (title, c, ...notes) => h('div.chart', {}, h('div.small', { text: t(title) }), c, ...notes);
  const chartBox = h(
    'div.train-charts',
    {},
    chart('train.lossTitle', charts.loss),
    chart('train.accTitle', charts.acc),
    chart('train.entropyTitle', charts.entropy, h('div.note.small', { text: t('train.entropyNote') })),
    chart('train.massTitle', charts.mass, h('div.note.small', { id: 'train-mass-note' })),
  );
  return { charts, chartBox };
}

/** The maps column: the maps, the replay slider and button, the example's answers. */
function mapsColumn() {
  const ui = {
    mapsGrid: h('div.heat-grid', { id: 'train-maps' }),
    mapsNote: h('p.note', { id: 'train-maps-note' }),
    exampleBox: h('div.answers-wrap', { id: 'train-example' }),
    replayIn: h('input', {
      type: 'range',
      id: 'train-replay',
      min: '0',
      max: '0',
      step: '1',
      value: '0',
      disabled: true,
    }),
    replayBtn: h('button', { type: 'button', id: 'train-replay-play', text: t('train.replay'), disabled: true }),
    replayStep: h('span.note', { id: 'train-replay-step' }),
  };
  const el = h(
    'div.train-maps-col',
    {},
    h('h3', { text: t('train.mapsTitle') }),
    ui.mapsNote,
    ui.mapsGrid,
    h('div.controls.replay', {}, ctl('train-replay', 'train.mapsAt', ui.replayIn), ui.replayBtn, ui.replayStep),
    ui.exampleBox,
  );
  return { el, ...ui };
}

/** "Try it": the tokens box, the button, the note, messages and output. */
function tryBox() {
  return {
    tryIn: h('input', {
      type: 'text',
      id: 'train-try-text',
      style: 'width: min(420px, calc(100vw - 60px))',
      'aria-label': t('train.tryAria'),
    }),
    tryBtn: h('button.primary', { type: 'button', id: 'train-try-run', text: t('train.runBoth'), disabled: true }),
    tryNote: h('p.note', { id: 'train-try-note' }),
    tryMsg: h('div', { id: 'train-try-msg' }),
    tryOut: h('div', { id: 'train-try-out' }),
  };
}

/**
 * @param {HTMLElement} root
 * @param {TrainStore} store
 * @param {On} on
 */
export function buildTrainUi(root, store, on) {
  const taskRadios = radios({
    name: 'train-task',
    options: Object.values(TASKS).map((k) => [k.id, t(`task.${k.id}.label`)]),
    value: store.get().task,
    id: (v) => `train-task-${v}`,
    onChange: (task) => {
      store.set({ task });
      on.reset();
    },
  });
  const taskDesc = h('p.note.train-desc', { id: 'train-task-desc' });
  const { rows, seedIn, stopIn } = settings(store, on);
  const buttons = {
    startBtn: h('button.primary', { type: 'button', id: 'train-start', text: t('train.train'), disabled: true }),
    pauseBtn: h('button', { type: 'button', id: 'train-pause', text: t('train.pause'), disabled: true }),
    resetBtn: h('button', { type: 'button', id: 'train-reset', text: t('train.reset'), disabled: true }),
    stateMsg: h('span.train-state', { id: 'train-state-msg', 'aria-live': 'polite', text: t('train.loadingWorker') }),
  };
  const errBox = h('div', { id: 'train-error' });
  const stats = statsRow();
  const reachedNote = h('p.note', { id: 'train-reached' });
  const { charts, chartBox } = chartsBox();
  const maps = mapsColumn();
  const tryUi = tryBox();
  root.append(
    group(t('train.task'), h('div.radio-row', {}, taskRadios)),
    taskDesc,
    rows[0],
    h(
      'details.advanced',
      { id: 'train-advanced' },
      h('summary', { text: t('train.advanced') }),
      ...rows.slice(1),
      h('p.note', { id: 'train-scale-note', html: t('train.scaleNote') }),
    ),
    h('div.controls.train-buttons', {}, buttons.startBtn, buttons.pauseBtn, buttons.resetBtn, buttons.stateMsg),
    errBox,
    stats.el,
    reachedNote,
    h('div.train-grid', {}, chartBox, maps.el),
    h('h3', { text: t('train.tryTitle') }),
    tryUi.tryNote,
    h('div.controls', {}, ctl('train-try-text', 'mha.tokens', tryUi.tryIn), tryUi.tryBtn),
    tryUi.tryMsg,
    tryUi.tryOut,
  );
  const { el: _stats, ...statValues } = stats;
  const { el: _maps, ...mapsUi } = maps;
  return {
    taskDesc,
    seedIn,
    stopIn,
    ...buttons,
    errBox,
    ...statValues,
    reachedNote,
    charts,
    chartBox,
    ...mapsUi,
    ...tryUi,
  };
}
