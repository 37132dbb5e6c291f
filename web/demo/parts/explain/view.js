// @ts-check
// Part "explain" (tutorial §8.2 run as an experiment): one prediction of the shipped poem model (or of the model
// loaded in "Your model") read eight ways side by side with their rank correlations; head importance by gradient and
// two ablations; and the uniform-attention baseline trained in a worker. Guess first before each set of numbers.

import { h } from '../../widgets/dom.js';
import { seqColor } from '../../widgets/colours.js';
import { guessCard } from '../../widgets/guess.js';
import { labelled, select } from '../../widgets/controls.js';
import { fmt, errText } from '../../shared/format.js';
import { readSafetensors } from '../../attnlab.js';
import { charTokenizer } from '../../shared/char-tokenizer.js';
import { MODEL_DIR, parseHeldOut } from '../poem/compute.js';
import { poemFromText } from '../poem/heads.js';
import { t } from '../../i18n.js';
import * as X from './compute.js';
import { LOADED_MODEL } from '../../shared/loaded-model.js';

/** Poems the page offers, from held-out.jsonl's test split (seven-character quatrains, all of length 34). */
const POEMS = 8;
/** Poems head importance is measured on (seven-character quatrains: one batch without padding). */
const IMPORTANCE_POEMS = 8;
/** The baseline's training steps and seed. */
const BASELINE = { steps: 200, seed: 1 };

/** @param {string} f @param {URL} dir */
async function get(f, dir) {
  const r = await fetch(new URL(f, dir));
  if (!r.ok) throw new Error(t('poem.httpError', { f, s: r.status }));
  return r;
}

/** @param {string[]} cols */
const headRow = (cols) =>
  h(
    'tr',
    {},
    cols.map((c) => h('th', { scope: 'col', text: c })),
  );

/**
 * The readings table: a row per position ≤ the query, a column per reading, each cell shaded by its share of the
 * column's largest value.
 * @param {string[]} chars
 * @param {Record<string, Float64Array | null>} rows
 */
function readingsTable(chars, rows) {
  const names = X.READINGS.filter((k) => rows[k]);
  const max = Object.fromEntries(names.map((k) => [k, Math.max(1e-12, ...rows[k])]));
  return h(
    'table.answers#explain-readings',
    {},
    headRow(['', ...names.map((k) => t(`explain.r.${k}`))]),
    Array.from({ length: rows.raw.length }, (_, j) =>
      h(
        'tr',
        {},
        h('th', { scope: 'row', text: `${j} ${chars[j]}` }),
        names.map((k) => h('td', { style: `background:${seqColor(rows[k][j] / max[k])}`, text: fmt(rows[k][j], 3) })),
      ),
    ),
  );
}

/** The ρ table. @param {Record<string, Record<string, number | null>>} rho */
function rhoTable(rho) {
  const names = X.READINGS.filter((k) => rho[k][k] !== null);
  return h(
    'table.answers#explain-rho',
    {},
    headRow(['ρ', ...names.map((k) => t(`explain.r.${k}`))]),
    names.map((a) =>
      h(
        'tr',
        { 'data-reading': a },
        h('th', { scope: 'row', text: t(`explain.r.${a}`) }),
        names.map((b) => h('td', { 'data-rho': rho[a][b], text: fmt(rho[a][b], 2) })),
      ),
    ),
  );
}

/** Head importance: gradient, zero and mean ablation per head. @param {Awaited<ReturnType<typeof X.headImportanceAll>>} r */
function importanceTable(r) {
  const cols = [t('poem.col.head'), t('explain.col.gradient'), t('explain.col.zero'), t('explain.col.mean')];
  return h(
    'table.answers#explain-importance',
    {},
    headRow(cols),
    r.rows.map((x) =>
      h(
        'tr',
        {},
        h('th', { scope: 'row', text: `${x.layer + 1}.${x.head + 1}` }),
        [x.gradient, x.zero, x.mean].map((v) => h('td.num', { text: fmt(v, 3) })),
      ),
    ),
  );
}

