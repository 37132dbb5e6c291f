#!/usr/bin/env node
// The couplet model's training replay (issue 34 §1; docs/couplet-model.md): the weights the trainer wrote at its
// snapshot steps (<run>/snapshots/step-S.safetensors) before the last logged step, and at that step the model
// folder's model.safetensors (F16, as the page runs it, whatever snapshot the run wrote there), each run through the
// package's public API (dist/) on the folder's held-out Tang couplets (held-out.jsonl): the mean loss per label and every decoder head's mean weight of lower position t on
// upper character t, parallel (k = 2, 3) and control (k = 1, 4) apart, and the probe poems' cross-attention maps
// (compute.js probePoems: every couplet, layer and head, quantised to 1/255) → snapshots.json, which the chapter's
// step slider replays (uniform → diagonal).
//
//   node scripts/couplet/snapshots.mjs --run DIR [--model DIR] [--out FILE]
//
// --run    the trainer's output folder (scripts/couplet/train.sh's run), holding snapshots/ and losses.csv
// --model  the model folder (default web/demo/models/song-couplet-char-marian): config.json, tokenizer.json,
//          held-out.jsonl, model.safetensors, losses.csv
// --out    default <model>/snapshots.json
//
// The run must be the one that made the model: every step both losses.csv files logged must have the same training
// loss and gradient norm (as printed).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { init } from '../../dist/index.mjs';
import {
  alignmentMaps,
  COUPLET_SNAPSHOTS_FORMAT,
  headAlignment,
  parseCoupletHeldOut,
  poemPairs,
  probePoems,
  quantiseCross,
  round6,
} from '../../web/demo/parts/couplet/compute.js';
import { loadCouplet, MODEL, parseArgs, run } from './args.mjs';

/** losses.csv → step → "train_loss,grad_norm". */
function logged(file) {
  const [header, ...rows] = readFileSync(file, 'utf8').trim().split('\n');
  const at = ['step', 'train_loss', 'grad_norm'].map((c) => header.split(',').indexOf(c));
  return new Map(rows.map((r) => r.split(',')).map((f) => [Number(f[at[0]]), `${f[at[1]]},${f[at[2]]}`]));
}

/** The snapshots by step, then the model's weights at its last logged step if the run has none after it. */
function weightFiles(args) {
  const mine = logged(join(args.model, 'losses.csv'));
  for (const [step, row] of logged(join(args.run, 'losses.csv')))
    if (mine.has(step) && mine.get(step) !== row)
      throw new Error(`snapshots.mjs: step ${step}: the run logged ${row}, the model ${mine.get(step)}`);
  const dir = join(args.run, 'snapshots');
  const files = readdirSync(dir)
    .map((name) => ({ name, m: /^step-(\d+)\.safetensors$/.exec(name) }))
    .filter(({ m }) => m)
    .map(({ name, m }) => ({ step: Number(m[1]), file: join(dir, name) }))
    .sort((a, b) => a.step - b.step);
  const last = Math.max(...mine.keys());
  return [...files.filter((f) => f.step < last), { step: last, file: join(args.model, 'model.safetensors') }];
}

/** One snapshot's numbers. */
async function measure(model, tok, pairs, probes) {
  const a = headAlignment(model, tok, pairs);
  const maps = [];
  for (const poem of probes) {
    const couplets = [];
    for (const c of poem.couplets) {
      const written = Array.from(tok.encode(c.lower, { bos: false })).concat(tok.special.eos);
      const r = await alignmentMaps(model, [...tok.encode(c.upper, { bos: false }), tok.special.eos], written);
      couplets.push(r.maps.map(quantiseCross));
    }
    maps.push(couplets);
  }
  return { loss: round6(a.loss), aligned: round6({ parallel: a.parallel, control: a.control }), maps };
}

async function main() {
  const args = parseArgs(process.argv.slice(2), { run: '', model: MODEL, out: '' }, import.meta.url);
  if (!args.run) throw new Error('snapshots.mjs: --run DIR is required (see --help)');
  const out = args.out || join(args.model, 'snapshots.json');
  const poems = parseCoupletHeldOut(readFileSync(join(args.model, 'held-out.jsonl'), 'utf8'));
  const probes = probePoems(poems);
  const attn = await init({ variant: 'simd' });
  const steps = [];
  for (const { step, file } of weightFiles(args)) {
    const { model, tok } = loadCouplet(attn, args.model, file);
    try {
      steps.push({ step, ...(await measure(model, tok, poemPairs(poems), probes)) });
    } finally {
      model.dispose();
    }
    process.stderr.write(`step ${step}: loss ${JSON.stringify(steps.at(-1).loss)}\n`);
  }
  const pairs = poemPairs(poems).length;
  const json = { format: COUPLET_SNAPSHOTS_FORMAT, pairs, probes: probes.map((p) => p.couplets), steps };
  writeFileSync(out, JSON.stringify(json) + '\n');
  process.stderr.write(`wrote ${out} (${steps.length} steps)\n`);
}

run(main);
