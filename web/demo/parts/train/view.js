// @ts-check
// Part "train it yourself" (§10): a one-layer transformer (attn.createTinyTransformer: the toy models'
// architecture) trains in a module Web Worker (worker.js) with trainStep (Adam) on fresh random batches. This file
// holds the state (the part's store) and the worker's messages; controls.js builds the controls, draw.js draws the
// maps, the curves (loss, accuracy, each head's entropy against ln T, mass on the target keys) and the "try it"
// comparison. Once training stops, the worker's state dict runs on the page next to the toy model shipped in models/.

import { h } from '../../widgets/dom.js';
import { hideTip } from '../../widgets/tooltip.js';
import { fmt, errText } from '../../shared/format.js';
import { createToyLayers, parseTokens, fetchToys } from '../../shared/toy-model.js';
import { createStore } from '../../store.js';
import { t } from '../../i18n.js';
import {
  TASKS,
  EMBED_DIM,
  STOP_AT,
  newHistory,
  addTick,
  tryModels,
  toyTinyTransformer,
  uniformEntropy,
} from './compute.js';
import { fillGuide } from '../../widgets/guide.js';
import { buildTrainUi } from './controls.js';
import { drawMaps, drawExample, drawCurves, tryView } from './draw.js';

/** @typedef {import('./controls.js').TrainState} TrainState */
/** @typedef {import('./compute.js').Tick} Tick */
/** @typedef {ReturnType<typeof buildTrainUi>} TrainUi */

const MAX_TRY_TOKENS = 16;
/** The data- attributes of a run, cleared by a reset. */
const RUN_DATA = [
  'loss',
  'lossInitial',
  'lossSmoothed',
  'accuracy',
  'accuracyInitial',
  'reachedStep',
  'reachedMs',
  'reachedTrainMs',
  'stepsPerSecond',
  'trainStepsPerSecond',
  'updatesPerSecond',
  'runMs',
  'entropy',
  'entropyInitial',
  'mass',
];

/**
 * The buttons, the replay and the state message for a state.
 * @param {TrainUi} ui
 * @param {TrainState['state']} s
 */
function showState(ui, s) {
  ui.startBtn.disabled = s === 'running' || s === 'loading' || s === 'error';
  ui.pauseBtn.disabled = s !== 'running';
  ui.resetBtn.disabled = s === 'loading';
  ui.startBtn.textContent = t(s === 'paused' ? 'train.resume' : s === 'done' ? 'train.keepTraining' : 'train.train');
  ui.replayIn.disabled = ui.replayBtn.disabled = !(s === 'paused' || s === 'done');
  if (['ready', 'running', 'paused', 'done', 'error'].includes(s))
    ui.stateMsg.textContent = t(`train.state.${s}`, { p: STOP_AT * 100 });
  if (s === 'running') {
    ui.tryBtn.disabled = true;
    ui.tryNote.textContent = t('train.tryWhileRunning');
  }
}

/**
 * The texts of a fresh run of the state's task: its description, the maps' note, the try-it box and button.
 * @param {HTMLElement} root
 * @param {TrainUi} ui
 * @param {TrainState} st
 * @param {string} tryText
 */
function showTask(root, ui, st, tryText) {
  const task = TASKS[st.task];
  const p = t(`task.${task.id}.pattern`);
  ui.stateMsg.textContent = t('train.creating');
  ui.reachedNote.textContent = '';
  ui.taskDesc.replaceChildren(
    h('strong', { text: t('train.taskTitle', { label: t(`task.${task.id}.label`) }) }),
    t(`task.${task.id}.description`),
    ' ',
    t('train.learned', { p }),
  );
  ui.mapsNote.textContent = t(task.causal ? 'train.mapsNoteCausal' : 'train.mapsNote', { ex: task.fixedText, p });
  root.querySelector('#train-mass-note').textContent = t('train.massNote', { p });
  ui.tryIn.value = tryText;
  ui.tryMsg.replaceChildren();
  ui.tryOut.replaceChildren();
  ui.tryOut.removeAttribute('data-ready');
  ui.tryBtn.disabled = true;
  ui.tryBtn.textContent = t(task.toy ? 'train.runBoth' : 'train.runOne');
  ui.tryNote.textContent = t(task.toy ? 'train.tryFirstToy' : 'train.tryFirst', { toy: task.toy });
  Object.assign(root.dataset, {
    task: st.task,
    heads: st.heads,
    seed: st.seed,
    step: 0,
    updates: 0,
    noScale: st.noScale ? '1' : '0',
    initScale: st.initScale,
  });
  for (const k of RUN_DATA) delete root.dataset[k];
}

