// Encoders in JS (web/src/encoder.mjs on transformer.mjs; issue 33): every PyTorch fixture of
// tests/fixtures/encoders/ (bert and roberta, F32 / F16 / BF16, masked-LM and classification heads) loaded on every
// variant: model.kind and model.task, the normalised config, lastHiddenState, pooledOutput, logits, every attention
// and hidden state with padding, token types and head masks at the fixture's tolerance; loading with and without the
// base model's prefix and from a Blob; the state dict's names and its round trip; createModel(model.config); the
// memory estimate's position rows; the same in attnlab/worker; each bad input its own error.
import assert from 'node:assert/strict';
import { openAsBlob } from 'node:fs';
import { describe, test } from 'node:test';

import { init } from '../../dist/index.mjs';
import { initWorker } from '../../dist/worker.mjs';
import { VARIANTS, assertClose, assertStillWorks, assertThrows, f32 } from './helpers.mjs';
import { kGpt2, loadFixtureCases, scope } from './model-helpers.mjs';

// The text encoders (vit's fixtures: tests/js/vit_fixtures.test.mjs)
const cases = loadFixtureCases('encoders', (name) => !name.startsWith('vit'));
const byName = (name) => cases.find((c) => c.name === name);
const prefixOf = (c) => `${c.config.model_type}.`;

const tensorOf = (t) => ({ data: f32(t.data), shape: t.shape });
const intsOf = (t) => ({ data: Int32Array.from(t.data), shape: t.shape });

/** forward's options for one expected.json case: every output asked for, its masks and token types. */
function optionsOf(f) {
  const options = { outputAttentions: true, outputHiddenStates: true };
  if (f.attention_mask)
    options.attentionMask = { data: Uint8Array.from(f.attention_mask.data), shape: f.attention_mask.shape };
  if (f.token_type_ids) options.tokenTypeIds = intsOf(f.token_type_ids);
  if (f.head_mask) options.headMask = tensorOf(f.head_mask);
  return options;
}

/** Every forward case of the fixture, on `model`: its results, for comparing two models. */
const runAll = (c, model) => c.expected.forward.map((f) => model.forward(intsOf(f.input_ids), optionsOf(f)));

/** `tensors` with the base model's prefix removed from the names that have it. */
function withoutPrefix(c) {
  const p = prefixOf(c);
  return Object.fromEntries(Object.entries(c.tensors).map(([k, v]) => [k.startsWith(p) ? k.slice(p.length) : k, v]));
}

