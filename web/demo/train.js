// Part 5: train it yourself. A one-layer transformer (attn.createTinyTransformer: the toy models'
// architecture) trains in a module Web Worker (train-worker.js) with trainStep (Adam) on fresh random batches;
// this file draws the controls, the loss and accuracy curves, every head's attention map for a fixed example
// (updated with every tick of the worker, ≈ 16 a second), and, once training stops, runs the trained model on
// the user's own tokens next to the toy model shipped in models/ (the reversal one loaded into a second
// TinyTransformer with loadStateDict).

import { h, seqColor, legend, fmt, sizeCanvas, shortLabel, HEAD_COLORS, showTip, hideTip, errText } from './util.js';
import { loadToy, createToyMha, runToy, parseTokens } from './toy.js';
import { TASKS, HEAD_CHOICES, EMBED_DIM, argmax } from './train-tasks.js';

const LRS = [0.001, 0.003, 0.01, 0.03, 0.1];
const BATCHES = [8, 16, 32, 64, 128];
const PACES = [[0, 'full speed'], [100, '100 steps/s'], [30, '30 steps/s (to watch)'], [5, '5 steps/s (slow motion)']];
const MAX_SNAPSHOTS = 3000; // maps kept for the replay (thinned by half beyond)
const STOP_AT = 0.95;
const MAX_TRY_TOKENS = 16;
const COLORS = { raw: '#a9c1e6', smooth: '#1f5fbf', acc: '#1e7b34', guide: '#888' };

