// @ts-check
// The page's two element builders: h() for HTML, svg() for SVG. No framework.

/** @typedef {import('../types/dom.js').Child} Child */

/**
 * h('div.class#id', { attr: value, onclick: fn, text, html }, ...children). Attributes that are undefined, null or
 * false are left out, true is an empty attribute; on* are event listeners; `text` and `html` set the content.
 * @template {string} S
 * @param {S} spec
 * @param {Record<string, any>} [attrs]
 * @param {...Child} children
 * @returns {import('../types/dom.js').ElementOf<S>}
 */
export function h(spec, attrs = {}, ...children) {
  const [, tag = 'div', rest = ''] = spec.match(/^([a-z0-9]*)(.*)$/i);
  const el = document.createElement(tag || 'div');
  for (const part of rest.match(/[.#][^.#]+/g) || []) {
    if (part[0] === '.') el.classList.add(part.slice(1));
    else el.id = part.slice(1);
  }
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'text') el.textContent = v;
    else if (k === 'html') el.innerHTML = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of /** @type {unknown[]} */ (children).flat(Infinity)) {
    if (c !== null && c !== undefined && c !== false) el.append(/** @type {Node | string} */ (c));
  }
  return /** @type {any} */ (el);
}

/**
 * svg('line', { x1, y1, … }, ...children): an SVG element; attributes as h()'s (no `html`).
 * @template {keyof SVGElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, any>} [attrs]
 * @param {...Child} children
 * @returns {SVGElementTagNameMap[K]}
 */
export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'text') el.textContent = v;
    else el.setAttribute(k, v);
  }
  for (const c of children.flat()) if (c) el.append(/** @type {Node | string} */ (c));
  return el;
}
