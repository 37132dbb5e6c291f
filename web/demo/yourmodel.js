// Part "Your model" (issue #18): drop a .safetensors checkpoint (BERT, GPT-2 or ViT names) or the JSON state dict
// of part 7, pick the layer, feed it words, pasted hidden states or seeded random ones, and see that layer's
// per-head attention drawn by attnlab/viz (the package's own views). Reading and building: yourmodel-load.js.
// One MultiHeadAttention lives at a time: it is disposed when the file, architecture, layer or head count changes.

import { headMaps, tokenLinks } from '/dist/viz.mjs';
import { h, errText } from './util.js';
import { SENTENCES } from './mha.js';
import {
  ARCHS,
  MAX_TOKENS,
  readModelFile,
  describeFile,
  guessHeads,
  buildLayer,
  readInput,
  layerWeights,
} from './yourmodel-load.js';
import { t, lang } from './i18n.js';

const SAMPLE = 'models/sample-bert.safetensors';

export async function mount(root, attn) {
  let src = null; // the loaded file (readModelFile's result)
  let layer = null; // { mha, embedDim, numHeads, extraKeys, key }
  let views = [];
  const st = { mode: 'words', text: { words: SENTENCES[lang], vectors: '' } };

  // ---- controls -----------------------------------------------------------------------------------------
  // A labelled button over a hidden file input: the browser would word its own input in its language, not the page's.
  const fileIn = h('input.visually-hidden', {
    type: 'file',
    id: 'model-file',
    accept: '.safetensors,.json,application/json',
    'aria-label': t('model.fileAria'),
    onchange: () => {
      if (fileIn.files[0]) loadBlob(fileIn.files[0], fileIn.files[0].name);
      fileIn.value = '';
    },
  });
  const sampleBtn = h('button', { type: 'button', id: 'model-sample', text: t('model.sample'), onclick: loadSample });
  const drop = h(
    'div#model-drop',
    { style: 'border: 2px dashed #9aa; border-radius: 6px; padding: 12px; margin: 8px 0' },
    h('p', { text: t('model.drop'), style: 'margin: 0 0 6px' }),
    h('div.controls', {}, h('label.file-btn', { for: 'model-file' }, t('model.pick'), fileIn), sampleBtn),
  );
  const fileMsg = h('div.note', { id: 'model-file-msg', 'aria-live': 'polite', text: t('model.noFile') });
  const archSel = h(
    'select',
    { id: 'model-arch', 'aria-label': t('model.archAria') },
    ARCHS.map((a) => h('option', { value: a, text: t(`model.arch.${a}`) })),
    h('option', { value: 'json', text: t('model.arch.json'), hidden: true }),
  );
  const layerIn = h('input', { type: 'number', id: 'model-layer', min: '0', value: '0', style: 'width: 5em' });
  const headsIn = h('input', { type: 'number', id: 'model-heads', min: '1', value: '4', style: 'width: 5em' });
  const headsNote = h('span.note', { id: 'model-heads-note' });
  const causalIn = h('input', { type: 'checkbox', id: 'model-causal' });
  const modeRadios = ['words', 'vectors', 'random'].map((value) =>
    h(
      'label',
      {},
      h('input', {
        type: 'radio',
        name: 'model-mode',
        value,
        id: `model-mode-${value}`,
        checked: value === st.mode,
        onchange: () => {
          saveText();
          st.mode = value;
          syncInput();
          render();
        },
      }),
      t(`model.mode.${value}`),
    ),
  );
  const textIn = h('textarea', {
    id: 'model-input',
    rows: '4',
    spellcheck: 'false',
    'aria-label': t('model.inputAria'),
    style: 'width: min(640px, calc(100vw - 40px)); font: 12px ui-monospace, monospace',
  });
  const countIn = h('input', {
    type: 'number',
    id: 'model-count',
    min: '1',
    max: String(MAX_TOKENS),
    value: '8',
    style: 'width: 5em',
  });
  const seedIn = h('input', { type: 'number', id: 'model-seed', min: '0', value: '1', style: 'width: 7em' });
  const randomBox = h(
    'div.controls',
    {},
    h('label.ctl', { for: 'model-count' }, h('span', { text: t('model.count') }), countIn),
    h('label.ctl', { for: 'model-seed' }, h('span', { text: t('model.seed') }), seedIn),
  );
  const inputNote = h('p.note', { id: 'model-input-note' });
  const runBtn = h('button', {
    type: 'button',
    id: 'model-run',
    text: t('model.run'),
    onclick: () => {
      saveText();
      render();
    },
  });
  const msg = h('div', { id: 'model-msg' });
  const summary = h('p.note', { id: 'model-summary' });
  const maps = h('div', { id: 'model-maps' });
  const links = h('div', { id: 'model-links' });
  const viewsBox = h(
    'div',
    {},
    h('h3', { text: t('model.mapsTitle') }),
    maps,
    h('h3', { text: t('model.linksTitle') }),
    links,
  );

  root.append(
    drop,
    fileMsg,
    h(
      'div.controls',
      {},
      h('label.ctl', { for: 'model-arch' }, h('span', { text: t('model.arch') }), archSel),
      h('label.ctl', { for: 'model-layer' }, h('span', { text: t('model.layer') }), layerIn),
      h(
        'label.ctl',
        { for: 'model-heads' },
        h('span', { text: t('model.heads') }),
        h('span', {}, headsIn, ' ', headsNote),
      ),
      h('label.ctl.inline', { for: 'model-causal' }, causalIn, h('span', { text: t('model.causal') })),
    ),
    h('div.ctl', {}, h('span', { text: t('model.input') }), h('div.radio-row', {}, modeRadios)),
    textIn,
    randomBox,
    inputNote,
    h('div.controls', {}, runBtn),
    msg,
    summary,
    viewsBox,
  );

  // Dropping a file anywhere on the zone; dragover must be cancelled for drop to fire.
  drop.addEventListener('dragover', (e) => {
    e.preventDefault();
    drop.style.borderColor = '#1f77b4';
  });
  drop.addEventListener('dragleave', () => {
    drop.style.borderColor = '#9aa';
  });
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.style.borderColor = '#9aa';
    const f = e.dataTransfer?.files?.[0];
    if (f) loadBlob(f, f.name);
  });
  archSel.addEventListener('change', () => {
    causalIn.checked = archSel.value === 'gpt2';
    fillLayer();
    render();
  });
  for (const el of [layerIn, headsIn, causalIn, countIn, seedIn]) el.addEventListener('change', render);
  textIn.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      saveText();
      render();
    }
  });
  textIn.addEventListener('change', () => {
    saveText();
    render();
  });

  // ---- files ----------------------------------------------------------------------------------------------
  async function loadSample() {
    try {
      const res = await fetch(new URL(SAMPLE, import.meta.url));
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      await loadBytes(new Uint8Array(await res.arrayBuffer()), 'sample-bert.safetensors');
    } catch (e) {
      fileError(t('model.sampleFailed', { err: errText(e) }));
    }
  }
  async function loadBlob(blob, name) {
    try {
      await loadBytes(new Uint8Array(await blob.arrayBuffer()), name);
    } catch (e) {
      fileError(t('model.readFailed', { f: name, err: errText(e) }));
    }
  }
  async function loadBytes(bytes, name) {
    let next;
    try {
      next = readModelFile(name, bytes);
    } catch (e) {
      return fileError(e.message);
    }
    src = next;
    dropLayer();
    fileMsg.className = 'note';
    fileMsg.textContent = describeFile(src);
    const json = src.kind === 'json';
    archSel.disabled = json;
    for (const o of archSel.options) o.hidden = (o.value === 'json') !== json;
    if (json) {
      archSel.value = 'json';
      headsIn.value = String(src.cfg.numHeads);
      headsNote.textContent = t('model.headsFromFile');
      causalIn.checked = false;
    } else {
      const arch = ARCHS.find((a) => src.found[a]) ?? 'bert';
      archSel.value = arch;
      causalIn.checked = arch === 'gpt2';
      const E = src.found[arch]?.embedDim;
      if (E) {
        const g = guessHeads(E, src.metadata);
        headsIn.value = String(g.numHeads);
        headsNote.textContent = t(`model.headsGuess.${g.from}`, { e: E });
      } else headsNote.textContent = '';
    }
    fillLayer();
    render();
    root.dataset.loads = String(Number(root.dataset.loads ?? 0) + 1); // tests wait for it
  }
  /** A file that cannot be used: the message, and nothing drawn (the previous file is dropped). */
  function fileError(text) {
    src = null;
    dropLayer();
    fileMsg.className = '';
    fileMsg.replaceChildren(h('div.error-box', { role: 'alert', text }));
    render();
    root.dataset.loads = String(Number(root.dataset.loads ?? 0) + 1);
  }
  function fillLayer() {
    const f = src?.kind === 'hf' ? src.found[archSel.value] : null;
    layerIn.disabled = src?.kind === 'json';
    if (f && !f.layers.includes(Number(layerIn.value))) layerIn.value = String(f.layers[0]);
    layerIn.title = f ? t('model.layersInFile', { list: f.layers.join(', ') }) : '';
  }

  // ---- input ------------------------------------------------------------------------------------------------
  function saveText() {
    if (st.mode !== 'random') st.text[st.mode] = textIn.value;
  }
  function syncInput() {
    textIn.style.display = st.mode === 'random' ? 'none' : ''; // .controls sets display, which beats [hidden]
    randomBox.style.display = st.mode === 'random' ? '' : 'none';
    if (st.mode !== 'random') textIn.value = st.text[st.mode];
    const E = layer?.embedDim ?? currentWidth();
    inputNote.textContent = t(`model.note.${st.mode}`, { e: E ?? 'E', max: MAX_TOKENS });
  }
  function currentWidth() {
    if (!src) return null;
    return src.kind === 'json' ? src.cfg.embedDim : (src.found[archSel.value]?.embedDim ?? null);
  }

  // ---- the layer and its attention ----------------------------------------------------------------------------
  function dropLayer() {
    if (layer) layer.mha.dispose();
    layer = null;
  }
  function currentLayer() {
    const choice = { arch: archSel.value, layer: Number(layerIn.value), numHeads: Number(headsIn.value) };
    const key = `${choice.arch}/${choice.layer}/${choice.numHeads}`;
    if (layer?.key === key) return layer;
    dropLayer();
    layer = { ...buildLayer(attn, src, choice), key };
    return layer;
  }
  function clearViews() {
    for (const v of views) v.destroy();
    views = [];
    viewsBox.hidden = true;
  }
  function render() {
    syncInput();
    clearViews();
    msg.replaceChildren();
    summary.textContent = '';
    for (const k of ['weights', 'shape', 'input', 'tokens', 'heads', 'layer', 'arch', 'embedDim', 'causal'])
      delete root.dataset[k];
    if (!src) {
      root.dataset.state = 'empty';
      return;
    }
    let out;
    try {
      const l = currentLayer();
      const { x, tokens } = readInput(st.mode, textIn.value, l.embedDim, {
        count: Number(countIn.value),
        seed: Number(seedIn.value),
      });
      const w = layerWeights(l, x, tokens.length, causalIn.checked);
      out = { l, x, tokens, w };
    } catch (e) {
      root.dataset.state = 'error';
      msg.replaceChildren(h('div.error-box', { role: 'alert', text: e.message }));
      return;
    }
    const { l, x, tokens, w } = out;
    viewsBox.hidden = false;
    const keyTokens = tokens.concat(l.extraKeys);
    const [H, L, S] = w.shape;
    const text = {
      head: (hh) => t('mha.head', { h: hh + 1 }),
      mean: t('mha.average', { n: H }),
      cell: (caption, q, k, v) => t('model.cellTip', { caption, q, k, v }),
      query: (q, best) => t('mha.linksQuery', { q, best }),
    };
    const width = Math.min(240, (root.clientWidth || 600) - 60);
    views.push(headMaps(maps, w, { queryTokens: tokens, keyTokens, width, text }));
    views.push(tokenLinks(links, w, { queryTokens: tokens, keyTokens, text }));
    summary.textContent = t('model.summary', {
      what:
        src.kind === 'json'
          ? t('model.arch.json')
          : `${t(`model.arch.${archSel.value}`)} · ${t('model.layer')} ${layerIn.value}`,
      e: l.embedDim,
      h: H,
      d: l.embedDim / H,
      l: L,
      s: S,
      mask: causalIn.checked ? t('model.summaryCausal') : '',
    });
    Object.assign(root.dataset, {
      state: 'ready',
      weights: JSON.stringify(Array.from(w.data)),
      shape: JSON.stringify(w.shape),
      input: JSON.stringify(Array.from(x)),
      tokens: JSON.stringify(tokens),
      heads: String(H),
      layer: layerIn.value,
      arch: archSel.value,
      embedDim: String(l.embedDim),
      causal: String(causalIn.checked),
    });
  }

  syncInput();
  render();
}
