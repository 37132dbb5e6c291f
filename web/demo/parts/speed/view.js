// @ts-check
// Part "speed" (§3's O(L²) cost): the speed test. The timing runs in a module Web Worker (worker.js, compute.js) so
// the page stays responsive, even at L = 2048; this file draws the controls, the progress bar, the table and the bar
// charts. On a cross-origin-isolated page the threaded build gets a column of its own; elsewhere a sentence says why
// it has none.

import { h } from '../../widgets/dom.js';
import { barChart } from '../../widgets/charts.js';
import { select, labelled, group } from '../../widgets/controls.js';
import { fmt, errText } from '../../shared/format.js';
import { createStore } from '../../store.js';
import { t } from '../../i18n.js';
import { PLAIN_JS, THREADED, groupRows, costSplit, crossover } from './compute.js';

/** @typedef {import('./compute.js').Row} Row */

const SETS = {
  full: { label: 'speed.setFull', sizes: [128, 512, 2048] },
  quick: { label: 'speed.setQuick', sizes: [32, 64, 128] },
};
/** @type {Record<string, string>} */
const COLORS = { [THREADED]: '#5a2ca0', 'attnlab simd': '#1e7b34', 'attnlab scalar': '#d08a1f', [PLAIN_JS]: '#7b8794' };

/**
 * Implementation names as shown: 'plain JS' in the page's language, the threaded build with its thread count.
 * @param {string} n
 * @param {number} [threads]
 */
const implName = (n, threads) =>
  n === PLAIN_JS ? t('speed.plainJs') : n === THREADED ? t('speed.threadedName', { n: threads }) : n;

/**
 * The time and the throughput bar charts.
 * @param {ReturnType<typeof groupRows>} g
 * @param {{ name: string, color: string }[]} series
 * @param {number} width
 */
function charts(g, series, width) {
  /** @param {'ms' | 'gflops'} key @param {string} unit */
  const values = (key, unit) => (/** @type {number} */ gi, /** @type {number} */ si) => {
    const r = g.get(gi, si);
    return (
      r && {
        value: r[key],
        hatched: r.extrapolated,
        label: `${fmt(r[key], 2)} ${unit}${r.extrapolated ? t('speed.extrapolatedTag') : ''}`,
      }
    );
  };
  const common = { groups: g.groups, series, width };
  const msChart = barChart({
    ...common,
    title: t('speed.msTitle'),
    yTitle: t('speed.msAxis'),
    log: true,
    values: values('ms', 'ms'),
  });
  const gfChart = barChart({
    ...common,
    title: 'GFLOP/s',
    yTitle: t('speed.gfAxis'),
    values: values('gflops', 'GFLOP/s'),
  });
  return h(
    'div.charts',
    {},
    h('div.chart', { 'data-chart': 'ms' }, h('div.small', { text: t('speed.timePerCall') }), msChart),
    h('div.chart', { 'data-chart': 'gflops' }, h('div.small', { text: t('speed.throughput') }), gfChart),
  );
}

/**
 * The table: per group each implementation's ms · GFLOP/s, plain JS over simd, and threaded over simd.
 * @param {ReturnType<typeof groupRows>} g
 * @param {(n: string) => string} name
 */