/**
 * A tick's numbers: the stats row, the reached note and the data- attributes.
 * @param {HTMLElement} root
 * @param {TrainUi} ui
 * @param {TrainState} st
 * @param {Tick} m
 * @param {{ hist: import('./compute.js').History, ups: number, variant: string }} run
 */
function showTick(root, ui, st, m, { hist, ups, variant }) {
  const loss = hist.losses.at(-1);
  const smooth = hist.smooth.at(-1);
  ui.stepV.textContent = String(m.step);
  const speed = st.pace
    ? t('train.paced', { n: fmt(m.stepsPerSecond, 0) })
    : `${fmt(m.stepsPerSecond, 0)} (${fmt(m.trainStepsPerSecond, 0)})`;
  ui.speedV.textContent = !m.step ? '—' : speed;
  ui.lossV.textContent = loss === undefined ? '—' : `${fmt(loss, 3)} (${fmt(smooth, 3)})`;
  ui.accV.textContent = `${(m.accuracy * 100).toFixed(1)} %`;
  ui.timeV.textContent = `${(m.runMs / 1000).toFixed(2)} s`;
  ui.updV.textContent = st.state === 'running' && ups ? fmt(ups, 0) : '—';
  if (m.reached) {
    const how = t('train.reachedHow', {
      sec: (m.reached.ms / 1000).toFixed(2),
      v: variant,
      b: st.batch,
      lr: st.lr,
      h: st.heads,
      pace: st.pace ? t('train.pacedAt', { n: st.pace }) : t('train.pace0'),
      inside: (m.reached.trainMs / 1000).toFixed(2),
    });
    ui.reachedNote.replaceChildren(
      h('strong', { text: t('train.reached', { p: STOP_AT * 100, s: m.reached.step }) }),
      ' ',
      h('span', { html: how }),
    );
  }
  const ds = root.dataset;
  const last = hist.stats.at(-1)[1];
  Object.assign(ds, {
    step: m.step,
    accuracy: m.accuracy,
    runMs: m.runMs,
    updates: hist.rendered,
    entropy: JSON.stringify(last.entropy),
    mass: JSON.stringify(last.mass),
  });
  if (m.step === 0) {
    Object.assign(ds, { accuracyInitial: m.accuracy, entropyInitial: JSON.stringify(last.entropy) });
    const start = last.entropy.map((/** @type {number} */ e) => fmt(e, 2)).join(t('guide.and'));
    fillGuide('train', { start, uniform: fmt(uniformEntropy(TASKS[st.task]), 2) });
  }
  if (loss !== undefined) Object.assign(ds, { loss, lossSmoothed: smooth, lossInitial: hist.losses[0] });
  if (m.step && m.stepsPerSecond)
    Object.assign(ds, { stepsPerSecond: m.stepsPerSecond, trainStepsPerSecond: m.trainStepsPerSecond });
  if (ups) ds.updatesPerSecond = String(ups);
  if (m.reached)
    Object.assign(ds, { reachedStep: m.reached.step, reachedMs: m.reached.ms, reachedTrainMs: m.reached.trainMs });
}

/**
 * The replay: the maps at any kept step (the slider), or played through (the button).
 * @param {TrainUi} ui
 * @param {() => import('./compute.js').History} history
 * @param {() => TrainState} state
 */
function replay(ui, history, state) {
  /** @type {ReturnType<typeof setInterval> | null} */
  let timer = null;
  /** @param {number} k */
  const show = (k) => {
    const hist = history();
    const snap = hist.snaps[k];
    if (!snap) return;
    const task = TASKS[state().task];
    drawMaps(
      ui.mapsGrid,
      task,
      { heads: state().heads, T: task.T, weights: snap.weights, step: snap.step },
      Math.max(200, ui.mapsGrid.clientWidth || 600),
    );
    drawExample(ui.exampleBox, task, snap.predicted);
    const lastK = k === hist.snaps.length - 1;
    ui.replayStep.textContent = lastK
      ? t('train.now', { s: snap.step })
      : t('train.stepOf', { s: snap.step, n: hist.snaps.at(-1).step });
    ui.mapsGrid.dataset.replay = lastK ? '' : String(snap.step);
  };
  const stop = () => {
    if (timer) clearInterval(timer);
    timer = null;
    ui.replayBtn.textContent = t('train.replay');
  };
  ui.replayIn.addEventListener('input', () => {
    stop();
    show(Number(ui.replayIn.value));
  });
  ui.replayBtn.addEventListener('click', () => {
    if (timer) return stop();
    const n = history().snaps.length;
    const stride = Math.max(1, Math.ceil(n / 120)); // a replay takes at most ≈ 120 frames (6 s)
    let k = 0;
    ui.replayBtn.textContent = t('train.stopReplay');
    timer = setInterval(() => {
      k = Math.min(n - 1, k + stride);
      ui.replayIn.value = String(k);
      show(k);
      if (k >= n - 1) stop();
    }, 50);
    ui.replayIn.value = '0';
    show(0);
  });
  return stop;
}

