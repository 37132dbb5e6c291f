// @ts-check
// Part "multi-head on a sentence" (§2.3, §7.1, §8.1): the state (the part's store), the layers (untrained ones by
// head count, the toy models', the user's file) and the redraws; compute.js computes, controls.js builds the
// controls, draw.js draws.

import { h } from '../../widgets/dom.js';
import { radioInput } from '../../widgets/controls.js';
import { hideTip } from '../../widgets/tooltip.js';
import { partLink } from '../../widgets/guide.js';
import { errText } from '../../shared/format.js';
import { rng } from '../../shared/random.js';
import { SENTENCES } from '../../shared/inputs.js';
import { createToyLayers, sampleExample, fetchToys } from '../../shared/toy-model.js';
import { buildUserLayer } from '../../shared/statedict.js';
import { createStore } from '../../store.js';
import { t, LANG } from '../../i18n.js';
import { RANDOM_E, readTokens, runToySource, runLayer } from './compute.js';
import { buildControls } from './controls.js';
import { drawHeatmaps, drawLinks, answersTable } from './draw.js';

/** @typedef {import('../../attnlab.js').Attnlab} Attnlab */
/** @typedef {import('../../attnlab.js').MultiHeadAttention} MultiHeadAttention */
/** @typedef {import('./controls.js').MhaState} MhaState */
/** @typedef {import('../../shared/toy-model.js').ToyModel} ToyModel */
/** @typedef {{ cfg: import('../../shared/statedict.js').LayerConfig, mha: MultiHeadAttention, fileName: string }} UserLayer */

/**
 * The description of the source and the example buttons; the heads select fixed to a toy's or a file's heads.
 * @param {import('./controls.js').MhaUi} ui
 * @param {MhaState} st
 * @param {ToyModel | null} toy
 * @param {UserLayer | null} user
 * @param {(text: string) => void} setExample
 * @param {() => string} newToyExample
 */
function syncControls(ui, st, toy, user, setExample, newToyExample) {
  ui.textIn.value = st.text[st.source];
  const button = (/** @type {string} */ id, /** @type {string} */ text, /** @type {() => void} */ onclick) =>
    h('button', { type: 'button', id, text, onclick });
  ui.exampleBtns.replaceChildren(
    ...(toy
      ? [button('mha-new-example', t('mha.newExample'), () => setExample(newToyExample()))]
      : [
          button('mha-example-zh', t('mha.exampleZh'), () => setExample(SENTENCES.zh)),
          button('mha-example-en', t('mha.exampleEn'), () => setExample(SENTENCES.en)),
        ]),
  );
  const fixedH = toy ? toy.H : st.source === 'user' ? user?.cfg.numHeads : null;
  const sel = ui.headsSel;
  sel.disabled = fixedH !== null && fixedH !== undefined;
  ui.headsNote.textContent = sel.disabled ? t('mha.headsFixed', { n: fixedH }) : `E = ${RANDOM_E}`;
  if (sel.disabled) {
    if (![...sel.options].some((o) => Number(o.value) === fixedH))
      sel.append(h('option', { value: fixedH, text: String(fixedH) }));
    sel.value = String(fixedH);
  } else {
    sel.value = String(st.heads);
  }
  ui.desc.replaceChildren(description(st, toy, user));
}

/**
 * What the weights are: a toy model and how it was trained, an untrained layer, or the user's file.
 * @param {MhaState} st
 * @param {ToyModel | null} toy
 * @param {UserLayer | null} user
 */
function description(st, toy, user) {
  if (toy) {
    const arch = t('mha.toyArch', {
      e: toy.E,
      h: toy.H,
      nb: toy.bias ? '' : ', bias=False',
      p: (toy.training.answer_accuracy * 100).toFixed(1),
      n: toy.training.eval_examples,
    });
    return h('div', {}, h('strong', { text: t('mha.toyBy') }), ' ', t(`mha.toyDesc.${toy.task}`), ' ', arch);
  }
  if (st.source === 'random') {
    return h(
      'div',
      {},
      h('strong', { text: t('mha.untrained') }),
      ' ',
      t('mha.randomDesc', { e: RANDOM_E }),
      ' ',
      h('strong', { text: t('mha.noise') }),
      ' ',
      t('mha.noiseWhy'),
      ' ',
      partLink('poem', 'guide.toPoem'),
    );
  }
  return h('div', { text: user ? t('mha.userDesc', { f: user.fileName }) : t('mha.userNone') });
}

