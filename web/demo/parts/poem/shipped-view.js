// @ts-check
// The shipped poem model's own run (§10.1), drawn: its losses.csv (training and validation loss over the 6,000
// steps) and its snapshots.json (the run's weights at chosen steps on the panel's held-out probes: the best head's
// score on each attention pattern, and every head's map of the first probe at a step picked with a slider). Test
// hooks: #poem-shipped[data-steps][data-val][data-snapshots][data-snap-step].

import { h } from '../../widgets/dom.js';
import { fmt, errText } from '../../shared/format.js';
import { t } from '../../i18n.js';
import { drawPatternCurves, drawProbeMaps, drawShippedRun } from './draw.js';
import { parseLossesCsv, parseSnapshots, PROBES } from './shipped-run.js';

/** The figure, empty until showShippedRun fills it. */
export function shippedFigure() {
  const snap = h('input#poem-shipped-snap', {
    type: 'range',
    min: 0,
    max: 0,
    value: 0,
    'aria-label': t('poem.snapAria'),
  });
  return h(
    'figure#poem-shipped',
    {},
    h('figcaption'),
    h('canvas#poem-shipped-chart'),
    h('p.note'),
    h(
      'div.poem-shipped-inside',
      {},
      h('p', { text: t('poem.shipped.inside', { n: PROBES }) }),
      h('div', {}, h('canvas#poem-shipped-patterns'), h('div.poem-legend')),
      h('div.controls', {}, h('label', { for: 'poem-shipped-snap' }, t('poem.snap'), ' ', snap), h('span.snap-step')),
      h('div.poem-train-maps#poem-shipped-maps'),
      h('p.note.inside-note'),
    ),
  );
}

/**
 * Fetches the model folder's losses.csv and snapshots.json and draws them into the figure; a failure says so there.
 * @param {HTMLElement} fig  shippedFigure()
 * @param {URL} dir  a URL in the model folder
 * @param {number} width
 */
export async function showShippedRun(fig, dir, width) {
  try {
    const fetchOk = async (/** @type {string} */ name) => {
      const r = await fetch(new URL(name, dir));
      if (!r.ok) throw new Error(t('poem.httpError', { f: name, s: r.status }));
      return r;
    };
    showLosses(fig, parseLossesCsv(await (await fetchOk('losses.csv')).text()), width);
    showInside(fig, parseSnapshots(await (await fetchOk('snapshots.json')).json()), width);
  } catch (e) {
    fig.replaceChildren(h('div.error-box', { role: 'alert', text: errText(e) }));
  }
}

/**
 * @param {HTMLElement} fig
 * @param {import('./shipped-run.js').ShippedRun} run
 * @param {number} width
 */
function showLosses(fig, run, width) {
  const [caption, canvas, note] = /** @type {HTMLElement[]} */ ([...fig.children]);
  caption.textContent = t('poem.shipped.caption', { steps: run.steps });
  drawShippedRun(/** @type {HTMLCanvasElement} */ (canvas), run, width);
  const [v0, v1] = [run.validation[0], run.validation.at(-1)];
  note.textContent = t('poem.shipped.note', {
    t0: fmt(run.train[0][1], 2),
    t1: fmt(run.train.at(-1)[1], 2),
    s0: v0[0],
    v0: fmt(v0[1], 2),
    s1: v1[0],
    v1: fmt(v1[1], 2),
  });
  Object.assign(fig.dataset, { steps: run.steps, val: v1[1] });
}

/**
 * The pattern curves over the snapshots' steps and the maps at the slider's step.
 * @param {HTMLElement} fig
 * @param {ReturnType<typeof parseSnapshots>} snaps
 * @param {number} width
 */
function showInside(fig, snaps, width) {
  const { steps, labels } = snaps;
  const canvas = /** @type {HTMLCanvasElement} */ (fig.querySelector('#poem-shipped-patterns'));
  const patterns = /** @type {[number, Record<string, { best: number }>][]} */ (steps.map((s) => [s.step, s.patterns]));
  drawPatternCurves(canvas, { patterns }, width, steps.at(-1).step, snaps.rerun.lastStep);
  const slider = /** @type {HTMLInputElement} */ (fig.querySelector('#poem-shipped-snap'));
  const show = (/** @type {number} */ k) => {
    const s = steps[k];
    drawProbeMaps(fig.querySelector('#poem-shipped-maps'), s.maps, labels);
    fig.querySelector('.snap-step').textContent = t('poem.shipped.snapStep', { s: s.step, loss: fmt(s.probeLoss, 2) });
    fig.dataset.snapStep = String(s.step);
  };
  slider.max = String(steps.length - 1);
  slider.value = '0';
  slider.oninput = () => show(Number(slider.value));
  show(0);
  const prev = (/** @type {import('./shipped-run.js').Snapshot} */ s) => fmt(s.patterns.previous?.best ?? 0, 2);
  fig.querySelector('.inside-note').textContent = t('poem.shipped.insideNote', {
    n: snaps.probes,
    s1: steps.at(-1).step,
    p0: prev(steps[0]),
    p1: prev(steps.at(-1)),
    b: fmt(steps[0].patterns.previous?.baseline ?? 0, 2),
    r: Math.min(snaps.rerun.lastStep, steps.at(-1).step),
    k: snaps.rerun.matchedLogs,
  });
  fig.dataset.snapshots = String(steps.length);
}
