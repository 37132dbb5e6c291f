// No leaks: 10,000 calls per variant (SDPA and MHA forwards, with JS-side and C++-side errors interleaved, and
// MultiHeadAttention objects created and disposed) leave the wasm memory size unchanged after warm-up; so do
// 2,000 calls of the backward pass and the tiny transformer (trainStep, lossAndGrad, forward, mha.backward,
// scaledDotProductAttentionBackward), with errors interleaved and models created and disposed.
//
// Wasm memory only grows, and a fresh instance has megabytes of free heap, so a small leak would not show in
// memoryBytes() on its own. Before the measured loop the test therefore fills the free heap with ballast blocks
// (through the module's own _malloc) until only ~2 MiB are left: from then on any leak of more than ~200 bytes
// per call forces the memory to grow, and the test fails.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { init } from '../../dist/index.mjs';
import { VARIANTS, randomStateDict, tensor } from './helpers.mjs';

const kCalls = 10_000;
const kTrainCalls = 2_000;
const kHeadroom = 2 * 1024 * 1024;
// The backward/training test makes fewer calls with small inputs: it leaves less free heap, so that a leak of more
// than ~100 bytes per call still forces growth.
const kTrainHeadroom = 128 * 1024;
const kBallastBlock = 64 * 1024;

// The raw Emscripten module, for the ballast only (tests may look inside; users never do).
async function rawModule(variant) {
  const { loadModule } = await import('../../dist/loader.mjs');
  return (await loadModule({ variant })).Module;
}

/** Allocates blocks until the heap grew once, then until ~headroom bytes are free. Returns the pointers. */
function fillHeap(Module, memoryBytes, headroom = kHeadroom) {
  const blocks = [];
  const start = memoryBytes();
  while (memoryBytes() === start) {
    const p = Module._malloc(kBallastBlock) >>> 0;
    assert.notEqual(p, 0, 'ballast allocation');
    blocks.push(p);
  }
  // The last block made the heap grow by `grown` bytes: fill all of that but `headroom`.
  for (;;) {
    const size = memoryBytes();
    const grown = size - start;
    const fill = Math.floor((grown - headroom) / kBallastBlock) - 1;
    for (let i = 0; i < fill; ++i) blocks.push(Module._malloc(kBallastBlock) >>> 0);
    if (memoryBytes() === size) return blocks; // no further growth: the free heap is now about kHeadroom
  }
}

/** Wraps calls that must throw and counts them (count); a call that returns fails the test. */
function throwCounter() {
  const expectThrow = (fn) => {
    try {
      fn();
    } catch {
      ++expectThrow.count;
      return;
    }
    assert.fail('expected a throw');
  };
  expectThrow.count = 0;
  return expectThrow;
}

/**
 * Runs step(i) for `warmups` calls, fills the heap up to `headroom` free bytes, then runs `calls` more and asserts
 * that memoryBytes() did not change and that at least half of them threw (expectThrow counts). Logs `what`, the
 * sizes and the errors; the ballast is freed again.
 */
function assertNoGrowth(attn, Module, what, { step, expectThrow, warmups, calls, headroom = kHeadroom }) {
  for (let i = 0; i < warmups; ++i) step(i);
  const ballast = fillHeap(Module, () => attn.memoryBytes(), headroom);
  const before = attn.memoryBytes();
  expectThrow.count = 0;
  try {
    for (let i = 0; i < calls; ++i) step(i);
    const after = attn.memoryBytes();
    const errors = expectThrow.count;
    console.log(
      `${what} (${errors} errors): ${before} bytes before, ${after} after (ballast leaves ~${headroom} bytes free)`,
    );
    assert.equal(after, before, 'wasm memory grew: something leaks');
    assert.ok(errors >= calls / 2, 'errors were interleaved');
  } finally {
    for (const p of ballast) Module._free(p);
  }
}

