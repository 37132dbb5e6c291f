// Part "Your model", the whole checkpoint (mirrors web/demo/parts/model/checkpoint.js): a model folder's files read
// into a model and a tokenizer (the page's poem model, a Llama; a GPT-2 folder made of tests/fixtures/models/gpt2_f32
// and the BPE tokenizer of tests/fixtures/demo-gpt2/), the prompt's ids against @huggingface/tokenizers, generation
// reproducible for a seed and stoppable, the grid's maps equal to forward's attentions, and the errors named.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import * as Mo from '../../../../../web/demo/parts/model/compute.js';
import { simd, DEMO, ROOT } from '../../helpers.mjs';

const POEM = path.join(DEMO, 'models', 'tang-song-quatrains-char-llama');
const GPT2 = [
  path.join(ROOT, 'tests/fixtures/models/gpt2_f32/config.json'),
  path.join(ROOT, 'tests/fixtures/models/gpt2_f32/model.safetensors'),
  path.join(ROOT, 'tests/fixtures/demo-gpt2/tokenizer.json'),
  path.join(ROOT, 'tests/fixtures/demo-gpt2/tokenizer_config.json'),
];

/** @param {string[]} files */
const named = (files) => files.map((f) => ({ name: path.basename(f), bytes: new Uint8Array(fs.readFileSync(f)) }));
const poemFiles = () => named(Mo.FOLDER_FILES.map((f) => path.join(POEM, f)));
const json = (f) => JSON.parse(fs.readFileSync(f, 'utf8'));

async function load(files) {
  const attn = await simd();
  return Mo.loadFolder((o) => attn.loadModel(o), await Mo.readFolder(files));
}

test('the poem model folder: a Llama and its character tokenizer, BOS as tokenizer_config.json asks', async () => {
  const files = poemFiles();
  assert.ok(Mo.isFolder(files) && !Mo.isFolder([{ name: 'layer.safetensors' }]));
  assert.ok(Mo.isFolder([{ name: 'gpt2/config.json' }]), 'a folder-relative path');
  const { model, tok } = await load(files.reverse());
  try {
    assert.equal(model.config.arch, 'llama');
    assert.equal(model.config.numLayers, 4);
    const theirs = new Tokenizer(
      json(path.join(POEM, 'tokenizer.json')),
      json(path.join(POEM, 'tokenizer_config.json')),
    );
    const ids = tok.encode('春风又绿江南岸');
    assert.deepEqual(ids, theirs.encode('春风又绿江南岸').ids);
    assert.equal(ids[0], 2, '[BOS] (add_bos_token)');
    assert.equal(tok.decode(ids), '春风又绿江南岸', 'special tokens left out');
    assert.equal(tok.label(ids[1]), '春');
    assert.deepEqual(tok.eos, [3]);
    assert.deepEqual(tok.encode(''), [2]);
  } finally {
    model.dispose();
  }
});

test('picked files (Blobs): the same folder; model.safetensors stays the File, loaded one tensor at a time', async () => {
  const attn = await simd();
  const files = poemFiles();
  const blobs = files.map((f) => ({ name: f.name, bytes: new Blob([f.bytes]) }));
  const fromBlobs = await Mo.readFolder(blobs);
  const fromBytes = await Mo.readFolder(files);
  assert.deepEqual(fromBlobs.config, fromBytes.config);
  assert.deepEqual(fromBlobs.tokenizerJson, fromBytes.tokenizerJson);
  assert.equal(fromBlobs.tensors, blobs.find((f) => f.name === 'model.safetensors').bytes, 'the picked File itself');
  const sixteen = Object.values(fromBytes.tensors).filter((v) => v.bits);
  assert.ok(sixteen.length > 0, 'the poem model is 16-bit');
  const a = await Mo.loadFolder((o) => attn.loadModel(o), fromBlobs);
  const b = attn.loadModel({ config: fromBytes.config, tensors: fromBytes.tensors });
  try {
    for (const v of sixteen) assert.equal(typeof Object.getOwnPropertyDescriptor(v, 'data').get, 'function');
    const ids = { data: Int32Array.of(2, 5, 9, 14), shape: [1, 4] };
    assert.deepEqual(a.model.forward(ids).logits, b.forward(ids).logits);
    assert.deepEqual(a.model.stateDict(), b.stateDict());
  } finally {
    a.model.dispose();
    b.dispose();
  }
});

test('a GPT-2 folder: the BPE tokenizer.json loads in @huggingface/tokenizers; no BOS, <|endoftext|> ends', async () => {
  const theirs = new Tokenizer(json(GPT2[2]), json(GPT2[3]));
  assert.deepEqual(theirs.encode('The cat sat').tokens, ['T', 'he', 'Ġcat', 'Ġsat']);
  const { model, tok } = await load(named(GPT2));
  try {
    assert.equal(model.config.arch, 'gpt2');
    assert.deepEqual(tok.encode('The cat sat'), [50, 58, 63, 65]);
    assert.equal(tok.label(59), ' the');
    assert.deepEqual(tok.encode(''), [79], 'an empty prompt starts at <|endoftext|>');
    assert.equal(tok.decode([]), '');
    assert.deepEqual(tok.eos, [79]);
    assert.equal(tok.decode([79, 63, 67, 59, 71]), ' cat on the mat');
  } finally {
    model.dispose();
  }
});