function table(g, name) {
  const { impls, groups, get, threads } = g;
  /** @param {Row | undefined} r */
  const cell = (r) => {
    if (!r) return h('td', { text: '—' });
    const title = r.extrapolated
      ? t('speed.extrapolatedTitle')
      : t('speed.cellTitle', { n: r.runs, min: fmt(r.min, 3), max: fmt(r.max, 3) });
    const text = `${r.extrapolated ? '≈ ' : ''}${fmt(r.ms, 1)} ms · ${fmt(r.gflops, 2)}`;
    return h(r.extrapolated ? 'td.extra' : 'td', {
      'data-impl': r.impl,
      'data-ms': r.ms,
      'data-gflops': r.gflops,
      title,
      text,
    });
  };
  const head = [
    t('speed.colOp'),
    'L',
    ...impls.map((n) => `${name(n)}: ms · GFLOP/s`),
    t('speed.colRatio'),
    ...(threads ? [t('speed.colThreadRatio')] : []),
  ];
  const body = groups.map((gr, gi) => {
    const simd = get(gi, impls.indexOf('attnlab simd'));
    const js = get(gi, impls.indexOf(PLAIN_JS));
    const thr = get(gi, impls.indexOf(THREADED));
    const ratio =
      simd && js ? `${js.extrapolated ? '≈ ' : ''}${t('speed.faster', { x: fmt(js.ms / simd.ms, 1) })}` : '—';
    const threadCell = threads
      ? h('td', {
          'data-ratio': thr && simd ? simd.ms / thr.ms : '',
          text: thr && simd ? `× ${fmt(simd.ms / thr.ms, 2)}` : '—',
        })
      : '';
    return h(
      'tr',
      { 'data-op': gr.op, 'data-l': gr.L },
      h('td', { text: gr.op.toUpperCase() }),
      h('td', { text: gr.L }),
      impls.map((_, si) => cell(get(gi, si))),
      h('td', { text: ratio }),
      threadCell,
    );
  });
  return h(
    'table.bench-table',
    { id: 'speed-table' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        head.map((c) => h('th', { scope: 'col', text: c })),
      ),
    ),
    h('tbody', {}, body),
  );
}

/**
 * The results so far: the key, the charts, the table and the cross-check.
 * @param {HTMLElement} out
 * @param {Row[]} rows
 * @param {string[]} notes
 * @param {boolean} final
 */
function drawResults(out, rows, notes, final) {
  out.dataset.json = JSON.stringify(rows);
  out.dataset.final = final ? '1' : '0';
  const g = groupRows(rows);
  /** @param {string} n */
  const name = (n) => implName(n, g.threads);
  const series = g.impls.map((n) => ({ name: name(n), color: COLORS[n] || '#555' }));
  const avail = out.clientWidth || 600;
  const width = avail > 900 ? Math.min(580, Math.floor((avail - 50) / 2)) : Math.max(300, Math.min(580, avail - 16));
  const key = h(
    'div.chart-key',
    {},
    series.map((s) => h('span', {}, h('i', { style: `background:${s.color}; height: 10px; width: 14px` }), s.name)),
    h('span', { text: t('speed.hatched') }),
  );
  const diffs = rows.filter((r) => typeof r.maxDiff === 'number');
  const worst = diffs.reduce((m, r) => Math.max(m, r.maxDiff), 0);
  const check = diffs.length
    ? h('p.note', { id: 'speed-check', text: t('speed.check', { d: worst.toExponential(1) }) })
    : '';
  out.replaceChildren(
    notes.length ? h('div.warn-box', { text: notes.join('\n') }) : '',
    key,
    charts(g, series, width),
    h('div.table-scroll', {}, table(g, name)),
    check,
  );
}

/**
 * The FLOPs of one MHA forward at E = 512 split into projections and attention, with the growth from the previous
 * row: only the attention term grows as L², and it overtakes the projections at L = 2E.
 */
function costTable() {
  const E = 512;
  const rows = costSplit(E, [128, 512, 1024, 2048]);
  const g = (/** @type {number} */ x) => (x / 1e9).toFixed(2);
  return h(
    'div.scroll-x',
    {},
    h('p.note', { text: t('speed.costNote', { E, L: crossover(E), x: fmt(rows[1].growth, 1) }) }),
    h(
      'table.answers',
      { id: 'speed-cost' },
      h(
        'tr',
        {},
        ['L', t('speed.costProj'), t('speed.costAttn'), t('speed.costTotal'), t('speed.costGrowth')].map((c) =>
          h('th', { scope: 'col', text: c }),
        ),
      ),
      rows.map((r) =>
        h(
          'tr',
          { 'data-l': r.L, 'data-growth': r.growth ?? '' },
          [String(r.L), g(r.proj), g(r.attn), g(r.total)].map((x) => h('td', { text: x })),
          h('td', { text: r.growth ? `× ${fmt(r.growth, 1)}` : '—' }),
        ),
      ),
    ),
  );
}

/**
 * @param {HTMLElement} root
 * @param {import('../../attnlab.js').Attnlab} attn
 * @param {{ params: URLSearchParams }} page
 */