export async function mount(root, attn, { params }) {
  // ---- the shipped toy models, for the comparison ---------------------------------------------------------
  const toys = {};
  for (const name of ['reverse', 'recall']) {
    const res = await fetch(new URL(`models/toy-${name}.json`, import.meta.url));
    if (!res.ok) throw new Error(`could not load models/toy-${name}.json (HTTP ${res.status})`);
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
  // The recall toy has biases in its attention layer: it runs as in part 2 (toy.js).
  const toyRecallMha = createToyMha(attn, toys.recall);

  const seed0 = Number.parseInt(params.get('trainseed') ?? '', 10);
  const st = {
    task: 'reverse', heads: 2, lr: 0.01, batch: 32, pace: 30, stopAt: true,
    seed: Number.isSafeInteger(seed0) && seed0 >= 0 ? seed0 : 1,
    state: 'loading', // loading | ready | running | paused | done | error
  };
  const tryText = Object.fromEntries(Object.values(TASKS).map((t) => [t.id, t.tryText]));
  let hist = null; // the curves of the current run
  let trained = null; // { model, key } on the main thread, loaded from the worker's state dict
  let gen = 0; // reset counter: messages of an older model are dropped

  // ---- controls --------------------------------------------------------------------------------------------
  const taskRadios = Object.values(TASKS).map((t) => h('label', {},
    h('input', { type: 'radio', name: 'train-task', value: t.id, id: `train-task-${t.id}`, checked: t.id === st.task,
      onchange: () => { st.task = t.id; reset(); } }), t.label));
  const taskDesc = h('p.note.train-desc', { id: 'train-task-desc' });
  const select = (id, label, options, value, onchange) => {
    const sel = h('select', { id, 'aria-label': label }, options.map(([v, text]) => h('option', { value: String(v), text, selected: v === value })));
    sel.addEventListener('change', () => onchange(sel.value));
    return sel;
  };
  const headsSel = select('train-heads', 'number of heads', HEAD_CHOICES.map((n) => [n, String(n)]), st.heads, (v) => { st.heads = Number(v); reset(); });
  const lrSel = select('train-lr', 'learning rate', LRS.map((v) => [v, String(v)]), st.lr, (v) => { st.lr = Number(v); send({ type: 'set', lr: st.lr }); });
  const batchSel = select('train-batch', 'batch size', BATCHES.map((v) => [v, String(v)]), st.batch, (v) => { st.batch = Number(v); send({ type: 'set', batch: st.batch }); });
  const paceSel = select('train-pace', 'training speed', PACES, st.pace, (v) => { st.pace = Number(v); send({ type: 'set', pace: st.pace }); });
  const seedIn = h('input', { type: 'number', id: 'train-seed', min: '0', max: '999999', step: '1', value: String(st.seed), 'aria-label': 'seed' });
  const stopIn = h('input', { type: 'checkbox', id: 'train-stop', checked: st.stopAt });
  const startBtn = h('button.primary', { type: 'button', id: 'train-start', text: 'Train', disabled: true });
  const pauseBtn = h('button', { type: 'button', id: 'train-pause', text: 'Pause', disabled: true });
  const resetBtn = h('button', { type: 'button', id: 'train-reset', text: 'Reset with a new seed', disabled: true });
  const stateMsg = h('span.train-state', { id: 'train-state-msg', 'aria-live': 'polite', text: 'Loading attnlab in the worker…' });
  const errBox = h('div', { id: 'train-error' });

  const stat = (id, label, title) => {
    const v = h('span.v', { id, text: '—' });
    return [h('div.stat', { title }, h('span.k', { text: label }), v), v];
  };
  const [buildStat, buildV] = stat('train-build', 'build', "attnlab's WebAssembly build, in the worker too; switch it with the build picker at the top");
  const [stepStat, stepV] = stat('train-step', 'step', 'Adam steps taken (one fresh batch each)');
  const [speedStat, speedV] = stat('train-speed', 'steps / s', 'training steps per second over the last second, evaluation included; in brackets: counting only the time inside trainStep');
  const [lossStat, lossV] = stat('train-loss', 'loss', 'mean cross-entropy of the last batch, before its update (smoothed in brackets)');
  const [accStat, accV] = stat('train-acc', 'accuracy', 'share of scored answers right on 256 fresh random examples (argmax of the logits)');
  const [timeStat, timeV] = stat('train-time', 'time', 'wall time spent training (pauses excluded)');
  const [updStat, updV] = stat('train-updates', 'map updates / s', 'how often the heat maps below are redrawn while training runs');
  const reachedNote = h('p.note', { id: 'train-reached' });

  const lossCanvas = h('canvas', { id: 'train-loss-chart', role: 'img', 'aria-label': 'loss against step (log scale)' });
  const accCanvas = h('canvas', { id: 'train-acc-chart', role: 'img', 'aria-label': 'accuracy on fresh examples against step' });
  const chartBox = h('div.train-charts', {},
    h('div.chart', {}, h('div.small', { text: 'Loss (log scale)' }), lossCanvas,
      h('div.chart-key', {}, h('span', {}, h('i', { style: `background:${COLORS.raw}` }), 'per batch'),
        h('span', {}, h('i', { style: `background:${COLORS.smooth}; height: 3px` }), 'smoothed'))),
    h('div.chart', {}, h('div.small', { text: 'Accuracy on fresh examples' }), accCanvas,
      h('div.chart-key', {}, h('span', {}, h('i', { style: `background:${COLORS.acc}` }), 'answers right'),
        h('span', {}, h('i.dash', { style: `color:${COLORS.guide}` }), `${STOP_AT * 100} % target`))));
  const mapsGrid = h('div.heat-grid', { id: 'train-maps' });
  const mapsTitle = h('h3', { text: 'Attention of every head on a fixed example' });
  const mapsNote = h('p.note', { id: 'train-maps-note' });
  const exampleBox = h('div.answers-wrap', { id: 'train-example' });
  const mapsLegend = h('div.controls', {}, legend('seq', 0, 1, 'attention weight'),
    h('span.note', { text: 'Rows: queries, columns: keys; each row sums to 1. Hover a cell for its number.' }));
  const replayIn = h('input', { type: 'range', id: 'train-replay', min: '0', max: '0', step: '1', value: '0', disabled: true });
  const replayBtn = h('button', { type: 'button', id: 'train-replay-play', text: '▶ Replay', disabled: true });
  const replayStep = h('span.note', { id: 'train-replay-step' });
  const replayBox = h('div.controls.replay', {},
    h('label.ctl', { for: 'train-replay' }, h('span', { text: 'Maps at step' }), replayIn), replayBtn, replayStep);

  const tryIn = h('input', { type: 'text', id: 'train-try-text', style: 'width: min(420px, calc(100vw - 60px))', 'aria-label': 'your tokens' });
  const tryBtn = h('button.primary', { type: 'button', id: 'train-try-run', text: 'Run both models', disabled: true });
  const tryNote = h('p.note', { id: 'train-try-note' });
  const tryMsg = h('div', { id: 'train-try-msg' });
  const tryOut = h('div', { id: 'train-try-out' });

  root.append(
    h('div.ctl', {}, h('span', { text: 'Task' }), h('div.radio-row', {}, taskRadios)), taskDesc,
    h('div.controls', {},
      h('label.ctl', { for: 'train-heads' }, h('span', { text: `Heads (divide E = ${EMBED_DIM})` }), headsSel),
      h('label.ctl', { for: 'train-lr' }, h('span', { text: 'Learning rate (Adam)' }), lrSel),
      h('label.ctl', { for: 'train-batch' }, h('span', { text: 'Batch (fresh examples / step)' }), batchSel),
      h('label.ctl', { for: 'train-pace' }, h('span', { text: 'Speed' }), paceSel),
      h('label.ctl', { for: 'train-seed' }, h('span', { text: 'Seed' }), seedIn),
      h('label.ctl.inline', { for: 'train-stop' }, stopIn, h('span', { text: `Stop when the accuracy reaches ${STOP_AT * 100} %` }))),
    h('div.controls.train-buttons', {}, startBtn, pauseBtn, resetBtn, stateMsg),
    errBox,
    h('div.stats', { id: 'train-stats' }, buildStat, stepStat, speedStat, lossStat, accStat, timeStat, updStat),
    reachedNote,
    h('div.train-grid', {},
      chartBox,
      h('div.train-maps-col', {}, mapsTitle, mapsNote, mapsLegend, mapsGrid, replayBox, exampleBox)),
    h('h3', { text: 'Try it on your own tokens' }), tryNote,
    h('div.controls', {}, h('label.ctl', { for: 'train-try-text' }, h('span', { text: 'Tokens' }), tryIn), tryBtn),
    tryMsg, tryOut);

  // ---- the worker -------------------------------------------------------------------------------------------
  const worker = new Worker(new URL('./train-worker.js', import.meta.url), { type: 'module' });
  const send = (m) => worker.postMessage(m);
  worker.onmessage = (ev) => {
    const m = ev.data;
    if (m.type === 'ready') {
      buildV.textContent = m.variant === 'simd' ? 'SIMD' : 'scalar';
      root.dataset.variant = m.variant;
      root.dataset.warmUpMs = m.warmUpMs;
    } else if (m.type === 'tick') {
      if (m.gen === gen) onTick(m);
    } else if (m.type === 'stopped') {
      if (m.gen === gen) onStopped(m);
    } else if (m.type === 'error') {
      fail(`Training failed in the worker: ${m.message}`);
    }
  };
  worker.onerror = (ev) => {
    ev.preventDefault();
    fail(`The training worker could not start or crashed: ${ev.message || errText(ev)}`);
  };
  send({ type: 'init', variant: attn.variant });

  startBtn.addEventListener('click', () => {
    if (st.state === 'running' || st.state === 'loading') return;
    stopReplay();
    setState('running');
    send({ type: 'run' });
  });
  pauseBtn.addEventListener('click', () => {
    if (st.state !== 'running') return;
    pauseBtn.disabled = true;
    stateMsg.textContent = 'Pausing…';
    send({ type: 'pause' });
  });
  resetBtn.addEventListener('click', () => {
    st.seed = 1 + Math.floor(Math.random() * 99999);
    seedIn.value = st.seed;
    reset();
  });
  seedIn.addEventListener('change', () => {
    const v = Math.round(Number(seedIn.value));
    st.seed = Number.isSafeInteger(v) && v >= 0 ? Math.min(v, 999999) : st.seed;
    seedIn.value = st.seed;
    reset();
  });
  stopIn.addEventListener('change', () => { st.stopAt = stopIn.checked; send({ type: 'set', stopAt: st.stopAt ? STOP_AT : 0 }); });
  tryIn.addEventListener('keydown', (e) => { if (e.key === 'Enter' && !tryBtn.disabled) runTry(); });
  tryBtn.addEventListener('click', runTry);
  window.addEventListener('resize', () => { if (hist) drawCharts(); });

  function reset() {
    const t = TASKS[st.task];
    hist = { losses: [], smooth: [], ema: 0, acc: [], updates: [], rendered: 0, snaps: [] };
    stopReplay();
    gen += 1;
    setState('loading');
    stateMsg.textContent = 'Creating a fresh model…';
    reachedNote.textContent = '';
    taskDesc.replaceChildren(h('strong', { text: `${t.label}. ` }), t.description, ' Learned pattern: ', h('em', { text: t.pattern }), '.');
    mapsNote.textContent = `Example: ${t.fixedText}. ${t.causal ? 'Causal: crossed cells (keys after the query) are masked. ' : ''}An untrained model's maps are noise; watch them turn into ${t.pattern}.`;
    tryIn.value = tryText[st.task];
    tryMsg.replaceChildren();
    tryOut.replaceChildren();
    tryOut.removeAttribute('data-ready');
    tryBtn.disabled = true;
    tryBtn.textContent = t.toy ? 'Run both models' : 'Run the model';
    tryNote.textContent = 'Train first: when training stops (the accuracy target is reached, or you pause), the model trained here runs on your tokens'
      + (t.toy ? `, next to the toy model shipped with this page (models/toy-${t.toy}.json, trained by PyTorch).` : '. (No toy model is shipped for this task, so there is nothing to compare with.)');
    Object.assign(root.dataset, { task: st.task, heads: st.heads, seed: st.seed, step: 0, updates: 0 });
    for (const k of ['loss', 'lossInitial', 'lossSmoothed', 'accuracy', 'accuracyInitial', 'reachedStep', 'reachedMs', 'reachedTrainMs', 'stepsPerSecond', 'trainStepsPerSecond', 'updatesPerSecond', 'runMs']) delete root.dataset[k];
    send({ type: 'reset', gen, task: st.task, heads: st.heads, seed: st.seed, lr: st.lr, batch: st.batch, pace: st.pace, stopAt: st.stopAt ? STOP_AT : 0 });
  }

  function setState(s) {
    st.state = s;
    root.dataset.state = s;
    startBtn.disabled = s === 'running' || s === 'loading' || s === 'error';
    pauseBtn.disabled = s !== 'running';
    resetBtn.disabled = s === 'loading';
    startBtn.textContent = s === 'paused' ? 'Resume' : s === 'done' ? 'Keep training' : 'Train';
    replayIn.disabled = replayBtn.disabled = !(s === 'paused' || s === 'done');
    const msg = {
      ready: 'Untrained. Press Train.',
      running: 'Training in the Web Worker…',
      paused: 'Paused. Resume, or try the model below.',
      done: `Reached ${STOP_AT * 100} %: done. Try the model below, or keep training.`,
      error: 'Stopped by an error.',
    }[s];
    if (msg) stateMsg.textContent = msg;
    if (s === 'running') {
      tryBtn.disabled = true;
      tryNote.textContent = 'Training… pause, or let it reach the target, to try the model on your tokens.';
    }
  }

  function fail(text) {
    setState('error');
    errBox.replaceChildren(h('div.error-box', { role: 'alert', text }));
  }

  // ---- ticks -------------------------------------------------------------------------------------------------
  function onTick(m) {
    if (!hist) return;
    const now = performance.now();
    for (const loss of m.losses) {
      hist.losses.push(loss);
      const k = hist.losses.length;
      hist.ema = 0.9 * hist.ema + 0.1 * loss;
      hist.smooth.push(hist.ema / (1 - 0.9 ** k)); // bias-corrected like Adam's moments
    }
    hist.acc.push(...m.evals);
    hist.snaps.push(...m.snapshots);
    if (hist.snaps.length > MAX_SNAPSHOTS) hist.snaps = hist.snaps.filter((_, i) => i % 2 === 0 || i === hist.snaps.length - 1);
    replayIn.max = String(hist.snaps.length - 1);
    replayIn.value = replayIn.max;
    replayStep.textContent = `${m.step} (now)`;
    if (m.step > 0) {
      hist.rendered += 1;
      hist.updates.push(now);
      while (hist.updates.length > 2 && now - hist.updates[0] > 2000) hist.updates.shift();
    }
    if (st.state === 'loading') setState('ready');
    const t = TASKS[st.task];
    const loss = hist.losses.at(-1);
    const smooth = hist.smooth.at(-1);
    stepV.textContent = String(m.step);
    speedV.textContent = !m.step ? '—' : st.pace ? `${fmt(m.stepsPerSecond, 0)} (paced)` : `${fmt(m.stepsPerSecond, 0)} (${fmt(m.trainStepsPerSecond, 0)})`;
    lossV.textContent = loss === undefined ? '—' : `${fmt(loss, 3)} (${fmt(smooth, 3)})`;
    accV.textContent = `${(m.accuracy * 100).toFixed(1)} %`;
    timeV.textContent = `${(m.runMs / 1000).toFixed(2)} s`;
    const ups = hist.updates.length > 1 ? ((hist.updates.length - 1) * 1000) / (hist.updates.at(-1) - hist.updates[0]) : 0;
    updV.textContent = st.state === 'running' && ups ? fmt(ups, 0) : '—';
    if (m.reached) {
      reachedNote.replaceChildren(h('strong', { text: `${STOP_AT * 100} % reached at step ${m.reached.step}` }),
        ` after ${(m.reached.ms / 1000).toFixed(2)} s of training (${attn.variant} build, batch ${st.batch}, lr ${st.lr}, ${st.heads} head${st.heads > 1 ? 's' : ''}${st.pace ? `, paced at ${st.pace} steps/s` : ', full speed'}). `,
        `${(m.reached.trainMs / 1000).toFixed(2)} s of it inside trainStep.`);
    }
    const ds = root.dataset;
    ds.step = m.step;
    ds.accuracy = m.accuracy;
    ds.runMs = m.runMs;
    if (m.step === 0) ds.accuracyInitial = m.accuracy;
    if (loss !== undefined) {
      ds.loss = loss;
      ds.lossSmoothed = smooth;
      ds.lossInitial = hist.losses[0];
    }
    if (m.step && m.stepsPerSecond) {
      ds.stepsPerSecond = m.stepsPerSecond;
      ds.trainStepsPerSecond = m.trainStepsPerSecond;
    }
    ds.updates = hist.rendered;
    if (ups) ds.updatesPerSecond = ups;
    if (m.reached) {
      ds.reachedStep = m.reached.step;
      ds.reachedMs = m.reached.ms;
      ds.reachedTrainMs = m.reached.trainMs;
    }
    drawMaps(t, m);
    drawExample(t, m.predicted);
    drawCharts();
  }

  // ---- replay: the maps at any kept step ----------------------------------------------------------------------
  let replayTimer = null;
  function showSnapshot(k) {
    const snap = hist.snaps[k];
    if (!snap) return;
    const t = TASKS[st.task];
    drawMaps(t, { heads: st.heads, T: t.T, weights: snap.weights, step: snap.step });
    drawExample(t, snap.predicted);
    replayStep.textContent = k === hist.snaps.length - 1 ? `${snap.step} (now)` : `${snap.step} of ${hist.snaps.at(-1).step}`;
    mapsGrid.dataset.replay = k === hist.snaps.length - 1 ? '' : snap.step;
  }
  function stopReplay() {
    if (replayTimer) clearInterval(replayTimer);
    replayTimer = null;
    replayBtn.textContent = '▶ Replay';
  }
  replayIn.addEventListener('input', () => { stopReplay(); showSnapshot(Number(replayIn.value)); });
  replayBtn.addEventListener('click', () => {
    if (replayTimer) return stopReplay();
    const n = hist.snaps.length;
    const stride = Math.max(1, Math.ceil(n / 120)); // a replay takes at most ≈ 120 frames (6 s)
    let k = 0;
    replayBtn.textContent = '■ Stop';
    replayTimer = setInterval(() => {
      k = Math.min(n - 1, k + stride);
      replayIn.value = k;
      showSnapshot(k);
      if (k >= n - 1) stopReplay();
    }, 50);
    replayIn.value = 0;
    showSnapshot(0);
  });

  function onStopped(m) {
    const t = TASKS[st.task];
    setState(m.reason === 'done' ? 'done' : 'paused');
    const key = `${t.id}/${st.heads}`;
    try {
      if (!trained || trained.key !== key) {
        if (trained) trained.model.dispose();
        trained = { key, model: attn.createTinyTransformer({ vocabSize: t.V, embedDim: EMBED_DIM, numHeads: st.heads, causal: t.causal }) };
      }
      trained.model.loadStateDict(m.stateDict);
    } catch (e) {
      fail(`Could not load the trained parameters on the page: ${errText(e)}`);
      return;
    }
    root.dataset.trainedStep = m.step;
    tryBtn.disabled = false;
    tryNote.textContent = `The model trained here (step ${m.step}, ${st.heads} head${st.heads > 1 ? 's' : ''}) runs on the page with attnlab`
      + (t.toy ? `; next to it, the toy model shipped with this page (models/toy-${t.toy}.json, trained by PyTorch, 2 heads${t.toy === 'recall' ? ', with biases' : ''}).` : '. No toy model is shipped for this task.')
      + ` Vocabulary: ${t.id === 'recall' ? 'store tokens like c=7 (keys a–h, digits 0–9) and queries like c?' : 'letters A–L'}, separated by spaces.`;
    runTry();
  }

  // ---- heat maps ----------------------------------------------------------------------------------------------
  function drawMaps(t, m) {
    const { heads: H, T } = m;
    const labels = t.fixedText.split(' ');
    const avail = Math.max(200, mapsGrid.clientWidth || root.clientWidth || 600);
    // As many maps per row as fit with readable cells (smaller cells only for 8 or 16 heads).
    const minCell = H >= 8 ? 12 : 20;
    let cell = 0;
    for (const perRow of [Math.min(H, 4), 2, 1]) {
      cell = Math.floor((avail - perRow * 44) / Math.min(perRow, H) / T) - 2;
      if (cell >= minCell) break;
    }
    cell = Math.max(10, Math.min(H > 2 ? 28 : 36, cell));
    if (mapsGrid.children.length !== H || mapsGrid.dataset.key !== `${t.id}/${H}`) {
      mapsGrid.replaceChildren();
      mapsGrid.dataset.key = `${t.id}/${H}`;
      for (let hh = 0; hh < H; hh++) {
        const canvas = h('canvas', { 'data-head': hh, role: 'img', 'aria-label': `attention weights of head ${hh + 1}` });
        hoverable(canvas);
        mapsGrid.append(h('div.heat', { 'data-head': hh },
          h('h4', {}, h('span.swatch', { style: `background:${HEAD_COLORS[hh % HEAD_COLORS.length]}` }), `head ${hh + 1}`), canvas));
      }
    }
    let checksum = 0;
    for (let hh = 0; hh < H; hh++) {
      const data = m.weights.subarray(hh * T * T, (hh + 1) * T * T);
      const canvas = mapsGrid.children[hh].querySelector('canvas');
      const matrix = [];
      for (let i = 0; i < T; i++) matrix.push(Array.from(data.subarray(i * T, (i + 1) * T)));
      data.forEach((v, k) => { checksum += v * (1 + ((k * 7919 + hh * 104729) % 97)); });
      canvas.dataset.matrix = JSON.stringify(matrix);
      canvas.dataset.step = m.step;
      drawHeat(canvas, data, T, labels, labels, cell, t.causal, `head ${hh + 1}`);
    }
    mapsGrid.dataset.checksum = checksum;
    mapsGrid.dataset.step = m.step;
  }

  function drawExample(t, predicted) {
    const ids = t.fixedText.split(' ').map((w) => t.index.get(w));
    const expected = t.answers(ids);
    exampleBox.replaceChildren(answerTable([
      ['input', ids.map((id) => ({ text: t.vocab[id] }))],
      ['model now', predicted.map((p, i) => cellFor(t, p, expected[i], ids[i]))],
      ['right answer', expected.map((e, i) => ({ text: rightText(t, e, ids[i]) }))],
    ], 'train-example-table'));
    const right = predicted.filter((p, i) => expected[i] !== null && p === expected[i]).length;
    const table = exampleBox.firstChild;
    table.dataset.correct = right;
    table.dataset.total = expected.filter((e) => e !== null).length;
  }

  // ---- charts -----------------------------------------------------------------------------------------------
  function drawCharts() {
    const w = Math.max(240, Math.min(560, (chartBox.clientWidth || 400) - 14));
    const n = hist.losses.length;
    const xMax = niceCeil(Math.max(50, n));
    drawLossChart(lossCanvas, hist, xMax, w);
    drawAccChart(accCanvas, hist.acc, xMax, w);
    lossCanvas.dataset.points = n;
    accCanvas.dataset.points = hist.acc.length;
    accCanvas.dataset.series = JSON.stringify(hist.acc.slice(-200));
  }

  // ---- try it -----------------------------------------------------------------------------------------------
  function runTry() {
    const t = TASKS[st.task];
    tryText[st.task] = tryIn.value;
    tryMsg.replaceChildren();
    tryOut.replaceChildren();
    hideTip();
    if (!trained) return;
    const inputIndex = new Map(t.inputVocab.map((w) => [w, t.index.get(w)]));
    const p = parseTokens({ task: t.parseKind, index: inputIndex }, tryIn.value);
    if (p.error) return tryError(p.error);
    const ids = p.ids;
    if (ids.length > MAX_TRY_TOKENS) return tryError(`${ids.length} tokens; at most ${MAX_TRY_TOKENS} here.`);
    const L = ids.length;
    let mine;
    let toy = null;
    try {
      const out = trained.model.forward({ data: Int32Array.from(ids), shape: [1, L] });
      mine = { predicted: Array.from(argmax(out.logits.data, L, t.V)), weights: out.weights.data, H: st.heads };
      if (t.toy === 'reverse') {
        const o = toyTiny.forward({ data: Int32Array.from(ids), shape: [1, L] });
        toy = { predicted: Array.from(argmax(o.logits.data, L, rev.V)), weights: o.weights.data, H: rev.H };
      } else if (t.toy === 'recall') {
        const o = runToy(toys.recall, toyRecallMha, ids);
        toy = { predicted: o.predicted, weights: o.weights, H: toys.recall.H };
      }
    } catch (e) {
      return tryError(`attnlab threw ${errText(e)}`);
    }
    const expected = t.answers(ids);
    const rows = [
      ['input', ids.map((id) => ({ text: t.vocab[id] }))],
      ['trained here', mine.predicted.map((pr, i) => cellFor(t, pr, expected[i], ids[i]))],
    ];
    if (toy) rows.push(['shipped toy model', toy.predicted.map((pr, i) => cellFor(t, pr, expected[i], ids[i]))]);
    rows.push(['right answer', expected.map((e, i) => ({ text: rightText(t, e, ids[i]) }))]);
    const table = answerTable(rows, 'train-try-table');
    const score = (pred) => pred.filter((pr, i) => expected[i] !== null && pr === expected[i]).length;
    const total = expected.filter((e) => e !== null).length;
    table.dataset.total = total;
    table.dataset.trainedCorrect = score(mine.predicted);
    table.dataset.trainedPredicted = JSON.stringify(mine.predicted.map((x) => t.vocab[x]));
    if (toy) {
      table.dataset.toyCorrect = score(toy.predicted);
      table.dataset.toyPredicted = JSON.stringify(toy.predicted.map((x) => t.vocab[x]));
    }
    const summary = h('p.note', { id: 'train-try-summary' },
      h('strong', { text: `Trained here: ${score(mine.predicted)} of ${total} right` }),
      toy ? `; shipped toy model: ${score(toy.predicted)} of ${total}.` : '.',
      L !== t.T ? ` ${toy ? 'Both were' : 'It was'} trained on sequences of length ${t.T}; other lengths are outside what ${toy ? 'they' : 'it'} saw.` : '');
    const labels = ids.map((id) => t.vocab[id]);
    const avail = Math.max(200, tryOut.clientWidth || root.clientWidth || 600);
    const groups = [['trained here', mine, 'mine']];
    if (toy) groups.push(['shipped toy model', toy, 'toy']);
    const maxH = Math.max(...groups.map(([, g]) => g.H));
    const perRow = avail < 520 ? 2 : Math.min(4, groups.length * maxH);
    const cell = Math.max(10, Math.min(28, Math.floor((avail - perRow * 50) / perRow / L)));
    const mapGroups = groups.map(([title, g, key]) => {
      const grid = h('div.heat-grid', { 'data-model': key });
      for (let hh = 0; hh < g.H; hh++) {
        const canvas = h('canvas', { 'data-head': hh, 'data-model': key, role: 'img', 'aria-label': `${title}, head ${hh + 1}` });
        const data = g.weights.subarray(hh * L * L, (hh + 1) * L * L);
        const matrix = [];
        for (let i = 0; i < L; i++) matrix.push(Array.from(data.subarray(i * L, (i + 1) * L)));
        canvas.dataset.matrix = JSON.stringify(matrix);
        drawHeat(canvas, data, L, labels, labels, cell, t.causal, `${title}, head ${hh + 1}`);
        hoverable(canvas);
        grid.append(h('div.heat', { 'data-head': hh }, h('h4', {}, h('span.swatch', { style: `background:${HEAD_COLORS[hh % HEAD_COLORS.length]}` }), `head ${hh + 1}`), canvas));
      }
      return h('div.try-group', {}, h('div.small.strong', { text: `${title} (${g.H} head${g.H > 1 ? 's' : ''})` }), grid);
    });
    tryOut.append(summary, h('div.answers-wrap', {}, table), h('div.try-maps', { id: 'train-try-maps' }, mapGroups));
    tryOut.dataset.ready = '1';
  }

  function tryError(text) {
    tryMsg.replaceChildren(h('div.error-box', { role: 'alert', text }));
  }

  // ---- hover --------------------------------------------------------------------------------------------------
  function hoverable(canvas) {
    canvas.addEventListener('mousemove', (ev) => {
      const g = canvas.geom;
      if (!g) return;
      const r = canvas.getBoundingClientRect();
      const j = Math.floor((ev.clientX - r.left - g.lw) / g.cell);
      const i = Math.floor((ev.clientY - r.top - g.tw) / g.cell);
      if (i < 0 || j < 0 || i >= g.n || j >= g.n) return hideTip();
      const v = JSON.parse(canvas.dataset.matrix)[i][j];
      showTip(`${g.title}\nquery ${i} (${g.rows[i]}) → key ${j} (${g.cols[j]})\nweight ${fmt(v, 4)}${g.causal && j > i ? ' (masked: causal)' : ''}`, ev.pageX, ev.pageY);
    });
    canvas.addEventListener('mouseleave', hideTip);
  }

  reset();
}

// ---- drawing helpers (canvas) -------------------------------------------------------------------------------

/** Heat map of an n×n weight matrix with row (query) and column (key) labels; crossed cells are masked. */
function drawHeat(canvas, data, n, rows, cols, cell, causal, title) {
  const probe = canvas.getContext('2d');
  const font = `${Math.min(12, Math.max(9, cell - 6))}px system-ui, sans-serif`;
  probe.font = font;
  const lw = Math.ceil(Math.max(...rows.map((s) => probe.measureText(shortLabel(s, 5)).width))) + 6;
  const colW = Math.max(...cols.map((s) => probe.measureText(shortLabel(s, 5)).width));
  const flat = colW <= cell - 2;
  const tw = flat ? 16 : Math.ceil(colW) + 6;
  const W = lw + n * cell + 2;
  const Ht = tw + n * cell + 2;
  const ctx = sizeCanvas(canvas, W, Ht);
  canvas.geom = { lw, tw, cell, n, rows, cols, causal, title };
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, W, Ht);
  ctx.font = font;
  ctx.fillStyle = '#333';
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'right';
  rows.forEach((s, i) => ctx.fillText(shortLabel(s, 5), lw - 4, tw + i * cell + cell / 2));
  ctx.textAlign = flat ? 'center' : 'left';
  cols.forEach((s, j) => {
    if (flat) {
      ctx.fillText(shortLabel(s, 5), lw + j * cell + cell / 2, tw / 2);
      return;
    }
    ctx.save();
    ctx.translate(lw + j * cell + cell / 2, tw - 3);
    ctx.rotate(-Math.PI / 2);
    ctx.fillText(shortLabel(s, 5), 0, 0);
    ctx.restore();
  });
  const gap = cell > 10 ? 1 : 0;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const x = lw + j * cell;
      const y = tw + i * cell;
      ctx.fillStyle = seqColor(data[i * n + j]);
      ctx.fillRect(x, y, cell - gap, cell - gap);
      if (causal && j > i) {
        ctx.strokeStyle = 'rgba(0,0,0,0.2)';
        ctx.beginPath();
        ctx.moveTo(x + 2, y + 2);
        ctx.lineTo(x + cell - gap - 2, y + cell - gap - 2);
        ctx.stroke();
      }
    }
  }
}

