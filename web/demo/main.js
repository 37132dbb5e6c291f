// @ts-check
// attnlab demo entry point: picks the language (i18n.js), builds the table of contents and one section per part in
// the tutorial's order, loads the package through its public API (init from attnlab.js, the built npm package) and
// mounts the parts (parts/<id>/view.js). URL parameters: ?lang=zh|en; ?variant=simd-threaded|simd|scalar|auto picks
// the build ('auto': the threaded one where the page is cross-origin isolated); ?bench=quick makes the speed test
// small (used by the end-to-end test); ?trainseed=N is the training part's seed; ?layer=URL loads a state dict.

import { h } from './widgets/dom.js';
import { guidePath } from './widgets/guide.js';
import { glossary } from './widgets/glossary.js';
import { errText } from './shared/format.js';
import { LANG, t } from './i18n.js';

/**
 * A part's view module: mount(root, attn, page) builds the part into its section.
 * @typedef {{ mount: (root: HTMLElement, attn: import('./attnlab.js').Attnlab, page: { params: URLSearchParams }) => void | Promise<void> }} PartModule
 */

// id → the tutorial's sections it brings to life; the part is parts/<id>/view.js, its title and intro
// part.<id>.title / .intro.
export const PARTS = [
  { id: 'simple', sec: '§1–2' },
  { id: 'why', sec: '§3' },
  { id: 'dot', sec: '§4.2 · §4.3' },
  { id: 'dk', sec: '§4.4' },
  { id: 'sbs', sec: '§4.1 · §4.5 · §5 · §6' },
  { id: 'cross', sec: '§4.6 · §6.1' },
  { id: 'heads', sec: '§6.2–6.4 · §7' },
  { id: 'mha', sec: '§2.3 · §7.1 · §8.1' },
  { id: 'decode', sec: '§6.4 · §7 · §11' },
  { id: 'myths', sec: '§8' },
  { id: 'pitfalls', sec: '§9' },
  { id: 'train', sec: '§10' },
  { id: 'poem', sec: '§7.2 · §8.1 · §8.2 · §10.1 · §11' },
  { id: 'explain', sec: '§8.2' },
  { id: 'couplet', sec: '§6.1 · §10.1 · §11' },
  { id: 'speed', sec: '§3 · O(L²)' },
  { id: 'model', sec: '§7' },
];

const VARIANTS = ['simd-threaded', 'simd', 'scalar', 'auto'];

function applyStatic() {
  document.documentElement.lang = LANG === 'zh' ? 'zh-CN' : 'en';
  document.title = t('page.title');
  /** @param {string} attr @param {(el: HTMLElement, text: string) => void} set */
  const each = (attr, set) => {
    for (const el of document.querySelectorAll(`[data-${attr}]`)) {
      const e = /** @type {HTMLElement} */ (el);
      set(e, t(e.getAttribute(`data-${attr}`)));
    }
  };
  each('i18n', (el, s) => (el.textContent = s));
  each('i18n-html', (el, s) => (el.innerHTML = s)); // our own catalogue
  each('i18n-title', (el, s) => (el.title = s));
  each('i18n-aria', (el, s) => el.setAttribute('aria-label', s));
  for (const code of ['zh', 'en']) {
    // the switch keeps the other parameters
    const a = /** @type {HTMLAnchorElement} */ (document.getElementById(`lang-${code}`));
    const p = new URLSearchParams(location.search);
    p.set('lang', code);
    a.href = `?${p}`;
    if (code === LANG) a.setAttribute('aria-current', 'true');
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
        guidePath(p.id),
        h(`div#${p.id}`),
      ),
    );
  });
}

/** @param {string} msg */
function fatal(msg) {
  const box = document.getElementById('fatal');
  box.hidden = false;
  box.textContent = msg;
  document.getElementById('build').textContent = t('page.notLoaded');
  document.body.dataset.ready = 'error';
}

/** @param {import('./attnlab.js').Variant | 'auto'} variant */
function variantPicker(variant) {
  const pick = /** @type {HTMLSelectElement} */ (document.getElementById('variant-pick'));
  pick.value = variant;
  pick.addEventListener('change', () => {
    const p = new URLSearchParams(location.search);
    p.set('variant', pick.value);
    location.search = p.toString();
  });
}

/** @param {import('./attnlab.js').Attnlab} attn */
function showBuild(attn) {
  const badge = document.getElementById('build');
  badge.dataset.variant = attn.variant;
  const build = { scalar: 'page.scalar', simd: 'page.simd', 'simd-threaded': 'page.threaded' }[attn.variant];
  badge.textContent = t('page.badge', { version: attn.version, build: t(build, { n: attn.threads }) });
  badge.dataset.threads = String(attn.threads);
  document.title = `${t('page.title')} (${attn.variant})`;
}

/**
 * Every part into its section, in order; a part that fails says so in its section and the others go on.
 * @param {import('./attnlab.js').Attnlab} attn
 * @param {URLSearchParams} params
 */
async function mountParts(attn, params) {
  for (const p of PARTS) {
    const el = document.getElementById(p.id);
    try {
      const m = /** @type {PartModule} */ (await import(`./parts/${p.id}/view.js`));
      await m.mount(el, attn, { params });
      el.dataset.ready = '1';
    } catch (e) {
      console.error(e);
      el.dataset.ready = 'error';
      el.append(h('div.error-box', { text: t('page.partFailed', { err: errText(e) }) }));
    }
  }
}

async function main() {
  const params = new URLSearchParams(location.search);
  const variant = /** @type {import('./attnlab.js').Variant | 'auto'} */ (
    VARIANTS.includes(params.get('variant')) ? params.get('variant') : 'auto'
  );
  applyStatic();
  buildSections();
  document.body.append(...glossary());
  variantPicker(variant);
  let init;
  try {
    ({ init } = await import('./attnlab.js'));
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
  showBuild(attn);
  await mountParts(attn, params);
  Object.assign(window, { attnlabDemo: { attn, variant: attn.variant, threads: attn.threads, lang: LANG } });
  document.body.dataset.ready = '1';
}

main();
