// attnlab demo entry point: picks the language (i18n.js), builds the table of contents and one section per part
// in the tutorial's order, loads the package through its public API (init from /dist/index.mjs, the built npm
// package) and mounts the parts. URL parameters: ?lang=zh|en; ?variant=simd-threaded|simd|scalar|auto picks the build
// ('auto': the threaded one where the page is cross-origin isolated);
// ?bench=quick makes the speed test small (used by the end-to-end test); ?trainseed=N is the training part's seed.

import { errText, h } from './util.js';
import { lang, t } from './i18n.js';

// id → the tutorial's sections it brings to life, and its module. Titles and intros: part.<id>.title / .intro.
export const PARTS = [
  { id: 'sbs', sec: '§1–2 · §4.1 · §4.5 · §5 · §6', mod: './parts/sbs/view.js' },
  { id: 'why', sec: '§3', mod: './parts/why/view.js' },
  { id: 'dot', sec: '§4.2 · §4.3', mod: './parts/dot/view.js' },
  { id: 'dk', sec: '§4.4', mod: './parts/dk/view.js' },
  { id: 'cross', sec: '§4.6 · §6.1', mod: './parts/cross/view.js' },
  { id: 'heads', sec: '§6.2–6.4 · §7', mod: './parts/heads/view.js' },
  { id: 'mha', sec: '§2.3 · §7.1 · §8.1', mod: './parts/mha/view.js' },
  { id: 'decode', sec: '§6.4 · §7 · §11', mod: './parts/decode/view.js' },
  { id: 'myths', sec: '§8', mod: './parts/myths/view.js' },
  { id: 'pitfalls', sec: '§9', mod: './parts/pitfalls/view.js' },
  { id: 'train', sec: '§10', mod: './parts/train/view.js' },
  { id: 'speed', sec: '§3 · O(L²)', mod: './parts/speed/view.js' },
  { id: 'model', sec: '§7', mod: './parts/model/view.js' },
];

const params = new URLSearchParams(location.search);
const VARIANTS = ['simd-threaded', 'simd', 'scalar', 'auto'];
const variant = VARIANTS.includes(params.get('variant')) ? params.get('variant') : 'auto';
const badge = document.getElementById('build');

function applyStatic() {
  document.documentElement.lang = lang === 'zh' ? 'zh-CN' : 'en';
  document.title = t('page.title');
  for (const el of document.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
  for (const el of document.querySelectorAll('[data-i18n-html]')) el.innerHTML = t(el.dataset.i18nHtml); // our own catalogue
  for (const el of document.querySelectorAll('[data-i18n-title]')) el.title = t(el.dataset.i18nTitle);
  for (const el of document.querySelectorAll('[data-i18n-aria]')) el.setAttribute('aria-label', t(el.dataset.i18nAria));
  for (const code of ['zh', 'en']) {
    // the switch keeps the other parameters
    const a = document.getElementById(`lang-${code}`);
    const p = new URLSearchParams(location.search);
    p.set('lang', code);
    a.href = `?${p}`;
    if (code === lang) a.setAttribute('aria-current', 'true');
  }
}

function buildSections() {
  const toc = document.getElementById('toc');
  const main = document.getElementById('parts');
  PARTS.forEach((p, n) => {
    toc.append(
      h(
        'a',
        { href: `#part-${p.id}` },
        `${n + 1} · ${t(`part.${p.id}.toc`)}`,
        h('span.toc-sec', { text: ` ${p.sec}` }),
      ),
    );
    main.append(
      h(
        `section.part#part-${p.id}`,
        { 'aria-labelledby': `h-${p.id}` },
        h(
          `h2#h-${p.id}`,
          {},
          h('span.num', { text: String(n + 1) }),
          t(`part.${p.id}.title`),
          h('span.sec', { title: t('page.secTitle'), text: p.sec }),
        ),
        h('p.intro', { html: t(`part.${p.id}.intro`) }),
        h(`div#${p.id}`),
      ),
    );
  });
}

function fatal(msg) {
  const box = document.getElementById('fatal');
  box.hidden = false;
  box.textContent = msg;
  badge.textContent = t('page.notLoaded');
  document.body.dataset.ready = 'error';
}

async function main() {
  applyStatic();
  buildSections();
  const pick = document.getElementById('variant-pick');
  pick.value = variant;
  pick.addEventListener('change', () => {
    const p = new URLSearchParams(location.search);
    p.set('variant', pick.value);
    location.search = p.toString();
  });
  let init;
  try {
    ({ init } = await import('/dist/index.mjs'));
  } catch (e) {
    fatal(t('page.importFailed', { err: errText(e) }));
    return;
  }
  let attn;
  try {
    attn = await init({ variant });
  } catch (e) {
    fatal(t('page.initFailed', { variant, err: errText(e) }));
    return;
  }
  badge.dataset.variant = attn.variant;
  const build = { scalar: 'page.scalar', simd: 'page.simd', 'simd-threaded': 'page.threaded' }[attn.variant];
  badge.textContent = t('page.badge', { version: attn.version, build: t(build, { n: attn.threads }) });
  badge.dataset.threads = attn.threads;
  document.title = `${t('page.title')} (${attn.variant})`;

  for (const p of PARTS) {
    const el = document.getElementById(p.id);
    try {
      const m = await import(p.mod);
      await m.mount(el, attn, { params });
      el.dataset.ready = '1';
    } catch (e) {
      console.error(e);
      el.dataset.ready = 'error';
      el.append(h('div.error-box', { text: t('page.partFailed', { err: errText(e) }) }));
    }
  }
  window.attnlabDemo = { attn, variant: attn.variant, threads: attn.threads, lang };
  document.body.dataset.ready = '1';
}

main();