function niceCeil(v) {
  const p = 10 ** Math.floor(Math.log10(v));
  for (const k of [1, 2, 2.5, 5, 10]) if (k * p >= v) return k * p;
  return 10 * p;
}

function axes(ctx, m, W, H, xMax, yTicks, xTitle) {
  const iw = W - m.l - m.r;
  const ih = H - m.t - m.b;
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, W, H);
  ctx.font = '10px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  for (const [y, label] of yTicks) {
    ctx.strokeStyle = '#e6e9ee';
    ctx.beginPath();
    ctx.moveTo(m.l, y);
    ctx.lineTo(m.l + iw, y);
    ctx.stroke();
    ctx.fillStyle = '#667';
    ctx.textAlign = 'right';
    ctx.fillText(label, m.l - 5, y);
  }
  ctx.textAlign = 'center';
  for (let k = 0; k <= 5; k++) { // xMax is 1, 2, 2.5 or 5 × 10ⁿ (≥ 50): fifths are whole steps
    ctx.fillStyle = '#667';
    ctx.fillText(String(Math.round((xMax * k) / 5)), m.l + (iw * k) / 5, m.t + ih + 11);
  }
  ctx.strokeStyle = '#99a';
  ctx.beginPath();
  ctx.moveTo(m.l, m.t);
  ctx.lineTo(m.l, m.t + ih);
  ctx.lineTo(m.l + iw, m.t + ih);
  ctx.stroke();
  ctx.fillStyle = '#334';
  ctx.font = '11px system-ui, sans-serif';
  ctx.fillText(xTitle, m.l + iw / 2, H - 7);
  return { iw, ih };
}

