// @ts-check
// The glossary (术语表, #37): a button fixed at the page's corner, so the learner can open it from any part, and a
// dialog with every term of i18n/terms.js (glossaryTerms): the page language's word first, the other language's
// after it, and one line of explanation from the catalogue (glossary.def.*). Ids: #glossary-open, #glossary (the
// dialog, data-terms), #glossary-list (dt[data-term] + dd), #glossary-close. glossaryEntries has no DOM.

import { h } from './dom.js';
import { CATALOGUES, LANG, t } from '../i18n.js';
import { glossaryTerms } from '../i18n/terms.js';

/**
 * The glossary's rows in a language: the term as the page says it, the other language's word, the explanation.
 * @param {'zh' | 'en'} lang
 * @param {Record<string, string>} [catalogue]
 */
export function glossaryEntries(lang, catalogue = CATALOGUES[lang]) {
  return glossaryTerms().map(({ en, zh, key }) => {
    const def = catalogue[key];
    if (!def) throw new RangeError(`catalogue: no ${key} for the glossary term "${en}"`);
    return { term: lang === 'zh' ? zh : en, other: lang === 'zh' ? en : zh, def, en };
  });
}

/** The button and its dialog, to append to the page's body. */
export function glossary() {
  const rows = glossaryEntries(LANG).flatMap((e) => [
    h(
      'dt',
      { 'data-term': e.en },
      e.term,
      h('span.glossary-other', { lang: LANG === 'zh' ? 'en' : 'zh-CN', text: e.other }),
    ),
    h('dd', { text: e.def }),
  ]);
  const close = h('button#glossary-close', { type: 'button', text: t('glossary.close') });
  const dialog = /** @type {HTMLDialogElement} */ (
    h(
      'dialog#glossary',
      { 'aria-labelledby': 'glossary-title', 'data-terms': rows.length / 2 },
      h('h2#glossary-title', { text: t('glossary.title') }),
      h('p.note', { text: t('glossary.note') }),
      h('dl#glossary-list', {}, rows),
      h('div.controls', {}, close),
    )
  );
  close.addEventListener('click', () => dialog.close());
  const open = h('button#glossary-open', {
    type: 'button',
    'aria-label': t('glossary.openAria'),
    text: t('glossary.open'),
  });
  open.addEventListener('click', () => dialog.showModal());
  return [open, dialog];
}