export function mount(root, attn, { params }) {
  const isolated = typeof crossOriginIsolated === 'boolean' && crossOriginIsolated;
  const store = createStore({ state: 'idle' });
  const setSel = select({
    id: 'speed-set',
    label: t('speed.sizes'),
    options: Object.entries(SETS).map(([k, s]) => [k, t(s.label)]),
    value: params.get('bench') === 'quick' ? 'quick' : 'full',
  });
  const runBtn = h('button.primary', { type: 'button', id: 'speed-run', text: t('speed.run') });
  const bar = h('progress', { id: 'speed-progress', max: '1', value: '0' });
  const status = h('span.bench-status', { id: 'speed-status', 'aria-live': 'polite', text: t('speed.notRun') });
  const out = h('div', { id: 'speed-results' });
  const alive = h('span.note', { id: 'speed-alive', text: '' });
  store.subscribe((s) => {
    root.dataset.state = s.state;
    runBtn.disabled = s.state === 'running';
  });
  root.dataset.state = 'idle';
  root.append(
    h(
      'div.controls',
      {},
      labelled('speed-set', t('speed.sizes'), setSel),
      runBtn,
      group(t('speed.progress'), h('div', {}, bar, ' ', status)),
    ),
    h('p.note', {}, h('span', { html: t('speed.note') }), ' ', alive),
    costTable(),
    h(`p.${isolated ? 'note' : 'warn-box'}`, {
      id: 'speed-threads',
      'data-isolated': isolated ? '1' : '0',
      text: t(isolated ? 'speed.threadsOn' : 'speed.threadsOff'),
    }),
    out,
  );
  // A ticking clock proves the main thread stays responsive during the run.
  let ticks = 0;
  setInterval(() => {
    ticks += 1;
    alive.textContent = t('speed.alive', { n: ticks });
  }, 250);
  runBtn.addEventListener('click', () => {
    if (store.get().state === 'running') return;
    store.set({ state: 'running' });
    runInWorker(SETS[/** @type {keyof typeof SETS} */ (setSel.value)].sizes, { bar, status, out }, (state) =>
      store.set({ state }),
    );
  });
}

/**
 * One run of the speed test in a fresh worker, drawing as the rows come.
 * @param {number[]} sizes
 * @param {{ bar: HTMLProgressElement, status: HTMLElement, out: HTMLElement }} ui
 * @param {(state: 'done' | 'error') => void} finished
 */
function runInWorker(sizes, { bar, status, out }, finished) {
  /** @type {Row[]} */
  const rows = [];
  /** @type {string[]} */
  const notes = [];
  out.replaceChildren();
  bar.value = 0;
  status.textContent = t('speed.starting');
  const t0 = performance.now();
  const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  /** @param {'done' | 'error'} state @param {string} [error] */
  const finish = (state, error) => {
    worker.terminate();
    if (error) {
      status.textContent = t('speed.failed');
      out.replaceChildren(h('div.error-box', { role: 'alert', text: error }));
    }
    finished(state);
  };
  worker.onmessage = (ev) => {
    const m = ev.data;
    if (m.type === 'progress') {
      bar.value = m.total ? m.done / m.total : 0;
      const label = m.label === 'warming up' ? t('speed.warmup') : implName(m.label);
      status.textContent = m.label === 'done' ? t('speed.doneShort') : `${m.done}/${m.total} · ${label}`;
    } else if (m.type === 'note') {
      notes.push(t('speed.noteLoad', { variant: m.variant, err: m.message }));
    } else if (m.type === 'result') {
      rows.push(m.row);
      drawResults(out, rows, notes, false);
    } else if (m.type === 'done') {
      bar.value = 1;
      const threaded = m.builds.find((/** @type {{ variant: string }} */ b) => b.variant === 'simd-threaded');
      const s = ((performance.now() - t0) / 1000).toFixed(1);
      status.textContent = threaded
        ? t('speed.doneThreaded', { s, cores: m.cores, n: threaded.threads })
        : t('speed.done', { s, cores: m.cores });
      drawResults(out, m.results, notes, true);
      finish('done');
    } else if (m.type === 'error') {
      finish('error', t('speed.failedWorker', { err: m.message }));
    }
  };
  worker.onerror = (ev) => {
    ev.preventDefault();
    finish('error', t('speed.crashed', { err: ev.message || errText(ev) }));
  };
  worker.postMessage({ sizes, E: 512, H: 8, jsMaxL: 512 });
}
