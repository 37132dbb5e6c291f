// @ts-check
// Part 1: attention step by step on a small editable Q, K, V, opening on the tutorial's §5 example (sec5.js). The
// controls write to the part's store; every change runs compute.js's runStages and redraws the pipeline (stages.js).

import { h } from '../../widgets/dom.js';
import { QKV } from '../../widgets/colours.js';
import { radios, radioInput, labelled, group } from '../../widgets/controls.js';
import { createStore, setElement } from '../../store.js';
import { t } from '../../i18n.js';
import { DEFAULT, START, optionsText, runStages, toggled } from './compute.js';
import { drawPipeline } from './stages.js';
import { sec5Box } from './sec5.js';

/** @typedef {import('./compute.js').SbsState} SbsState */
/** @typedef {import('../../store.js').Store<SbsState>} SbsStore */

/**
 * The Q, K, V boxes: typing clears the clicked cells.
 * @param {SbsStore} store
 */
function matrixInputs(store) {
  /** @param {'q' | 'k' | 'v'} name */
  const box = (name) => {
    const ta = h(
      'textarea',
      { id: `sbs-in-${name}`, spellcheck: 'false', 'aria-label': t('sbs.matrixAria', { name: name.toUpperCase() }) },
      DEFAULT,
    );
    ta.addEventListener('input', () => store.set({ [name]: ta.value, masked: new Set() }));
    return ta;
  };
  return { q: box('q'), k: box('k'), v: box('v') };
}

/**
 * The scale radios with the custom scale box, and the temperature slider.
 * @param {SbsStore} store
 */
function scaleControls(store) {
  const scaleRadios = radios({
    name: 'sbs-scale',
    options: [
      ['default', '1/√dₖ'],
      ['off', t('sbs.scaleOff')],
      ['custom', t('sbs.scaleCustom')],
    ],
    value: store.get().scaleMode,
    onChange: (scaleMode) => store.set({ scaleMode }),
  });
  const customIn = h('input', {
    type: 'number',
    id: 'sbs-scale-custom',
    step: '0.05',
    value: '0.5',
    'aria-label': t('sbs.scaleCustomAria'),
  });
  customIn.addEventListener('input', () => {
    radioInput(scaleRadios[2]).checked = true;
    store.set({ custom: Number(customIn.value), scaleMode: 'custom' });
  });
  const tempVal = h('span.mono', { text: '1.00' });
  const tempIn = h('input', {
    type: 'range',
    id: 'sbs-temp',
    min: '0.1',
    max: '5',
    step: '0.05',
    value: '1',
    'aria-label': t('sbs.tempAria'),
  });
  tempIn.addEventListener('input', () => {
    tempVal.textContent = Number(tempIn.value).toFixed(2);
    store.set({ temp: Number(tempIn.value) });
  });
  return {
    scale: group(t('sbs.scale'), h('div.radio-row', {}, scaleRadios, customIn)),
    temp: labelled('sbs-temp', h('span', {}, t('sbs.temp'), ' T = ', tempVal), tempIn),
  };
}

/**
 * The "进阶" fold, closed at first: the −∞ fill, the temperature, attnlab's own rules and their notes. The
 * tutorial's path (0/1 mask, 1/√dₖ) stays outside it.
 * @param {SbsStore} store
 * @param {HTMLElement} fillCtl
 * @param {HTMLElement} tempCtl
 */
function advancedFold(store, fillCtl, tempCtl) {
  return h(
    'details.advanced',
    { id: 'sbs-advanced' },
    h('summary', { text: t('sbs.advanced') }),
    h('div.controls', {}, fillCtl, tempCtl),
    modernControls(store),
    h('p.note', { id: 'sbs-temp-note', text: t('sbs.tempNote') }),
    h('p.note', { id: 'sbs-modern-note', text: t('sbs.modernNote') }),
  );
}

/**
 * attnlab's own rules: isCausal, window and softcap.
 * @param {SbsStore} store
 */