/** Per-batch loss (thin) and its smoothed curve (thick) against step, log-scale y. */
function drawLossChart(canvas, hist, xMax, W) {
  const H = 180;
  const m = { l: 44, r: 10, t: 10, b: 32 };
  const ctx = sizeCanvas(canvas, W, H);
  const { losses, smooth } = hist;
  const finite = losses.filter((v) => v > 0 && Number.isFinite(v));
  const lo = finite.length ? Math.floor(Math.log10(Math.max(1e-4, Math.min(...finite)))) : -2;
  let hi = finite.length ? Math.ceil(Math.log10(Math.max(...finite))) : 1;
  if (hi <= lo) hi = lo + 1;
  const ih = H - m.t - m.b;
  const Y = (v) => m.t + ih - ((Math.log10(Math.max(v, 10 ** lo)) - lo) / (hi - lo)) * ih;
  const ticks = [];
  for (let k = lo; k <= hi; k++) ticks.push([Y(10 ** k), fmt(10 ** k, 4)]);
  const { iw } = axes(ctx, m, W, H, xMax, ticks, 'step');
  const X = (s) => m.l + (s / xMax) * iw;
  const line = (vals, color, width) => {
    if (!vals.length) return;
    const k = Math.max(1, Math.ceil(vals.length / iw)); // at most one point per pixel column (bucket means)
    ctx.strokeStyle = color;
    ctx.lineWidth = width;
    ctx.beginPath();
    for (let s = 0; s < vals.length; s += k) {
      let sum = 0;
      let c = 0;
      for (let q = s; q < Math.min(vals.length, s + k); q++) { sum += vals[q]; c++; }
      const x = X(s + (c - 1) / 2 + 1);
      const y = Y(sum / c);
      if (s === 0) ctx.moveTo(x, y);
      else ctx.lineTo(x, y);
    }
    ctx.stroke();
    ctx.lineWidth = 1;
  };
  line(losses, COLORS.raw, 1);
  line(smooth, COLORS.smooth, 2);
}

