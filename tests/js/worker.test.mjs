// attnlab/worker (web/src/worker.mjs, worker-host.mjs): the API off the calling thread, in Node (worker_threads)
// and in Chromium (a module Web Worker): results identical to the synchronous API, the same errors as rejections,
// abort of a call that has not started, terminate, transfer, and the created objects.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { init } from '../../dist/index.mjs';
import { initWorker } from '../../dist/worker.mjs';
import { openBlankPage, setUpChromium } from './browser-harness.mjs';
import { VARIANTS, kTiny, randomStateDict, tensor } from './helpers.mjs';

/** The error a call throws (or undefined). */
function thrown(fn) {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return undefined;
}

for (const variant of VARIANTS) {
  describe(`attnlab/worker in Node, ${variant} build`, async () => {
    const attn = await init({ variant });
    let w;
    before(async () => {
      w = await initWorker({ variant });
    });
    after(() => w?.terminate());

    test('reports what was loaded', () => {
      assert.equal(w.variant, variant);
      assert.equal(w.version, attn.version);
      assert.equal(w.threads, attn.threads);
    });

    test('SDPA and its backward give bit-identical results', async () => {
      const q = tensor([2, 3, 6, 4], 1);
      const k = tensor([2, 3, 9, 4], 2);
      const v = tensor([2, 3, 9, 5], 3);
      const opts = { isCausal: true, scale: 0.3 };
      assert.deepEqual(await w.scaledDotProductAttention(q, k, v, opts), attn.scaledDotProductAttention(q, k, v, opts));
      const g = tensor([2, 3, 6, 5], 4);
      assert.deepEqual(
        await w.scaledDotProductAttentionBackward(q, k, v, g, { signal: new AbortController().signal }),
        attn.scaledDotProductAttentionBackward(q, k, v, g),
      );
    });

    test('MultiHeadAttention objects: load, forward, backward, stateDict, dispose', async () => {
      const E = 8;
      const dict = randomStateDict(E);
      const sync = attn.createMultiHeadAttention({ embedDim: E, numHeads: 2 });
      const remote = await w.createMultiHeadAttention({ embedDim: E, numHeads: 2 });
      sync.loadStateDict(dict);
      await remote.loadStateDict(dict);
      const x = tensor([5, 2, E], 9);
      const opts = { averageAttnWeights: false, requiresGrad: true };
      assert.deepEqual(await remote.forward(x, x, x, opts), sync.forward(x, x, x, opts));
      const g = tensor([5, 2, E], 10);
      assert.deepEqual(await remote.backward(g), sync.backward(g));
      assert.deepEqual(await remote.stateDict(), sync.stateDict());
      await remote.dispose();
      sync.dispose();
      await assert.rejects(remote.forward(x, x, x), (e) => e instanceof Error && /disposed/.test(e.message));
    });

    test('TinyTransformer trainStep gives the same losses', async () => {
      const cfg = { vocabSize: 7, embedDim: 8, numHeads: 2, causal: true };
      const sync = attn.createTinyTransformer(cfg);
      const remote = await w.createTinyTransformer(cfg);
      const tokens = { data: Int32Array.of(1, 2, 3, 4, 5, 6), shape: [2, 3] };
      const targets = { data: Int32Array.of(2, 3, 4, 5, 6, 0), shape: [2, 3] };
      for (let step = 0; step < 3; ++step) {
        assert.deepEqual(
          await remote.trainStep(tokens, targets, { lr: 0.05 }),
          sync.trainStep(tokens, targets, { lr: 0.05 }),
        );
      }
      assert.deepEqual(await remote.forward(tokens), sync.forward(tokens));
      await remote.dispose();
      sync.dispose();
    });

    test('errors arrive as rejections of the same type and message, and the worker keeps working', async () => {
      const q = tensor([3, 4], 1);
      const bad = [
        [() => attn.scaledDotProductAttention([1, 2], q, q), () => w.scaledDotProductAttention([1, 2], q, q)],
        [
          () => attn.scaledDotProductAttention(q, tensor([3, 5], 2), q),
          () => w.scaledDotProductAttention(q, tensor([3, 5], 2), q),
        ],
        [
          () => attn.createMultiHeadAttention({ embedDim: 6, numHeads: 4 }),
          () => w.createMultiHeadAttention({ embedDim: 6, numHeads: 4 }),
        ],
        [
          () => attn.scaledDotProductAttention(q, q, q, { isCasual: true }),
          () => w.scaledDotProductAttention(q, q, q, { isCasual: true }),
        ],
      ];
      for (const [sync, remote] of bad) {
        const expected = thrown(sync);
        assert.ok(expected instanceof Error);
        await assert.rejects(remote(), (e) => e.constructor === expected.constructor && e.message === expected.message);
      }
      const { q: tq } = kTiny;
      assert.deepEqual(await w.scaledDotProductAttention(tq, tq, tq), attn.scaledDotProductAttention(tq, tq, tq));
    });

    test('an aborted call that has not started rejects with an AbortError; the running one finishes', async () => {
      const big = tensor([1, 512, 64], 3);
      const running = w.scaledDotProductAttention(big, big, big);
      const controller = new AbortController();
      const queued = w.scaledDotProductAttention(big, big, big, { signal: controller.signal });
      controller.abort();
      await assert.rejects(queued, (e) => e.name === 'AbortError');
      assert.deepEqual((await running).output.shape, [1, 512, 64]);
      const early = new AbortController();
      early.abort();
      await assert.rejects(
        w.scaledDotProductAttention(big, big, big, { signal: early.signal }),
        (e) => e.name === 'AbortError',
      );
    });

    test("{ transfer: true } moves the inputs' buffers; by default they are copied", async () => {
      const q = tensor([4, 8], 5);
      const copy = { data: q.data.slice(), shape: q.shape };
      const want = attn.scaledDotProductAttention(copy, copy, copy);
      assert.deepEqual(await w.scaledDotProductAttention(q, q, q), want);
      assert.equal(q.data.length, 32, 'copied: still usable');
      assert.deepEqual(await w.scaledDotProductAttention(q, q, q, { transfer: true }), want);
      assert.equal(q.data.length, 0, 'transferred: detached here');
    });

    test('the modern SDPA options and results pass through: Int32Array kvLengths, pastKey → presentKey, scores', async () => {
      const inputs = () => [tensor([2, 4, 3, 8], 11), tensor([2, 2, 2, 8], 12), tensor([2, 2, 2, 5], 13)];
      const opts = () => ({
        enableGQA: true,
        isCausal: 'lower-right',
        kvLengths: Int32Array.of(6, 4),
        window: [3, -1],
        softcap: 4,
        returnScores: 'masked',
        pastKey: tensor([2, 2, 4, 8], 14),
        pastValue: tensor([2, 2, 4, 5], 15),
      });
      const sync = attn.scaledDotProductAttention(...inputs(), opts());
      assert.ok(sync.scores && sync.presentKey && sync.presentValue);
      assert.deepEqual(await w.scaledDotProductAttention(...inputs(), opts()), sync);
      assert.deepEqual(await w.scaledDotProductAttention(...inputs(), { ...opts(), transfer: true }), sync);
      const g = tensor([2, 4, 3, 5], 16);
      const { returnScores, ...backOpts } = opts();
      const grads = attn.scaledDotProductAttentionBackward(...inputs(), g, backOpts);
      assert.ok(grads.gradPastKey && grads.gradPastValue);
      assert.deepEqual(await w.scaledDotProductAttentionBackward(...inputs(), g, backOpts), grads);
      const bad = { ...opts(), kvLengths: [6, 4] };
      const e = thrown(() => attn.scaledDotProductAttention(...inputs(), bad));
      assert.ok(e instanceof TypeError);
      await assert.rejects(w.scaledDotProductAttention(...inputs(), bad), { name: 'TypeError', message: e.message });
    });
  });
}