/** The part: its sources (the poem model, the model of "Your model"), controls and the three panels. */
class Explain {
  /** @param {HTMLElement} root @param {import('../../attnlab.js').Attnlab} attn */
  constructor(root, attn) {
    this.root = root;
    this.attn = attn;
    /** @type {any[]} held-out.jsonl's records */
    this.records = [];
    /** @type {{ model: any, weights: (l: number) => X.LayerWeights | null, seqs: { ids: Int32Array, chars: string[] }[], label: string } | null} */
    this.src = null;
    /** @type {typeof this.src} */
    this.poem = null;
    /** @type {Record<'seq' | 'position' | 'layer' | 'head', number>} */
    this.state = { seq: 0, position: 20, layer: 3, head: 2 };
    this.ui = {
      controls: h('div.controls#explain-controls'),
      readings: h('div.scroll-x#explain-readings-box'),
      rho: h('div.scroll-x#explain-rho-box'),
      importance: h('div.scroll-x#explain-importance-box'),
      baseline: h('div.scroll-x#explain-baseline-box'),
      msg: h('p.note#explain-msg'),
    };
  }

  /** The poem model, from the model folder (as part "poem" loads it), on the page's thread. */
  async loadPoem() {
    const dir = new URL(MODEL_DIR, import.meta.url);
    const [config, bytes, tokenizer, heldOut] = await Promise.all([
      get('config.json', dir).then((r) => r.json()),
      get('model.safetensors', dir).then((r) => r.arrayBuffer()),
      get('tokenizer.json', dir).then((r) => r.json()),
      get('held-out.jsonl', dir).then((r) => r.text()),
    ]);
    const tensors = readSafetensors(new Uint8Array(bytes));
    const model = this.attn.loadModel({ config, tensors });
    const tok = charTokenizer(tokenizer);
    const records = parseHeldOut(heldOut);
    const seven = records.filter((r) => r.split === 'test' && r.form === 'jueju7');
    const seqs = seven.slice(0, Math.max(POEMS, IMPORTANCE_POEMS)).map((r) => poemFromText(tok, r.text));
    this.records = records;
    this.poem = { model, weights: (/** @type {number} */ l) => X.llamaLayerWeights(tensors, l), seqs, label: '' };
  }

  /**
   * The model of "Your model" on a text (its tokenizer's ids; no weights on this thread, so no norm-weighted view).
   * @returns {typeof this.src}
   */
  yours() {
    const { model, tok, label } = LOADED_MODEL.get();
    if (!model) return null;
    const ids = Array.from(tok.encode(t('explain.yoursText')));
    const chars = ids.map((id) => tok.label(id));
    return { model, weights: () => null, seqs: [{ ids: Int32Array.from(ids), chars }], label };
  }

  /** @param {'poem' | 'yours'} which */
  use(which) {
    this.src = which === 'yours' ? this.yours() : this.poem;
    if (!this.src) return;
    const c = this.src.model.config;
    const T = this.src.seqs[0].ids.length;
    this.state = { seq: 0, position: Math.min(20, T - 2), layer: c.numLayers - 1, head: 0 };
    this.controls();
    this.ui.importance.replaceChildren(this.importanceButton());
    this.redraw();
  }

  /** The source, poem, position, layer and head pickers. */
  controls() {
    const c = this.src.model.config;
    const seq = this.src.seqs[this.state.seq];
    const n = (/** @type {number} */ k) => Array.from({ length: k }, (_, i) => i);
    const pick = (
      /** @type {'seq' | 'position' | 'layer' | 'head'} */ key,
      /** @type {[number, string][]} */ options,
    ) =>
      labelled(
        `explain-${key}`,
        t(`explain.pick.${key}`),
        select({
          id: `explain-${key}`,
          label: t(`explain.pick.${key}`),
          options,
          value: this.state[key],
          onChange: (v) => {
            this.state = { ...this.state, [key]: Number(v) };
            if (key === 'seq') this.controls();
            this.redraw();
          },
        }),
      );
    this.ui.controls.replaceChildren(
      pick(
        'seq',
        this.src.seqs.slice(0, POEMS).map((s, i) => [i, s.chars.slice(1, 8).join('')]),
      ),
      pick(
        'position',
        n(seq.ids.length - 1).map((j) => [j, `${j} ${seq.chars[j]} → ${seq.chars[j + 1]}`]),
      ),
      pick(
        'layer',
        n(c.numLayers).map((l) => [l, String(l + 1)]),
      ),
      pick(
        'head',
        n(c.numHeads).map((x) => [x, String(x + 1)]),
      ),
    );
  }