/** Accuracy on fresh examples against step, with the target line. */
function drawAccChart(canvas, acc, xMax, W) {
  const H = 150;
  const m = { l: 44, r: 10, t: 10, b: 32 };
  const ctx = sizeCanvas(canvas, W, H);
  const ih = H - m.t - m.b;
  const Y = (v) => m.t + ih - v * ih;
  const { iw } = axes(ctx, m, W, H, xMax, [0, 0.25, 0.5, 0.75, 1].map((v) => [Y(v), `${v * 100} %`]), 'step');
  const X = (s) => m.l + (s / xMax) * iw;
  ctx.strokeStyle = COLORS.guide;
  ctx.setLineDash([3, 3]);
  ctx.beginPath();
  ctx.moveTo(m.l, Y(STOP_AT));
  ctx.lineTo(m.l + iw, Y(STOP_AT));
  ctx.stroke();
  ctx.setLineDash([]);
  if (!acc.length) return;
  ctx.strokeStyle = COLORS.acc;
  ctx.lineWidth = 2;
  ctx.beginPath();
  acc.forEach(([s, v], i) => (i ? ctx.lineTo(X(s), Y(v)) : ctx.moveTo(X(s), Y(v))));
  ctx.stroke();
  ctx.lineWidth = 1;
  const [s, v] = acc.at(-1);
  ctx.fillStyle = COLORS.acc;
  ctx.beginPath();
  ctx.arc(X(s), Y(v), 3, 0, 2 * Math.PI);
  ctx.fill();
}

// ---- answer tables --------------------------------------------------------------------------------------------

function cellFor(t, predicted, expected, input) {
  const text = t.vocab[predicted];
  if (t.id === 'recall' && input < 90) return { text: '·', cls: 'x' };
  if (expected === null) return { text, cls: 'x', attrs: { 'data-predicted': text, 'data-expected': '' } };
  const ok = predicted === expected;
  return { text: `${text} ${ok ? '✓' : '✗'}`, cls: ok ? 'ok' : 'bad', attrs: { 'data-predicted': text, 'data-expected': t.vocab[expected] } };
}

function rightText(t, expected, input) {
  if (t.id === 'recall') return input < 90 ? '·' : expected === null ? '(not stored)' : t.vocab[expected];
  if (expected === null) return t.id === 'next' ? '·' : '';
  return t.vocab[expected];
}

function answerTable(rows, id) {
  return h('table.answers', { id }, rows.map(([label, cells]) => h('tr', {}, h('th', { scope: 'row', text: label }),
    cells.map((c, i) => h(`td${c.cls ? '.' + c.cls : ''}`, { 'data-pos': c.attrs ? i : undefined, ...(c.attrs || {}), text: c.text })))));
}
