// Part "speed" (§3's O(L²) cost): the speed test. The timing runs in a module Web Worker (bench-worker.js) so the page stays
// responsive, even at L = 2048; this file draws the controls, the progress bar, the table and the bar charts. On a
// cross-origin-isolated page the threaded build gets a column of its own; elsewhere a sentence says why it has none.

import { h, fmt, errText } from './util.js';
import { barChart } from './charts.js';
import { t } from './i18n.js';

const SETS = {
  full: { label: 'speed.setFull', sizes: [128, 512, 2048] },
  quick: { label: 'speed.setQuick', sizes: [32, 64, 128] },
};
const THREADED = 'attnlab simd-threaded';
/** Implementation names as shown: 'plain JS' in the page's language, the threaded build with its thread count. */
const implName = (n, threads) =>
  n === 'plain JS' ? t('speed.plainJs') : n === THREADED ? t('speed.threadedName', { n: threads }) : n;
const COLORS = { [THREADED]: '#5a2ca0', 'attnlab simd': '#1e7b34', 'attnlab scalar': '#d08a1f', 'plain JS': '#7b8794' };

export function mount(root, attn, { params }) {
  const isolated = typeof crossOriginIsolated === 'boolean' && crossOriginIsolated;
  const setSel = h(
    'select',
    { id: 'speed-set', 'aria-label': t('speed.sizes') },
    Object.entries(SETS).map(([k, s]) =>
      h('option', { value: k, text: t(s.label), selected: k === (params.get('bench') === 'quick' ? 'quick' : 'full') }),
    ),
  );
  const runBtn = h('button.primary', { type: 'button', id: 'speed-run', text: t('speed.run') });
  const bar = h('progress', { id: 'speed-progress', max: '1', value: '0' });
  const status = h('span.bench-status', { id: 'speed-status', 'aria-live': 'polite', text: t('speed.notRun') });
  const out = h('div', { id: 'speed-results' });
  const alive = h('span.note', { id: 'speed-alive', text: '' });
  root.dataset.state = 'idle';
  root.append(
    h(
      'div.controls',
      {},
      h('label.ctl', { for: 'speed-set' }, h('span', { text: t('speed.sizes') }), setSel),
      runBtn,
      h('div.ctl', {}, h('span', { text: t('speed.progress') }), h('div', {}, bar, ' ', status)),
    ),
    h('p.note', {}, t('speed.note'), ' ', alive),
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

  let worker = null;
  runBtn.addEventListener('click', () => {
    if (worker) return;
    const set = SETS[setSel.value];
    const rows = [];
    const notes = [];
    runBtn.disabled = true;
    root.dataset.state = 'running';
    out.replaceChildren();
    bar.value = 0;
    status.textContent = t('speed.starting');
    const t0 = performance.now();
    worker = new Worker(new URL('./bench-worker.js', import.meta.url), { type: 'module' });
    const finish = () => {
      worker.terminate();
      worker = null;
      runBtn.disabled = false;
    };
    worker.onmessage = (ev) => {
      const m = ev.data;
      if (m.type === 'progress') {
        bar.value = m.total ? m.done / m.total : 0;
        status.textContent =
          m.label === 'done'
            ? t('speed.doneShort')
            : `${m.done}/${m.total} · ${m.label === 'warming up' ? t('speed.warmup') : implName(m.label)}`;
      } else if (m.type === 'note') {
        notes.push(t('speed.noteLoad', { variant: m.variant, err: m.message }));
      } else if (m.type === 'result') {
        rows.push(m.row);
        draw(rows, notes, false);
      } else if (m.type === 'done') {
        bar.value = 1;
        const threaded = m.builds.find((b) => b.variant === 'simd-threaded');
        const s = ((performance.now() - t0) / 1000).toFixed(1);
        status.textContent = threaded
          ? t('speed.doneThreaded', { s, cores: m.cores, n: threaded.threads })
          : t('speed.done', { s, cores: m.cores });
        draw(m.results, notes, true);
        root.dataset.state = 'done';
        finish();
      } else if (m.type === 'error') {
        status.textContent = t('speed.failed');
        out.replaceChildren(h('div.error-box', { role: 'alert', text: t('speed.failedWorker', { err: m.message }) }));
        root.dataset.state = 'error';
        finish();
      }
    };
    worker.onerror = (ev) => {
      ev.preventDefault();
      status.textContent = t('speed.failed');
      out.replaceChildren(
        h('div.error-box', { role: 'alert', text: t('speed.crashed', { err: ev.message || errText(ev) }) }),
      );
      root.dataset.state = 'error';
      finish();
    };
    worker.postMessage({ sizes: set.sizes, E: 512, H: 8, jsMaxL: 512 });
  });

  function draw(rows, notes, final) {
    out.dataset.json = JSON.stringify(rows);
    out.dataset.final = final ? '1' : '0';
    const impls = [...new Set(rows.map((r) => r.impl))];
    const groups = [];
    for (const op of ['sdpa', 'mha'])
      for (const L of [...new Set(rows.map((r) => r.L))])
        if (rows.some((r) => r.op === op && r.L === L)) groups.push({ op, L, label: `${op.toUpperCase()}\nL=${L}` });
    const get = (g, si) => rows.find((r) => r.op === groups[g].op && r.L === groups[g].L && r.impl === impls[si]);
    const threads = rows.find((r) => r.impl === THREADED)?.threads;
    const name = (n) => implName(n, threads);
    const series = impls.map((n) => ({ name: name(n), color: COLORS[n] || '#555' }));
    const avail = out.clientWidth || 600;
    const width = avail > 900 ? Math.min(580, Math.floor((avail - 50) / 2)) : Math.max(300, Math.min(580, avail - 16));
    const msChart = barChart({
      title: t('speed.msTitle'),
      groups,
      series,
      width,
      yTitle: t('speed.msAxis'),
      log: true,
      values: (g, si) => {
        const r = get(g, si);
        return (
          r && {
            value: r.ms,
            hatched: r.extrapolated,
            label: `${fmt(r.ms, 2)} ms${r.extrapolated ? t('speed.extrapolatedTag') : ''}`,
          }
        );
      },
    });
    const gfChart = barChart({
      title: 'GFLOP/s',
      groups,
      series,
      width,
      yTitle: t('speed.gfAxis'),
      values: (g, si) => {
        const r = get(g, si);
        return (
          r && {
            value: r.gflops,
            hatched: r.extrapolated,
            label: `${fmt(r.gflops, 2)} GFLOP/s${r.extrapolated ? t('speed.extrapolatedTag') : ''}`,
          }
        );
      },
    });
    const key = h(
      'div.chart-key',
      {},
      series.map((s) => h('span', {}, h('i', { style: `background:${s.color}; height: 10px; width: 14px` }), s.name)),
      h('span', { text: t('speed.hatched') }),
    );
    const cell = (r) => {
      if (!r) return h('td', { text: '—' });
      return h(r.extrapolated ? 'td.extra' : 'td', {
        'data-impl': r.impl,
        'data-ms': r.ms,
        'data-gflops': r.gflops,
        title: r.extrapolated
          ? t('speed.extrapolatedTitle')
          : t('speed.cellTitle', { n: r.runs, min: fmt(r.min, 3), max: fmt(r.max, 3) }),
        text: `${r.extrapolated ? '≈ ' : ''}${fmt(r.ms, 1)} ms · ${fmt(r.gflops, 2)}`,
      });
    };
    const table = h(
      'table.bench-table',
      { id: 'speed-table' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          [
            t('speed.colOp'),
            'L',
            ...impls.map((n) => `${name(n)}: ms · GFLOP/s`),
            t('speed.colRatio'),
            ...(threads ? [t('speed.colThreadRatio')] : []),
          ].map((c) => h('th', { scope: 'col', text: c })),
        ),
      ),
      h(
        'tbody',
        {},
        groups.map((g, gi) => {
          const simd = get(gi, impls.indexOf('attnlab simd'));
          const js = get(gi, impls.indexOf('plain JS'));
          const thr = get(gi, impls.indexOf(THREADED));
          return h(
            'tr',
            { 'data-op': g.op, 'data-l': g.L },
            h('td', { text: g.op.toUpperCase() }),
            h('td', { text: g.L }),
            impls.map((_, si) => cell(get(gi, si))),
            h('td', {
              text:
                simd && js ? `${js.extrapolated ? '≈ ' : ''}${t('speed.faster', { x: fmt(js.ms / simd.ms, 1) })}` : '—',
            }),
            threads
              ? h('td', {
                  'data-ratio': thr && simd ? simd.ms / thr.ms : '',
                  text: thr && simd ? `× ${fmt(simd.ms / thr.ms, 2)}` : '—',
                })
              : '',
          );
        }),
      ),
    );
    const diffs = rows.filter((r) => typeof r.maxDiff === 'number');
    const worst = diffs.reduce((m, r) => Math.max(m, r.maxDiff), 0);
    const check = diffs.length
      ? h('p.note', { id: 'speed-check', text: t('speed.check', { d: worst.toExponential(1) }) })
      : '';
    out.replaceChildren(
      notes.length ? h('div.warn-box', { text: notes.join('\n') }) : '',
      key,
      h(
        'div.charts',
        {},
        h('div.chart', { 'data-chart': 'ms' }, h('div.small', { text: t('speed.timePerCall') }), msChart),
        h('div.chart', { 'data-chart': 'gflops' }, h('div.small', { text: t('speed.throughput') }), gfChart),
      ),
      h('div.table-scroll', {}, table),
      check,
    );
  }
}
