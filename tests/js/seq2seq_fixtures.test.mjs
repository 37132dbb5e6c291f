// Encoder–decoders in JS (web/src/seq2seq.mjs on transformer.mjs; issue 33 items 2, 3, 5): every PyTorch fixture
// of tests/fixtures/seq2seq/ (marian and t5, F32 / F16 / BF16, LM heads and base models) loaded on every variant:
// model.kind and model.task, the normalised config, logits (or the decoder's last hidden state), encoderLastHiddenState and
// every encoder, decoder and cross-attention and hidden state, with padding and the three head masks, at the
// fixture's tolerance; loading from a Blob, the state dict's round trip, createModel(model.config); generate, greedy
// and sampled, checked step by step against a forward of the generated ids (pad never chosen, eos forced last,
// stopping after eos, onToken per step, the draws createRng(seed)'s); the same in attnlab/worker; each bad input
// its own error, and the module still working after it.
import assert from 'node:assert/strict';
import { openAsBlob } from 'node:fs';
import { describe, test } from 'node:test';

import { createRng, init } from '../../dist/index.mjs';
import { initWorker } from '../../dist/worker.mjs';
import { VARIANTS, assertClose, assertStillWorks, assertThrows, f32 } from './helpers.mjs';
import { loadFixtureCases, scope } from './model-helpers.mjs';

const cases = loadFixtureCases('seq2seq');
const byName = (name) => cases.find((c) => c.name === name);

const tensorOf = (t) => ({ data: f32(t.data), shape: t.shape });
const intsOf = (t) => ({ data: Int32Array.from(t.data), shape: t.shape });

/** forward's options for one expected.json case: every output asked for, its padding and head masks. */
function optionsOf(f) {
  const options = { decoderInputIds: intsOf(f.decoder_input_ids), outputAttentions: true, outputHiddenStates: true };
  if (f.attention_mask)
    options.attentionMask = { data: Uint8Array.from(f.attention_mask.data), shape: f.attention_mask.shape };
  if (f.head_mask) options.headMask = tensorOf(f.head_mask);
  if (f.decoder_head_mask) options.decoderHeadMask = tensorOf(f.decoder_head_mask);
  if (f.cross_attn_head_mask) options.crossAttnHeadMask = tensorOf(f.cross_attn_head_mask);
  return options;
}

const runAll = (c, model) => c.expected.forward.map((f) => model.forward(intsOf(f.input_ids), optionsOf(f)));

/** Every output of one case against PyTorch's. */
function checkCase(r, f, tol) {
  const close = (got, want, what) => assertClose(got, tensorOf(want), tol, `${f.name} ${what}`);
  if (f.logits) close(r.logits, f.logits, 'logits');
  else assert.equal(r.logits, undefined, 'a base model has no logits');
  if (f.last_hidden_state) close(r.lastHiddenState, f.last_hidden_state, 'lastHiddenState');
  close(r.encoderLastHiddenState, f.encoder_last_hidden_state, 'encoderLastHiddenState');
  const lists = [
    ['encoderAttentions', 'encoder_attentions'],
    ['decoderAttentions', 'decoder_attentions'],
    ['crossAttentions', 'cross_attentions'],
    ['encoderHiddenStates', 'encoder_hidden_states'],
    ['decoderHiddenStates', 'decoder_hidden_states'],
  ];
  for (const [mine, theirs] of lists) {
    assert.equal(r[mine].length, f[theirs].length, `${f.name} ${mine}.length`);
    f[theirs].forEach((want, l) => close(r[mine][l], want, `${mine}[${l}]`));
  }
}

/**
 * The ids generate must give, from full forwards of the ids so far (no cache): each step's last logits row, pad
 * set to −∞, all but forcedEos −∞ at the last step allowed; greedy argmax, or createRng(seed)'s draw from
 * softmax(row / temperature) walked by id; stopping after eos.
 */
function referenceIds(model, prompt, { maxNewTokens, temperature, seed = 0 }) {
  const c = model.config;
  const next = createRng(seed);
  const ids = [];
  const tokens = { data: prompt, shape: [1, prompt.length] };
  while (ids.length < maxNewTokens && ids.at(-1) !== c.eosTokenId) {
    const dec = Int32Array.from([c.decoderStartTokenId, ...ids]);
    const { logits } = model.forward(tokens, { decoderInputIds: { data: dec, shape: [1, dec.length] } });
    const V = c.vocabSize;
    const row = Array.from(logits.data.subarray((dec.length - 1) * V, dec.length * V));
    row[c.padTokenId] = -Infinity;
    if ((c.forcedEosTokenId ?? null) !== null && ids.length === maxNewTokens - 1) {
      row.fill(-Infinity);
      row[c.forcedEosTokenId] = 0;
    }
    if (temperature === 0) {
      ids.push(row.indexOf(Math.max(...row)));
      continue;
    }
    const max = Math.max(...row);
    const weights = row.map((l) => Math.exp((l - max) / temperature));
    let u = next() * weights.reduce((a, b) => a + b, 0);
    ids.push(
      Math.max(
        0,
        weights.findIndex((w) => (u -= w) < 0),
      ),
    );
  }
  return ids;
}

