// What the whole-model tests (transformer, transformer_train) share: the PyTorch fixture folders of
// tests/fixtures/models/, two small configs for the tests that need no fixture, and disposal at a test's end.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import { readSafetensors } from '../../dist/index.mjs';
import { root } from './helpers.mjs';

export const modelDir = join(root, 'tests', 'fixtures', 'models');
/** The fixture folders' names, sorted. */
export const MODEL_CASES = readdirSync(modelDir, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

/** One fixture folder of tests/fixtures/models/ (loadCaseIn's). */
export const loadModelCase = (name) => loadCaseIn(modelDir, name);

/** One fixture folder of `parent`: the Hugging Face config, the checkpoint's tensors and file, the expected results. */
function loadCaseIn(parent, name) {
  const dir = join(parent, name);
  return {
    name,
    file: join(dir, 'model.safetensors'),
    config: JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')),
    tensors: readSafetensors(readFileSync(join(dir, 'model.safetensors'))),
    expected: JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')),
  };
}

/** Every fixture folder of a sibling of tests/fixtures/models/ ('encoders', 'seq2seq') that `keep` accepts, sorted. */
export function loadFixtureCases(sibling, keep = () => true) {
  const parent = join(modelDir, '..', sibling);
  return readdirSync(parent)
    .filter(keep)
    .sort()
    .map((name) => loadCaseIn(parent, name));
}

/** Disposes what a test made, when it ends (Node 20 has no `using`): `const model = own(attn.createModel(…))`. */
export function scope(t) {
  const items = [];
  t.after(() => {
    for (const x of items.reverse()) x.dispose();
  });
  return (x) => (items.push(x), x);
}

/** A small GPT-2 and a small Llama for the tests that need no fixture. */
export const kGpt2 = { arch: 'gpt2', vocabSize: 50, contextLength: 24, embedDim: 16, numLayers: 2, numHeads: 2 };
export const kLlama = {
  arch: 'llama',
  vocabSize: 40,
  contextLength: 20,
  embedDim: 16,
  numLayers: 2,
  numHeads: 4,
  numKVHeads: 2,
  hiddenDim: 24,
};

/** The test's own loss: the mean over rows with a target of each row's mean cross-entropy, in float64. */
export function rowMeanLoss(logits, targets) {
  const [B, T, V] = logits.shape;
  let total = 0;
  let rows = 0;
  for (let b = 0; b < B; ++b) {
    let sum = 0;
    let n = 0;
    for (let t = 0; t < T; ++t) {
      const y = targets.data[b * T + t];
      if (y === -100) continue;
      const row = logits.data.subarray((b * T + t) * V, (b * T + t + 1) * V);
      let z = 0;
      for (const x of row) z += Math.exp(x);
      sum += Math.log(z) - row[y];
      ++n;
    }
    if (n > 0) ((total += sum / n), ++rows);
  }
  return total / rows;
}
