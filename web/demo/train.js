// Part "train it yourself" (§10): a one-layer transformer (attn.createTinyTransformer: the toy models'
// architecture) trains in a module Web Worker (train-worker.js) with trainStep (Adam) on fresh random batches.
// This file holds the state and the worker's messages; train-controls.js builds the controls, train-view.js draws
// the maps, the curves (loss, accuracy, each head's entropy against ln T, mass on the target keys) and the "try it"
// comparison.
// Once training stops, the worker's state dict runs on the page next to the toy model shipped in models/.

import { h, fmt, errText, hideTip } from './util.js';
import { loadToy, createToyMha, parseTokens } from './toy.js';
import { TASKS, EMBED_DIM } from './train-tasks.js';
import { buildTrainUi } from './train-controls.js';
import { STOP_AT, drawMaps, drawExample, drawCurves, headStats, tryModels } from './train-view.js';
import { t } from './i18n.js';

const MAX_SNAPSHOTS = 3000; // maps kept for the replay (thinned by half beyond)
const MAX_TRY_TOKENS = 16;

export async function mount(root, attn, { params }) {
  const toys = {};
  for (const name of ['reverse', 'recall']) {
    const res = await fetch(new URL(`models/toy-${name}.json`, import.meta.url));
    if (!res.ok) throw new Error(t('mha.loadFailed', { f: `models/toy-${name}.json`, s: res.status }));
    toys[name] = loadToy(await res.json());
  }
  // The reversal toy has exactly the TinyTransformer's parameters (no biases): load it into one.
  const rev = toys.reverse;
  const toyTiny = attn.createTinyTransformer({ vocabSize: rev.V, embedDim: rev.E, numHeads: rev.H, causal: false });
  toyTiny.loadStateDict({
    'embedding.weight': { data: rev.embedding, shape: [rev.V, rev.E] },
    'attn.in_proj_weight': rev.stateDict.in_proj_weight,
    'attn.out_proj.weight': rev.stateDict['out_proj.weight'],
    'readout.weight': { data: rev.readoutW, shape: [rev.V, rev.E] },
    'readout.bias': { data: rev.readoutB, shape: [rev.V] },
  });
  const toyRecallMha = createToyMha(attn, toys.recall); // the recall toy has attention biases: it runs as in toy.js

  const seed0 = Number.parseInt(params.get('trainseed') ?? '', 10);
  const st = {
    task: 'reverse',
    heads: 2,
    lr: 0.01,
    batch: 32,
    pace: 30,
    stopAt: true,
    noScale: false,
    initScale: 1,
    seed: Number.isSafeInteger(seed0) && seed0 >= 0 ? seed0 : 1,
    state: 'loading', // loading | ready | running | paused | done | error
  };
  const tryText = Object.fromEntries(Object.values(TASKS).map((k) => [k.id, k.tryText]));
  let hist = null; // the curves of the current run
  let trained = null; // { model, key } on the main thread, loaded from the worker's state dict
  let gen = 0; // reset counter: messages of an older model are dropped

  const ui = buildTrainUi(root, st, { reset: () => reset(), send: (m) => send(m) });

  // ---- the worker -------------------------------------------------------------------------------------------
  const worker = new Worker(new URL('./train-worker.js', import.meta.url), { type: 'module' });
  const send = (m) => worker.postMessage(m);
  worker.onmessage = (ev) => {
    const m = ev.data;
    if (m.type === 'ready') {
      ui.buildV.textContent = m.variant === 'scalar' ? t('train.scalar') : 'SIMD';
      Object.assign(root.dataset, { variant: m.variant, warmUpMs: m.warmUpMs });
    } else if (m.type === 'tick') {
      if (m.gen === gen) onTick(m);
    } else if (m.type === 'stopped') {
      if (m.gen === gen) onStopped(m);
    } else if (m.type === 'error') {
      fail(t('train.workerFailed', { err: m.message }));
    }
  };
  worker.onerror = (ev) => {
    ev.preventDefault();
    fail(t('train.workerCrashed', { err: ev.message || errText(ev) }));
  };
  send({ type: 'init', variant: attn.variant });

  ui.startBtn.addEventListener('click', () => {
    if (st.state === 'running' || st.state === 'loading') return;
    stopReplay();
    setState('running');
    send({ type: 'run' });
  });
  ui.pauseBtn.addEventListener('click', () => {
    if (st.state !== 'running') return;
    ui.pauseBtn.disabled = true;
    ui.stateMsg.textContent = t('train.pausing');
    send({ type: 'pause' });
  });
  ui.resetBtn.addEventListener('click', () => {
    st.seed = 1 + Math.floor(Math.random() * 99999);
    ui.seedIn.value = st.seed;
    reset();
  });
  ui.seedIn.addEventListener('change', () => {
    const v = Math.round(Number(ui.seedIn.value));
    st.seed = Number.isSafeInteger(v) && v >= 0 ? Math.min(v, 999999) : st.seed;
    ui.seedIn.value = st.seed;
    reset();
  });
  ui.stopIn.addEventListener('change', () => {
    st.stopAt = ui.stopIn.checked;
    send({ type: 'set', stopAt: st.stopAt ? STOP_AT : 0 });
  });
  ui.tryIn.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !ui.tryBtn.disabled) runTry();
  });
  ui.tryBtn.addEventListener('click', runTry);
  window.addEventListener('resize', () => {
    if (hist) curves();
  });

  function reset() {
    const task = TASKS[st.task];
    hist = { losses: [], smooth: [], ema: 0, acc: [], stats: [], updates: [], rendered: 0, snaps: [] };
    stopReplay();
    gen += 1;
    setState('loading');
    ui.stateMsg.textContent = t('train.creating');
    ui.reachedNote.textContent = '';
    ui.taskDesc.replaceChildren(
      h('strong', { text: t('train.taskTitle', { label: t(`task.${task.id}.label`) }) }),
      t(`task.${task.id}.description`),
      ' ',
      t('train.learned', { p: t(`task.${task.id}.pattern`) }),
    );
    ui.mapsNote.textContent = t(task.causal ? 'train.mapsNoteCausal' : 'train.mapsNote', {
      ex: task.fixedText,
      p: t(`task.${task.id}.pattern`),
    });
    root.querySelector('#train-mass-note').textContent = t('train.massNote', { p: t(`task.${task.id}.pattern`) });
    ui.tryIn.value = tryText[st.task];
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
    for (const k of [
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
    ])
      delete root.dataset[k];
    send({
      type: 'reset',
      gen,
      task: st.task,
      heads: st.heads,
      seed: st.seed,
      lr: st.lr,
      batch: st.batch,
      pace: st.pace,
      stopAt: st.stopAt ? STOP_AT : 0,
      noScale: st.noScale,
      initScale: st.initScale,
    });
  }

  function setState(s) {
    st.state = s;
    root.dataset.state = s;
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

  function fail(text) {
    setState('error');
    ui.errBox.replaceChildren(h('div.error-box', { role: 'alert', text }));
  }

  // ---- ticks -------------------------------------------------------------------------------------------------
  const fixedIds = () => TASKS[st.task].fixedText.split(' ').map((w) => TASKS[st.task].index.get(w));
  function onTick(m) {
    if (!hist) return;
    const now = performance.now();
    for (const loss of m.losses) {
      hist.losses.push(loss);
      hist.ema = 0.9 * hist.ema + 0.1 * loss;
      hist.smooth.push(hist.ema / (1 - 0.9 ** hist.losses.length)); // bias-corrected like Adam's moments
    }
    hist.acc.push(...m.evals);
    for (const s of m.snapshots) hist.stats.push([s.step, headStats(TASKS[st.task], fixedIds(), s.weights, m.heads)]);
    hist.snaps.push(...m.snapshots);
    if (hist.snaps.length > MAX_SNAPSHOTS)
      hist.snaps = hist.snaps.filter((_, i) => i % 2 === 0 || i === hist.snaps.length - 1);
    ui.replayIn.max = String(hist.snaps.length - 1);
    ui.replayIn.value = ui.replayIn.max;
    ui.replayStep.textContent = t('train.now', { s: m.step });
    if (m.step > 0) {
      hist.rendered += 1;
      hist.updates.push(now);
      while (hist.updates.length > 2 && now - hist.updates[0] > 2000) hist.updates.shift();
    }
    if (st.state === 'loading') setState('ready');
    const loss = hist.losses.at(-1);
    const smooth = hist.smooth.at(-1);
    ui.stepV.textContent = String(m.step);
    ui.speedV.textContent = !m.step
      ? '—'
      : st.pace
        ? t('train.paced', { n: fmt(m.stepsPerSecond, 0) })
        : `${fmt(m.stepsPerSecond, 0)} (${fmt(m.trainStepsPerSecond, 0)})`;
    ui.lossV.textContent = loss === undefined ? '—' : `${fmt(loss, 3)} (${fmt(smooth, 3)})`;
    ui.accV.textContent = `${(m.accuracy * 100).toFixed(1)} %`;
    ui.timeV.textContent = `${(m.runMs / 1000).toFixed(2)} s`;
    const ups =
      hist.updates.length > 1 ? ((hist.updates.length - 1) * 1000) / (hist.updates.at(-1) - hist.updates[0]) : 0;
    ui.updV.textContent = st.state === 'running' && ups ? fmt(ups, 0) : '—';
    if (m.reached) {
      ui.reachedNote.replaceChildren(
        h('strong', { text: t('train.reached', { p: STOP_AT * 100, s: m.reached.step }) }),
        ' ',
        t('train.reachedHow', {
          sec: (m.reached.ms / 1000).toFixed(2),
          v: attn.variant,
          b: st.batch,
          lr: st.lr,
          h: st.heads,
          pace: st.pace ? t('train.pacedAt', { n: st.pace }) : t('train.pace0'),
          inside: (m.reached.trainMs / 1000).toFixed(2),
        }),
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
    if (m.step === 0) Object.assign(ds, { accuracyInitial: m.accuracy, entropyInitial: JSON.stringify(last.entropy) });
    if (loss !== undefined) Object.assign(ds, { loss, lossSmoothed: smooth, lossInitial: hist.losses[0] });
    if (m.step && m.stepsPerSecond)
      Object.assign(ds, { stepsPerSecond: m.stepsPerSecond, trainStepsPerSecond: m.trainStepsPerSecond });
    if (ups) ds.updatesPerSecond = ups;
    if (m.reached)
      Object.assign(ds, { reachedStep: m.reached.step, reachedMs: m.reached.ms, reachedTrainMs: m.reached.trainMs });
    drawMaps(ui.mapsGrid, TASKS[st.task], m, Math.max(200, ui.mapsGrid.clientWidth || root.clientWidth || 600));
    drawExample(ui.exampleBox, TASKS[st.task], m.predicted);
    curves();
  }
  function curves() {
    drawCurves(
      ui.charts,
      hist,
      TASKS[st.task],
      st.heads,
      Math.max(240, Math.min(560, (ui.chartBox.clientWidth || 400) - 14)),
    );
  }

  // ---- replay: the maps at any kept step ----------------------------------------------------------------------
  let replayTimer = null;
  function showSnapshot(k) {
    const snap = hist.snaps[k];
    if (!snap) return;
    const task = TASKS[st.task];
    drawMaps(
      ui.mapsGrid,
      task,
      { heads: st.heads, T: task.T, weights: snap.weights, step: snap.step },
      Math.max(200, ui.mapsGrid.clientWidth || 600),
    );
    drawExample(ui.exampleBox, task, snap.predicted);
    const lastK = k === hist.snaps.length - 1;
    ui.replayStep.textContent = lastK
      ? t('train.now', { s: snap.step })
      : t('train.stepOf', { s: snap.step, n: hist.snaps.at(-1).step });
    ui.mapsGrid.dataset.replay = lastK ? '' : snap.step;
  }
  function stopReplay() {
    if (replayTimer) clearInterval(replayTimer);
    replayTimer = null;
    ui.replayBtn.textContent = t('train.replay');
  }
  ui.replayIn.addEventListener('input', () => {
    stopReplay();
    showSnapshot(Number(ui.replayIn.value));
  });
  ui.replayBtn.addEventListener('click', () => {
    if (replayTimer) return stopReplay();
    const n = hist.snaps.length;
    const stride = Math.max(1, Math.ceil(n / 120)); // a replay takes at most ≈ 120 frames (6 s)
    let k = 0;
    ui.replayBtn.textContent = t('train.stopReplay');
    replayTimer = setInterval(() => {
      k = Math.min(n - 1, k + stride);
      ui.replayIn.value = k;
      showSnapshot(k);
      if (k >= n - 1) stopReplay();
    }, 50);
    ui.replayIn.value = 0;
    showSnapshot(0);
  });

  function onStopped(m) {
    const task = TASKS[st.task];
    setState(m.reason === 'done' ? 'done' : 'paused');
    const key = `${task.id}/${st.heads}`;
    try {
      if (!trained || trained.key !== key) {
        if (trained) trained.model.dispose();
        trained = {
          key,
          model: attn.createTinyTransformer({
            vocabSize: task.V,
            embedDim: EMBED_DIM,
            numHeads: st.heads,
            causal: task.causal,
          }),
        };
      }
      trained.model.loadStateDict(m.stateDict);
    } catch (e) {
      fail(t('train.loadFailed', { err: errText(e) }));
      return;
    }
    root.dataset.trainedStep = m.step;
    ui.tryBtn.disabled = false;
    ui.tryNote.textContent =
      t(task.toy ? 'train.tryReadyToy' : 'train.tryReady', { s: m.step, h: st.heads, toy: task.toy }) +
      ' ' +
      t(`train.vocab.${task.id === 'recall' ? 'recall' : 'letters'}`);
    runTry();
  }

  // ---- try it -----------------------------------------------------------------------------------------------
  function runTry() {
    const task = TASKS[st.task];
    tryText[st.task] = ui.tryIn.value;
    ui.tryMsg.replaceChildren();
    ui.tryOut.replaceChildren();
    hideTip();
    if (!trained) return;
    const p = parseTokens(
      { task: task.parseKind, index: new Map(task.inputVocab.map((w) => [w, task.index.get(w)])) },
      ui.tryIn.value,
    );
    const err = (text) => ui.tryMsg.replaceChildren(h('div.error-box', { role: 'alert', text }));
    if (p.error) return err(p.error);
    if (p.ids.length > MAX_TRY_TOKENS) return err(t('train.tooMany', { n: p.ids.length, max: MAX_TRY_TOKENS }));
    try {
      ui.tryOut.append(
        ...tryModels({
          task,
          ids: p.ids,
          trained: trained.model,
          heads: st.heads,
          toyTiny,
          toys,
          toyRecallMha,
          avail: Math.max(200, ui.tryOut.clientWidth || root.clientWidth || 600),
        }),
      );
    } catch (e) {
      return err(t('mha.threw', { err: errText(e) }));
    }
    ui.tryOut.dataset.ready = '1';
  }

  reset();
}
