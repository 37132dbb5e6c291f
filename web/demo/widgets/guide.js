// @ts-check
// "跟着做" (a guided path, #28): two or three short cards per part, each saying what to do in the live panel and what
// to look for. One card is shown at a time, with previous/next buttons (and ← → while focus is in the box); the
// cards are the catalogue's guide.<part>.1, .2, .3 (HTML: <b>, <code>, links). Ids: #<part>-guide (data-step, the
// shown card from 1, data-steps), #<part>-guide-prev, #<part>-guide-next. Also the link to another part's section
// (a part showing untrained noise points to the poem chapter's trained model).

import { h } from './dom.js';
import { CATALOGUES, LANG, t } from '../i18n.js';

/** The most cards a part has. */
export const MAX_CARDS = 3;

/**
 * The catalogue's cards of a part, in order (guide.<part>.1 …), in the page's language.
 * @param {string} part
 * @param {Record<string, string>} [catalogue]
 */
export function guideCards(part, catalogue = CATALOGUES[LANG]) {
  const out = [];
  for (let n = 1; n <= MAX_CARDS && catalogue[`guide.${part}.${n}`] !== undefined; n++)
    out.push(catalogue[`guide.${part}.${n}`]);
  return out;
}

/**
 * Shows card k of the list: its number, the buttons' states and the count.
 * @param {HTMLElement} box
 * @param {HTMLElement[]} items
 * @param {number} k  from 0
 */
function showCard(box, items, k) {
  items.forEach((li, i) => (li.hidden = i !== k));
  box.dataset.step = String(k + 1);
  const [prev, next] = /** @type {HTMLButtonElement[]} */ ([...box.querySelectorAll('.guide-nav button')]);
  prev.disabled = k === 0;
  next.disabled = k === items.length - 1;
  box.querySelector('.guide-count').textContent = t('guide.count', { k: k + 1, n: items.length });
}

/**
 * The guided path of a part, or null when the catalogue has no cards for it.
 * @param {string} part
 */
export function guidePath(part) {
  const cards = guideCards(part);
  if (!cards.length) return null;
  const items = cards.map((html, i) => h('li.guide-card', { value: i + 1, html }));
  const btn = (/** @type {string} */ dir) =>
    h('button', { type: 'button', id: `${part}-guide-${dir}`, text: t(`guide.${dir}`) });
  const [prev, next] = [btn('prev'), btn('next')];
  const box = h(
    'section.guide',
    { id: `${part}-guide`, 'aria-label': t('guide.aria'), 'data-steps': cards.length },
    h('p.guide-head', {}, h('b', { text: t('guide.title') }), ' ', h('span.guide-count', { 'aria-live': 'polite' })),
    h('ol.guide-steps', {}, items),
    h('div.guide-nav', {}, prev, next),
  );
  let k = 0;
  const go = (/** @type {number} */ d) => {
    showCard(box, items, (k = Math.max(0, Math.min(items.length - 1, k + d))));
    if (prev.disabled && document.activeElement === prev) next.focus(); // keep the focus on a live button
    if (next.disabled && document.activeElement === next) prev.focus();
  };
  prev.addEventListener('click', () => go(-1));
  next.addEventListener('click', () => go(1));
  box.addEventListener('keydown', (e) => {
    if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
    if (/^(INPUT|SELECT|TEXTAREA)$/.test(/** @type {HTMLElement} */ (e.target).tagName)) return;
    go(e.key === 'ArrowLeft' ? -1 : 1);
    e.preventDefault();
  });
  showCard(box, items, 0);
  return box;
}

/**
 * Numbers a card quotes from its panel: a card's <output data-guide="name"> shows what the part computed (the same
 * data the panel draws), never a number typed into the catalogue.
 * @param {string} part
 * @param {Record<string, string>} values  name → text
 */
export function fillGuide(part, values) {
  for (const [name, text] of Object.entries(values))
    for (const o of document.querySelectorAll(`#${part}-guide [data-guide="${name}"]`)) o.textContent = text;
}

/**
 * A link to another part's section, e.g. from untrained noise to the poem chapter's trained model.
 * @param {string} part  the target part's id
 * @param {string} key  the link's text
 */
export function partLink(part, key) {
  return h('a.part-link', { href: `#part-${part}`, 'data-to': part, text: t(key) });
}