  /** One prediction read eight ways, and the ρ table behind a guess. */
  async redraw() {
    const { seq, position, layer, head } = this.state;
    const s = this.src.seqs[seq];
    const target = s.ids[position + 1];
    try {
      const r = await X.explainPrediction(this.src.model, s.ids, {
        position,
        target,
        layer,
        head,
        weights: this.src.weights(layer),
      });
      this.ui.readings.replaceChildren(readingsTable(s.chars, r.rows));
      this.ui.readings.dataset.position = String(position);
      this.ui.rho.replaceChildren(this.rhoGuess(r.rho));
      this.ui.msg.textContent = t(r.rows.normWeighted ? 'explain.note.all' : 'explain.note.noWeights', {
        tok: s.chars[position + 1],
        p: position,
      });
    } catch (e) {
      this.ui.msg.textContent = t('explain.failed', { err: errText(e) });
    }
  }

  /** @param {Record<string, Record<string, number | null>>} rho */
  rhoGuess(rho) {
    const table = rhoTable(rho);
    table.hidden = true;
    const card = guessCard('explain', t('explain.guessRho'), () => {
      table.hidden = false;
      const v = (/** @type {string} */ a, /** @type {string} */ b) => fmt(rho[a][b], 2);
      const vars = { rg: v('raw', 'gradXInput'), ro: v('raw', 'occlusion'), go: v('gradXInput', 'occlusion') };
      return { html: t('explain.answerRho', { ...vars, rr: v('raw', 'rollout') }), value: rho.raw.gradXInput };
    });
    return h('div', {}, card, table);
  }

  /** Head importance on demand (L·H + 1 forwards twice, and a backward): a button, then the guess and the table. */
  importanceButton() {
    const btn = h('button#explain-importance-run', { type: 'button', text: t('explain.importanceRun') });
    btn.addEventListener('click', async () => {
      btn.disabled = true;
      btn.textContent = t('explain.running');
      try {
        const seqs = this.src.seqs.slice(0, IMPORTANCE_POEMS).map((x) => x.ids);
        const r = await X.headImportanceAll(this.src.model, X.nextTokenBatch(seqs));
        this.ui.importance.replaceChildren(this.importanceGuess(r, seqs.length));
      } catch (e) {
        this.ui.importance.replaceChildren(h('p.note', { text: t('explain.failed', { err: errText(e) }) }));
      }
    });
    const n = Math.min(IMPORTANCE_POEMS, this.src.seqs.length);
    const lead = this.src === this.poem ? t('explain.importanceLead', { n }) : t('explain.importanceLeadYours');
    return h('div', {}, h('p', { text: lead }), btn);
  }

  /** @param {Awaited<ReturnType<typeof X.headImportanceAll>>} r @param {number} n */
  importanceGuess(r, n) {
    const table = importanceTable(r);
    const note = h('p.note', {
      text: t('explain.importanceNote', {
        n,
        loss: fmt(r.loss, 3),
        gz: fmt(r.rho.gradientZero, 2),
        gm: fmt(r.rho.gradientMean, 2),
        zm: fmt(r.rho.zeroMean, 2),
      }),
    });
    const shown = h('div', { hidden: true }, note, table);
    const top = (/** @type {'gradient' | 'zero' | 'mean'} */ k) => r.rows.reduce((a, b) => (b[k] > a[k] ? b : a));
    const name = (/** @type {{ layer: number, head: number }} */ x) => `${x.layer + 1}.${x.head + 1}`;
    const card = guessCard('explain-heads', t('explain.guessHeads'), () => {
      shown.hidden = false;
      const [g, z, m] = [top('gradient'), top('zero'), top('mean')];
      const vars = { g: name(g), z: name(z), m: name(m), dz: fmt(z.zero, 3), dm: fmt(z.mean, 3) };
      return { html: t('explain.answerHeads', { ...vars, gz: fmt(r.rho.gradientZero, 2) }), value: r.rho.gradientZero };
    });
    return h('div', {}, card, shown);
  }

