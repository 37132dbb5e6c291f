// Whole models (web/src/transformer.mjs, model_config.mjs, generation.mjs: createModel, loadModel, forward,
// createKVCache, generate, state dicts) on every variant: each PyTorch fixture of tests/fixtures/models/ loaded from
// its config.json and model.safetensors
// (logits, every layer's attention, hidden states with padding and head masks, KV-cache decoding step by step,
// greedy generation), loading from a safetensors Blob one tensor at a time, the state-dict round trip, seeded sampling, generate's options and attention rows, each bad
// input as its own error, memory refused up front, and the same API in attnlab/worker.
import assert from 'node:assert/strict';
import { openAsBlob, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { init, readSafetensors, writeSafetensors } from '../../dist/index.mjs';
import { initWorker } from '../../dist/worker.mjs';
import { openBlankPage, setUpChromium } from './browser-harness.mjs';
import { VARIANTS, assertClose, assertStillWorks, assertThrows, f32 } from './helpers.mjs';
import { MODEL_CASES, kGpt2, kLlama, loadModelCase, modelDir, scope } from './model-helpers.mjs';
import { makeRng } from './rng.mjs';

const fixtures = MODEL_CASES.map(loadModelCase);
const byName = (name) => fixtures.find((c) => c.name === name);

function tensorOf(t) {
  return { data: f32(t.data), shape: t.shape };
}

function tokensOf(t) {
  return { data: Int32Array.from(t.data), shape: t.shape };
}

/** Tokens [t0, t1) of a (1, N) id tensor. */
function sliceTokens(t, t0, t1) {
  return { data: Int32Array.from(t.data.slice(t0, t1)), shape: [1, t1 - t0] };
}

/** A copy of `tensors` with `name` changed by `edit` (or removed when edit returns undefined). */
function edited(tensors, name, edit) {
  const out = { ...tensors };
  const value = edit(tensors[name]);
  if (value === undefined) delete out[name];
  else out[name] = value;
  return out;
}

let ownInstances = 0;

/** A BlobLike over `bytes` that records each byte range asked of it. */
function recordingBlob(bytes) {
  const blob = new Blob([bytes]);
  const reads = [];
  return { blob: { size: blob.size, slice: (a, b) => (reads.push([a, b]), blob.slice(a, b)) }, reads };
}

/** Whether every 16-bit tensor of readSafetensors' `tensors` still has its lazy `data` (never widened). */
const allUnread = (tensors) =>
  Object.values(tensors)
    .filter((v) => v.bits)
    .every((v) => typeof Object.getOwnPropertyDescriptor(v, 'data').get === 'function');

/** readSafetensors' tensors without their 16-bit `bits` (loaded as float32 values). */
function withoutBits(tensors) {
  return Object.fromEntries(Object.entries(tensors).map(([n, v]) => [n, v?.bits ? { ...v, bits: undefined } : v]));
}

/** GPT-2's parameter names and shapes (docs/api.md, "Transformer models") for `config`. */
function gpt2Shapes({ vocabSize: V, contextLength: P, embedDim: E, numLayers }) {
  const out = [
    ['wte.weight', [V, E]],
    ['wpe.weight', [P, E]],
    ['ln_f.weight', [E]],
    ['ln_f.bias', [E]],
  ];
  for (let l = 0; l < numLayers; ++l) {
    for (const [name, shape] of [
      ['ln_1.weight', [E]],
      ['ln_1.bias', [E]],
      ['attn.c_attn.weight', [E, 3 * E]],
      ['attn.c_attn.bias', [3 * E]],
      ['attn.c_proj.weight', [E, E]],
      ['attn.c_proj.bias', [E]],
      ['ln_2.weight', [E]],
      ['ln_2.bias', [E]],
      ['mlp.c_fc.weight', [E, 4 * E]],
      ['mlp.c_fc.bias', [4 * E]],
      ['mlp.c_proj.weight', [4 * E, E]],
      ['mlp.c_proj.bias', [E]],
    ]) {
      out.push([`h.${l}.${name}`, shape]);
    }
  }
  return out;
}

/** A safetensors file of a GPT-2 `config`'s parameters, random F16 values (rng.mjs's generator). */
function randomF16Checkpoint(config) {
  const rng = makeRng(12345);
  const tensors = {};
  for (const [name, shape] of gpt2Shapes(config)) {
    const bits = new Uint16Array(shape.reduce((a, b) => a * b, 1));
    for (let i = 0; i < bits.length; ++i) {
      const u = rng.int(0, 0xfff); // 11 bits of exponent and mantissa, and the sign
      bits[i] = 0x1c00 + (u & 0x7ff) + (u >>> 11) * 0x8000; // |x| in [2^-8, 2^-6)
    }
    tensors[name] = { dtype: 'F16', shape, bits };
  }
  return writeSafetensors(tensors);
}

for (const variant of VARIANTS) {
  describe(`whole models, ${variant} build`, async () => {
    const attn = await init({ variant });

    for (const c of fixtures) {
      const tol = c.expected.tolerance;
      test(`${c.name}: loadModel from config.json + model.safetensors gives the normalised config`, (t) => {
        const own = scope(t);
        const model = own(attn.loadModel({ config: c.config, tensors: c.tensors }));
        assert.deepEqual({ ...model.config }, c.expected.config);
      });

      test(`${c.name}: logits, every layer's attention and the hidden states of each forward case`, (t) => {
        const own = scope(t);
        const model = own(attn.loadModel({ config: c.config, tensors: c.tensors }));
        for (const f of c.expected.forward) {
          const options = { outputAttentions: true, outputHiddenStates: true };
          if (f.attention_mask) {
            options.attentionMask = { data: Uint8Array.from(f.attention_mask.data), shape: f.attention_mask.shape };
          }
          if (f.head_mask) options.headMask = tensorOf(f.head_mask);
          const r = model.forward(tokensOf(f.input_ids), options);
          assertClose(r.logits, tensorOf(f.logits), tol, `${f.name} logits`);
          assert.equal(r.attentions.length, f.attentions.length);
          f.attentions.forEach((a, l) => assertClose(r.attentions[l], tensorOf(a), tol, `${f.name} attentions[${l}]`));
          assert.equal(r.hiddenStates.length, f.hidden_states.length);
          f.hidden_states.forEach((h, l) =>
            assertClose(r.hiddenStates[l], tensorOf(h), tol, `${f.name} hiddenStates[${l}]`),
          );
        }
      });

      test(`${c.name}: decoding step by step through createKVCache`, (t) => {
        const own = scope(t);
        const model = own(attn.loadModel({ config: c.config, tensors: c.tensors }));
        const d = c.expected.decode;
        const cache = own(model.createKVCache({ batchSize: 1, maxLength: d.input_ids.shape[1] }));
        d.steps.forEach(({ t0, t1 }, i) => {
          assert.equal(cache.length, t0);
          const r = model.forward(sliceTokens(d.input_ids, t0, t1), { kvCache: cache, outputAttentions: true });
          assertClose(r.logits, tensorOf(d.logits[i]), tol, `step ${i} logits`);
          d.attentions[i].forEach((a, l) =>
            assertClose(r.attentions[l], tensorOf(a), tol, `step ${i} attentions[${l}]`),
          );
        });
        assert.equal(cache.length, d.input_ids.shape[1]);
        cache.reset();
        assert.equal(cache.length, 0);
      });

      test(`${c.name}: greedy generate (temperature 0) gives PyTorch's tokens`, (t) => {
        const own = scope(t);
        const model = own(attn.loadModel({ config: c.config, tensors: c.tensors }));
        const g = c.expected.greedy;
        const ids = model.generate(Int32Array.from(g.prompt), { maxNewTokens: g.max_new_tokens, temperature: 0 });
        assert.ok(ids instanceof Int32Array);
        assert.deepEqual(Array.from(ids), g.tokens);
        // top-k 1 is greedy whatever the temperature and seed
        const top1 = model.generate(Int32Array.from(g.prompt), { maxNewTokens: g.max_new_tokens, topK: 1, seed: 9 });
        assert.deepEqual(Array.from(top1), g.tokens);
      });
    }

    test('stateDict has exactly the Hugging Face names; createModel(model.config) + loadStateDict is the same model', (t) => {
      const own = scope(t);
      for (const c of [byName('gpt2_f32'), byName('llama_bias_headdim_bf16'), byName('qwen2_f16')]) {
        const model = own(attn.loadModel({ config: c.config, tensors: c.tensors }));
        const dict = model.stateDict();
        const names = Object.keys(dict);
        assert.ok(
          names.every((n) => !n.startsWith('transformer.')),
          'no prefix for GPT-2',
        );
        assert.ok(!names.includes('lm_head.weight') || !model.config.tieEmbeddings, 'no tied head');
        assert.ok(!names.some((n) => /\.attn\.bias$|masked_bias|inv_freq/.test(n)), 'no buffers');
        for (const [name, t] of Object.entries(c.tensors)) {
          const bare = name.replace(/^transformer\./, '');
          if (dict[bare]) assert.deepEqual(dict[bare].data, t.data, name);
        }
        const copy = own(attn.createModel({ ...model.config, seed: 5 }));
        copy.loadStateDict(dict);
        const reloaded = own(attn.loadModel({ config: model.config, tensors: dict }));
        const tokens = tokensOf(c.expected.forward[0].input_ids);
        const want = model.forward(tokens, { outputAttentions: [1] });
        assert.deepEqual(copy.forward(tokens, { outputAttentions: [1] }), want);
        assert.deepEqual(reloaded.forward(tokens, { outputAttentions: [1] }), want);
        assert.equal(want.attentions[0], null, 'a layer not asked for is null');
        assert.deepEqual(copy.stateDict(), dict);
      }
    });

    test('createModel is seeded: same seed, same weights; another seed, others; defaults as Hugging Face', (t) => {
      const own = scope(t);
      const a = own(attn.createModel({ ...kLlama, seed: 1 }));
      const b = own(attn.createModel({ ...kLlama, seed: 1 }));
      const c = own(attn.createModel({ ...kLlama, seed: 2 }));
      assert.deepEqual(a.stateDict(), b.stateDict());
      assert.notDeepEqual(a.stateDict()['model.embed_tokens.weight'], c.stateDict()['model.embed_tokens.weight']);
      assert.deepEqual(a.config, {
        ...kLlama,
        headDim: 4,
        normEps: 1e-6,
        ropeTheta: 10000,
        tieEmbeddings: false,
        attentionBias: 'none',
        slidingWindow: null,
      });
      const g = own(attn.createModel(kGpt2));
      assert.deepEqual(g.config, { ...kGpt2, normEps: 1e-5 });
      assert.equal(Object.prototype.toString.call(g), '[object Transformer]');
    });

    test('sampling: a seed reproduces, seeds differ, topP tiny and topK 1 are greedy, eosTokenId stops', (t) => {
      const own = scope(t);
      const model = own(attn.createModel({ ...kGpt2, seed: 3 }));
      const prompt = Int32Array.of(1, 2, 3);
      const opts = { maxNewTokens: 16, temperature: 1.5 };
      const a = model.generate(prompt, { ...opts, seed: 7 });
      assert.deepEqual(model.generate(prompt, { ...opts, seed: 7 }), a);
      assert.notDeepEqual(model.generate(prompt, { ...opts, seed: 8 }), a);
      assert.deepEqual(model.generate(prompt, opts), model.generate(prompt, { ...opts, seed: 0 }), 'seed 0 by default');
      const greedy = model.generate(prompt, { maxNewTokens: 16, temperature: 0 });
      assert.deepEqual(model.generate(prompt, { ...opts, topK: 1, seed: 4 }), greedy);
      assert.deepEqual(model.generate(prompt, { ...opts, topP: 1e-9, seed: 4 }), greedy);
      const k3 = model.generate(prompt, { ...opts, topK: 3, topP: 0.9, seed: 4 });
      assert.equal(k3.length, 16);
      assert.deepEqual(model.generate(prompt, { maxNewTokens: 0 }), new Int32Array(0));
      const stop = a[5];
      const firstStop = Array.from(a).indexOf(stop);
      assert.deepEqual(
        Array.from(model.generate(prompt, { ...opts, seed: 7, eosTokenId: [stop] })),
        Array.from(a.subarray(0, firstStop + 1)),
      );
    });

    test('generate: onToken gets each id, step and (asked for) the attention rows of the query that chose it', (t) => {
      const own = scope(t);
      const c = byName('mistral_window_f32');
      const model = own(attn.loadModel({ config: c.config, tensors: c.tensors }));
      const prompt = Int32Array.of(3, 1, 4, 1, 5);
      const seen = [];
      const ids = model.generate(prompt, {
        maxNewTokens: 6,
        temperature: 0.7,
        seed: 11,
        outputAttentions: [0, 1],
        onToken: (id, step, info) => seen.push({ id, step, info }),
      });
      assert.deepEqual(
        seen.map((s) => [s.id, s.step]),
        Array.from(ids, (id, i) => [id, i]),
      );
      assert.deepEqual(
        model.generate(prompt, { maxNewTokens: 6, temperature: 0.7, seed: 11 }),
        ids,
        'same ids without rows',
      );
      // The rows equal those of one forward over prompt + ids (the last id is not fed back).
      const all = Int32Array.from([...prompt, ...ids.subarray(0, ids.length - 1)]);
      const full = model.forward({ data: all, shape: [1, all.length] }, { outputAttentions: true });
      const { numHeads: H } = model.config;
      seen.forEach(({ step, info }) => {
        const q = prompt.length - 1 + step;
        const S = q + 1;
        info.attentions.forEach((rows, l) => {
          const [, , T] = full.attentions[l].shape;
          const want = new Float32Array(H * S);
          for (let h = 0; h < H; ++h) {
            want.set(full.attentions[l].data.subarray((h * T + q) * T, (h * T + q) * T + S), h * S);
          }
          assertClose(rows, { data: want, shape: [H, S] }, c.expected.tolerance, `step ${step} layer ${l}`);
        });
      });
      const none = [];
      model.generate(prompt, { maxNewTokens: 2, onToken: (id, step, info) => none.push(info) });
      assert.deepEqual(none, [undefined, undefined], 'no rows unless asked for');
    });

    test('generate: onToken returning false stops; an aborted signal throws its AbortError', (t) => {
      const own = scope(t);
      const model = own(attn.createModel(kGpt2));
      const prompt = Int32Array.of(4);
      const ids = model.generate(prompt, { maxNewTokens: 10, onToken: (id, step) => step < 2 });
      assert.equal(ids.length, 3);
      const controller = new AbortController();
      assert.throws(
        () =>
          model.generate(prompt, {
            maxNewTokens: 10,
            signal: controller.signal,
            onToken: (id, step) => {
              if (step === 1) controller.abort();
            },
          }),
        (e) => e.name === 'AbortError',
      );
      assert.throws(
        () => model.generate(prompt, { maxNewTokens: 10, signal: AbortSignal.abort() }),
        (e) => e.name === 'AbortError',
      );
      assert.throws(
        () =>
          model.generate(prompt, {
            maxNewTokens: 10,
            onToken: () => {
              throw new SyntaxError('from onToken');
            },
          }),
        SyntaxError,
      );
      assert.equal(model.generate(prompt, { maxNewTokens: 3 }).length, 3, 'still usable');
    });

    test('KV caches: batch of two continues a batched forward; disposing the model disposes its caches', () => {
      const c = byName('gpt2_f16_bare');
      const model = attn.loadModel({ config: c.config, tensors: c.tensors });
      const tokens = tokensOf(c.expected.forward[0].input_ids); // (2, 8)
      const full = model.forward(tokens);
      const cache = model.createKVCache({ batchSize: 2, maxLength: 8 });
      assert.equal(cache.batchSize, 2);
      assert.equal(cache.maxLength, 8);
      const first = (t0, t1) => ({
        data: Int32Array.from([...tokens.data.slice(t0, t1), ...tokens.data.slice(8 + t0, 8 + t1)]),
        shape: [2, t1 - t0],
      });
      model.forward(first(0, 5), { kvCache: cache });
      const step = model.forward(first(5, 8), { kvCache: cache });
      const V = model.config.vocabSize;
      for (let b = 0; b < 2; ++b) {
        const want = full.logits.data.subarray((b * 8 + 5) * V, (b * 8 + 8) * V);
        assertClose(
          { data: step.logits.data.subarray(b * 3 * V, (b + 1) * 3 * V), shape: [3, V] },
          { data: want, shape: [3, V] },
          c.expected.tolerance,
          `item ${b}`,
        );
      }
      assertThrows(() => model.forward(first(0, 1), { kvCache: cache }), RangeError, /maxLength/);
      model.dispose();
      assertThrows(() => cache.length, Error, /disposed.*Transformer.*model\.createKVCache/);
      model.dispose(); // idempotent
    });

    describe('16-bit checkpoints stay 16-bit in wasm memory', () => {
      const sixteen = fixtures.filter((c) => Object.values(c.tensors).some((v) => v.bits));
      test('the F16 and BF16 fixtures are among the cases', () => assert.ok(sixteen.length >= 3));

      for (const c of sixteen) {
        test(`${c.name}: bit for bit the results of float32 storage, and training widens exactly`, (t) => {
          const own = scope(t);
          const narrow = own(attn.loadModel({ config: c.config, tensors: c.tensors }));
          const wide = own(attn.loadModel({ config: c.config, tensors: withoutBits(c.tensors) }));
          const f = c.expected.forward[0];
          const everything = (m) => {
            const r = m.forward(tokensOf(f.input_ids), { outputAttentions: true, outputHiddenStates: true });
            return [r.logits, ...r.attentions, ...r.hiddenStates].map((x) => Array.from(x.data));
          };
          assert.deepEqual(everything(narrow), everything(wide));
          const ids = tokensOf(f.input_ids);
          const a = narrow.trainStep(ids, ids, { lr: 1e-3 });
          const b = wide.trainStep(ids, ids, { lr: 1e-3 });
          assert.deepEqual(a, b);
          assert.deepEqual(everything(narrow), everything(wide));
        });
      }

      test('loadModel leaves 16-bit data unread (never widened); results as from the shared tensors', (t) => {
        const own = scope(t);
        for (const c of sixteen) {
          const fresh = loadModelCase(c.name).tensors;
          assert.ok(allUnread(fresh));
          const model = own(attn.loadModel({ config: c.config, tensors: fresh }));
          assert.ok(allUnread(fresh), `${c.name}: loadModel widened a tensor's data`);
          const ids = tokensOf(c.expected.forward[0].input_ids);
          const shared = own(attn.loadModel({ config: c.config, tensors: c.tensors }));
          assert.deepEqual(model.forward(ids).logits, shared.forward(ids).logits);
        }
      });

      test('a tensor whose data changed after readSafetensors loads that data, not its stale bits', (t) => {
        const own = scope(t);
        const c = sixteen[0];
        // (a matrix of the first block: every logit depends on it)
        const name = Object.keys(c.tensors).find((n) => /\b0\./.test(n) && c.tensors[n].shape.length === 2);
        const data = Float32Array.from(c.tensors[name].data, (x, i) => (i === 0 ? x + 0.5 : x));
        const changed = edited(c.tensors, name, (v) => ({ ...v, data }));
        const a = own(attn.loadModel({ config: c.config, tensors: changed }));
        const b = own(attn.loadModel({ config: c.config, tensors: withoutBits(changed) }));
        const ids = tokensOf(c.expected.forward[0].input_ids);
        const logits = (m) => Array.from(m.forward(ids).logits.data);
        assert.deepEqual(logits(a), logits(b));
        assert.notDeepEqual(logits(a), logits(own(attn.loadModel({ config: c.config, tensors: c.tensors }))));
      });

      test('an F16 checkpoint takes about half the wasm memory of its float32 values', async () => {
        const config = { arch: 'gpt2', vocabSize: 16384, contextLength: 64, embedDim: 256, numLayers: 4, numHeads: 4 };
        const tensors = readSafetensors(randomF16Checkpoint(config));
        const bytesAfterLoad = async (ts) => {
          // (an instance of its own: wasm memory only grows; memoised init needs a different wasm URL for one)
          const url = new URL(`../../dist/attnlab-${variant}.wasm`, import.meta.url).href;
          const fresh = await init({
            variant,
            wasmPaths: { [`attnlab-${variant}.wasm`]: `${url}?own=${++ownInstances}` },
          });
          const model = fresh.loadModel({ config, tensors: ts });
          const bytes = fresh.memoryBytes();
          model.dispose();
          return bytes;
        };
        const narrow = await bytesAfterLoad(tensors);
        assert.ok(allUnread(tensors));
        for (const v of Object.values(tensors)) assert.ok(v.data.length > 0); // widened, unchanged: still 16-bit
        const narrowRead = await bytesAfterLoad(tensors);
        const wide = await bytesAfterLoad(withoutBits(tensors));
        // 7.3 M parameters: 29 MB in float32, 15 MB in 16 bits
        assert.ok(narrow < wide - 8e6, `wasm memory after loading: ${narrow} bytes in 16 bits, ${wide} in float32`);
        assert.ok(narrowRead < wide - 8e6, `with data read: ${narrowRead} bytes, ${wide} in float32`);
      });
    });

    describe('loadModel of a safetensors Blob: each tensor read and copied in on its own', () => {
      test('every fixture, from fs.openAsBlob and from a Blob: a Promise of the model loadModel gives', async (t) => {
        const own = scope(t);
        for (const c of fixtures) {
          const file = join(modelDir, c.name, 'model.safetensors');
          const sync = own(attn.loadModel({ config: c.config, tensors: c.tensors }));
          for (const blob of [await openAsBlob(file), new Blob([readFileSync(file)])]) {
            const pending = attn.loadModel({ config: c.config, tensors: blob });
            assert.ok(pending instanceof Promise, `${c.name}: a Promise`);
            const model = own(await pending);
            assert.deepEqual(model.config, sync.config);
            assert.deepEqual(model.stateDict(), sync.stateDict(), `${c.name}: every parameter bit for bit`);
            const ids = tokensOf(c.expected.forward[0].input_ids);
            assert.deepEqual(model.forward(ids).logits, sync.forward(ids).logits);
          }
        }
      });

      test("the header, then each parameter's own byte range once; ignored buffers are never read", async (t) => {
        const own = scope(t);
        const c = byName('gpt2_f32');
        const { blob, reads } = recordingBlob(readFileSync(join(modelDir, c.name, 'model.safetensors')));
        own(await attn.loadModel({ config: c.config, tensors: blob }));
        const kept = Object.keys(c.tensors).filter((n) => !/\.attn\.(masked_)?bias$/.test(n));
        assert.ok(kept.length < Object.keys(c.tensors).length, 'the fixture holds ignored buffers');
        assert.equal(reads.length, 2 + kept.length, 'the header length, the header, one read per parameter');
        const sizes = reads.slice(2).map(([a, b]) => b - a);
        const want = kept.map((n) => c.tensors[n].data.length * 4);
        assert.deepEqual(
          sizes.sort((a, b) => a - b),
          want.sort((a, b) => a - b),
        );
      });

      test('a tensor larger than a piece comes in 16 MiB pieces; a mixed-dtype file widens as loadModel does', async (t) => {
        const own = scope(t);
        const config = { arch: 'gpt2', vocabSize: 33000, contextLength: 8, embedDim: 256, numLayers: 1, numHeads: 2 };
        const fresh = own(attn.createModel({ ...config, seed: 3 }));
        const file = writeSafetensors(fresh.stateDict());
        const { blob, reads } = recordingBlob(file);
        const model = own(await attn.loadModel({ config, tensors: blob }));
        assert.deepEqual(model.stateDict(), fresh.stateDict());
        assert.deepEqual(
          own(attn.loadModel({ config, tensors: readSafetensors(file) })).stateDict(),
          fresh.stateDict(),
        );
        // The same weights cut to BF16 (2 × 16 MiB pieces and more of wte), from bytes and from a Blob.
        const bf16 = Object.fromEntries(
          Object.entries(fresh.stateDict()).map(([n, v]) => {
            const bits = Uint16Array.from(new Uint32Array(v.data.buffer), (u) => u >>> 16);
            return [n, { dtype: 'BF16', shape: v.shape, bits }];
          }),
        );
        const narrowFile = writeSafetensors(bf16);
        const narrow = own(await attn.loadModel({ config, tensors: new Blob([narrowFile]) }));
        const widened = Object.fromEntries(Object.entries(readSafetensors(narrowFile)).map(([n, v]) => [n, v.data]));
        for (const [n, v] of Object.entries(narrow.stateDict())) assert.deepEqual(v.data, widened[n], n);
        assert.deepEqual(
          own(attn.loadModel({ config, tensors: readSafetensors(narrowFile) })).stateDict(),
          narrow.stateDict(),
        );
        const wteBytes = 33000 * 256 * 4;
        const pieces = reads.filter(([a, b]) => b - a === 16 << 20);
        assert.equal(pieces.length, Math.floor(wteBytes / (16 << 20)), 'wte.weight (32 MiB) in whole pieces');
        assert.ok(
          reads.every(([a, b]) => b - a <= 16 << 20),
          'no read larger than a piece',
        );
        const c = byName('gpt2_f16_bare');
        const mixed = edited(c.tensors, 'ln_f.weight', (x) => ({ data: Float32Array.from(x.data), shape: x.shape }));
        const a = own(await attn.loadModel({ config: c.config, tensors: new Blob([writeSafetensors(mixed)]) }));
        const b = own(attn.loadModel({ config: c.config, tensors: mixed }));
        assert.deepEqual(a.stateDict(), b.stateDict());
        const ids = tokensOf(c.expected.forward[0].input_ids);
        assert.deepEqual(a.forward(ids).logits, b.forward(ids).logits);
      });

      test('names, shapes and dtypes are checked from the header before any tensor is read', async () => {
        const c = byName('llama_gqa_f32');
        const { blob, reads } = recordingBlob(
          writeSafetensors(edited(c.tensors, 'model.norm.weight', () => undefined)),
        );
        await assert.rejects(attn.loadModel({ config: c.config, tensors: blob }), (e) => {
          assert.ok(e instanceof RangeError && /loadModel/.test(e.message) && /model\.norm\.weight/.test(e.message));
          return /missing/.test(e.message);
        });
        assert.equal(reads.length, 2, 'the header only');
        const more = { ...c.config, num_hidden_layers: c.config.num_hidden_layers + 1 };
        await assert.rejects(attn.loadModel({ config: more, tensors: blob }), RangeError);
        const gpt2 = byName('gpt2_f32');
        const i64 = edited(gpt2.tensors, 'transformer.ln_f.bias', (x) => ({
          data: null,
          bytes: new Uint8Array(x.data.length * 8),
          shape: x.shape,
          dtype: 'I64',
        }));
        await assert.rejects(
          attn.loadModel({ config: gpt2.config, tensors: new Blob([writeSafetensors(i64)]) }),
          (e) => e instanceof RangeError && /ln_f\.bias/.test(e.message) && /I64/.test(e.message),
        );
      });

      test('a tied head that differs from the embedding, a file that is not safetensors: RangeErrors', async () => {
        const gpt2 = byName('gpt2_f32');
        const head = edited(gpt2.tensors, 'lm_head.weight', (x) => {
          const data = x.data.slice();
          data[7] += 0.5;
          return { data, shape: x.shape };
        });
        await assert.rejects(
          attn.loadModel({ config: gpt2.config, tensors: new Blob([writeSafetensors(head)]) }),
          (e) => e instanceof RangeError && /lm_head\.weight/.test(e.message),
        );
        await assert.rejects(
          attn.loadModel({ config: gpt2.config, tensors: new Blob([new Uint8Array(4)]) }),
          (e) => e instanceof RangeError && /8-byte header length/.test(e.message),
        );
        assertStillWorks(attn);
      });
    });

    describe('bad input: each its own error', () => {
      const gpt2 = byName('gpt2_f32');
      const llama = byName('llama_gqa_f32');
      const load = (config, tensors = config.model_type === 'gpt2' ? gpt2.tensors : llama.tensors) =>
        attn.loadModel({ config, tensors });

      test('tensors that are a Promise (readSafetensors of a Blob, not awaited): a TypeError saying so', () => {
        const pending = Promise.resolve(llama.tensors);
        assertThrows(() => load(llama.config, pending), TypeError, /tensors is a Promise/, /await it/);
      });

      test('an unknown model_type or arch', () => {
        assertThrows(() => load({ ...llama.config, model_type: 'falcon' }), RangeError, /model_type/, /falcon/);
        assertThrows(() => load({ ...llama.config, model_type: undefined }), RangeError, /model_type/);
        assertThrows(() => attn.createModel({ ...kGpt2, arch: 'falcon' }), RangeError, /arch/, /falcon/);
        assertThrows(() => attn.createModel({ ...kGpt2, arch: 2 }), TypeError, /arch/);
      });

      test("an encoder–decoder type (marian): kind 'encoder-decoder', never a decoder's result", () => {
        for (const dir of readdirSync(join(modelDir, '..', 'seq2seq'))) {
          const at = (file) => readFileSync(join(modelDir, '..', 'seq2seq', dir, file));
          const model = load(JSON.parse(at('config.json').toString('utf8')), readSafetensors(at('model.safetensors')));
          assert.equal(model.kind, 'encoder-decoder');
          model.dispose();
        }
        const marian = { arch: 'marian', vocabSize: 8, contextLength: 4, embedDim: 8, numLayers: 1, numHeads: 2 };
        const model = attn.createModel({ ...marian, decoderLayers: 1 });
        try {
          assert.equal(model.kind, 'encoder-decoder');
          const tokens = { data: Int32Array.of(1, 2), shape: [1, 2] };
          assertThrows(() => model.forward(tokens), RangeError, /decoderInputIds/);
        } finally {
          model.dispose();
        }
      });
      test('rope_scaling, mlp_bias, Qwen2 use_sliding_window, another activation: RangeErrors naming them', () => {
        assertThrows(
          () => load({ ...llama.config, rope_scaling: { type: 'linear', factor: 2 } }),
          RangeError,
          /rope_scaling/,
        );
        assertThrows(() => load({ ...llama.config, mlp_bias: true }), RangeError, /mlp_bias/);
        const qwen = byName('qwen2_f16');
        assertThrows(
          () => load({ ...qwen.config, use_sliding_window: true }, qwen.tensors),
          RangeError,
          /use_sliding_window/,
        );
        assertThrows(() => load({ ...llama.config, hidden_act: 'gelu' }), RangeError, /hidden_act/);
        assertThrows(() => load({ ...gpt2.config, activation_function: 'relu' }), RangeError, /activation_function/);
        assertThrows(() => load({ ...gpt2.config, n_embd: undefined }), TypeError, /n_embd is required/);
        assertThrows(() => load({ ...gpt2.config, n_embd: '16' }), TypeError, /config\.n_embd/);
        const qwen3 = byName('qwen3_bf16');
        for (const bad of [{ use_sliding_window: true }, { rope_parameters: { rope_type: 'yarn', factor: 4 } }]) {
          assertThrows(
            () => load({ ...qwen3.config, ...bad }, qwen3.tensors),
            RangeError,
            new RegExp(Object.keys(bad)[0]),
          );
        }
      });

      test('qwen3: createModel from model.config builds the same architecture; its own fields and defaults', (t) => {
        const own = scope(t);
        const qwen3 = byName('qwen3_bf16');
        const loaded = own(load(qwen3.config, qwen3.tensors));
        const fresh = own(attn.createModel({ ...loaded.config, seed: 3 }));
        assert.deepEqual({ ...fresh.config }, { ...loaded.config });
        const names = (m) => Object.keys(m.stateDict()).sort();
        assert.deepEqual(names(fresh), names(loaded));
        assert.ok(names(fresh).includes('model.layers.1.self_attn.k_norm.weight'));
        const small = { arch: 'qwen3', vocabSize: 16, contextLength: 8, embedDim: 8, numLayers: 1, numHeads: 2 };
        const defaults = own(attn.createModel(small)).config;
        assert.equal(defaults.headDim, 128, "Qwen3Config's head_dim");
        assert.equal(defaults.hiddenDim, 32, '4 · embedDim');
        assert.equal('slidingWindow' in defaults, false);
        assertThrows(() => attn.createModel({ ...small, slidingWindow: 4 }), TypeError, /slidingWindow/);
        assertThrows(() => attn.createModel({ ...small, attentionBias: 'qkv' }), RangeError, /attentionBias/);
        assertThrows(() => attn.createModel({ ...small, normEps: NaN }), RangeError, /normEps/);
      });

      test('an unknown tensor name', () => {
        const t = { ...gpt2.tensors, 'h.0.attn.c_extra.weight': gpt2.tensors['transformer.h.0.ln_1.weight'] };
        assertThrows(() => load(gpt2.config, t), RangeError, /h\.0\.attn\.c_extra\.weight/);
      });

      test('a wrongly shaped tensor', () => {
        const t = edited(llama.tensors, 'model.layers.1.self_attn.k_proj.weight', (x) => ({
          data: x.data.slice(0, x.data.length / 2),
          shape: [x.shape[0] / 2, x.shape[1]],
        }));
        assertThrows(() => load(llama.config, t), RangeError, /model\.layers\.1\.self_attn\.k_proj\.weight/, /shape/);
      });

      test('a missing tensor', () => {
        const t = edited(llama.tensors, 'model.norm.weight', () => undefined);
        assertThrows(() => load(llama.config, t), RangeError, /model\.norm\.weight/, /missing/);
      });

      test("an lm_head.weight that differs from GPT-2's wte", () => {
        const t = edited(gpt2.tensors, 'lm_head.weight', (x) => {
          const data = x.data.slice();
          data[7] += 0.5;
          return { data, shape: x.shape };
        });
        assertThrows(() => load(gpt2.config, t), RangeError, /lm_head\.weight/);
      });

      test('a parameter stored as a non-float dtype', () => {
        const t = edited(gpt2.tensors, 'transformer.ln_f.bias', (x) => ({
          data: null,
          bytes: new Uint8Array(x.data.length * 8),
          shape: x.shape,
          dtype: 'I64',
        }));
        assertThrows(() => load(gpt2.config, t), RangeError, /ln_f\.bias/, /I64/);
      });

      test('a token id out of range', (t) => {
        const own = scope(t);
        const model = own(attn.createModel(kGpt2));
        assertThrows(() => model.forward({ data: Int32Array.of(1, 50), shape: [1, 2] }), RangeError, /tokens/, /50/);
        assertThrows(() => model.generate(Int32Array.of(-1), { maxNewTokens: 1 }), RangeError, /prompt\[0\]/);
      });

      test('a prompt too long for maxNewTokens: RangeError up front, onToken never called', (t) => {
        const own = scope(t);
        const model = own(attn.createModel(kGpt2));
        let called = false;
        assertThrows(
          () => model.generate(new Int32Array(20), { maxNewTokens: 5, onToken: () => (called = true) }),
          RangeError,
          /contextLength 24/,
        );
        assert.equal(called, false);
        assertThrows(() => model.forward({ data: new Int32Array(25), shape: [1, 25] }), RangeError, /contextLength/);
      });

      test('a bad attentionMask shape, or not bytes', (t) => {
        const own = scope(t);
        const model = own(attn.createModel(kGpt2));
        const tokens = { data: Int32Array.of(1, 2, 3, 4), shape: [2, 2] };
        assertThrows(
          () => model.forward(tokens, { attentionMask: { data: new Uint8Array(6), shape: [2, 3] } }),
          RangeError,
          /attentionMask/,
        );
        assertThrows(
          () => model.forward(tokens, { attentionMask: { data: new Float32Array(4), shape: [2, 2] } }),
          TypeError,
          /attentionMask/,
        );
        assertThrows(
          () => model.forward(tokens, { headMask: { data: new Float32Array(3), shape: [1, 3] } }),
          RangeError,
          /headMask/,
        );
        assertThrows(() => model.forward(tokens, { outputAttentions: [2] }), RangeError, /outputAttentions\[0\]/);
      });

      test('bad generate and createModel options', (t) => {
        const own = scope(t);
        const model = own(attn.createModel(kGpt2));
        const p = Int32Array.of(1);
        assertThrows(() => model.generate([1, 2], { maxNewTokens: 1 }), TypeError, /prompt/, /Int32Array/);
        assertThrows(() => model.generate(p), TypeError, /maxNewTokens/);
        assertThrows(() => model.generate(p, { maxNewTokens: 1, temperature: -1 }), RangeError, /temperature/);
        assertThrows(() => model.generate(p, { maxNewTokens: 1, topP: 0 }), RangeError, /topP/);
        assertThrows(() => model.generate(p, { maxNewTokens: 1, topK: 0 }), RangeError, /topK/);
        assertThrows(() => model.generate(p, { maxNewTokens: 1, onToken: 3 }), TypeError, /onToken/);
        assertThrows(() => model.generate(p, { maxNewTokens: 1, eosTokenId: 99 }), RangeError, /eosTokenId/);
        assertThrows(() => model.generate(p, { maxNewTokens: 1, topk: 2 }), TypeError, /topk/);
        assertThrows(() => attn.createModel({ ...kGpt2, numKVHeads: 1 }), TypeError, /numKVHeads/);
        assertThrows(() => attn.createModel({ ...kGpt2, numHeads: 3 }), RangeError, /numHeads/);
        assertThrows(() => attn.createModel({ ...kLlama, attentionBias: 'some' }), RangeError, /attentionBias/);
        assertThrows(() => attn.createModel({ ...kLlama, numKVHeads: 3 }), RangeError, /numKVHeads/);
      });

      test('a cache of another model, a disposed model', (t) => {
        const own = scope(t);
        const a = own(attn.createModel(kGpt2));
        const b = own(attn.createModel(kGpt2));
        const cache = own(b.createKVCache({ batchSize: 1, maxLength: 4 }));
        assertThrows(
          () => a.forward({ data: Int32Array.of(1), shape: [1, 1] }, { kvCache: cache }),
          RangeError,
          /kvCache/,
        );
        assertThrows(() => a.createKVCache({ batchSize: 1, maxLength: 25 }), RangeError, /maxLength/);
        const m = attn.createModel(kGpt2);
        m.dispose();
        assertThrows(() => m.forward({ data: Int32Array.of(1), shape: [1, 1] }), Error, /disposed/);
        assertThrows(() => m.generate(Int32Array.of(1), { maxNewTokens: 1 }), Error, /disposed/);
        assertThrows(() => m.stateDict(), Error, /disposed/);
        assertThrows(() => m.createKVCache({ batchSize: 1, maxLength: 2 }), Error, /disposed/);
      });

      test('a config whose weights cannot fit: RangeError before anything is allocated', () => {
        const before = attn.memoryBytes();
        assertThrows(
          () => attn.createModel({ ...kGpt2, vocabSize: 1_000_000, embedDim: 2048, numHeads: 16, contextLength: 8 }),
          RangeError,
          /createModel/,
          /wasm memory/,
          /token embedding/,
        );
        assertThrows(
          () => load({ ...llama.config, vocab_size: 4_000_000, hidden_size: 1024, num_attention_heads: 8 }),
          RangeError,
          /loadModel/,
          /wasm memory/,
        );
        assert.equal(attn.memoryBytes(), before);
      });

      test('the instance still works after all of these', (t) => {
        const own = scope(t);
        assertStillWorks(attn);
        const model = own(attn.loadModel({ config: gpt2.config, tensors: gpt2.tensors }));
        const g = gpt2.expected.greedy;
        assert.deepEqual(
          Array.from(model.generate(Int32Array.from(g.prompt), { maxNewTokens: g.max_new_tokens, temperature: 0 })),
          g.tokens,
        );
      });
    });
  });

  describe(`whole models in attnlab/worker, ${variant} build`, async () => {
    const attn = await init({ variant });
    const c = byName('llama_bias_headdim_bf16');

    test('loadModel, forward with a cache, generate with onToken, stateDict, dispose: as the synchronous API', async (t) => {
      const own = scope(t);
      const w = await initWorker({ variant });
      try {
        const fresh = loadModelCase(c.name).tensors;
        const remote = await w.loadModel({ config: c.config, tensors: fresh });
        assert.ok(allUnread(fresh), 'posted as bits: cloning widened no data');
        const local = own(attn.loadModel({ config: c.config, tensors: c.tensors }));
        assert.deepEqual(remote.config, local.config);
        const tokens = tokensOf(c.expected.forward[1].input_ids);
        const opts = { outputAttentions: true, outputHiddenStates: true };
        assert.deepEqual(await remote.forward(tokens, opts), local.forward(tokens, opts));
        const cache = await remote.createKVCache({ batchSize: 1, maxLength: 6 });
        const localCache = own(local.createKVCache({ batchSize: 1, maxLength: 6 }));
        const step = { data: Int32Array.of(5, 6, 7), shape: [1, 3] };
        assert.deepEqual(await remote.forward(step, { kvCache: cache }), local.forward(step, { kvCache: localCache }));
        assert.equal(await cache.length(), 3);
        await cache.dispose();
        await assert.rejects(
          remote.forward(step, { kvCache: cache }),
          /model\.forward: this KVCache has been disposed/,
        );
        const prompt = Int32Array.of(9, 8, 7);
        const options = { maxNewTokens: 7, temperature: 0.9, seed: 2, outputAttentions: [1] };
        const remoteSeen = [];
        const localSeen = [];
        const ids = await remote.generate(prompt, { ...options, onToken: (...a) => remoteSeen.push(a) });
        assert.deepEqual(ids, local.generate(prompt, { ...options, onToken: (...a) => localSeen.push(a) }));
        assert.deepEqual(remoteSeen, localSeen);
        assert.deepEqual(await remote.stateDict(), local.stateDict());
        await assert.rejects(
          remote.generate(prompt, { maxNewTokens: 40 }),
          (e) => e instanceof RangeError && /contextLength/.test(e.message),
        );
        await remote.dispose();
        await assert.rejects(remote.forward(tokens), (e) => e.constructor === Error && /disposed/.test(e.message));
      } finally {
        w.terminate();
      }
    });

    test('loadModel of a safetensors Blob in the worker: the same model; a bad one rejects, the worker goes on', async (t) => {
      const own = scope(t);
      const w = await initWorker({ variant });
      try {
        const bytes = readFileSync(join(modelDir, c.name, 'model.safetensors'));
        const remote = await w.loadModel({ config: c.config, tensors: new Blob([bytes]) });
        const local = own(attn.loadModel({ config: c.config, tensors: c.tensors }));
        assert.deepEqual(await remote.stateDict(), local.stateDict());
        const tokens = tokensOf(c.expected.forward[0].input_ids);
        assert.deepEqual(await remote.forward(tokens), local.forward(tokens));
        const fewer = { ...c.config, num_hidden_layers: c.config.num_hidden_layers + 1 };
        await assert.rejects(
          w.loadModel({ config: fewer, tensors: new Blob([bytes]) }),
          (e) => e instanceof RangeError && /loadModel/.test(e.message) && /missing/.test(e.message),
        );
        assert.deepEqual(await remote.forward(tokens), local.forward(tokens));
        await remote.dispose();
      } finally {
        w.terminate();
      }
    });

    test('createModel; onToken returning false stops; signal aborts a running generate (AbortError)', async (t) => {
      const own = scope(t);
      const w = await initWorker({ variant });
      try {
        const remote = await w.createModel({ ...kGpt2, seed: 4 });
        const local = own(attn.createModel({ ...kGpt2, seed: 4 }));
        const prompt = Int32Array.of(1, 2);
        const stopped = await remote.generate(prompt, { maxNewTokens: 20, onToken: (id, step) => step < 4 });
        assert.deepEqual(stopped, local.generate(prompt, { maxNewTokens: 20 }).subarray(0, 5));
        const controller = new AbortController();
        let seen = 0;
        await assert.rejects(
          remote.generate(prompt, {
            maxNewTokens: 22,
            signal: controller.signal,
            onToken: () => {
              if (++seen === 3) controller.abort();
            },
          }),
          (e) => e.name === 'AbortError',
        );
        assert.equal(seen, 3, 'no onToken after the abort');
        await assert.rejects(
          remote.generate(prompt, {
            maxNewTokens: 5,
            onToken: () => {
              throw new SyntaxError('from onToken');
            },
          }),
          SyntaxError,
        );
        // the worker is free again
        assert.deepEqual(
          await remote.generate(prompt, { maxNewTokens: 4, seed: 1 }),
          local.generate(prompt, { maxNewTokens: 4, seed: 1 }),
        );
        await remote.dispose();
      } finally {
        w.terminate();
      }
    });
  });
}

describe('whole models in attnlab/worker in Chromium (a module Web Worker)', () => {
  const harness = setUpChromium();

  test('generate: onToken per token from the worker, the ids of the page, abort while running', async () => {
    const { page, errors } = await openBlankPage(harness, 'transformer-worker-test.html', 'model');
    const r = await page.evaluate(async (config) => {
      const { pageAndWorkerModels } = await import('/tests/js/worker-page.mjs');
      const { w, local, remote } = await pageAndWorkerModels(config);
      const prompt = Int32Array.of(3, 4);
      const seen = [];
      const ids = await remote.generate(prompt, {
        maxNewTokens: 12,
        temperature: 0.8,
        seed: 5,
        outputAttentions: true,
        onToken: (id, step, info) => seen.push([id, step, info.attentions.map((a) => a.shape)]),
      });
      const want = local.generate(prompt, { maxNewTokens: 12, temperature: 0.8, seed: 5 });
      const controller = new AbortController();
      let count = 0;
      const aborted = await remote
        .generate(prompt, {
          maxNewTokens: 20,
          signal: controller.signal,
          onToken: () => {
            if (++count === 2) controller.abort();
          },
        })
        .then(
          () => 'resolved',
          (e) => e.name,
        );
      const after = Array.from(await remote.generate(prompt, { maxNewTokens: 3, temperature: 0 }));
      await remote.dispose();
      local.dispose();
      w.terminate();
      return { ids: Array.from(ids), want: Array.from(want), seen, aborted, count, after, config: remote.config };
    }, kGpt2);
    assert.deepEqual(r.ids, r.want);
    assert.deepEqual(
      r.seen.map(([id, step]) => [id, step]),
      r.ids.map((id, i) => [id, i]),
    );
    assert.deepEqual(r.seen[3][2], [
      [2, 5],
      [2, 5],
    ]);
    assert.equal(r.aborted, 'AbortError');
    assert.equal(r.count, 2);
    assert.equal(r.after.length, 3);
    assert.deepEqual(r.config, { ...kGpt2, normEps: 1e-5 });
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('loadModel of a File in the worker (the page\'s "Your model"): the model of the page\'s own readSafetensors', async () => {
    const { page, errors } = await openBlankPage(harness, 'transformer-worker-file.html', 'model');
    const c = byName('qwen3_bf16');
    const bytes = Array.from(readFileSync(join(modelDir, c.name, 'model.safetensors')));
    const r = await page.evaluate(
      async ({ config, bytes }) => {
        const { init, readSafetensors } = await import('/dist/index.mjs');
        const { initWorker } = await import('/dist/worker.mjs');
        const attn = await init({ variant: 'simd' });
        const w = await initWorker({ variant: 'simd' });
        const file = new File([Uint8Array.from(bytes)], 'model.safetensors');
        const remote = await w.loadModel({ config, tensors: file }, { transfer: true });
        const local = attn.loadModel({ config, tensors: readSafetensors(await file.arrayBuffer()) });
        const ids = { data: Int32Array.of(1, 5, 9, 2), shape: [1, 4] };
        const same =
          JSON.stringify(Array.from((await remote.forward(ids)).logits.data)) ===
          JSON.stringify(Array.from(local.forward(ids).logits.data));
        const names = Object.keys(await remote.stateDict()).length;
        await remote.dispose();
        local.dispose();
        w.terminate();
        return { same, names, size: file.size };
      },
      { config: c.config, bytes },
    );
    assert.ok(r.same, 'logits bit for bit');
    assert.equal(r.names, Object.keys(c.tensors).length - (c.config.tie_word_embeddings ? 1 : 0));
    assert.deepEqual(errors, []);
    await page.close();
  });
});
