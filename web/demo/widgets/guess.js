// @ts-check
// "先猜再看" (guess first, #28): a question, and its answer behind a button. The answer is computed when it is asked
// for (answer() fills the catalogue's text with the numbers of that moment), never written into the catalogue; the
// answer's main number is kept as data-value for tests. Ids: #<part>-guess, #<part>-reveal, #<part>-answer.

import { h } from './dom.js';
import { t } from '../i18n.js';

/**
 * @param {string} part  the part's id (the card's ids start with it)
 * @param {string} question  plain text
 * @param {() => { html: string, value?: number | string }} answer  computed on click
 */
export function guessCard(part, question, answer) {
  const out = h('p', { id: `${part}-answer`, hidden: true });
  const btn = h('button', { type: 'button', id: `${part}-reveal`, text: t('guess.reveal') });
  btn.addEventListener('click', () => {
    const a = answer();
    out.innerHTML = a.html;
    if (a.value !== undefined) out.dataset.value = String(a.value);
    out.hidden = false;
    btn.hidden = true;
  });
  return h(
    'div.guess',
    { id: `${part}-guess` },
    h('p', {}, h('b', { text: t('guess.title') }), ' ', question),
    btn,
    out,
  );
}