function modernControls(store) {
  const causalRadios = radios({
    name: 'sbs-causal',
    options: [
      ['off', t('sbs.causalOff')],
      ['upper-left', t('sbs.causalUpperLeft')],
      ['lower-right', t('sbs.causalLowerRight')],
    ],
    value: store.get().causal,
    id: (v) => `sbs-causal-${v}`,
    onChange: (causal) => store.set({ causal }),
  });
  /** @param {'left' | 'right'} side @param {0 | 1} index @param {string} aria */
  const windowIn = (side, index, aria) => {
    const el = h('input', {
      type: 'number',
      id: `sbs-window-${side}`,
      step: '1',
      min: '-1',
      value: '-1',
      'aria-label': aria,
    });
    el.addEventListener('input', () => setElement(store, 'window', index, el.value));
    return el;
  };
  const softcapIn = h('input', { type: 'checkbox', id: 'sbs-softcap' });
  softcapIn.addEventListener('change', () => store.set({ softcapOn: softcapIn.checked }));
  const softcapC = h('input', {
    type: 'number',
    id: 'sbs-softcap-c',
    step: '0.5',
    min: '0.1',
    value: store.get().softcap,
    'aria-label': t('sbs.softcapAria'),
  });
  softcapC.addEventListener('input', () => {
    softcapIn.checked = true;
    store.set({ softcap: softcapC.value, softcapOn: true });
  });
  const bracket = (/** @type {string} */ text) => h('span.mono', { text });
  return h(
    'div.controls',
    { id: 'sbs-modern' },
    group(t('sbs.causal'), h('div.radio-row', {}, causalRadios)),
    group(
      t('sbs.window'),
      h(
        'div.radio-row',
        {},
        bracket('['),
        windowIn('left', 0, t('sbs.windowLeftAria')),
        bracket(','),
        windowIn('right', 1, t('sbs.windowRightAria')),
        bracket(']'),
      ),
    ),
    group(
      t('sbs.softcap'),
      h('div.radio-row', {}, h('label', { for: 'sbs-softcap' }, softcapIn, t('sbs.softcapOn')), softcapC),
    ),
  );
}

/**
 * The fill radios and the two buttons.
 * @param {SbsStore} store
 * @param {ReturnType<typeof matrixInputs>} boxes
 */
function maskControls(store, boxes) {
  const fillRadios = radios({
    name: 'sbs-fill',
    options: [
      ['-1e9', t('sbs.fill1e9')],
      ['-inf', t('sbs.fillInf')],
    ],
    value: store.get().fill,
    id: (v) => `sbs-fill-${v === '-1e9' ? '1e9' : 'inf'}`,
    onChange: (fill) => store.set({ fill }),
  });
  const clearBtn = h('button', { type: 'button', id: 'sbs-clear-masks', text: t('sbs.clearMasks') });
  clearBtn.addEventListener('click', () => store.set({ masked: new Set() }));
  const resetBtn = h('button', { type: 'button', text: t('sbs.reset') });
  resetBtn.addEventListener('click', () => {
    boxes.q.value = boxes.k.value = boxes.v.value = DEFAULT;
    store.set({ q: DEFAULT, k: DEFAULT, v: DEFAULT, masked: new Set() });
  });
  return [group(t('sbs.fill'), h('div.radio-row', {}, fillRadios)), clearBtn, resetBtn];
}

/**
 * @param {HTMLElement} root
 * @param {import('../../attnlab.js').Attnlab} attn
 */
export function mount(root, attn) {
  const store = createStore({ ...START, masked: new Set() });
  const boxes = matrixInputs(store);
  const [fillCtl, clearBtn, resetBtn] = maskControls(store, boxes);
  const scale = scaleControls(store);
  const msg = h('div');
  const callLine = h('p.note', { id: 'sbs-call' });
  const pipeline = h('div.pipeline', { id: 'sbs-pipeline' });
  root.append(
    sec5Box(attn),
    h('h3', { text: t('sbs.liveTitle') }),
    h(
      'div.qkv-inputs',
      {},
      h('label', { for: 'sbs-in-q', title: t('sbs.qTitle'), style: `color:${QKV.q}` }, 'Q (Lq × dₖ)', boxes.q),
      h('label', { for: 'sbs-in-k', title: t('sbs.kTitle'), style: `color:${QKV.k}` }, 'K (Lk × dₖ)', boxes.k),
      h('label', { for: 'sbs-in-v', title: t('sbs.vTitle'), style: `color:${QKV.v}` }, 'V (Lk × dᵥ)', boxes.v),
    ),
    h('div.controls', {}, scale.scale, clearBtn, resetBtn),
    advancedFold(store, fillCtl, scale.temp),
    msg,
    callLine,
    pipeline,
  );

  /** @param {SbsState} st */
  function render(st) {
    msg.replaceChildren();
    callLine.replaceChildren();
    pipeline.replaceChildren();
    const r = runStages(attn, st);
    if (!r.ok) {
      msg.append(h('div.error-box', { role: r.role, text: r.error }));
      return;
    }
    if (st.causal === 'lower-right' && r.Lq === r.Lk) msg.append(h('p.note', { text: t('sbs.lowerRightSquare') }));
    callLine.append(h('span', { html: t('sbs.callNote') }), ' ', h('code', { text: optionsText(r.options) }));
    drawPipeline(pipeline, r, st, (i, j) => store.set({ masked: toggled(store.get().masked, i, j) }));
  }
  store.subscribe(render);
  render(store.get());
}