  /** The uniform-attention baseline: a guess, then both runs in a worker. */
  baselinePanel() {
    const out = h('div#explain-baseline-out');
    const btn = h('button#explain-baseline-run', { type: 'button', text: t('explain.baselineRun', BASELINE) });
    btn.addEventListener('click', () => {
      btn.disabled = true;
      this.runBaseline(out, () => (btn.disabled = false));
    });
    const card = guessCard('explain-uniform', t('explain.guessUniform'), () => {
      btn.hidden = false;
      return { html: t('explain.answerUniform') };
    });
    btn.hidden = true;
    return h('div', {}, h('p', { html: t('explain.baselineLead') }), card, btn, out);
  }

  /** @param {HTMLElement} out @param {() => void} done */
  runBaseline(out, done) {
    const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
    const start = performance.now();
    worker.onmessage = (ev) => {
      const m = ev.data;
      if (m.type === 'step')
        out.textContent = t('explain.baselineStep', { kind: t(`explain.kind.${m.kind}`), ...m, loss: fmt(m.loss, 3) });
      if (m.type === 'step') return;
      worker.terminate();
      done();
      if (m.type === 'error') out.textContent = t('explain.failed', { err: m.message });
      else this.baselineResult(out, m.result, (performance.now() - start) / 1000);
    };
    worker.postMessage({ variant: this.attn.variant, records: this.records, ...BASELINE });
  }

  /** @param {HTMLElement} out @param {any} r @param {number} seconds */
  baselineResult(out, r, seconds) {
    const pct = (/** @type {number} */ x) => `${fmt(100 * x, 1)} %`;
    Object.assign(out.dataset, { learned: r.learned.accuracy.test, uniform: r.uniform.accuracy.test });
    out.replaceChildren(
      h(
        'table.answers#explain-baseline',
        {},
        headRow(['', t('explain.col.train'), t('explain.col.test')]),
        ['learned', 'uniform'].map((k) =>
          h('tr', { 'data-kind': k }, h('th', { scope: 'row', text: t(`explain.kind.${k}`) }), [
            h('td.num', { text: pct(r[k].accuracy.train) }),
            h('td.num', { text: pct(r[k].accuracy.test) }),
          ]),
        ),
      ),
      h('p.note', { text: t('explain.baselineNote', { ...r, chance: pct(r.chance), s: fmt(seconds, 1) }) }),
    );
  }

  /** The source picker: the poem model, or the model of "Your model" once one is loaded. */
  sourcePicker() {
    const yours = h('button#explain-yours', { type: 'button', text: t('explain.useYours') });
    const poem = h('button#explain-poem', { type: 'button', text: t('explain.usePoem') });
    const sync = () => {
      const { model, label } = LOADED_MODEL.get();
      yours.disabled = !model;
      yours.title = model ? label : t('explain.noYours');
    };
    LOADED_MODEL.subscribe(sync);
    sync();
    yours.addEventListener('click', () => this.use('yours'));
    poem.addEventListener('click', () => this.use('poem'));
    return h('div.controls', {}, poem, yours);
  }

  async mount() {
    const u = this.ui;
    const panel = (/** @type {string} */ key, /** @type {Node[]} */ ...body) =>
      h(
        'div.panel',
        {},
        h('h3', { text: t(`explain.${key}.title`) }),
        h('p.note', { html: t(`explain.${key}.note`) }),
        ...body,
      );
    this.root.append(
      panel('reading', this.sourcePicker(), u.controls, u.msg, u.readings, u.rho),
      panel('heads', u.importance),
      panel('uniform', u.baseline),
    );
    await this.loadPoem();
    u.baseline.append(this.baselinePanel());
    this.use('poem');
  }
}

/**
 * @param {HTMLElement} root
 * @param {import('../../attnlab.js').Attnlab} attn
 */
export async function mount(root, attn) {
  await new Explain(root, attn).mount();
}
