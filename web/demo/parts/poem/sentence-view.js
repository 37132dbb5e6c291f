// @ts-check
// Part "poem", the panel "the tutorial's sentence through this model" (§2.3, §7.1): two presets (the sentence as the
// tutorial writes it, and without its comma), 叫's row in every layer and head (draw.js's drawRows), and a card whose
// every number is sentence.js's, computed from the model at run time. Hooks: #poem-sentence[data-preset] with the
// card's numbers as data-*, #poem-sentence-rows[data-matrix] (rows = layer·H + head, columns = the keys).

import { h } from '../../widgets/dom.js';
import { fmt } from '../../shared/format.js';
import { t } from '../../i18n.js';
import { drawRows, layerHead, weightLegend } from './draw.js';

/** @typedef {ReturnType<typeof import('./sentence.js').sentenceStudy>} Study */
/** @typedef {'comma' | 'plain'} Preset */

/**
 * The panel's body: the two preset buttons, the card and the canvas of 叫's rows.
 * @param {(p: Preset) => void} onPick
 */
export function sentenceBody(onPick) {
  const buttons = /** @type {const} */ (['comma', 'plain']).map((p) => {
    const b = h(`button#poem-sentence-${p}`, { type: 'button', disabled: true, text: t(`poem.sentence.${p}`) });
    b.addEventListener('click', () => onPick(p));
    return b;
  });
  return [
    h('div.controls', {}, ...buttons),
    h('p.poem-sentence-text#poem-sentence-text', { lang: 'zh-CN' }),
    h('p.poem-card#poem-sentence-card'),
    h('div.poem-scroll', {}, h('canvas#poem-sentence-rows')),
    weightLegend(),
    h('p.note', { html: t('poem.sentence.moral') }),
  ];
}

/**
 * A head's label with its measured name, when it has one.
 * @param {{ layer: number, head: number }} at
 * @param {{ pattern: string }[][] | undefined} names
 */
function named(at, names) {
  const p = names?.[at.layer][at.head]?.pattern;
  return p
    ? t('poem.sentence.named', { lh: layerHead(at.layer, at.head), name: t(`poem.pattern.${p}`) })
    : layerHead(at.layer, at.head);
}

/**
 * Show one preset of a study: its text, the card (numbers from the study) and 叫's rows.
 * @param {HTMLElement} box  #poem-sentence
 * @param {Study} study
 * @param {Preset} preset
 * @param {{ names?: { pattern: string }[][], width: number }} o
 */
export function showSentence(box, study, preset, { names, width }) {
  const s = study[preset];
  const { feed, cat, uniform, heads } = s.claims;
  const w = (/** @type {number} */ x) => fmt(x, 2);
  /** @param {{ top: { key: string, weight: number } }} c @param {string} on  the key the claim is about */
  const top = (c, on) =>
    c.top.key === on ? t('poem.sentence.top.self') : t('poem.sentence.top.other', { k: c.top.key, w: w(c.top.weight) });
  box.querySelector('#poem-sentence-text').textContent = s.text;
  box.querySelector('#poem-sentence-card').textContent = t('poem.sentence.card', {
    heads,
    feed: named(feed, names),
    fw: w(feed.weight),
    feedTop: top(feed, '喂'),
    cat: named(cat, names),
    cw: w(cat.weight),
    catTop: top(cat, '猫'),
    u: w(uniform),
    n: s.labels.length,
    other: t(`poem.sentence.other.${preset}`),
    ek: s.feedElsewhere.key,
    ew: w(s.feedElsewhere.weight),
  });
  const canvas = /** @type {HTMLCanvasElement} */ (box.querySelector('#poem-sentence-rows'));
  drawRows(canvas, s.rows, s.labels, width, t('poem.sentence.rowsTitle'));
  Object.assign(box.dataset, {
    preset,
    feedLayer: feed.layer,
    feedHead: feed.head,
    feedWeight: feed.weight,
    feedKey: s.labels.indexOf('喂'),
    catLayer: cat.layer,
    catHead: cat.head,
    catWeight: cat.weight,
    catKey: s.labels.indexOf('猫'),
    uniform,
    keys: s.labels.length,
    elsewhereKey: s.feedElsewhere.key,
    elsewhereWeight: s.feedElsewhere.weight,
  });
  for (const p of ['comma', 'plain'])
    box.querySelector(`#poem-sentence-${p}`).setAttribute('aria-pressed', String(p === preset));
}

/**
 * Enable the presets once a model is there.
 * @param {HTMLElement} box
 */
export function enableSentence(box) {
  for (const b of box.querySelectorAll('.controls button')) /** @type {HTMLButtonElement} */ (b).disabled = false;
}
