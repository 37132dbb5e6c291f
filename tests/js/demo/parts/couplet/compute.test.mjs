// Mirrors web/demo/parts/couplet/compute.js: the held-out file, the seq2seq framing (the encoder reads the upper line
// + [EOS]; the decoder reads [PAD] then the lower line; labels the lower line + [EOS]), the diagonal weight and the
// loss, each against a computation by hand; the batched measurement against one forward per couplet; the snapshots'
// codec, and snapshots.json's last step recomputed from the shipped weights.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as C from '../../../../../web/demo/parts/couplet/compute.js';
import { charTokenizer } from '../../../../../web/demo/shared/char-tokenizer.js';
import { readSafetensors } from '../../../../../web/demo/attnlab.js';
import { DEMO, maxDiff, simd } from '../../helpers.mjs';

const DIR = path.join(DEMO, 'models/song-couplet-char-marian');
const read = (f) => fs.readFileSync(path.join(DIR, f), 'utf8');
const tok = charTokenizer(JSON.parse(read('tokenizer.json')));
const poems = C.parseCoupletHeldOut(read('held-out.jsonl'));
let model;
before(async () => {
  const attn = await simd();
  model = attn.loadModel({
    config: JSON.parse(read('config.json')),
    tensors: readSafetensors(fs.readFileSync(path.join(DIR, 'model.safetensors'))),
  });
});
after(() => model?.dispose());

test('parseCoupletHeldOut: the folder’s poems, 4 couplets of 5 or 7 characters; a bad line is named', () => {
  assert.ok(poems.length >= 16, `${poems.length} poems`);
  for (const form of ['lushi5', 'lushi7'])
    assert.ok(
      poems.some((p) => p.form === form),
      form,
    );
  for (const p of poems)
    assert.deepEqual(
      p.couplets.map((c) => c.k),
      [1, 2, 3, 4],
    );
  const bad = JSON.stringify({ id: 'x', couplets: [{ k: 1, upper: '一二三四五', lower: '一二三四' }] });
  assert.throws(() => C.parseCoupletHeldOut(`${JSON.stringify(poems[0])}\n${bad}\n`), /line 2/);
});

test('encodeLine and readUpper: one id per character, [UNK] for an unknown one, then [EOS]; 5 or 7 characters', () => {
  const known = [...tok.ids.keys()].filter((c) => [...c].length === 1 && c > '一').slice(0, 6);
  const unknown = String.fromCodePoint(0x2a6d6); // CJK Extension B, far out of a 7,752-token vocabulary
  assert.ok(!tok.ids.has(unknown));
  const line = known.slice(0, 4).join('') + unknown;
  const ids = C.encodeLine(tok, line);
  assert.deepEqual([...ids], [...known.slice(0, 4).map((c) => tok.ids.get(c)), tok.special.unk, tok.special.eos]);
  const up = C.readUpper(tok, ` ${line} `);
  assert.deepEqual([...up.ids], [...ids]);
  assert.deepEqual(up.labels, [...known.slice(0, 4), '[UNK]', '[EOS]']);
  assert.deepEqual(up.unknown, [unknown]);
  assert.deepEqual(C.readUpper(tok, known.join('')), { error: 'length', n: 6 });
});

test('pairBatch: labels = lower + [EOS], decoder inputs = shift_right(labels) from decoder_start_token_id', () => {
  const pairs = poems[0].couplets;
  const b = C.pairBatch(tok, pairs, 0);
  const n = [...pairs[0].upper].length;
  assert.deepEqual(b.inputIds.shape, [4, n + 1]);
  pairs.forEach((p, i) => {
    const row = (x) => [...x.data.subarray(i * (n + 1), (i + 1) * (n + 1))];
    assert.deepEqual(row(b.inputIds), [...[...p.upper].map((c) => tok.ids.get(c) ?? 1), 3]);
    assert.deepEqual(row(b.labels), [...[...p.lower].map((c) => tok.ids.get(c) ?? 1), 3]);
    assert.deepEqual(row(b.decoderInputIds), [0, ...row(b.labels).slice(0, n)]);
  });
  const other = poems.find((p) => p.form !== poems[0].form).couplets[0];
  assert.throws(() => C.pairBatch(tok, [pairs[0], other], 0), RangeError);
});