/** The part: its layers, the user's file and the heads shown. */
class MhaPart {
  /**
   * @param {HTMLElement} root
   * @param {Attnlab} attn
   * @param {{ reverse: ToyModel, recall: ToyModel }} toys
   */
  constructor(root, attn, toys) {
    this.root = root;
    this.attn = attn;
    this.toys = toys;
    const text = { 'toy-reverse': toys.reverse.examples[0].text, 'toy-recall': toys.recall.examples[0].text };
    this.store = createStore(
      /** @type {MhaState} */ ({
        source: 'random',
        heads: 4,
        causal: false,
        padTo: 0,
        view: 'per-head',
        text: { ...text, random: SENTENCES[LANG], user: SENTENCES[LANG] },
      }),
    );
    /** @type {Map<string, MultiHeadAttention>} untrained layers by head count */
    this.mods = new Map();
    /** @type {Map<string, import('../../shared/toy-model.js').ToyLayers>} the toy models' layers by source */
    this.toyLayers = new Map();
    /** @type {UserLayer | null} */
    this.user = null;
    this.exampleCounter = 1;
    this.visible = { key: '', heads: new Set() }; // the heads shown, reset for each new layer
    /** @type {{ labels: string[], result: import('./compute.js').HeadWeights, H: number, padded: boolean[] } | null} */
    this.last = null; // what was drawn: the head chips redraw from it
    this.ui = buildControls(root, this.store, async (f) => this.loadUserLayer(await f.text(), f.name));
    // for scripted use (the e2e test also uses the real file picker)
    Object.assign(root, {
      loadLayerText: (/** @type {string} */ s, /** @type {string} */ f) => this.loadUserLayer(s, f),
    });
    let shownSource = this.store.get().source;
    this.store.subscribe((st) => {
      if (st.source !== shownSource || st.text[st.source] !== this.ui.textIn.value) this.sync(st);
      shownSource = st.source;
      this.render(st);
    });
    this.sync(this.store.get());
    this.render(this.store.get());
  }

  /** @param {MhaState} st */
  toyOf(st) {
    return st.source === 'toy-reverse' ? this.toys.reverse : st.source === 'toy-recall' ? this.toys.recall : null;
  }

  /** @param {string} key @param {() => MultiHeadAttention} make */
  getMha(key, make) {
    if (!this.mods.has(key)) this.mods.set(key, make());
    return this.mods.get(key);
  }

  /** @param {string} key @param {() => import('../../shared/toy-model.js').ToyLayers} make */
  getToy(key, make) {
    if (!this.toyLayers.has(key)) this.toyLayers.set(key, make());
    return this.toyLayers.get(key);
  }

  /** @param {string} text @param {string} fileName */
  async loadUserLayer(text, fileName) {
    const { ui, store } = this;
    ui.fileMsg.replaceChildren();
    radioInput(ui.sourceRadios[3]).checked = true;
    try {
      const layer = buildUserLayer(this.attn, text, fileName);
      if (this.user) this.user.mha.dispose();
      this.user = { ...layer, fileName };
      this.visible.key = '';
      ui.fileMsg.append(h('div.ok-box', { id: 'mha-file-ok', text: layer.summary }));
    } catch (e) {
      this.showFileError(e.message);
    }
    if (store.get().source !== 'user') return store.set({ source: 'user' }); // syncs and renders
    this.sync(store.get());
    this.render(store.get());
  }

  /** @param {string} text */
  showFileError(text) {
    const still = this.user ? `\n${t('mha.fileStill', { f: this.user.fileName })}` : '';
    this.ui.fileMsg.replaceChildren(h('div.error-box', { id: 'mha-file-error', role: 'alert', text: text + still }));
  }