test('generation: each id through onToken, the same ids for a seed, generate itself; a stop keeps the ids so far', async () => {
  const { model, tok } = await load(poemFiles());
  try {
    const prompt = tok.encode('白日');
    const o = Mo.generateOptions({ maxNewTokens: 12, temperature: 1, seed: 5, topK: 50, topP: 0.95 }, 3, 80);
    assert.deepEqual(o, { maxNewTokens: 12, temperature: 1, seed: 5, topK: 50, topP: 0.95 });
    const seen = [];
    const a = await Mo.generateTokens(model, prompt, o, { eos: tok.eos, onToken: (id) => seen.push(id) });
    const b = await Mo.generateTokens(model, prompt, o, { eos: tok.eos });
    assert.equal(a.stopped, false);
    assert.ok(a.ids.length > 0);
    assert.deepEqual(a.ids, b.ids);
    assert.deepEqual(seen, a.ids);
    const direct = model.generate(Int32Array.from(prompt), { ...o, eosTokenId: tok.eos });
    assert.deepEqual(a.ids, Array.from(direct));
    const c = await Mo.generateTokens(model, prompt, { ...o, seed: 6 });
    assert.notDeepEqual(c.ids, a.ids, 'another seed, other ids');
    const controller = new AbortController();
    const onToken = (_id, step) => step === 2 && controller.abort();
    const s = await Mo.generateTokens(
      model,
      prompt,
      { ...o, seed: 6, maxNewTokens: 20 },
      { onToken, signal: controller.signal },
    );
    assert.equal(s.stopped, true);
    assert.deepEqual(s.ids, c.ids.slice(0, 3), 'the three ids before the stop (seed 6)');
  } finally {
    model.dispose();
  }
});

test("the grid's maps are forward's attentions; a token's rows are its row in every head", async () => {
  const { model, tok } = await load(named(GPT2));
  try {
    const ids = tok.encode('The cat sat on the mat.');
    const grid = await Mo.attentionGrid(model, ids);
    const { attentions } = model.forward(
      { data: Int32Array.from(ids), shape: [1, ids.length] },
      { outputAttentions: true },
    );
    assert.equal(grid.maps.length, 2);
    assert.equal(grid.H, 4);
    assert.equal(grid.T, ids.length);
    grid.maps.forEach((m, l) => assert.deepEqual(Array.from(m), Array.from(attentions[l].data), `layer ${l}`));
    const T = ids.length;
    const r = Mo.tokenRows(grid.maps[1], T, 3);
    assert.deepEqual(r.shape, [4, 1, 4]);
    for (let h = 0; h < 4; h++)
      assert.deepEqual(
        Array.from(r.data.subarray(h * 4, h * 4 + 4)),
        Array.from(grid.maps[1].subarray((h * T + 3) * T, (h * T + 3) * T + 4)),
      );
  } finally {
    model.dispose();
  }
});

test('errors are named: missing files, model_type, tensors that do not fit the config, too big, bad settings', async () => {
  const files = poemFiles();
  await assert.rejects(Mo.readFolder(files.slice(1)), /lacks config\.json/);
  await assert.rejects(Mo.readFolder(files.filter((f) => f.name !== 'tokenizer.json')), /lacks tokenizer\.json/);
  const withConfig = (config) => [
    { name: 'config.json', bytes: new TextEncoder().encode(JSON.stringify(config)) },
    ...files.slice(1),
  ];
  const poemConfig = json(path.join(POEM, 'config.json'));
  // (the model types are the library's: the demo names none, the load error lists them)
  await assert.rejects(
    load(withConfig({ ...poemConfig, model_type: 'falcon' })),
    /cannot load this checkpoint: RangeError: .*model_type.*expected one of gpt2, llama, mistral, qwen2, qwen3, bert, roberta, vit(, [a-z0-9]+)*, got "falcon"/,
  );
  await assert.rejects(
    load(withConfig({ ...poemConfig, hidden_size: 64 })),
    /cannot load this checkpoint: (Range|Type)Error: .*embed_tokens/,
  );
  const huge = { ...poemConfig, vocab_size: 50257, hidden_size: 8192, intermediate_size: 28672, num_hidden_layers: 80 };
  await assert.rejects(load(withConfig(huge)), /cannot load this checkpoint: RangeError: .*memory/);
  await assert.rejects(
    load(withConfig({ ...poemConfig, rope_scaling: { type: 'linear', factor: 2 } })),
    /RangeError: .*rope_scaling/,
  );
  const s = { maxNewTokens: 10, temperature: 1, seed: 0, topK: 0, topP: 1 };
  assert.throws(() => Mo.generateOptions(s, 80, 80), /80 tokens long, and the model's context holds 80/);
  assert.equal(Mo.generateOptions(s, 75, 80).maxNewTokens, 5, 'capped by the context');
  assert.throws(() => Mo.generateOptions({ ...s, maxNewTokens: 0 }, 1, 80), /New tokens/);
  assert.throws(() => Mo.generateOptions({ ...s, topP: 0 }, 1, 80), /Top-p/);
  assert.throws(() => Mo.generateOptions({ ...s, temperature: -1 }, 1, 80), /temperature/);
});
