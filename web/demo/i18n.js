// @ts-check
// The page's language: ?lang=zh|en, else the browser's (zh-* → 中文, anything else → English). Every visible
// string comes from one catalogue per language (i18n/zh.js, i18n/en.js, the same keys; each part's keys start with
// its id, e.g. sbs.*, pf.*); t(key, vars) looks one up and fills {name} placeholders. Switching the language reloads
// the page with ?lang= set. No DOM: in Node (tests) the language is English.

import en from './i18n/en.js';
import zh from './i18n/zh.js';

/** @typedef {'zh' | 'en'} Lang */

/** @type {Record<Lang, Record<string, string>>} */
export const CATALOGUES = { zh, en };

/**
 * 'zh' or 'en' from a ?lang= value (wins when valid) and a navigator.language value.
 * @param {string | null} param
 * @param {string | undefined} navLang
 * @returns {Lang}
 */
export function pickLang(param, navLang) {
  if (param === 'zh' || param === 'en') return param;
  return /^zh\b/i.test(navLang || '') ? 'zh' : 'en';
}

/** @returns {Lang} */
function pageLang() {
  if (typeof location === 'undefined' || typeof navigator === 'undefined') return 'en';
  return pickLang(new URLSearchParams(location.search).get('lang'), navigator.language);
}

/** The page's language. */
export const LANG = pageLang();

/**
 * Fill {name} placeholders of a catalogue string.
 * @param {string} s
 * @param {Record<string, unknown>} [vars]
 */
export function fill(s, vars) {
  return vars ? s.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m)) : s;
}

/**
 * The text of key in the page's language. A missing key is a bug: it is logged and shown as the key.
 * @param {string} key
 * @param {Record<string, unknown>} [vars]
 */
export function t(key, vars) {
  const s = CATALOGUES[LANG][key];
  if (s === undefined) {
    console.error(`i18n: no "${key}" in the ${LANG} catalogue`);
    return key;
  }
  return fill(s, vars);
}