/**
 * The part's state from the URL: ?trainseed=N is the first seed.
 * @param {URLSearchParams} params
 * @returns {TrainState}
 */
function initialState(params) {
  const seed0 = Number.parseInt(params.get('trainseed') ?? '', 10);
  return {
    task: 'reverse',
    heads: 2,
    lr: 0.01,
    batch: 32,
    pace: 30,
    stopAt: true,
    noScale: false,
    initScale: 1,
    seed: Number.isSafeInteger(seed0) && seed0 >= 0 ? seed0 : 1,
    state: 'loading',
  };
}

/** The part: the worker, the run's history, the model trained here and the shipped toy models. */
class TrainPart {
  /**
   * @param {HTMLElement} root
   * @param {import('../../attnlab.js').Attnlab} attn
   * @param {URLSearchParams} params
   * @param {{ reverse: import('../../shared/toy-model.js').ToyModel, recall: import('../../shared/toy-model.js').ToyModel }} toys
   */
  constructor(root, attn, params, toys) {
    this.root = root;
    this.attn = attn;
    this.toys = toys;
    this.toyTiny = toyTinyTransformer(attn, toys.reverse); // the reversal toy is exactly a TinyTransformer
    this.toyRecall = createToyLayers(attn, toys.recall); // the recall toy has attention biases: as shared/toy-model.js runs it
    this.store = createStore(initialState(params));
    this.tryText = Object.fromEntries(Object.values(TASKS).map((k) => [k.id, k.tryText]));
    this.hist = newHistory(); // the curves of the current run
    /** @type {{ model: import('../../attnlab.js').TinyTransformer, key: string } | null} loaded from the worker's state dict */
    this.trained = null;
    this.gen = 0; // reset counter: messages of an older model are dropped
    this.ui = buildTrainUi(root, this.store, { reset: () => this.reset(), send: (m) => this.send(m) });
    this.store.subscribe((st) => {
      root.dataset.state = st.state;
      showState(this.ui, st.state);
    });
    this.stopReplay = replay(
      this.ui,
      () => this.hist,
      () => this.store.get(),
    );
    this.worker = this.startWorker();
    this.wire();
    this.reset();
  }

  /** @param {Record<string, any>} m */
  send(m) {
    this.worker.postMessage(m);
  }

  /** @param {TrainState['state']} state */
  setState(state) {
    this.store.set({ state });
  }

  startWorker() {
    const { ui, root } = this;
    const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
    worker.onmessage = (ev) => {
      const m = ev.data;
      if (m.type === 'ready') {
        ui.buildV.textContent = m.variant === 'scalar' ? t('train.scalar') : 'SIMD';
        Object.assign(root.dataset, { variant: m.variant, warmUpMs: m.warmUpMs });
      } else if (m.type === 'tick') {
        if (m.gen === this.gen) this.onTick(m);
      } else if (m.type === 'stopped') {
        if (m.gen === this.gen) this.onStopped(m);
      } else if (m.type === 'error') {
        this.fail(t('train.workerFailed', { err: m.message }));
      }
    };
    worker.onerror = (ev) => {
      ev.preventDefault();
      this.fail(t('train.workerCrashed', { err: ev.message || errText(ev) }));
    };
    worker.postMessage({ type: 'init', variant: this.attn.variant });
    return worker;
  }

