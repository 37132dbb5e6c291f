// Part "Your model" (mirrors web/demo/parts/model/compute.js): reading a checkpoint or a state dict, building its
// layer in attnlab, and the inputs.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as Mo from '../../../../../web/demo/parts/model/compute.js';
import { simd, DEMO } from '../../helpers.mjs';

const SAMPLE = fs.readFileSync(path.join(DEMO, 'models', 'sample-bert.safetensors'));

test('the sample checkpoint: BERT layers, heads guessed, a layer built and run', async () => {
  const src = Mo.readModelFile('sample-bert.safetensors', new Uint8Array(SAMPLE));
  assert.equal(src.kind, 'hf');
  assert.deepEqual(Object.keys(src.found), ['bert']);
  const E = src.found.bert.embedDim;
  assert.match(Mo.describeFile(src), /BERT/);
  const { numHeads } = Mo.guessHeads(E, src.metadata);
  const layer = Mo.buildLayer(await simd(), src, { arch: 'bert', layer: src.found.bert.layers[0], numHeads });
  try {
    const { x, tokens } = Mo.readInput('words', 'the cat sat', E, { count: 0, seed: 0 });
    const w = Mo.layerWeights(layer, x, tokens.length, true);
    assert.deepEqual(w.shape, [numHeads, 3, 3]);
    assert.equal(w.data[1], 0, 'causal');
  } finally {
    layer.mha.dispose();
  }
  assert.throws(() => Mo.buildLayer(null, src, { arch: 'gpt2', layer: 0, numHeads }), /GPT-2/);
});

test('heads from metadata, width 64, or a small divisor; inputs from vectors, JSON and a seed', () => {
  assert.deepEqual(Mo.guessHeads(768, { num_attention_heads: '12' }), { numHeads: 12, from: 'metadata' });
  assert.deepEqual(Mo.guessHeads(1024), { numHeads: 16, from: 'width64' });
  assert.deepEqual(Mo.guessHeads(6), { numHeads: 3, from: 'small' });
  const v = Mo.readInput('vectors', 'a: 1 2\n3, 4', 2, { count: 0, seed: 0 });
  assert.deepEqual(v.tokens, ['a', 'x1']);
  assert.deepEqual(Array.from(v.x), [1, 2, 3, 4]);
  assert.deepEqual(Array.from(Mo.readInput('vectors', '[[[1, 2]]]', 2, { count: 0, seed: 0 }).x), [1, 2]);
  assert.equal(Mo.readInput('random', '', 4, { count: 3, seed: 1 }).x.length, 12);
  assert.throws(() => Mo.readInput('vectors', '1 2 3', 2, { count: 0, seed: 0 }), /3/);
  assert.throws(() => Mo.readInput('random', '', 4, { count: 0, seed: 1 }), /64/);
  assert.throws(() => Mo.readModelFile('x.bin', new Uint8Array([1, 2, 3])), /x\.bin/);
});
