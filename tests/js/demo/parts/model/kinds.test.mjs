// Part "Your model", the encoders, ViT and encoder–decoders (mirrors web/demo/parts/model/kinds.js): folders of the
// tiny fixtures (tests/fixtures/encoders/, tests/fixtures/seq2seq/) with the tokenizers of tokenizer-fixtures.mjs,
// loaded through checkpoint.js as the page loads them; the maps against forward's attentions, the [MASK] top-k and
// the labels against a float64 softmax of forward's logits, the pixels against a direct normalisation, the patch grid
// against the [CLS] row, the alignment against forward's crossAttentions for the generated ids.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as Ck from '../../../../../web/demo/parts/model/checkpoint.js';
import * as K from '../../../../../web/demo/parts/model/kinds.js';
import { simd, ROOT } from '../../helpers.mjs';
import { wordPieceJson, unigramJson, MARIAN_VOCAB } from './tokenizer-fixtures.mjs';

const FIX = path.join(ROOT, 'tests/fixtures');
const bytes = (o) => new TextEncoder().encode(JSON.stringify(o));

/** A fixture folder's files, with extra { name: object } files (a tokenizer.json, a preprocessor_config.json). */
function folder(dir, extra = {}) {
  const files = ['config.json', 'model.safetensors'].map((f) => ({
    name: f,
    bytes: new Uint8Array(fs.readFileSync(path.join(FIX, dir, f))),
  }));
  return [...files, ...Object.entries(extra).map(([name, o]) => ({ name, bytes: bytes(o) }))];
}

async function load(files) {
  const attn = await simd();
  const f = await Ck.readFolder(files);
  return { attn, f, ...(await Ck.loadFolder((o) => attn.loadModel(o), f)) };
}

/** float64 softmax of a row. */
function softmax(row) {
  const m = Math.max(...row);
  const e = Array.from(row, (x) => Math.exp(x - m));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / z);
}

const close = (a, b, tol, label) => assert.ok(Math.abs(a - b) <= tol, `${label}: ${a} vs ${b}`);

test("BERT masked-LM: the maps are forward's attentions; the top 5 at [MASK] are the float64 softmax's", async () => {
  const { attn, model, tok, f } = await load(folder('encoders/bert_mlm_f32', { 'tokenizer.json': wordPieceJson() }));
  try {
    assert.equal(model.kind, 'encoder');
    assert.equal(model.task, 'masked-lm');
    const mask = K.maskTokenId(tok.tk, f.tokenizerConfig);
    assert.equal(mask, 4);
    const ids = tok.tk.encode('The cats sat on the [MASK].').ids.slice();
    assert.deepEqual(ids, [2, 5, 6, 13, 7, 8, 5, 4, 22, 3], '[CLS] the cat ##s sat on the [MASK] . [SEP]');
    const r = await K.encoderForward(model, ids);
    const out = model.forward({ data: Int32Array.from(ids), shape: [1, ids.length] }, { outputAttentions: true });
    assert.equal(r.maps.length, 2);
    assert.deepEqual([r.T, r.S, r.H], [10, 10, 4]);
    r.maps.forEach((m, l) => assert.deepEqual(m, out.attentions[l].data, `layer ${l}`));
    const V = 24;
    const preds = K.maskPredictions(attn, r.logits, ids, mask, 5);
    assert.equal(preds.length, 1);
    assert.equal(preds[0].i, 7);
    const p = softmax(out.logits.data.subarray(7 * V, 8 * V));
    const order = p.map((x, id) => ({ id, x })).sort((a, b) => b.x - a.x);
    assert.deepEqual(
      preds[0].top.map((x) => x.id),
      order.slice(0, 5).map((x) => x.id),
    );
    preds[0].top.forEach((x, k) => close(x.p, order[k].x, 1e-6, `p of ${x.id}`));
    assert.deepEqual(
      K.maskPredictions(
        attn,
        r.logits,
        ids.map((id) => (id === 4 ? 5 : id)),
        mask,
      ),
      [],
      'no [MASK]',
    );
  } finally {
    model.dispose();
  }
});

