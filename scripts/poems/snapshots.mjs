#!/usr/bin/env node
// The shipped poem model's training run seen from inside (issue 37 item 1; docs/poem-model.md): the weights the
// trainer wrote at --snapshot-steps (scripts/poems/train.sh, <run>/snapshots/step-S.safetensors, F16 as shipped) are
// run through the package's public API (dist/) on the §10.1 panel's held-out probes (shipped-run.js probeTexts),
// and per step the file keeps the probes' mean loss, each pattern's best head score (heads.js), each head's mean
// entropy on the first probe, and the first probe's attention maps (every head, quantised to 1/255), as the page
// draws them (shipped-run.js parseSnapshots).
//
//   node scripts/poems/snapshots.mjs --run DIR [--model DIR] [--out FILE]
//
// --run    the trainer's output folder (train.sh's <cache>/poems/run), holding snapshots/
// --model  the model folder: config.json, tokenizer.json, held-out.jsonl, model.safetensors, losses.csv, summary.json
//          (default web/demo/models/tang-song-quatrains-char-llama)
// --out    default <model>/snapshots.json
//
// The run must be the one that made the model: its losses.csv must equal the model's on every step both logged (the
// training loss, the gradient norm and the validation loss, as printed), and its last snapshot must be the model's
// model.safetensors byte for byte, unless the run stopped early (a rerun cut short): then the model's own weights
// stand for the last step (summary.json's steps), and snapshots.json says how far the rerun went
// (`rerun.lastStep`, with `rerun.matchedLogs`, the logged steps it matched).
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { init, readSafetensors } from '../../dist/index.mjs';
import { charTokenizer } from '../../web/demo/shared/char-tokenizer.js';
import { parseHeldOut } from '../../web/demo/parts/poem/compute.js';
import {
  bestPatternScores,
  headScores,
  meanLoss,
  poemFromText,
  sequenceEntropy,
} from '../../web/demo/parts/poem/heads.js';
import { probeTexts, quantiseMaps, SNAPSHOTS_FORMAT } from '../../web/demo/parts/poem/shipped-run.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function parseArgs(argv) {
  const args = { run: null, model: join(ROOT, 'web/demo/models/tang-song-quatrains-char-llama'), out: null };
  for (let i = 0; i < argv.length; i += 2) {
    const key = { '--run': 'run', '--model': 'model', '--out': 'out' }[argv[i]];
    if (!key || argv[i + 1] === undefined) throw new Error(`snapshots.mjs: unknown or incomplete argument ${argv[i]}`);
    args[key] = argv[i + 1];
  }
  if (!args.run) throw new Error('snapshots.mjs: --run DIR is required');
  args.out ??= join(args.model, 'snapshots.json');
  return args;
}

/** <run>/snapshots/step-S.safetensors → [{ step, file }] by step. */
function snapshotFiles(run) {
  const dir = join(run, 'snapshots');
  return readdirSync(dir)
    .map((name) => ({ name, m: /^step-(\d+)\.safetensors$/.exec(name) }))
    .filter(({ m }) => m)
    .map(({ name, m }) => ({ step: Number(m[1]), file: join(dir, name) }))
    .sort((a, b) => a.step - b.step);
}

const round = (x) => (Array.isArray(x) ? x.map(round) : Number(x.toPrecision(6)));

/** One snapshot's numbers on the probes (the first probe's maps and entropy, as the §10.1 panel shows them). */
function measure(model, probes) {
  const p = probes[0].ids;
  const { attentions } = model.forward({ data: p, shape: [1, p.length] }, { outputAttentions: true });
  const best = bestPatternScores(headScores(model, probes).patterns);
  return {
    probeLoss: round(meanLoss(model, probes)),
    patterns: Object.fromEntries(
      Object.entries(best).map(([k, v]) => [k, { best: round(v.best), baseline: round(v.baseline) }]),
    ),
    entropy: round(sequenceEntropy(attentions).mean),
    maps: quantiseMaps(
      attentions.map((a) => a.data),
      p.length,
    ),
  };
}

/** losses.csv → step → the columns a rerun must reproduce exactly. */
function loggedRows(file) {
  const [header, ...rows] = readFileSync(file, 'utf8').trim().split('\n');
  const cols = header.split(',');
  const at = ['step', 'train_loss', 'grad_norm', 'val_loss'].map((c) => cols.indexOf(c));
  return new Map(rows.map((r) => r.split(',')).map((f) => [Number(f[at[0]]), at.map((i) => f[i]).join(',')]));
}

/** The run's snapshots, checked against the model (see the header); → { files, rerun }. */
function checkedSnapshots(args) {
  const run = loggedRows(join(args.run, 'losses.csv'));
  const shipped = loggedRows(join(args.model, 'losses.csv'));
  let matchedLogs = 0;
  for (const [step, row] of run) {
    if (shipped.get(step) !== row)
      throw new Error(`snapshots.mjs: step ${step}: the run logged ${row}, the model ${shipped.get(step)}`);
    matchedLogs += 1;
  }
  if (!matchedLogs) throw new Error(`snapshots.mjs: ${args.run}/losses.csv has no logged step to check`);
  const files = snapshotFiles(args.run);
  const modelFile = join(args.model, 'model.safetensors');
  const { steps } = JSON.parse(readFileSync(join(args.model, 'summary.json'), 'utf8'));
  const lastStep = files.at(-1)?.step ?? -1;
  if (lastStep < steps) files.push({ step: steps, file: modelFile });
  else if (!readFileSync(files.at(-1).file).equals(readFileSync(modelFile)))
    throw new Error(`snapshots.mjs: the last snapshot of ${args.run} is not ${modelFile}`);
  return { files, rerun: { lastStep, matchedLogs } };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const { files, rerun } = checkedSnapshots(args);
  const config = JSON.parse(readFileSync(join(args.model, 'config.json'), 'utf8'));
  const tok = charTokenizer(JSON.parse(readFileSync(join(args.model, 'tokenizer.json'), 'utf8')));
  const heldOut = parseHeldOut(readFileSync(join(args.model, 'held-out.jsonl'), 'utf8')).filter(
    (p) => p.split === 'test',
  );
  const probes = probeTexts(heldOut.map((p) => p.text)).map((text) => poemFromText(tok, text));
  const attn = await init({ variant: 'simd' });
  const steps = [];
  for (const { step, file } of files) {
    const model = attn.loadModel({ config, tensors: readSafetensors(readFileSync(file)) });
    try {
      steps.push({ step, ...measure(model, probes) });
    } finally {
      model.dispose();
    }
    process.stderr.write(`step ${step}: probe loss ${steps.at(-1).probeLoss}\n`);
  }
  const out = { format: SNAPSHOTS_FORMAT, rerun, probes: probes.length, labels: probes[0].chars, steps };
  writeFileSync(args.out, JSON.stringify(out) + '\n');
  process.stderr.write(`wrote ${args.out} (${files.length} snapshots)\n`);
}

main().catch((e) => {
  process.stderr.write(`${e.stack ?? e}\n`);
  process.exit(1);
});