for (const variant of VARIANTS) {
  describe(`memory, ${variant} build`, async () => {
    const attn = await init({ variant });
    const Module = await rawModule(variant);

    test(`${kCalls} calls with errors interleaved leave memoryBytes() unchanged`, () => {
      const E = 16;
      const H = 4;
      const params = randomStateDict(E);
      const x = tensor([2, 12, E], 1);
      const y = tensor([2, 20, E], 2);
      const kpm = { data: new Uint8Array(2 * 20).map((_, i) => (i % 20 >= 15 ? 1 : 0)), shape: [2, 20] };
      const q = tensor([3, 16, 32], 3);
      const kk = tensor([3, 24, 32], 4);
      const v = tensor([3, 24, 32], 5);
      const mask = { data: new Uint8Array(16 * 24).fill(1), shape: [16, 24] };
      let mha = attn.createMultiHeadAttention({ embedDim: E, numHeads: H, batchFirst: true });
      mha.loadStateDict(params);

      const expectThrow = throwCounter();
      const step = (i) => {
        switch (i % 10) {
          case 0:
            mha.forward(x, y, y, { keyPaddingMask: kpm });
            break;
          case 1:
            attn.scaledDotProductAttention(q, kk, v, { attnMask: mask, isCausal: true });
            break;
          case 2: // C++-side error after the inputs were copied in
            expectThrow(() => mha.forward(x, y, y, { attnMask: { data: new Float32Array(12 * 19), shape: [12, 19] } }));
            break;
          case 3: // JS-side error
            expectThrow(() =>
              attn.scaledDotProductAttention(q, kk, { data: new Float64Array(3 * 24 * 32), shape: [3, 24, 32] }),
            );
            break;
          case 4: // C++-side error in SDPA
            expectThrow(() => attn.scaledDotProductAttention(q, kk, tensor([3, 23, 32], 6)));
            break;
          case 5:
            mha.forward(x, y, y, { needWeights: false });
            break;
          case 6: // state dict round trip, and a bad load
            mha.loadStateDict(params);
            expectThrow(() => mha.loadStateDict({ ...params, bogus: new Float32Array(1) }));
            break;
          case 7:
            attn.scaledDotProductAttention(q, kk, v, { needWeights: false });
            break;
          case 8: // constructor error, and a create / dispose cycle
            expectThrow(() => attn.createMultiHeadAttention({ embedDim: 10, numHeads: 3 }));
            if (i % 100 === 8) {
              mha.dispose();
              mha = attn.createMultiHeadAttention({ embedDim: E, numHeads: H, batchFirst: true });
              mha.loadStateDict(params);
            }
            break;
          default:
            mha.stateDict();
            expectThrow(() => mha.forward(tensor([2, 12, E + 1]), y, y));
        }
      };

      try {
        assertNoGrowth(attn, Module, `memory [${variant}]: ${kCalls} calls`, {
          step,
          expectThrow,
          warmups: 500,
          calls: kCalls,
        });
      } finally {
        mha.dispose();
      }
    });
  });
}

for (const variant of VARIANTS) {
  describe(`memory of the backward pass and the tiny transformer, ${variant} build`, async () => {
    const attn = await init({ variant });
    const Module = await rawModule(variant);

    test(`${kTrainCalls} trainStep/backward calls with errors interleaved leave memoryBytes() unchanged`, () => {
      const V = 10;
      const tinyOptions = { vocabSize: V, embedDim: 16, numHeads: 2, seed: 2 };
      const ids = (n, seed) => Int32Array.from({ length: n }, (_, i) => (i * 3 + seed) % V);
      const tokens = { data: ids(16 * 8, 1), shape: [16, 8] };
      const targets = { data: ids(16 * 8, 2), shape: [16, 8] };
      const E = 16;
      const x = tensor([2, 5, E], 1);
      const y = tensor([2, 7, E], 2);
      const gx = tensor([2, 5, E], 3);
      const q = tensor([3, 8, 16], 4);
      const kk = tensor([3, 12, 16], 5);
      const v = tensor([3, 12, 8], 6);
      const gq = tensor([3, 8, 8], 7);
      let model = attn.createTinyTransformer(tinyOptions);
      const initial = model.stateDict();
      const mha = attn.createMultiHeadAttention({ embedDim: E, numHeads: 4, batchFirst: true });
      mha.loadStateDict(randomStateDict(E));

      const expectThrow = throwCounter();
      const step = (i) => {
        switch (i % 10) {
          case 0:
            model.trainStep(tokens, targets, { lr: 1e-3 });
            break;
          case 1: // C++-side error after the tokens were copied in
            expectThrow(() =>
              model.trainStep({ data: Int32Array.of(0, 1, 12), shape: [1, 3] }, { data: ids(3, 0), shape: [1, 3] }),
            );
            break;
          case 2:
            model.lossAndGrad(tokens, targets);
            expectThrow(() => model.lossAndGrad(tokens, { data: new Float32Array(128), shape: [16, 8] })); // JS-side
            break;
          case 3:
            model.forward(tokens);
            break;
          case 4: // forward with requiresGrad, backward, and a backward of the wrong shape
            mha.forward(x, y, y, { requiresGrad: true });
            mha.backward(gx);
            expectThrow(() => mha.backward(tensor([2, 6, E], 8)));
            break;
          case 5:
            attn.scaledDotProductAttentionBackward(q, kk, v, gq, { isCausal: true });
            expectThrow(() => attn.scaledDotProductAttentionBackward(q, kk, v, tensor([3, 8, 9], 9)));
            break;
          case 6: // a state dict round trip (resets Adam), and a bad load
            model.loadStateDict(initial);
            expectThrow(() => model.loadStateDict({ ...initial, 'readout.bias': new Float32Array(V + 1) }));
            break;
          case 7: // state error: backward after loadStateDict
            mha.loadStateDict(randomStateDict(E));
            expectThrow(() => mha.backward(gx));
            break;
          case 8: // constructor errors, and a create / dispose cycle
            expectThrow(() => attn.createTinyTransformer({ ...tinyOptions, embedDim: 15, numHeads: 1 }));
            if (i % 100 === 8) {
              model.dispose();
              model = attn.createTinyTransformer(tinyOptions);
            }
            break;
          default:
            model.stateDict();
            expectThrow(() => model.trainStep(tokens, targets, { lr: 0 }));
        }
      };

      try {
        const what = `memory [${variant}]: ${kTrainCalls} backward/training calls`;
        assertNoGrowth(attn, Module, what, {
          step,
          expectThrow,
          warmups: 300,
          calls: kTrainCalls,
          headroom: kTrainHeadroom,
        });
      } finally {
        model.dispose();
        mha.dispose();
      }
    });
  });
}
