#!/usr/bin/env node
// The couplet model's cross-attention heads, measured (issue 34 §1; docs/couplet-model.md): on the held-out Tang
// couplets of the model folder (held-out.jsonl), teacher-forced and batched, for every decoder layer and head the mean
// cross-attention weight of lower position t on upper character t, over the parallel couplets (颔联, 颈联, k = 2, 3)
// and the control couplets (首联, 尾联, k = 1, 4) apart; the aligning head (the largest parallel weight); and each
// cross-attention head's ablation cost (the loss per label with that head masked by crossAttnHeadMask, minus the
// loss without) on each group. Runs the model through the package's public API (dist/), the functions the page runs
// (web/demo/parts/couplet/compute.js) → heads.json.
//
//   node scripts/couplet/heads.mjs [--model DIR] [--out FILE]
//
// --model  the model folder (default web/demo/models/song-couplet-char-marian)
// --out    default <model>/heads.json
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../../dist/index.mjs';
import {
  aligningHead,
  crossAblation,
  headAlignment,
  isParallel,
  parseCoupletHeldOut,
  poemPairs,
  round6,
} from '../../web/demo/parts/couplet/compute.js';
import { loadCouplet, MODEL, parseArgs, run } from './args.mjs';

/** Every number of heads.json, from a loaded model and the held-out pairs. */
export function measureCoupletHeads(model, tok, pairs) {
  const a = headAlignment(model, tok, pairs);
  const ab = crossAblation(model, tok, pairs);
  const best = aligningHead(a.parallel);
  const at = (m) => m[best.layer][best.head];
  return {
    pairs: {
      parallel: pairs.filter((p) => isParallel(p.k)).length,
      control: pairs.filter((p) => !isParallel(p.k)).length,
    },
    uniform: { 5: 1 / 6, 7: 1 / 8 },
    loss: round6(a.loss),
    aligned: { parallel: round6(a.parallel), control: round6(a.control) },
    ablation: {
      base: round6(ab.base),
      delta: { parallel: round6(ab.delta.parallel), control: round6(ab.delta.control) },
    },
    aligning: {
      layer: best.layer,
      head: best.head,
      parallel: round6(at(a.parallel)),
      control: round6(at(a.control)),
      ablation: { parallel: round6(at(ab.delta.parallel)), control: round6(at(ab.delta.control)) },
    },
  };
}

async function main() {
  const args = parseArgs(process.argv.slice(2), { model: MODEL, out: '' }, import.meta.url);
  const out = args.out || join(args.model, 'heads.json');
  const attn = await init({ variant: 'simd' });
  const { model, tok } = loadCouplet(attn, args.model);
  try {
    const pairs = poemPairs(parseCoupletHeldOut(readFileSync(join(args.model, 'held-out.jsonl'), 'utf8')));
    const r = measureCoupletHeads(model, tok, pairs);
    writeFileSync(out, JSON.stringify({ model: args.model.split('/').pop(), ...r }, null, 1) + '\n');
    const { layer, head, parallel, control, ablation } = r.aligning;
    process.stderr.write(
      `aligning head: layer ${layer + 1} head ${head + 1}, parallel ${parallel}, control ${control}, ` +
        `ablation +${ablation.parallel} / +${ablation.control} nats; wrote ${out}\n`,
    );
  } finally {
    model.dispose();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) run(main);