  /** The buttons, the seed, stop at 95 %, "try it" and the window's size. */
  wire() {
    const { ui, store } = this;
    ui.startBtn.addEventListener('click', () => {
      if (store.get().state === 'running' || store.get().state === 'loading') return;
      this.stopReplay();
      this.setState('running');
      this.send({ type: 'run' });
    });
    ui.pauseBtn.addEventListener('click', () => {
      if (store.get().state !== 'running') return;
      ui.pauseBtn.disabled = true;
      ui.stateMsg.textContent = t('train.pausing');
      this.send({ type: 'pause' });
    });
    /** @param {number} seed */
    const reseed = (seed) => {
      store.set({ seed });
      ui.seedIn.value = String(seed);
      this.reset();
    };
    ui.resetBtn.addEventListener('click', () => reseed(1 + Math.floor(Math.random() * 99999)));
    ui.seedIn.addEventListener('change', () => {
      const v = Math.round(Number(ui.seedIn.value));
      reseed(Number.isSafeInteger(v) && v >= 0 ? Math.min(v, 999999) : store.get().seed);
    });
    ui.stopIn.addEventListener('change', () => {
      store.set({ stopAt: ui.stopIn.checked });
      this.send({ type: 'set', stopAt: ui.stopIn.checked ? STOP_AT : 0 });
    });
    ui.tryIn.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !ui.tryBtn.disabled) this.runTry();
    });
    ui.tryBtn.addEventListener('click', () => this.runTry());
    window.addEventListener('resize', () => this.curves());
  }

  /** A new model for the current settings: the worker makes it and ticks at step 0. */
  reset() {
    const st = this.store.get();
    this.hist = newHistory();
    this.stopReplay();
    this.gen += 1;
    this.setState('loading');
    showTask(this.root, this.ui, st, this.tryText[st.task]);
    const { task, heads, seed, lr, batch, pace, noScale, initScale } = st;
    const stopAt = st.stopAt ? STOP_AT : 0;
    this.send({ type: 'reset', gen: this.gen, task, heads, seed, lr, batch, pace, stopAt, noScale, initScale });
  }

  /** @param {string} text */
  fail(text) {
    this.setState('error');
    this.ui.errBox.replaceChildren(h('div.error-box', { role: 'alert', text }));
  }

  /** @param {Tick} m */
  onTick(m) {
    const { ui, root, store } = this;
    const task = TASKS[store.get().task];
    const ups = addTick(this.hist, m, task, performance.now());
    ui.replayIn.max = String(this.hist.snaps.length - 1);
    ui.replayIn.value = ui.replayIn.max;
    ui.replayStep.textContent = t('train.now', { s: m.step });
    if (store.get().state === 'loading') this.setState('ready');
    showTick(root, ui, store.get(), m, { hist: this.hist, ups, variant: this.attn.variant });
    drawMaps(ui.mapsGrid, task, m, Math.max(200, ui.mapsGrid.clientWidth || root.clientWidth || 600));
    drawExample(ui.exampleBox, task, m.predicted);
    this.curves();
  }

  curves() {
    const st = this.store.get();
    const width = Math.max(240, Math.min(560, (this.ui.chartBox.clientWidth || 400) - 14));
    drawCurves(this.ui.charts, this.hist, TASKS[st.task], st.heads, width);
  }

  /** @param {{ reason: string, step: number, stateDict: Record<string, import('../../attnlab.js').Tensor> }} m */
  onStopped(m) {
    const st = this.store.get();
    const task = TASKS[st.task];
    this.setState(m.reason === 'done' ? 'done' : 'paused');
    const key = `${task.id}/${st.heads}`;
    try {
      if (!this.trained || this.trained.key !== key) {
        if (this.trained) this.trained.model.dispose();
        const options = { vocabSize: task.V, embedDim: EMBED_DIM, numHeads: st.heads, causal: task.causal };
        this.trained = { key, model: this.attn.createTinyTransformer(options) };
      }
      this.trained.model.loadStateDict(m.stateDict);
    } catch (e) {
      this.fail(t('train.loadFailed', { err: errText(e) }));
      return;
    }
    this.root.dataset.trainedStep = String(m.step);
    this.ui.tryBtn.disabled = false;
    const ready = t(task.toy ? 'train.tryReadyToy' : 'train.tryReady', { s: m.step, h: st.heads, toy: task.toy });
    this.ui.tryNote.textContent = ready + ' ' + t(`train.vocab.${task.id === 'recall' ? 'recall' : 'letters'}`);
    this.runTry();
  }

  runTry() {
    const { ui, root } = this;
    const st = this.store.get();
    const task = TASKS[st.task];
    this.tryText[st.task] = ui.tryIn.value;
    ui.tryMsg.replaceChildren();
    ui.tryOut.replaceChildren();
    hideTip();
    if (!this.trained) return;
    const index = new Map(task.inputVocab.map((w) => [w, task.index.get(w)]));
    const p = parseTokens({ task: task.parseKind, index }, ui.tryIn.value);
    /** @param {string} text */
    const err = (text) => ui.tryMsg.replaceChildren(h('div.error-box', { role: 'alert', text }));
    if (p.error) return err(p.error);
    if (p.ids.length > MAX_TRY_TOKENS) return err(t('train.tooMany', { n: p.ids.length, max: MAX_TRY_TOKENS }));
    try {
      const { toyTiny, toys, toyRecall } = this;
      const r = tryModels(task, p.ids, { trained: this.trained.model, heads: st.heads, toyTiny, toys, toyRecall });
      ui.tryOut.append(...tryView(task, p.ids, r, Math.max(200, ui.tryOut.clientWidth || root.clientWidth || 600)));
    } catch (e) {
      return err(t('mha.threw', { err: errText(e) }));
    }
    ui.tryOut.dataset.ready = '1';
  }
}

/**
 * @param {HTMLElement} root
 * @param {import('../../attnlab.js').Attnlab} attn
 * @param {{ params: URLSearchParams }} page
 */
export async function mount(root, attn, { params }) {
  new TrainPart(root, attn, params, await fetchToys());
}