test('a classifier: every label with its probability (id2label), most probable first', async () => {
  const { attn, model, tok, f } = await load(folder('encoders/bert_cls_f16', { 'tokenizer.json': wordPieceJson() }));
  try {
    assert.equal(model.task, 'sequence-classification');
    const ids = tok.tk.encode('the dog ran.').ids.slice();
    const r = await K.encoderForward(model, ids);
    const probs = K.classProbabilities(attn, r.logits, f.config.id2label);
    const p = softmax(model.forward({ data: Int32Array.from(ids), shape: [1, ids.length] }).logits.data);
    assert.equal(probs.length, 3);
    for (const x of probs) {
      assert.equal(x.label, `LABEL_${x.id}`);
      close(x.p, p[x.id], 1e-6, x.label);
    }
    assert.ok(probs[0].p >= probs[1].p && probs[1].p >= probs[2].p);
    assert.deepEqual(
      K.classProbabilities(attn, Float32Array.of(0, 0), { 0: 'neg', 1: 'pos' }).map((x) => x.label),
      ['neg', 'pos'],
    );
  } finally {
    model.dispose();
  }
});

test('ViT: no tokenizer needed; pixels normalised as preprocessor_config.json says (defaults without it)', async () => {
  const pre = { image_mean: [0.485, 0.456, 0.406], image_std: [0.229, 0.224, 0.225], rescale_factor: 1 / 255 };
  const { model, tok, f } = await load(folder('encoders/vit_cls_f32', { 'preprocessor_config.json': pre }));
  model.dispose();
  assert.equal(tok, null);
  const s = K.imageSettings(f.config, f.preprocessor);
  assert.deepEqual([s.size, s.patch, s.channels, s.fromFile], [14, 4, 3, true]);
  const rgba = Uint8Array.from({ length: 14 * 14 * 4 }, (_, i) => (i * 37 + 11) % 256);
  const px = K.pixelValues(rgba, s);
  assert.deepEqual(px.shape, [1, 3, 14, 14]);
  for (const i of [0, 13, 100, 195])
    for (let c = 0; c < 3; c++)
      close(
        px.data[c * 196 + i],
        (rgba[4 * i + c] / 255 - pre.image_mean[c]) / pre.image_std[c],
        1e-5,
        `pixel ${i} c${c}`,
      );
  const d = K.imageSettings({ image_size: 8, patch_size: 2, num_channels: 1 }, null);
  assert.deepEqual([d.mean, d.std, d.fromFile], [[0.5], [0.5], false]);
  const grey = K.pixelValues(new Uint8Array(8 * 8 * 4).fill(200), d);
  close(grey.data[5], ((0.299 + 0.587 + 0.114) * 200) / 255 / 0.5 - 1, 1e-5, 'luma');
  assert.throws(
    () => K.imageSettings(f.config, { image_mean: [0.5, 0.5] }),
    /image_mean must be a number or a list of 1 or 3/,
  );
  assert.throws(() => K.imageSettings(f.config, { image_std: 0 }), /image_std/);
  assert.throws(() => K.pixelValues(new Uint8Array(4), s), /not 14 × 14/);
});

test("ViT: a head's [CLS] row laid on the ⌊14/4⌋ = 3 × 3 patch grid, cell (r, c) = key 1 + 3r + c", async () => {
  const { model, f } = await load(folder('encoders/vit_cls_f32'));
  try {
    const s = K.imageSettings(f.config, null);
    const rgba = Uint8Array.from({ length: 14 * 14 * 4 }, (_, i) => (i * 53) % 256);
    const px = K.pixelValues(rgba, s);
    const r = await K.encoderForward(model, px);
    const out = model.forward(px, { outputAttentions: true });
    assert.equal(r.T, 10);
    for (let l = 0; l < 2; l++)
      for (let hh = 0; hh < 4; hh++) {
        const { cells, cls, grid } = K.clsPatches(r.maps[l], hh, 3);
        assert.equal(grid, 3);
        const a = out.attentions[l].data;
        assert.equal(cls, a[hh * 100]);
        for (let row = 0; row < 3; row++)
          for (let c = 0; c < 3; c++)
            assert.equal(cells[row * 3 + c], a[hh * 100 + 1 + row * 3 + c], `l${l} h${hh} (${row}, ${c})`);
        close(
          cells.reduce((x, y) => x + y, cls),
          1,
          1e-5,
          'the row sums to 1',
        );
      }
    assert.throws(() => K.clsPatches(r.maps[0], 0, 4), /4 × 4 patches \(17 tokens\)/);
  } finally {
    model.dispose();
  }
});