test('diagonalSums and labelLoss against sums by hand', () => {
  // (B 1, H 2, T 3, S 3): head 0 is the identity, head 1 uniform; the [EOS] row is left out
  const cross = Float32Array.from([1, 0, 0, 0, 1, 0, 0, 0, 1, ...Array(9).fill(1 / 3)]);
  const s = C.diagonalSums(cross, [1, 2, 3, 3]);
  assert.deepEqual([s[0], +s[1].toFixed(6)], [2, 0.666667]);
  const logits = Float32Array.from([0, 0, 0, 0, Math.log(3), 0, 0, 0]);
  const l = C.labelLoss(logits, Int32Array.from([2, 0]), 4);
  assert.equal(l.count, 2);
  // row 2: label 0 (logit ln 3, float32) against ln(3 + 1 + 1 + 1)
  assert.ok(Math.abs(l.sum - (Math.log(4) + Math.log(6) - Math.log(3))) < 1e-6);
});

test('headAlignment (batched) equals one forward per couplet, read off the maps by hand', async () => {
  const few = poems.slice(0, 2).concat(poems.filter((p) => p.form === 'lushi7').slice(0, 2));
  const pairs = C.poemPairs(few);
  const got = C.headAlignment(model, tok, pairs);
  const { decoderLayers: L, numHeads: H } = model.config;
  for (const [name, keep] of [
    ['parallel', true],
    ['control', false],
  ]) {
    const want = Array.from({ length: L }, () => new Array(H).fill(0));
    let cells = 0;
    for (const p of pairs.filter((q) => C.isParallel(q.k) === keep)) {
      const r = await C.alignmentMaps(model, C.encodeLine(tok, p.upper), [...C.encodeLine(tok, p.lower)]);
      for (let l = 0; l < L; l++)
        for (let h = 0; h < H; h++) {
          const m = C.headMatrix(r, l, h);
          for (let t = 0; t < r.T - 1; t++) want[l][h] += m[t * r.S + t];
        }
      cells += r.T - 1;
    }
    assert.ok(
      maxDiff(
        got[name].flat(),
        want.flat().map((x) => x / cells),
      ) < 1e-5,
      name,
    );
  }
  const best = C.aligningHead(got.parallel);
  assert.equal(got.parallel[best.layer][best.head], Math.max(...got.parallel.flat()));
});

test('quantiseCross / unpackCross: within half of 1/255', () => {
  const m = Float32Array.from({ length: 72 }, (_, i) => ((i * 37) % 101) / 100);
  assert.ok(maxDiff(C.unpackCross(C.quantiseCross(m)), m) <= 0.5 / 255 + 1e-7);
});

test('snapshots.json: the last step is the shipped weights’ own numbers and maps', async () => {
  const snaps = C.parseCoupletSnapshots(JSON.parse(read('snapshots.json')), {
    layers: model.config.decoderLayers,
    heads: model.config.numHeads,
  });
  const steps = snaps.steps.map((s) => s.step);
  assert.deepEqual(
    steps,
    [...steps].sort((a, b) => a - b),
  );
  const csv = read('losses.csv').trim().split('\n');
  assert.equal(steps.at(-1), Number(csv.at(-1).split(',')[0]), 'the last step is the last logged step');
  assert.deepEqual(
    snaps.probes,
    C.probePoems(poems).map((p) => p.couplets),
  );
  const last = snaps.steps.at(-1);
  const a = C.headAlignment(model, tok, C.poemPairs(poems));
  assert.ok(maxDiff(last.aligned.parallel.flat(), a.parallel.flat()) < 1e-5);
  assert.ok(Math.abs(last.loss.control - a.loss.control) < 1e-4);
  const c = snaps.probes[0][1];
  const r = await C.alignmentMaps(model, C.encodeLine(tok, c.upper), [...C.encodeLine(tok, c.lower)]);
  r.maps.forEach((m, l) => assert.ok(maxDiff(last.maps[0][1][l], m) <= 0.5 / 255 + 1e-6, `layer ${l}`));
  assert.throws(() => C.parseCoupletSnapshots({ format: 99, steps: [] }, { layers: 3, heads: 4 }), /format/);
});