test('attnlab/worker in Node: terminate rejects what is pending and every later call', async () => {
  const w = await initWorker({ variant: 'simd' });
  const big = tensor([1, 1024, 64], 3);
  const pending = [w.scaledDotProductAttention(big, big, big), w.scaledDotProductAttention(big, big, big)];
  w.terminate();
  for (const p of pending) await assert.rejects(p, /attnlab worker: terminated/);
  await assert.rejects(w.scaledDotProductAttention(big, big, big), /terminated/);
});

test("attnlab/worker in Node: a failed init rejects with the synchronous API's error", async () => {
  const expected = await init({ variant: 'fast' }).catch((e) => e);
  await assert.rejects(
    initWorker({ variant: 'fast' }),
    (e) => e.constructor === expected.constructor && e.message === expected.message,
  );
});

describe('attnlab/worker in Chromium (a module Web Worker)', () => {
  const harness = setUpChromium();

  test('same results and errors as the synchronous API in the page; abort and terminate', async () => {
    const { page, errors } = await openBlankPage(harness, 'worker-test.html', 'worker');
    const r = await page.evaluate(async () => {
      const { init } = await import('/dist/index.mjs');
      const { initWorker } = await import('/dist/worker.mjs');
      const attn = await init();
      const w = await initWorker();
      const q = { data: Float32Array.from({ length: 24 }, (_, i) => Math.sin(i)), shape: [2, 3, 4] };
      const same = (a, b) =>
        JSON.stringify([...a.output.data, ...a.weights.data]) === JSON.stringify([...b.output.data, ...b.weights.data]);
      const equal = same(
        await w.scaledDotProductAttention(q, q, q, { isCausal: true }),
        attn.scaledDotProductAttention(q, q, q, { isCausal: true }),
      );
      let syncError;
      try {
        attn.scaledDotProductAttention(q, { data: new Float32Array(5), shape: [5] }, q);
      } catch (e) {
        syncError = `${e.name}: ${e.message}`;
      }
      const remoteError = await w.scaledDotProductAttention(q, { data: new Float32Array(5), shape: [5] }, q).then(
        () => 'no error',
        (e) => `${e.name}: ${e.message}`,
      );
      const controller = new AbortController();
      const running = w.scaledDotProductAttention(q, q, q);
      const queued = w.scaledDotProductAttention(q, q, q, { signal: controller.signal });
      controller.abort();
      const aborted = await queued.then(
        () => 'resolved',
        (e) => e.name,
      );
      await running;
      const mha = await w.createMultiHeadAttention({ embedDim: 4, numHeads: 2 });
      const out = await mha.forward(q, q, q);
      await mha.dispose();
      const pending = w.scaledDotProductAttention(q, q, q);
      w.terminate();
      const terminated = await pending.then(
        () => 'resolved',
        (e) => e.message,
      );
      return { variant: w.variant, equal, syncError, remoteError, aborted, mhaShape: out.output.shape, terminated };
    });
    assert.equal(r.variant, 'simd');
    assert.ok(r.equal, 'worker and page give identical results');
    assert.equal(r.remoteError, r.syncError);
    assert.match(r.syncError, /^RangeError: scaledDotProductAttention: /);
    assert.equal(r.aborted, 'AbortError');
    assert.deepEqual(r.mhaShape, [2, 3, 4]);
    assert.match(r.terminated, /terminated/);
    assert.deepEqual(errors, []);
    await page.close();
  });
});