for (const variant of VARIANTS) {
  describe(`encoder–decoders (marian, t5), ${variant} build`, async () => {
    const attn = await init({ variant });

    for (const c of cases) {
      const tol = c.expected.tolerance;
      test(`${c.name}: kind 'encoder-decoder', task '${c.expected.task}', the normalised config`, (t) => {
        const model = scope(t)(attn.loadModel({ config: c.config, tensors: c.tensors }));
        assert.equal(model.kind, 'encoder-decoder');
        assert.equal(model.task, c.expected.task);
        for (const [key, value] of Object.entries(c.expected.config)) assert.equal(model.config[key], value, key);
        assert.equal(model.config.forcedEosTokenId, c.config.forced_eos_token_id);
      });

      test(`${c.name}: logits, encoderLastHiddenState, every attention and hidden state of each case`, (t) => {
        const model = scope(t)(attn.loadModel({ config: c.config, tensors: c.tensors }));
        for (const f of c.expected.forward) checkCase(model.forward(intsOf(f.input_ids), optionsOf(f)), f, tol);
      });

      test(`${c.name}: from a Blob, from its stateDict, createModel(model.config): the same model`, async (t) => {
        const own = scope(t);
        const model = own(attn.loadModel({ config: c.config, tensors: c.tensors }));
        const blob = own(await attn.loadModel({ config: c.config, tensors: await openAsBlob(c.file) }));
        assert.deepEqual(runAll(c, blob), runAll(c, model));
        const state = model.stateDict();
        // Marian's LM head keeps its final_logits_bias buffer; T5 has none
        const biased = c.config.model_type === 'marian' && c.expected.task === 'seq2seq-lm';
        assert.equal(Object.keys(state).includes('final_logits_bias'), biased);
        const again = own(attn.loadModel({ config: model.config, tensors: state }));
        assert.deepEqual(runAll(c, again), runAll(c, model));
        const fresh = own(attn.createModel(model.config));
        assert.deepEqual(fresh.config, model.config);
        assert.equal(fresh.kind, 'encoder-decoder');
        const shapes = (m) => Object.entries(m.stateDict()).map(([k, v]) => [k, v.shape]);
        assert.deepEqual(shapes(fresh), shapes(model));
      });
    }

    test('outputAttentions by layer: the others null; without it, no attention lists', (t) => {
      const c = byName('marian_mt_f32');
      const f = c.expected.forward[0];
      const model = scope(t)(attn.loadModel({ config: c.config, tensors: c.tensors }));
      const r = model.forward(intsOf(f.input_ids), { ...optionsOf(f), outputAttentions: [1] });
      assert.equal(r.encoderAttentions[0], null);
      assertClose(r.crossAttentions[1], tensorOf(f.cross_attentions[1]), c.expected.tolerance, 'crossAttentions[1]');
      assert.equal(r.crossAttentions[2], null);
      const plain = model.forward(intsOf(f.input_ids), { decoderInputIds: intsOf(f.decoder_input_ids) });
      assert.deepEqual(Object.keys(plain).sort(), ['encoderLastHiddenState', 'logits']);
      assertClose(plain.logits, tensorOf(f.logits), c.expected.tolerance, 'logits');
    });

    test('decoderAttentionMask: all ones is no mask; a padded decoder key changes the later rows', (t) => {
      const c = byName('marian_mt_f32');
      const f = c.expected.forward[0];
      const model = scope(t)(attn.loadModel({ config: c.config, tensors: c.tensors }));
      const [B, T] = f.decoder_input_ids.shape;
      const base = { decoderInputIds: intsOf(f.decoder_input_ids) };
      const ones = { data: new Uint8Array(B * T).fill(1), shape: [B, T] };
      const tokens = intsOf(f.input_ids);
      assert.deepEqual(model.forward(tokens, { ...base, decoderAttentionMask: ones }), model.forward(tokens, base));
      const masked = { data: Uint8Array.from(ones.data, (v, i) => (i % T === 1 ? 0 : 1)), shape: [B, T] };
      const r = model.forward(tokens, { ...base, decoderAttentionMask: masked, outputAttentions: [0] });
      const H = model.config.numHeads;
      for (let i = 0; i < B * H; ++i) assert.equal(r.decoderAttentions[0].data[i * T * T + 2 * T + 1], 0);
    });

    for (const [name, temperature] of [
      ['marian_mt_f32', 0],
      ['marian_mt_f32', 0.8],
      ['t5_v11_bf16', 0],
      ['t5_v10_f32', 0.8],
    ]) {
      test(`${name}: generate at temperature ${temperature}: each id as a forward of the ids so far gives`, (t) => {
        const model = scope(t)(attn.loadModel({ config: byName(name).config, tensors: byName(name).tensors }));
        const c = model.config;
        for (const [prompt, maxNewTokens, seed] of [
          [Int32Array.of(3, 7, 1, 0), 6, 1],
          [Int32Array.of(5, 2, 9, 11, 4, 0), 11, 7],
          [Int32Array.of(8), 1, 3],
        ]) {
          const steps = [];
          const onToken = (id, step) => steps.push([id, step]);
          const ids = model.generate(prompt, { maxNewTokens, temperature, seed, onToken });
          const want = referenceIds(model, prompt, { maxNewTokens, temperature, seed });
          assert.deepEqual(Array.from(ids), want, `prompt ${prompt}`);
          assert.deepEqual(
            steps,
            want.map((id, i) => [id, i]),
            'onToken per step',
          );
          assert.ok(!ids.includes(c.padTokenId), 'never pad');
          const eos = ids.indexOf(c.eosTokenId);
          assert.ok(eos === -1 || eos === ids.length - 1, 'stops after eos');
          if (ids.length === maxNewTokens && c.forcedEosTokenId !== undefined)
            assert.equal(ids.at(-1), c.forcedEosTokenId, 'eos forced last');
        }
      });
    }

    test('generate: the same seed draws the same ids; onToken returning false stops; maxNewTokens 0', (t) => {
      const c = byName('marian_mt_f16');
      const model = scope(t)(attn.loadModel({ config: c.config, tensors: c.tensors }));
      const prompt = Int32Array.of(4, 9, 2, 0);
      const opts = { maxNewTokens: 10, temperature: 1.3, seed: 5 };
      assert.deepEqual(model.generate(prompt, opts), model.generate(prompt, opts));
      assert.deepEqual(Array.from(model.generate(prompt, opts)), referenceIds(model, prompt, opts));
      const first = model.generate(prompt, { ...opts, onToken: () => false });
      assert.equal(first.length, 1);
      assert.equal(model.generate(prompt, { maxNewTokens: 0 }).length, 0);
    });

    test('a model without forcedEosTokenId is not forced; a base model cannot generate', (t) => {
      const own = scope(t);
      const c = byName('marian_mt_f32');
      const model = own(attn.loadModel({ config: { ...c.config, forced_eos_token_id: null }, tensors: c.tensors }));
      const free = own(attn.createModel({ ...model.config, forcedEosTokenId: null }));
      assert.equal(free.config.forcedEosTokenId, null);
      const prompt = Int32Array.of(3, 7, 1, 0);
      const ids = free.generate(prompt, { maxNewTokens: 5, temperature: 0 });
      assert.deepEqual(Array.from(ids), referenceIds(free, prompt, { maxNewTokens: 5, temperature: 0 }));
      const base = byName('marian_base_f32');
      const bare = own(attn.loadModel({ config: base.config, tensors: base.tensors }));
      assertThrows(() => bare.generate(prompt, { maxNewTokens: 2 }), TypeError, /model\.generate/, /seq2seq-lm/);
    });

    describe('bad input: each its own error, and the module still works after it', () => {
      const c = byName('marian_mt_f32');
      const f = c.expected.forward[0];
      const tokens = intsOf(f.input_ids);
      const decoderInputIds = intsOf(f.decoder_input_ids);

      test('forward without decoderInputIds: a RangeError naming it', (t) => {
        const model = scope(t)(attn.loadModel({ config: c.config, tensors: c.tensors }));
        assertThrows(() => model.forward(tokens), RangeError, /model\.forward/, /decoderInputIds/, /required/);
        assertThrows(() => model.forward(tokens, { outputAttentions: true }), RangeError, /decoderInputIds/);
        assertStillWorks(attn);
        assert.ok(model.forward(tokens, { decoderInputIds }).logits);
      });

      test('bad decoder inputs, masks and head masks: errors naming them', (t) => {
        const model = scope(t)(attn.loadModel({ config: c.config, tensors: c.tensors }));
        const V = model.config.vocabSize;
        const bad = {
          data: Int32Array.from(decoderInputIds.data, (v, i) => (i === 2 ? V : v)),
          shape: decoderInputIds.shape,
        };
        assertThrows(() => model.forward(tokens, { decoderInputIds: bad }), RangeError, /decoderInputIds/);
        const floats = { data: new Float32Array(8), shape: decoderInputIds.shape };
        assertThrows(() => model.forward(tokens, { decoderInputIds: floats }), TypeError, /decoderInputIds/);
        const mask = { data: new Uint8Array(3), shape: [1, 3] };
        assertThrows(
          () => model.forward(tokens, { decoderInputIds, decoderAttentionMask: mask }),
          RangeError,
          /decoderAttentionMask/,
        );
        const heads = { data: new Float32Array(4), shape: [1, 4] };
        assertThrows(
          () => model.forward(tokens, { decoderInputIds, crossAttnHeadMask: heads }),
          RangeError,
          /crossAttnHeadMask/,
        );
        assertThrows(
          () => model.forward(tokens, { decoderInputIds, decoderHeadMask: heads }),
          RangeError,
          /decoderHeadMask/,
        );
        assertThrows(() => model.forward(tokens, { decoderInputIds, tokenTypeIds: tokens }), TypeError, /tokenTypeIds/);
        assertThrows(() => model.forward(tokens, { decoderInputIds, kvCache: null }), TypeError, /kvCache/);
        assertStillWorks(attn);
        assert.ok(model.forward(tokens, { decoderInputIds }).logits);
      });

      test('forced_eos_token_id out of [0, vocabSize): a RangeError naming it; null reads as none', (t) => {
        const V = c.config.vocab_size;
        for (const bad of [V, -2]) {
          const config = { ...c.config, forced_eos_token_id: bad };
          assertThrows(() => attn.loadModel({ config, tensors: c.tensors }), RangeError, /forcedEosTokenId/);
        }
        const model = scope(t)(attn.loadModel({ config: c.config, tensors: c.tensors }));
        assertThrows(() => attn.createModel({ ...model.config, forcedEosTokenId: V }), RangeError, /forcedEosTokenId/);
        const none = scope(t)(
          attn.loadModel({ config: { ...c.config, forced_eos_token_id: null }, tensors: c.tensors }),
        );
        assert.equal(none.config.forcedEosTokenId, null);
        assertStillWorks(attn);
      });

      test('generate: a prompt past contextLength, maxNewTokens past it, a decoder-only option: RangeErrors', (t) => {
        const model = scope(t)(attn.loadModel({ config: c.config, tensors: c.tensors }));
        const L = model.config.contextLength;
        const long = new Int32Array(L + 1);
        assertThrows(() => model.generate(long, { maxNewTokens: 2 }), RangeError, /prompt/, /contextLength/);
        assertThrows(() => model.generate(Int32Array.of(1), { maxNewTokens: L + 1 }), RangeError, /maxNewTokens/);
        assertThrows(
          () => model.generate(Int32Array.of(1), { maxNewTokens: 2, outputAttentions: true }),
          RangeError,
          /outputAttentions/,
        );
        assertThrows(
          () => model.generate(Int32Array.of(1), { maxNewTokens: 2, eosTokenId: 3 }),
          RangeError,
          /eosTokenId/,
        );
        assertStillWorks(attn);
      });

      test('a forward that would not fit in wasm memory: refused before allocating, by name', (t) => {
        const model = scope(t)(attn.loadModel({ config: c.config, tensors: c.tensors }));
        const B = 1 << 20;
        const big = { data: new Int32Array(B * 2), shape: [B, 2] };
        assertThrows(
          () => model.forward(big, { decoderInputIds: big, outputAttentions: true, outputHiddenStates: true }),
          RangeError,
          /model\.forward/,
          /wasm memory|does not fit|out of memory/,
        );
        assertStillWorks(attn);
        assert.ok(model.forward(tokens, { decoderInputIds }).logits);
      });
    });
  });
}

