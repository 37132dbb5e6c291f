// Mirrors web/demo/parts/poem/shipped-run.js: the model folder's losses.csv read as the chart draws it, against the
// trainer's summary.json (steps) and a row parsed here by hand; malformed files are named errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { parseLossesCsv } from '../../../../../web/demo/parts/poem/shipped-run.js';
import { DEMO } from '../../helpers.mjs';

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
