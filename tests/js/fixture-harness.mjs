// The harness of the PyTorch fixture suites (fixtures, backward, train tests): one describe block per wasm
// variant that loads the instance, runs every fixture as its own test and counts what passed, and the fixture
// config → JS option conversions those suites share.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';

import { init } from '../../dist/index.mjs';
import { VARIANTS, fixtureTensor } from './helpers.mjs';

/**
 * For each variant: a describe block `${title}, ${variant} build` with an init test, then one test per fixture
 * running check(attn, fx) (which asserts, and may return the number of tensors it compared), then more(getAttn,
 * variant) for further tests that share the instance. After all tests, logs summary(variant, counts) per variant,
 * counts being { passed, failed, tensors }.
 */
export function describeFixtures(title, fixtures, check, { summary, more } = {}) {
  const counts = {};
  after(() => {
    for (const variant of VARIANTS)
      console.log(summary(variant, counts[variant] ?? { passed: 0, failed: 0, tensors: 0 }));
  });
  for (const variant of VARIANTS) {
    describe(`${title}, ${variant} build`, () => {
      const c = (counts[variant] = { passed: 0, failed: 0, tensors: 0 });
      let attn;
      test(`init({ variant: '${variant}' })`, async () => {
        attn = await init({ variant });
        assert.equal(attn.variant, variant);
      });
      for (const fx of fixtures) {
        test(fx.name, () => {
          assert.ok(attn, 'instance loaded');
          try {
            c.tensors += check(attn, fx) ?? 0;
            c.passed++;
          } catch (e) {
            c.failed++;
            throw e;
          }
        });
      }
      more?.(() => attn, variant);
    });
  }
}

/** A fixture's nn.MultiheadAttention config as createMultiHeadAttention options. */
export function mhaOptions(config) {
  return {
    embedDim: config.embed_dim,
    numHeads: config.num_heads,
    bias: config.bias,
    addBiasKV: config.add_bias_kv,
    addZeroAttn: config.add_zero_attn,
    kdim: config.kdim,
    vdim: config.vdim,
    batchFirst: config.batch_first,
  };
}

/** A fixture's params section as a state dict of attnlab Tensors. */
export function fixtureParams(fx) {
  return Object.fromEntries(Object.entries(fx.params).map(([name, t]) => [name, fixtureTensor(t)]));
}
