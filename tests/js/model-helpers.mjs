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

/** One fixture folder: the Hugging Face config, the checkpoint's tensors and the expected results. */
export function loadModelCase(name) {
  const dir = join(modelDir, name);
  return {
    name,
    config: JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')),
    tensors: readSafetensors(readFileSync(join(dir, 'model.safetensors'))),
    expected: JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')),
  };
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
