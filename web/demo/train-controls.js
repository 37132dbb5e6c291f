// The training part's controls and layout (train.js holds the state and the worker): builds every element once
// and returns them by name. Changing a control updates st and calls on.reset() (a new model) or on.send() (a
// setting the running worker takes from its next step).

import { h } from './util.js';
import { TASKS, HEAD_CHOICES, EMBED_DIM } from './train-tasks.js';
import { STOP_AT } from './train-view.js';
import { t } from './i18n.js';

const LRS = [0.001, 0.003, 0.01, 0.03, 0.1];
const BATCHES = [8, 16, 32, 64, 128];
const PACES = [0, 100, 30, 5];
const INIT_SCALES = [0.1, 0.3, 1, 3, 10];

export function buildTrainUi(root, st, on) {
  const taskRadios = Object.values(TASKS).map((k) =>
    h(
      'label',
      {},
      h('input', {
        type: 'radio',
        name: 'train-task',
        value: k.id,
        id: `train-task-${k.id}`,
        checked: k.id === st.task,
        onchange: () => {
          st.task = k.id;
          on.reset();
        },
      }),
      t(`task.${k.id}.label`),
    ),
  );
  const taskDesc = h('p.note.train-desc', { id: 'train-task-desc' });
  const select = (id, label, options, value, onchange) => {
    const sel = h(
      'select',
      { id, 'aria-label': label },
      options.map(([v, text]) => h('option', { value: String(v), text, selected: v === value })),
    );
    sel.addEventListener('change', () => onchange(sel.value));
    return sel;
  };
  const headsSel = select(
    'train-heads',
    t('train.headsAria'),
    HEAD_CHOICES.map((n) => [n, String(n)]),
    st.heads,
    (v) => {
      st.heads = Number(v);
      on.reset();
    },
  );
  const lrSel = select(
    'train-lr',
    t('train.lr'),
    LRS.map((v) => [v, String(v)]),
    st.lr,
    (v) => {
      st.lr = Number(v);
      on.send({ type: 'set', lr: st.lr });
    },
  );
  const batchSel = select(
    'train-batch',
    t('train.batch'),
    BATCHES.map((v) => [v, String(v)]),
    st.batch,
    (v) => {
      st.batch = Number(v);
      on.send({ type: 'set', batch: st.batch });
    },
  );
  const paceSel = select(
    'train-pace',
    t('train.pace'),
    PACES.map((v) => [v, t(`train.pace${v}`)]),
    st.pace,
    (v) => {
      st.pace = Number(v);
      on.send({ type: 'set', pace: st.pace });
    },
  );
  const initSel = select(
    'train-init',
    t('train.init'),
    INIT_SCALES.map((v) => [v, `× ${v}`]),
    st.initScale,
    (v) => {
      st.initScale = Number(v);
      on.reset();
    },
  );
  const noScaleIn = h('input', {
    type: 'checkbox',
    id: 'train-noscale',
    onchange: () => {
      st.noScale = noScaleIn.checked;
      on.reset();
    },
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
  const startBtn = h('button.primary', { type: 'button', id: 'train-start', text: t('train.train'), disabled: true });
  const pauseBtn = h('button', { type: 'button', id: 'train-pause', text: t('train.pause'), disabled: true });
  const resetBtn = h('button', { type: 'button', id: 'train-reset', text: t('train.reset'), disabled: true });
  const stateMsg = h('span.train-state', {
    id: 'train-state-msg',
    'aria-live': 'polite',
    text: t('train.loadingWorker'),
  });
  const errBox = h('div', { id: 'train-error' });
  const stat = (id, key) => {
    const v = h('span.v', { id, text: '—' });
    return [h('div.stat', { title: t(`train.stat.${key}Title`) }, h('span.k', { text: t(`train.stat.${key}`) }), v), v];
  };
  const stats = ['build', 'step', 'speed', 'loss', 'acc', 'time', 'updates'].map((k) => stat(`train-${k}`, k));
  const [buildV, stepV, speedV, lossV, accV, timeV, updV] = stats.map((s) => s[1]);
  const reachedNote = h('p.note', { id: 'train-reached' });
  const charts = {
    loss: h('canvas', { id: 'train-loss-chart', role: 'img', 'aria-label': t('train.lossAria') }),
    acc: h('canvas', { id: 'train-acc-chart', role: 'img', 'aria-label': t('train.accAria') }),
    entropy: h('canvas', { id: 'train-entropy-chart', role: 'img', 'aria-label': t('train.entropyAria') }),
    mass: h('canvas', { id: 'train-mass-chart', role: 'img', 'aria-label': t('train.massAria') }),
  };
  const chartBox = h(
    'div.train-charts',
    {},
    h('div.chart', {}, h('div.small', { text: t('train.lossTitle') }), charts.loss),
    h('div.chart', {}, h('div.small', { text: t('train.accTitle') }), charts.acc),
    h(
      'div.chart',
      {},
      h('div.small', { text: t('train.entropyTitle') }),
      charts.entropy,
      h('div.note.small', { text: t('train.entropyNote') }),
    ),
    h(
      'div.chart',
      {},
      h('div.small', { text: t('train.massTitle') }),
      charts.mass,
      h('div.note.small', { id: 'train-mass-note' }),
    ),
  );
  const mapsGrid = h('div.heat-grid', { id: 'train-maps' });
  const mapsNote = h('p.note', { id: 'train-maps-note' });
  const exampleBox = h('div.answers-wrap', { id: 'train-example' });
  const replayIn = h('input', {
    type: 'range',
    id: 'train-replay',
    min: '0',
    max: '0',
    step: '1',
    value: '0',
    disabled: true,
  });
  const replayBtn = h('button', { type: 'button', id: 'train-replay-play', text: t('train.replay'), disabled: true });
  const replayStep = h('span.note', { id: 'train-replay-step' });
  const tryIn = h('input', {
    type: 'text',
    id: 'train-try-text',
    style: 'width: min(420px, calc(100vw - 60px))',
    'aria-label': t('train.tryAria'),
  });
  const tryBtn = h('button.primary', { type: 'button', id: 'train-try-run', text: t('train.runBoth'), disabled: true });
  const tryNote = h('p.note', { id: 'train-try-note' });
  const tryMsg = h('div', { id: 'train-try-msg' });
  const tryOut = h('div', { id: 'train-try-out' });
  const ctl = (id, key, el) => h('label.ctl', { for: id }, h('span', { text: t(key, { e: EMBED_DIM }) }), el);

  root.append(
    h('div.ctl', {}, h('span', { text: t('train.task') }), h('div.radio-row', {}, taskRadios)),
    taskDesc,
    h(
      'div.controls',
      {},
      ctl('train-heads', 'train.heads', headsSel),
      ctl('train-lr', 'train.lr', lrSel),
      ctl('train-batch', 'train.batch', batchSel),
      ctl('train-pace', 'train.pace', paceSel),
      ctl('train-seed', 'train.seed', seedIn),
      h(
        'label.ctl.inline',
        { for: 'train-stop' },
        stopIn,
        h('span', { text: t('train.stopAt', { p: STOP_AT * 100 }) }),
      ),
    ),
    h(
      'div.controls',
      {},
      ctl('train-init', 'train.init', initSel),
      h('label.ctl.inline', { for: 'train-noscale' }, noScaleIn, h('span', { text: t('train.noScale') })),
    ),
    h('p.note', { id: 'train-scale-note', text: t('train.scaleNote') }),
    h('div.controls.train-buttons', {}, startBtn, pauseBtn, resetBtn, stateMsg),
    errBox,
    h(
      'div.stats',
      { id: 'train-stats' },
      stats.map((s) => s[0]),
    ),
    reachedNote,
    h(
      'div.train-grid',
      {},
      chartBox,
      h(
        'div.train-maps-col',
        {},
        h('h3', { text: t('train.mapsTitle') }),
        mapsNote,
        mapsGrid,
        h(
          'div.controls.replay',
          {},
          h('label.ctl', { for: 'train-replay' }, h('span', { text: t('train.mapsAt') }), replayIn),
          replayBtn,
          replayStep,
        ),
        exampleBox,
      ),
    ),
    h('h3', { text: t('train.tryTitle') }),
    tryNote,
    h('div.controls', {}, ctl('train-try-text', 'mha.tokens', tryIn), tryBtn),
    tryMsg,
    tryOut,
  );

  return {
    taskDesc,
    seedIn,
    stopIn,
    startBtn,
    pauseBtn,
    resetBtn,
    stateMsg,
    errBox,
    buildV,
    stepV,
    speedV,
    lossV,
    accV,
    timeV,
    updV,
    reachedNote,
    charts,
    chartBox,
    mapsGrid,
    mapsNote,
    exampleBox,
    replayIn,
    replayBtn,
    replayStep,
    tryIn,
    tryBtn,
    tryNote,
    tryMsg,
    tryOut,
  };
}