  /** @param {MhaState} st */
  sync(st) {
    const toy = this.toyOf(st);
    const { store } = this;
    /** @param {string} text */
    const setExample = (text) => store.set({ text: { ...store.get().text, [store.get().source]: text } });
    const newToyExample = () =>
      sampleExample(toy, rng(1000 + this.exampleCounter++))
        .tokens.map((tk) => toy.vocab[tk])
        .join(' ');
    syncControls(this.ui, st, toy, this.user, setExample, newToyExample);
  }

  /** Weights of the current source, or an error text. @param {MhaState} st */
  compute(st) {
    const { attn, user } = this;
    const toy = this.toyOf(st);
    const tokens = readTokens(st.text[st.source], toy, st.padTo);
    if ('error' in tokens) return { error: tokens.error };
    const { ids, labels, padded } = tokens;
    if (toy) {
      const r = runToySource(
        toy,
        this.getToy(st.source, () => createToyLayers(attn, toy)),
        ids,
        labels,
        st.causal,
      );
      const table = answersTable(toy, ids, r.predicted, { causal: st.causal, padded: st.padTo > ids.length });
      return { labels, padded, H: r.H, result: r.result, table };
    }
    if (st.source === 'user' && !user) return { empty: true };
    const random = () => attn.createMultiHeadAttention({ embedDim: RANDOM_E, numHeads: st.heads, batchFirst: true });
    const mha = st.source === 'random' ? this.getMha(`random-${st.heads}`, random) : user.mha;
    const cfg =
      st.source === 'random' ? { numHeads: st.heads, embedDim: RANDOM_E, kdim: RANDOM_E, vdim: RANDOM_E } : user.cfg;
    return { labels, padded, ...runLayer(mha, cfg, labels, padded, st.causal), table: [] };
  }

  /** @param {MhaState} st */
  render(st) {
    const { ui } = this;
    ui.msg.replaceChildren();
    ui.answers.replaceChildren();
    hideTip();
    let r;
    try {
      r = this.compute(st);
    } catch (e) {
      r = { error: t('mha.threw', { err: errText(e) }) };
    }
    if ('error' in r) {
      ui.msg.replaceChildren(h('div.error-box', { role: 'alert', text: r.error }));
      return this.clearViews();
    }
    if ('empty' in r) return this.clearViews();
    ui.answers.append(...r.table);
    const layerKey = `${st.source}/${r.H}/${this.user?.fileName ?? ''}`;
    if (this.visible.key !== layerKey) {
      // a new layer: show all its heads
      this.visible = { key: layerKey, heads: new Set(Array.from({ length: r.H }, (_, i) => i)) };
    }
    this.last = { labels: r.labels, result: r.result, H: r.H, padded: r.padded };
    this.draw(st);
    Object.assign(this.root.dataset, { tokens: JSON.stringify(r.labels), heads: r.H, source: st.source });
  }

  /** @param {MhaState} st */
  draw(st) {
    const { view } = this.ui;
    const heads = this.visible.heads;
    Object.assign(view, {
      width: this.root.clientWidth || 600,
      perHead: st.view === 'per-head',
      visible: heads,
      causal: st.causal,
    });
    const { labels, result, H, padded } = this.last;
    drawHeatmaps(view, labels, result, H, padded);
    drawLinks(view, labels, result, H, padded, (hh) => {
      if (heads.has(hh)) heads.delete(hh);
      else heads.add(hh);
      this.draw(this.store.get());
    });
  }

  clearViews() {
    const { view } = this.ui;
    view.linksView?.destroy();
    view.linksView = null;
    for (const el of [view.grid, view.legendBox, view.links, view.chips]) el.replaceChildren();
  }
}

/**
 * @param {HTMLElement} root
 * @param {Attnlab} attn
 * @param {{ params: URLSearchParams }} page
 */
export async function mount(root, attn, { params }) {
  const part = new MhaPart(root, attn, await fetchToys());
  if (params.get('layer')) {
    // ?layer=URL loads a state-dict file at start (a link to share your layer)
    try {
      const r = await fetch(params.get('layer'));
      await part.loadUserLayer(await r.text(), params.get('layer'));
    } catch (e) {
      part.showFileError(t('mha.fetchFailed', { f: params.get('layer'), err: errText(e) }));
    }
  }
}