for (const variant of VARIANTS) {
  describe(`encoders (bert, roberta), ${variant} build`, async () => {
    const attn = await init({ variant });

    for (const c of cases) {
      const tol = c.expected.tolerance;
      test(`${c.name}: kind 'encoder', task '${c.expected.task}' from its heads, the normalised config`, (t) => {
        const model = scope(t)(attn.loadModel({ config: c.config, tensors: c.tensors }));
        assert.equal(model.kind, 'encoder');
        assert.equal(model.task, c.expected.task);
        const { maxPositionEmbeddings, ...expected } = c.expected.config;
        for (const [key, value] of Object.entries(expected)) {
          if (key === 'numLabels' && c.expected.task !== 'sequence-classification') continue; // (only a classifier reads it)
          assert.equal(model.config[key], value, key);
        }
        assert.equal(model.config.pooler, c.expected.forward[0].pooler_output !== null);
        assert.ok(maxPositionEmbeddings >= model.config.contextLength);
      });

      test(`${c.name}: lastHiddenState, pooledOutput, logits, every attention and hidden state of each case`, (t) => {
        const model = scope(t)(attn.loadModel({ config: c.config, tensors: c.tensors }));
        const L = c.expected.config.numLayers;
        for (const f of c.expected.forward) {
          const r = model.forward(intsOf(f.input_ids), optionsOf(f));
          assertClose(r.lastHiddenState, tensorOf(f.last_hidden_state), tol, `${f.name} lastHiddenState`);
          if (f.pooler_output) assertClose(r.pooledOutput, tensorOf(f.pooler_output), tol, `${f.name} pooledOutput`);
          else assert.equal(r.pooledOutput, undefined, `${f.name}: no pooler, no pooledOutput`);
          assertClose(r.logits, tensorOf(f.logits), tol, `${f.name} logits`);
          assert.equal(r.attentions.length, L);
          f.attentions.forEach((a, l) => assertClose(r.attentions[l], tensorOf(a), tol, `${f.name} attentions[${l}]`));
          assert.equal(r.hiddenStates.length, L + 1);
          f.hidden_states.forEach((h, l) =>
            assertClose(r.hiddenStates[l], tensorOf(h), tol, `${f.name} hiddenStates[${l}]`),
          );
        }
      });

      test(`${c.name}: with and without the '${prefixOf(c)}' prefix, and from a Blob: the same model`, async (t) => {
        const own = scope(t);
        const model = own(attn.loadModel({ config: c.config, tensors: c.tensors }));
        const bare = own(attn.loadModel({ config: c.config, tensors: withoutPrefix(c) }));
        const blob = own(await attn.loadModel({ config: c.config, tensors: await openAsBlob(c.file) }));
        assert.equal(bare.task, model.task);
        assert.deepEqual(runAll(c, bare), runAll(c, model));
        assert.deepEqual(runAll(c, blob), runAll(c, model));
      });

      test(`${c.name}: stateDict names (no base prefix, heads keep theirs), its round trip, createModel(config)`, (t) => {
        const own = scope(t);
        const model = own(attn.loadModel({ config: c.config, tensors: c.tensors }));
        const state = model.stateDict();
        const names = Object.keys(state);
        const p = prefixOf(c);
        // every parameter of the checkpoint, by its name less the base prefix; no buffer, no tied copy
        const kept = Object.keys(c.tensors)
          .map((k) => (k.startsWith(p) ? k.slice(p.length) : k))
          .filter((k) => !/position_ids$|decoder\.(weight|bias)$|seq_relationship/.test(k));
        assert.deepEqual([...names].sort(), kept.sort());
        assert.ok(names.every((n) => !n.startsWith(p)));
        const again = own(attn.loadModel({ config: model.config, tensors: state }));
        assert.deepEqual(runAll(c, again), runAll(c, model));
        const fresh = own(attn.createModel(model.config));
        assert.deepEqual(fresh.config, model.config);
        assert.equal(fresh.kind, 'encoder');
        assert.equal(fresh.task, model.task);
        const shapes = (m) => Object.entries(m.stateDict()).map(([k, v]) => [k, v.shape]);
        assert.deepEqual(shapes(fresh), shapes(model));
      });
    }

    test('tokenTypeIds: default zeros; types change the result', (t) => {
      const c = byName('bert_cls_f16');
      const model = scope(t)(attn.loadModel({ config: c.config, tensors: c.tensors }));
      const tokens = intsOf(c.expected.forward[0].input_ids);
      const zeros = { data: new Int32Array(tokens.data.length), shape: tokens.shape };
      const ones = { data: new Int32Array(tokens.data.length).fill(1), shape: tokens.shape };
      assert.deepEqual(model.forward(tokens, { tokenTypeIds: zeros }), model.forward(tokens));
      assert.notDeepEqual(model.forward(tokens, { tokenTypeIds: ones }).logits, model.forward(tokens).logits);
    });

    test("a decoder's kind and task: 'decoder', 'causal-lm'", (t) => {
      const model = scope(t)(attn.createModel(kGpt2));
      assert.equal(model.kind, 'decoder');
      assert.equal(model.task, 'causal-lm');
    });

    test("the memory estimate counts RoBERTa's position rows (contextLength + padTokenId + 1)", async () => {
      const { loadModule } = await import('../../dist/loader.mjs');
      const M = (await loadModule({ variant })).Module;
      const c = byName('roberta_cls_f32');
      const parts = M._transformerMemory(JSON.stringify(c.config), true, M._WeightStorage.Float32, true);
      const positions = parts.find(([what]) => /positions/.test(what));
      assert.equal(positions[1], c.config.max_position_embeddings * c.config.hidden_size * 4);
      const total = parts.reduce((sum, [, bytes]) => sum + bytes, 0);
      const stored = Object.values(c.tensors).reduce((n, v) => n + (v.data ? v.data.length * 4 : 0), 0);
      assert.ok(total >= stored, `estimate ${total} bytes < the checkpoint's ${stored} float32 bytes`);
    });

    describe('bad input: each its own error', () => {
      const c = byName('bert_mlm_f32');
      const load = (config = c.config, tensors = c.tensors) => attn.loadModel({ config, tensors });
      const tokens = intsOf(c.expected.forward[0].input_ids);

      test("decoder-only methods and the decoders' training form on an encoder: a TypeError naming the method and the kind", (t) => {
        const model = scope(t)(load());
        const calls = {
          generate: () => model.generate(Int32Array.of(1, 2), { maxNewTokens: 1 }),
          createKVCache: () => model.createKVCache({ batchSize: 1, maxLength: 4 }),
          lossAndGrad: () => model.lossAndGrad(tokens, tokens),
          trainStep: () => model.trainStep(tokens, tokens, { lr: 0.1 }),
          train: () => model.train([{ tokens, targets: tokens }], { steps: 1, lr: 0.1 }),
        };
        for (const [name, call] of Object.entries(calls)) {
          assertThrows(call, TypeError, new RegExp(`model\\.${name}`), /encoder/);
        }
        assertThrows(calls.lossAndGrad, TypeError, /an encoder takes lossAndGrad\(batch\)/);
        assertThrows(calls.train, TypeError, /decoders only/, /trainStep\(batch, options\)/);
        assertStillWorks(attn);
      });

      test('tokenTypeIds of another shape: a RangeError naming it', (t) => {
        const model = scope(t)(load());
        const types = { data: new Int32Array(tokens.data.length - 1), shape: [tokens.shape[0], tokens.shape[1] - 1] };
        assertThrows(() => model.forward(tokens, { tokenTypeIds: types }), RangeError, /tokenTypeIds/, /shape/);
      });

      test('tokenTypeIds past typeVocabSize or negative: a RangeError naming it', (t) => {
        const model = scope(t)(load());
        for (const bad of [c.config.type_vocab_size, -1]) {
          const data = new Int32Array(tokens.data.length);
          data[3] = bad;
          assertThrows(
            () => model.forward(tokens, { tokenTypeIds: { data, shape: tokens.shape } }),
            RangeError,
            /tokenTypeIds/,
            new RegExp(`${bad} at index 3`),
          );
        }
      });

      test('tokenTypeIds that are not an Int32Array: a TypeError naming it', (t) => {
        const model = scope(t)(load());
        const data = new Float32Array(tokens.data.length);
        assertThrows(
          () => model.forward(tokens, { tokenTypeIds: { data, shape: tokens.shape } }),
          TypeError,
          /tokenTypeIds/,
        );
      });

      test("a decoder's forward options (kvCache, lastLogitsOnly) on an encoder: a TypeError naming them", (t) => {
        const model = scope(t)(load());
        assertThrows(() => model.forward(tokens, { lastLogitsOnly: true }), TypeError, /lastLogitsOnly/);
        assertThrows(() => model.forward(tokens, { kvCache: null }), TypeError, /kvCache/);
      });

      test("tokenTypeIds on a decoder: a TypeError (a decoder's forward has none)", (t) => {
        const model = scope(t)(attn.createModel(kGpt2));
        const small = { data: Int32Array.of(1, 2), shape: [1, 2] };
        assertThrows(() => model.forward(small, { tokenTypeIds: small }), TypeError, /tokenTypeIds/);
      });

      test('a config value attnlab does not compute: a RangeError naming the key', () => {
        assertThrows(
          () => load({ ...c.config, position_embedding_type: 'relative_key' }),
          RangeError,
          /position_embedding_type/,
        );
        assertThrows(() => load({ ...c.config, is_decoder: true }), RangeError, /is_decoder/);
        assertThrows(() => load({ ...c.config, hidden_act: 'tanh' }), RangeError, /hidden_act/);
      });

      test('a config key of the wrong type, an unknown createModel option: a TypeError naming it', (t) => {
        assertThrows(() => load({ ...c.config, hidden_size: '16' }), TypeError, /hidden_size/);
        const model = scope(t)(load());
        assertThrows(() => attn.createModel({ ...model.config, ropeTheta: 10 }), TypeError, /ropeTheta/);
      });

      test('an unknown model_type: a RangeError listing the types, bert and roberta among them', () => {
        assertThrows(
          () => load({ ...c.config, model_type: 'electra' }),
          RangeError,
          /model_type/,
          /electra/,
          /bert/,
          /roberta/,
          /gpt2/,
        );
      });

      test('a tied masked-LM decoder that differs from the word embeddings: a RangeError naming it', () => {
        const name = 'cls.predictions.decoder.weight';
        const changed = Float32Array.from(c.tensors[name].data);
        changed[5] += 1;
        const tensors = { ...c.tensors, [name]: { data: changed, shape: c.tensors[name].shape } };
        assertThrows(() => load(c.config, tensors), RangeError, /cls\.predictions\.decoder\.weight/);
      });

      test('a missing encoder tensor: a RangeError naming it', () => {
        const tensors = { ...c.tensors };
        delete tensors['bert.encoder.layer.1.output.LayerNorm.bias'];
        assertThrows(() => load(c.config, tensors), RangeError, /encoder\.layer\.1\.output\.LayerNorm\.bias/);
      });
    });
  });

  describe(`encoders in attnlab/worker, ${variant} build`, async () => {
    const attn = await init({ variant });
    const c = byName('roberta_cls_f32');

    test('loadModel: kind and task as plain properties, forward as the synchronous API', async (t) => {
      const w = await initWorker({ variant });
      try {
        const remote = await w.loadModel({ config: c.config, tensors: c.tensors });
        const local = scope(t)(attn.loadModel({ config: c.config, tensors: c.tensors }));
        assert.equal(remote.kind, 'encoder');
        assert.equal(remote.task, 'sequence-classification');
        assert.deepEqual(remote.config, local.config);
        for (const f of c.expected.forward) {
          assert.deepEqual(
            await remote.forward(intsOf(f.input_ids), optionsOf(f)),
            local.forward(intsOf(f.input_ids), optionsOf(f)),
          );
        }
        await assert.rejects(
          remote.generate(Int32Array.of(1), { maxNewTokens: 1 }),
          (e) => e instanceof TypeError && /model\.generate.*encoder/.test(e.message),
        );
        await remote.dispose();
      } finally {
        w.terminate();
      }
    });
  });
}