test('attnlab/worker: an encoder–decoder forward, generate with onToken across the worker, kind and task', async () => {
  const c = byName('marian_mt_f32');
  const f = c.expected.forward[2];
  const local = await init({ variant: VARIANTS[0] });
  const worker = await initWorker({ variant: VARIANTS[0] });
  const model = await worker.loadModel({ config: c.config, tensors: c.tensors });
  const mine = local.loadModel({ config: c.config, tensors: c.tensors });
  try {
    assert.equal(model.kind, 'encoder-decoder');
    assert.equal(model.task, 'seq2seq-lm');
    checkCase(await model.forward(intsOf(f.input_ids), optionsOf(f)), f, c.expected.tolerance);
    const prompt = Int32Array.of(3, 7, 1, 0);
    const steps = [];
    const opts = { maxNewTokens: 6, temperature: 0.8, seed: 4 };
    const ids = await model.generate(prompt, { ...opts, onToken: (id, step) => steps.push([id, step]) });
    assert.deepEqual(Array.from(ids), Array.from(mine.generate(prompt, opts)));
    assert.deepEqual(
      steps,
      Array.from(ids, (id, i) => [id, i]),
    );
    await assert.rejects(
      model.forward(intsOf(f.input_ids)),
      (e) => e instanceof RangeError && /decoderInputIds/.test(e.message),
    );
  } finally {
    mine.dispose();
    await model.dispose();
    await worker.terminate();
  }
});
