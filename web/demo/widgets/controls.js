// @ts-check
// The page's form controls, built the same way in every part: radio groups, selects and labelled controls.

import { h } from './dom.js';

/**
 * @template {string} V
 * @typedef {object} RadiosOptions
 * @property {string} name the group's name
 * @property {[V, string][]} options [value, label]
 * @property {V} value the one checked
 * @property {(value: V) => void} onChange
 * @property {(value: V) => string} [id] each input's id
 */

/**
 * Radio buttons, each an input inside its label: <label><input type=radio>label</label>.
 * @template {string} V
 * @param {RadiosOptions<V>} o
 * @returns {HTMLLabelElement[]}
 */
export function radios(o) {
  return o.options.map(([value, label]) =>
    h(
      'label',
      {},
      h('input', {
        type: 'radio',
        name: o.name,
        value,
        id: o.id ? o.id(value) : undefined,
        checked: value === o.value,
        onchange: () => o.onChange(value),
      }),
      label,
    ),
  );
}

/**
 * The input of a radio label made by radios().
 * @param {HTMLLabelElement} label
 */
export const radioInput = (label) => /** @type {HTMLInputElement} */ (label.firstChild);

/**
 * @template {string | number} V
 * @typedef {object} SelectOptions
 * @property {string} id
 * @property {string} label its aria-label
 * @property {[V, string][]} options [value, text]
 * @property {V} [value] the one selected
 * @property {(value: string) => void} [onChange]
 */

/**
 * A <select> of the given options.
 * @template {string | number} V
 * @param {SelectOptions<V>} o
 */
export function select(o) {
  const sel = h(
    'select',
    { id: o.id, 'aria-label': o.label },
    o.options.map(([v, text]) => h('option', { value: String(v), text, selected: v === o.value })),
  );
  if (o.onChange) sel.addEventListener('change', () => o.onChange(sel.value));
  return sel;
}

/**
 * A control under its caption: <label class="ctl" for=id><span>caption</span>control</label>.
 * @param {string} id the control's id
 * @param {string | Node} caption
 * @param {...(Node | string)} control
 */
export function labelled(id, caption, ...control) {
  return h('label.ctl', { for: id }, typeof caption === 'string' ? h('span', { text: caption }) : caption, ...control);
}

/**
 * A checkbox before its text: <label class="ctl inline" for=id><input><span>text</span></label>.
 * @param {HTMLInputElement} input
 * @param {string | Node} text
 */
export function inline(input, text) {
  return h('label.ctl.inline', { for: input.id }, input, typeof text === 'string' ? h('span', { text }) : text);
}

/**
 * A captioned group of controls that is not one labelled input (e.g. radios): <div class="ctl"><span>…</span>…</div>.
 * @param {string} caption
 * @param {...(Node | string | Node[])} body
 */
export function group(caption, ...body) {
  return h('div.ctl', {}, h('span', { text: caption }), ...body);
}
