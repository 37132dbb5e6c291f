// The page's language: ?lang=zh|en, else the browser's (zh-* → 中文, anything else → English). Every visible
// string comes from one catalogue per language (i18n/zh.js, i18n/en.js, the same keys); t(key, vars) looks one
// up and fills {name} placeholders. Switching the language reloads the page with ?lang= set.

import en from './i18n/en.js';
import zh from './i18n/zh.js';

export const CATALOGUES = { zh, en };

/** 'zh' or 'en' from a ?lang= value (wins when valid) and a navigator.language value. */
export function pickLang(param, navLang) {
  if (param === 'zh' || param === 'en') return param;
  return /^zh\b/i.test(navLang || '') ? 'zh' : 'en';
}

const inPage = typeof location !== 'undefined' && typeof navigator !== 'undefined';
export const lang = inPage ? pickLang(new URLSearchParams(location.search).get('lang'), navigator.language) : 'en';

/** Fill {name} placeholders of a catalogue string. */
export function fill(s, vars) {
  return vars ? s.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m)) : s;
}

/** The text of key in the page's language. A missing key is a bug: it is logged and shown as the key. */
export function t(key, vars) {
  const s = CATALOGUES[lang][key];
  if (s === undefined) {
    console.error(`i18n: no "${key}" in the ${lang} catalogue`);
    return key;
  }
  return fill(s, vars);
}
