// @ts-check
// A horizontal colour legend: a gradient bar with three tick labels and a caption, optionally a marked value (the
// weight 1/n of a uniform row, so that near-uniform maps read as such).

import { fmt } from '../shared/format.js';
import { seqColor, divColor } from './colours.js';

/**
 * kind 'seq' ([lo, hi]; colour(t) for t in [0, 1], default seqColor, e.g. attnlab/viz's weightColour for its heat
 * maps) or 'div' ([-m, m]).
 * @param {'seq' | 'div'} kind
 * @param {number} lo
 * @param {number} hi
 * @param {string} caption
 * @param {((t: number) => string) | null} [colour]
 * @param {{ value: number, label: string } | null} [mark] a tick on the bar at value, with its label
 */
export function legend(kind, lo, hi, caption, colour = kind === 'seq' ? seqColor : null, mark = null) {
  const el = document.createElement('div');
  el.className = caption.length > 28 ? 'legend wide' : 'legend';
  const bar = document.createElement('div');
  bar.className = 'legend-bar';
  const stops = [];
  for (let i = 0; i <= 10; i++) {
    const t = i / 10;
    stops.push(colour ? colour(t) : divColor(lo + (hi - lo) * t, Math.max(Math.abs(lo), Math.abs(hi))));
  }
  bar.style.background = `linear-gradient(to right, ${stops.join(', ')})`;
  const ticks = document.createElement('div');
  ticks.className = 'legend-ticks';
  for (const v of [lo, (lo + hi) / 2, hi]) {
    const s = document.createElement('span');
    s.textContent = fmt(v, 2);
    ticks.append(s);
  }
  const cap = document.createElement('div');
  cap.className = 'legend-caption';
  cap.textContent = caption;
  el.append(cap, bar, ticks);
  if (mark) {
    const at = `${(100 * (mark.value - lo)) / (hi - lo)}%`;
    const tick = document.createElement('b');
    tick.className = 'legend-mark';
    tick.style.left = at;
    const label = document.createElement('div');
    label.className = 'legend-mark-label';
    label.textContent = mark.label;
    bar.append(tick);
    el.append(label);
    el.dataset.mark = String(mark.value);
  }
  return el;
}
