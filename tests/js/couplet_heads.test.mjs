// scripts/couplet/heads.mjs on the shipped couplet model (web/demo/models/song-couplet-char-marian/): the committed
// heads.json against a fresh measurement from the folder (so the lead's rerun after retraining keeps it true), and
// its ablation costs against the library's own head ablation (model.headImportance, 'zero': the cross-attention
// heads masked in C++), a path that shares nothing with compute.js's crossAttnHeadMask forwards but the weights.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { init } from '../../dist/index.mjs';
import { loadCouplet } from '../../scripts/couplet/args.mjs';
import { measureCoupletHeads } from '../../scripts/couplet/heads.mjs';
import { pick } from '../../scripts/couplet/held-out.mjs';
import { isParallel, pairBatches, parseCoupletHeldOut, poemPairs } from '../../web/demo/parts/couplet/compute.js';
import { root } from './helpers.mjs';

const dir = join(root, 'web/demo/models/song-couplet-char-marian');
const committed = JSON.parse(readFileSync(join(dir, 'heads.json'), 'utf8'));
const pairs = poemPairs(parseCoupletHeldOut(readFileSync(join(dir, 'held-out.jsonl'), 'utf8')));

let loaded;
let measured;
before(async () => {
  // The variant heads.mjs uses: wasm is deterministic across CPUs, so the measurement reproduces heads.json.
  const attn = await init({ variant: 'simd' });
  loaded = loadCouplet(attn, dir);
  measured = measureCoupletHeads(loaded.model, loaded.tok, pairs);
});
after(() => loaded?.model.dispose());

test('heads.json is the measurement of the folder as it is', () => {
  assert.deepEqual({ model: 'song-couplet-char-marian', ...JSON.parse(JSON.stringify(measured)) }, committed);
  assert.deepEqual(committed.pairs, {
    parallel: pairs.filter((p) => isParallel(p.k)).length,
    control: pairs.filter((p) => !isParallel(p.k)).length,
  });
  const { layer, head, parallel } = committed.aligning;
  assert.equal(parallel, Math.max(...committed.aligned.parallel.flat()));
  assert.equal(committed.aligned.parallel[layer][head], parallel);
});

test('each cross head’s ablation cost equals headImportance’s (the library masks the head itself)', () => {
  const { model, tok } = loaded;
  for (const name of ['parallel', 'control']) {
    const batches = pairBatches(
      tok,
      pairs.filter((p) => isParallel(p.k) === (name === 'parallel')),
      0,
    );
    const L = model.config.decoderLayers;
    const H = model.config.numHeads;
    const sum = new Float64Array(L * H);
    let labels = 0;
    for (const b of batches) {
      const r = model.headImportance(
        { inputIds: b.inputIds, decoderInputIds: b.decoderInputIds, labels: b.labels },
        { method: 'ablation', ablation: 'zero' },
      );
      const n = b.labels.data.length; // rows of one length: the mean of rows' means is the mean per label
      r.importance.cross.data.forEach((d, i) => (sum[i] += d * n));
      labels += n;
    }
    const got = committed.ablation.delta[name].flat();
    got.forEach((d, i) => assert.ok(Math.abs(d - sum[i] / labels) < 2e-4, `${name} ${i}: ${d} vs ${sum[i] / labels}`));
  }
});

test('held-out.jsonl is held-out.mjs’s pick: half 五言, half 七言, each form by the SHA-256 of the id', () => {
  const poems = parseCoupletHeldOut(readFileSync(join(dir, 'held-out.jsonl'), 'utf8'));
  const forms = poems.map((p) => p.form);
  assert.equal(forms.filter((f) => f === 'lushi5').length, forms.filter((f) => f === 'lushi7').length);
  // picking again from the file's own poems, in reverse, gives the file back: its order is the hash order
  assert.deepEqual(pick([...poems].reverse(), poems.length), poems);
});