test("T5 with a Unigram tokenizer: generate, then the alignment is forward's crossAttentions for the written ids", async () => {
  const { model, tok } = await load(folder('seq2seq/t5_v10_f32', { 'tokenizer.json': unigramJson() }));
  try {
    assert.equal(model.kind, 'encoder-decoder');
    const source = tok.encode('the cat sat on the mat.');
    assert.deepEqual(source, [3, 4, 5, 6, 3, 7, 18, 1], '▁the ▁cat ▁sat ▁on ▁the ▁mat . </s>');
    const g = await Ck.generateTokens(model, source, { maxNewTokens: 6, temperature: 0 });
    const direct = Array.from(model.generate(Int32Array.from(source), { maxNewTokens: 6, temperature: 0 }));
    assert.deepEqual(g.ids, direct);
    assert.ok(g.ids.length >= 1);
    const r = await K.seq2seqMaps(model, source, g.ids, 0);
    const dec = [0, ...g.ids.slice(0, -1)];
    assert.deepEqual(r.decoderInput, dec);
    const out = model.forward(
      { data: Int32Array.from(source), shape: [1, source.length] },
      { decoderInputIds: { data: Int32Array.from(dec), shape: [1, dec.length] }, outputAttentions: true },
    );
    const [T, S] = [dec.length, source.length];
    assert.deepEqual([r.cross.T, r.cross.S, r.cross.H, r.cross.maps.length], [T, S, 3, 2]);
    assert.deepEqual([r.encoder.T, r.decoder.T], [S, T]);
    for (let l = 0; l < 2; l++)
      for (let hh = 0; hh < 3; hh++) {
        const m = K.alignment(r.cross, l, hh);
        assert.equal(m.length, T * S);
        for (let i = 0; i < T; i++)
          for (let j = 0; j < S; j++) assert.equal(m[i * S + j], out.crossAttentions[l].data[(hh * T + i) * S + j]);
      }
    r.encoder.maps.forEach((m, l) => assert.deepEqual(m, out.encoderAttentions[l].data));
    r.decoder.maps.forEach((m, l) => assert.deepEqual(m, out.decoderAttentions[l].data));
  } finally {
    model.dispose();
  }
});

test("Marian with its own order of ids: the decoder starts at pad (23); the maps' rows are the steps that wrote the ids", async () => {
  const { model, tok } = await load(folder('seq2seq/marian_mt_f32', { 'tokenizer.json': unigramJson(MARIAN_VOCAB) }));
  try {
    const source = tok.encode('the dog ran.');
    assert.deepEqual(source, [2, 8, 22, 17, 0], '▁the ▁dog ▁ran . </s>');
    assert.deepEqual(tok.eos, [0], "config.json's eos_token_id");
    const start = model.config.decoderStartTokenId;
    assert.equal(start, 23);
    const g = await Ck.generateTokens(model, source, { maxNewTokens: 8, temperature: 0 });
    assert.deepEqual(g.ids, Array.from(model.generate(Int32Array.from(source), { maxNewTokens: 8, temperature: 0 })));
    assert.ok(!g.ids.includes(23), 'never pad');
    const r = await K.seq2seqMaps(model, source, g.ids, start);
    const dec = [23, ...g.ids.slice(0, -1)];
    const out = model.forward(
      { data: Int32Array.from(source), shape: [1, 5] },
      { decoderInputIds: { data: Int32Array.from(dec), shape: [1, dec.length] }, outputAttentions: true },
    );
    // row i of the decoder's logits is the step that wrote ids[i] (greedy: its argmax)
    const V = 24;
    g.ids.forEach((id, i) => {
      const row = Array.from(out.logits.data.subarray(i * V, (i + 1) * V));
      row[23] = -Infinity;
      assert.equal(row.indexOf(Math.max(...row)), id, `step ${i}`);
    });
    assert.deepEqual([r.cross.maps.length, r.cross.T, r.cross.S], [3, dec.length, 5]);
    r.cross.maps.forEach((m, l) => assert.deepEqual(m, out.crossAttentions[l].data, `layer ${l}`));
  } finally {
    model.dispose();
  }
});

test('tokenizer.json the package cannot read, and a text folder without one: both named', async () => {
  const bad = { ...unigramJson(), model: { type: 'BPEv9', vocab: {} } };
  await assert.rejects(
    load(folder('seq2seq/t5_v10_f32', { 'tokenizer.json': bad })),
    /tokenizer\.json cannot be read by @huggingface\/tokenizers.*BPEv9/,
  );
  await assert.rejects(load(folder('encoders/bert_mlm_f32')), /lacks tokenizer\.json/);
  await assert.rejects(load(folder('encoders/vit_cls_f32').slice(0, 1)), /lacks model\.safetensors/);
});
