// attnlab's loss and every parameter's gradient for one batch of the couplet model (scripts/couplet/
// check_gradients.py calls it; docs/couplet-model.md): the folder's config.json with the weights of FILE, the batch
// of BATCH.json ({ inputIds, labels, shape }: decoder inputs are shift_right(labels)), through the package's
// simd build; writes the gradients to OUT.safetensors (F32) and prints the loss as JSON.
//
//   node scripts/couplet/lossgrad.mjs --model DIR --weights FILE --batch BATCH.json --out OUT.safetensors
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import { init, readSafetensors, writeSafetensors } from '../../dist/index.mjs';

const { values: a } = parseArgs({
  options: {
    model: { type: 'string' },
    weights: { type: 'string' },
    batch: { type: 'string' },
    out: { type: 'string' },
  },
});
for (const k of ['model', 'weights', 'batch', 'out']) if (!a[k]) throw new Error(`lossgrad.mjs: --${k} is required`);
const attn = await init({ variant: 'simd' });
const config = JSON.parse(readFileSync(join(a.model, 'config.json'), 'utf8'));
const model = attn.loadModel({ config, tensors: readSafetensors(readFileSync(a.weights)) });
const b = JSON.parse(readFileSync(a.batch, 'utf8'));
const ids = (data) => ({ data: Int32Array.from(data), shape: b.shape });
const { loss, gradParams } = model.lossAndGrad({ inputIds: ids(b.inputIds), labels: ids(b.labels) });
writeFileSync(a.out, writeSafetensors(gradParams));
console.log(JSON.stringify({ loss }));
model.dispose();
