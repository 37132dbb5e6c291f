// No leaks: 10,000 calls per variant (SDPA and MHA forwards, with JS-side and C++-side errors interleaved, and
// MultiHeadAttention objects created and disposed) leave the wasm memory size unchanged after warm-up.
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
const kHeadroom = 2 * 1024 * 1024;
const kBallastBlock = 64 * 1024;

// The raw Emscripten module, for the ballast only (tests may look inside; users never do).
async function rawModule(variant) {
  const { loadModule } = await import('../../dist/loader.mjs');
  return (await loadModule({ variant })).Module;
}

/** Allocates blocks until the heap grew once, then until ~kHeadroom bytes are free. Returns the pointers. */
function fillHeap(Module, memoryBytes) {
  const blocks = [];
  const start = memoryBytes();
  while (memoryBytes() === start) {
    const p = Module._malloc(kBallastBlock) >>> 0;
    assert.notEqual(p, 0, 'ballast allocation');
    blocks.push(p);
  }
  // The last block made the heap grow by `grown` bytes: fill all of that but kHeadroom.
  for (;;) {
    const size = memoryBytes();
    const grown = size - start;
    const fill = Math.floor((grown - kHeadroom) / kBallastBlock) - 1;
    for (let i = 0; i < fill; ++i) blocks.push(Module._malloc(kBallastBlock) >>> 0);
    if (memoryBytes() === size) return blocks; // no further growth: the free heap is now about kHeadroom
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

      let errors = 0;
      const expectThrow = (fn) => {
        try {
          fn();
        } catch {
          ++errors;
          return;
        }
        assert.fail('expected a throw');
      };
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
            expectThrow(() => attn.scaledDotProductAttention(q, kk, { data: new Float64Array(3 * 24 * 32), shape: [3, 24, 32] }));
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

      for (let i = 0; i < 500; ++i) step(i); // warm-up
      const ballast = fillHeap(Module, () => attn.memoryBytes());
      const before = attn.memoryBytes();
      errors = 0;
      try {
        for (let i = 0; i < kCalls; ++i) step(i);
        const after = attn.memoryBytes();
        console.log(
          `memory [${variant}]: ${kCalls} calls (${errors} errors): ${before} bytes before, ${after} after ` +
            `(ballast leaves ~${kHeadroom} bytes free)`,
        );
        assert.equal(after, before, 'wasm memory grew: something leaks');
        assert.ok(errors >= kCalls / 2, 'errors were interleaved');
      } finally {
        for (const p of ballast) Module._free(p);
        mha.dispose();
      }
    });
  });
}
