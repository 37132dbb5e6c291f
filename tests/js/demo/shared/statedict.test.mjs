// Reading "your PyTorch layer" (mirrors web/demo/shared/statedict.js): the JSON state dict, its errors in words,
// and the attnlab layer built from it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseLayerFile, expectedShapes, buildUserLayer } from '../../../../web/demo/shared/statedict.js';
import { simd } from '../helpers.mjs';

const E = 4;
const tensor = (shape) => ({ shape, data: Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, i) => i / 10) });
const layer = (extra = {}) => ({
  embed_dim: E,
  num_heads: 2,
  state_dict: {
    'attn.in_proj_weight': tensor([3 * E, E]),
    'attn.out_proj.weight': tensor([E, E]),
  },
  ...extra,
});

test('a prefixed, bias-free layer parses; nested arrays and "NaN" strings are numbers', () => {
  const cfg = parseLayerFile(JSON.stringify(layer()), 'f.json');
  assert.equal(cfg.prefix, 'attn.');
  assert.deepEqual(cfg.names, ['in_proj_weight', 'out_proj.weight']);
  assert.equal(cfg.bias, false);
  assert.equal(expectedShapes(cfg), 'in_proj_weight [12, 4], out_proj.weight [4, 4]');
  const nested = parseLayerFile(
    JSON.stringify({ embed_dim: 1, num_heads: 1, state_dict: { bias_k: [[['NaN']]] } }),
    'g.json',
  );
  assert.deepEqual(nested.stateDict.bias_k.shape, [1, 1, 1]);
  assert.ok(Number.isNaN(nested.stateDict.bias_k.data[0]));
});

test('errors say what is wrong and where', () => {
  assert.throws(() => parseLayerFile('{', 'f.json'), /f\.json.*JSON/s);
  assert.throws(() => parseLayerFile(JSON.stringify({ num_heads: 2, state_dict: {} }), 'f.json'), /embed_dim/);
  const bad = layer({ state_dict: { in_proj_weight: { shape: [2, 2], data: [1, 2, 3] } } });
  assert.throws(() => parseLayerFile(JSON.stringify(bad), 'f.json'), /in_proj_weight/);
});

test("buildUserLayer: a working layer and its summary, or the package's refusal with the expected shapes", async () => {
  const attn = await simd();
  const ok = buildUserLayer(attn, JSON.stringify(layer()), 'f.json');
  assert.match(ok.summary, /embed_dim=4, num_heads=2, bias=False/);
  ok.mha.dispose();
  const wrong = layer({ state_dict: { in_proj_weight: tensor([3 * E, E]), 'out_proj.weight': tensor([E, E + 1]) } });
  assert.throws(() => buildUserLayer(attn, JSON.stringify(wrong), 'f.json'), /out_proj\.weight \[4, 4\]/);
});
