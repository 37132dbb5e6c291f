// Mirrors web/demo/parts/poem/shipped-run.js: the model folder's losses.csv read as the chart draws it, against the
// trainer's summary.json (steps) and a row parsed here by hand; malformed files are named errors. snapshots.json:
// the maps' 1/255 codec, and its last step recomputed here from the shipped weights (the snapshots come from the run
// that made them), its first near uniform attention.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  parseLossesCsv,
  parseSnapshots,
  probeTexts,
  quantiseMaps,
  SNAPSHOTS_FORMAT,
} from '../../../../../web/demo/parts/poem/shipped-run.js';
import { parseHeldOut } from '../../../../../web/demo/parts/poem/compute.js';
import { bestPatternScores, headScores, meanLoss, poemFromText } from '../../../../../web/demo/parts/poem/heads.js';
import { charTokenizer } from '../../../../../web/demo/shared/char-tokenizer.js';
import { readSafetensors } from '../../../../../web/demo/attnlab.js';
import { DEMO, maxDiff, simd } from '../../helpers.mjs';

const DIR = path.join(DEMO, 'models/tang-song-quatrains-char-llama');

test('parseLossesCsv: the shipped run, every 50 steps and its validation every 500', () => {
  const csv = fs.readFileSync(path.join(DIR, 'losses.csv'), 'utf8');
  const summary = JSON.parse(fs.readFileSync(path.join(DIR, 'summary.json'), 'utf8'));
  const run = parseLossesCsv(csv);
  assert.equal(run.steps, summary.steps);
  assert.equal(run.train.length, summary.steps / 50);
  assert.deepEqual(
    run.validation.map(([s]) => s),
    Array.from({ length: summary.steps / 500 }, (_, i) => 500 * (i + 1)),
  );
  const last = csv.trim().split('\n').at(-1).split(',');
  assert.deepEqual(run.validation.at(-1), [Number(last[0]), Number(last[6])]);
  assert.ok(run.train[0][1] > run.train.at(-1)[1], 'the training loss fell');
});

test('parseLossesCsv: a missing column or a bad row is an error naming it', () => {
  assert.throws(() => parseLossesCsv('step,train_loss\n50,8.1\n'), /no column 'val_loss'/);
  assert.throws(() => parseLossesCsv('step,train_loss,val_loss\nx,8.1,\n'), /a bad row 'x,8.1,'/);
});

test('quantiseMaps / parseSnapshots: causal maps back to within 1/510; a wrong size or format is named', () => {
  const T = 3;
  const causal = (/** @type {number} */ seed) =>
    Float32Array.from({ length: 2 * T * T }, (_, k) => (k % T <= Math.floor(k / T) % T ? ((k * seed) % 7) / 6 : 0));
  const maps = [causal(1), causal(3)];
  const json = {
    format: SNAPSHOTS_FORMAT,
    probes: 1,
    labels: ['a', 'b', 'c'],
    steps: [{ step: 5, maps: quantiseMaps(maps, T) }],
  };
  assert.equal(atob(json.steps[0].maps[0]).length, 2 * 6); // two heads' lower triangles
  const back = parseSnapshots(json).steps[0].maps;
  for (const l of [0, 1]) assert.ok(maxDiff(back[l], maps[l]) <= 1 / 510 + 1e-7);
  assert.throws(() => parseSnapshots({ ...json, format: 2 }), /format 2, expected 1/);
  assert.throws(
    () => parseSnapshots({ ...json, labels: ['a', 'b', 'c', 'd'] }),
    /step 5 layer 0: 12 values, not heads × 4·5\/2/,
  );
});

test('snapshots.json: the last step is the shipped model on the probes, the first attends about uniformly', async () => {
  const snaps = parseSnapshots(JSON.parse(fs.readFileSync(path.join(DIR, 'snapshots.json'), 'utf8')));
  const summary = JSON.parse(fs.readFileSync(path.join(DIR, 'summary.json'), 'utf8'));
  const steps = snaps.steps.map((s) => s.step);
  assert.deepEqual(
    steps,
    [...steps].sort((a, b) => a - b),
  );
  assert.deepEqual([steps[0], steps.at(-1)], [0, summary.steps]);
  // every step but the last from the rerun (scripts/poems/snapshots.mjs checked its logged losses)
  assert.ok(snaps.rerun.matchedLogs >= 1);
  assert.ok(steps.slice(0, -1).every((s) => s <= snaps.rerun.lastStep));
  const tok = charTokenizer(JSON.parse(fs.readFileSync(path.join(DIR, 'tokenizer.json'), 'utf8')));
  const heldOut = parseHeldOut(fs.readFileSync(path.join(DIR, 'held-out.jsonl'), 'utf8')).filter(
    (p) => p.split === 'test',
  );
  const probes = probeTexts(heldOut.map((p) => p.text)).map((text) => poemFromText(tok, text));
  assert.deepEqual(snaps.labels, probes[0].chars);
  assert.equal(snaps.probes, probes.length);
  const attn = await simd();
  const config = JSON.parse(fs.readFileSync(path.join(DIR, 'config.json'), 'utf8'));
  const model = attn.loadModel({
    config,
    tensors: readSafetensors(fs.readFileSync(path.join(DIR, 'model.safetensors'))),
  });
  try {
    const last = snaps.steps.at(-1);
    const p = probes[0].ids;
    const { attentions } = model.forward({ data: p, shape: [1, p.length] }, { outputAttentions: true });
    attentions.forEach((a, l) => assert.ok(maxDiff(last.maps[l], a.data) <= 1 / 510 + 1e-6, `layer ${l}`));
    assert.ok(Math.abs(last.probeLoss - meanLoss(model, probes)) < 1e-4);
    for (const [name, v] of Object.entries(bestPatternScores(headScores(model, probes).patterns)))
      assert.ok(Math.abs(last.patterns[name].best - v.best) < 1e-5, name);
  } finally {
    model.dispose();
  }
  const first = snaps.steps[0];
  const lnV = Math.log(config.vocab_size);
  assert.ok(Math.abs(first.probeLoss - lnV) < 0.5, `step 0 loss ${first.probeLoss} vs ln V ${lnV}`);
  for (const [name, v] of Object.entries(first.patterns))
    assert.ok(v.best < 2 * v.baseline + 0.05, `step 0, ${name}: ${v.best} vs uniform ${v.baseline}`);
});
