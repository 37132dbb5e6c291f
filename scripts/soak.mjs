#!/usr/bin/env node
// Soak test of the public API (dist/index.mjs) against every wasm variant of wasm-variants.json (the threaded one
// with its default pool: one thread per core, at most 4):
//   node scripts/soak.mjs [calls=100000] [--seed=N] [--sample=0.05] [--variants=simd-threaded,simd,scalar] [--quiet]
// Runs `calls` mixed random calls per variant: valid and invalid SDPA, MHA create / loadStateDict / forward /
// stateDict / dispose (and backward where the build has it), calls after dispose, NaN/Inf inputs. Checks:
//   * every invalid call throws the documented class (TypeError / RangeError / Error) naming the argument, and
//     never an internal failure (trap, abort);
//   * every valid call returns the documented shapes; a `sample` share is compared with a float64 reference
//     (tests/js/reference.mjs); NaN in one batch item never reaches another;
//   * wasm memory (attn.memoryBytes()) at start, after warm-up and at the end: it must not grow after warm-up.
// Exit status 0 when everything held, 1 otherwise. Also used by tests/js/soak.test.mjs (runSoak).
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

import { init } from '../dist/index.mjs';
import { mhaRef, sdpaRef, size } from '../tests/js/reference.mjs';
import { makeRng } from '../tests/js/rng.mjs';
import {
  mismatch,
  parameterShapes,
  randomMhaCase,
  randomMhaConfig,
  randomSdpaCase,
} from '../tests/js/robustness-helpers.mjs';

const kMaxLiveModules = 8;
const kVariantNames = JSON.parse(readFileSync(new URL('../wasm-variants.json', import.meta.url), 'utf8')).variants.map(
  (v) => v.name,
);

/** An invalid variant of a valid SDPA case: [args, expected error class, pattern naming the argument]. */
function corruptSdpa(rng, c) {
  const { q, k, v, options } = c;
  const t = (data, shape) => ({ data, shape });
  // One invalid call a line, read as a table (so Prettier leaves it).
  // prettier-ignore
  const kinds = [
    () => [[t(Array.from(q.data), q.shape), k, v, options], TypeError, /query/],
    () => [[q, t(new Float64Array(k.data.length), k.shape), v, options], TypeError, /key/],
    () => [[q, k, t(v.data, [...v.shape, 2]), options], RangeError, /value/],
    () => [[t(new Float32Array(q.data.length + 1), q.shape), k, v, options], RangeError, /query/],
    () => [[q, t(k.data, k.shape.map((d, i) => (i === 0 ? -1 : d))), v, options], RangeError, /key/],
    () => [[q, k, v, { ...options, scale: NaN }], RangeError, /scale/],
    () => [[q, k, v, { ...options, isCausal: 1 }], TypeError, /isCausal/],
    () => [[q, k, v, { ...options, attnMask: { data: new Int32Array(4), shape: [2, 2] } }], TypeError, /attnMask/],
    // Lq + 2 rows never broadcast to Lq (Lq + 1 would when Lq = 0: a mask of 1 row broadcasts).
    () => [[q, k, v, { ...options, attnMask: { data: new Uint8Array(size([q.shape.at(-2) + 2, k.shape.at(-2)])), shape: [q.shape.at(-2) + 2, k.shape.at(-2)] } }], RangeError, /attnMask/],
    () => [[q, k, v, { ...options, bogus: 1 }], TypeError, /bogus/],
    () => [[null, k, v, options], TypeError, /query/],
    () => [[q, k, t(v.data, [2 ** 31, ...v.shape.slice(1)]), options], RangeError, /value/],
  ];
  if (q.shape.length >= 2 && q.shape.at(-1) !== k.shape.at(-1) + 1) {
    kinds.push(() => {
      const shape = [...k.shape.slice(0, -1), k.shape.at(-1) + 1];
      return [[q, t(new Float32Array(size(shape)), shape), v, options], RangeError, /key|query/];
    });
  }
  return rng.pick(kinds)();
}

/** Sprinkles NaN / ±Inf into one batch item of an SDPA case; returns that item (or -1). */
function poisonSdpa(rng, c) {
  const r = c.q.shape.length;
  const batch = size(c.q.shape.slice(0, r - 2));
  if (batch < 2) return -1;
  const item = rng.int(0, batch - 1);
  const which = rng.pick([c.q, c.k, c.v]);
  const per = which.data.length / batch;
  if (per === 0) return -1;
  which.data[item * per + rng.int(0, per - 1)] = rng.pick([NaN, Infinity, -Infinity]);
  return item;
}

/** Per batch item, is every value finite? (output rows of clean items must stay finite). */
function cleanItemsFinite(result, batch, item) {
  const per = result.output.data.length / Math.max(batch, 1);
  for (let b = 0; b < batch; ++b) {
    if (b === item) continue;
    for (let i = b * per; i < (b + 1) * per; ++i) if (!Number.isFinite(result.output.data[i])) return false;
  }
  return true;
}

/** How a forward result differs from its reference (the weights only where asked for), or null. */
function resultMismatch(r, ref, options) {
  const weights =
    options.needWeights === false ? (r.weights ? 'weights returned' : null) : mismatch(r.weights, ref.weights);
  return mismatch(r.output, ref.output) || weights;
}

/**
 * What one variant's run shares between its calls.
 * @typedef {{ attn: any, rng: any, sample: number, stats: any, live: any[], disposed: any[], fail: (what: string) => void,
 *   expectError: (op: string, fn: () => unknown, Class: Function, pattern: RegExp) => void,
 *   guard: (op: string, fn: () => any) => any, hasBackward: () => boolean }} SoakState
 */

/**
 * The shared state of one variant's run, with its checks: expectError (an invalid call must throw the documented
 * class naming the argument, never an internal failure) and guard (a valid call must not throw).
 */
function soakState(attn, rng, sample) {
  const stats = { calls: 0, valid: 0, invalid: 0, checked: 0, poisoned: 0, byOp: {}, failures: [] };
  const fail = (what) => {
    if (stats.failures.length < 20) stats.failures.push(what);
  };
  const live = []; // { mha, config, params }
  const disposed = [];
  const hasBackward = () => live.length > 0 && typeof live[0].mha.backward === 'function';
  const expectError = (op, fn, Class, pattern) => {
    stats.invalid += 1;
    try {
      fn();
    } catch (e) {
      if (
        !(e instanceof Error) ||
        e.constructor !== Class ||
        !pattern.test(e.message) ||
        /internal failure/.test(e.message)
      ) {
        fail(`${op}: expected ${Class.name} matching ${pattern}, got ${e?.constructor?.name}: ${e?.message}`);
      }
      return;
    }
    fail(`${op}: expected ${Class.name} matching ${pattern}, but the call returned`);
  };
  const guard = (op, fn) => {
    try {
      return fn();
    } catch (e) {
      fail(`${op}: a valid call threw ${e?.constructor?.name}: ${e?.message}`);
      return undefined;
    }
  };

  return { attn, rng, sample, stats, live, disposed, fail, expectError, guard, hasBackward };
}

/**
 * An SDPA call: a corrupted one (its error), a valid one checked for shape, against the reference, or with NaN/Inf in one item.
 * @param {SoakState} s
 */
function sdpaCall(s) {
  const { attn, rng, sample, stats, fail, expectError, guard } = s;
  const op = 'sdpa';
  const c = randomSdpaCase(rng);
  if (rng.bool(0.25)) {
    const [args, Class, pattern] = corruptSdpa(rng, c);
    expectError(op, () => attn.scaledDotProductAttention(...args), Class, pattern);
  } else {
    stats.valid += 1;
    const poisoned = rng.bool(0.1) ? poisonSdpa(rng, c) : -1;
    const r = guard(op, () => attn.scaledDotProductAttention(c.q, c.k, c.v, c.options));
    if (!r) return;
    const ref = poisoned < 0 && rng.bool(sample) ? sdpaRef(c.q, c.k, c.v, c.options) : null;
    if (poisoned >= 0) {
      stats.poisoned += 1;
      const batch = size(c.q.shape.slice(0, -2));
      if (!cleanItemsFinite(r, batch, poisoned)) fail(`sdpa: NaN/Inf in batch item ${poisoned} reached another item`);
    } else if (ref) {
      stats.checked += 1;
      const m = resultMismatch(r, ref, c.options);
      if (m)
        fail(`sdpa: mismatch with the reference: ${m} (shapes ${JSON.stringify([c.q.shape, c.k.shape, c.v.shape])})`);
    } else {
      const want = [...c.q.shape.slice(0, -1), c.v.shape.at(-1)];
      if (JSON.stringify(r.output.shape) !== JSON.stringify(want))
        fail(`sdpa: output shape ${r.output.shape}, expected ${want}`);
    }
  }
}

/**
 * Creating a module: a bad config (its error) or a valid one (the oldest live module disposed past kMaxLiveModules).
 * @param {SoakState} s
 */
function createCall(s) {
  const { attn, rng, stats, live, disposed, expectError, guard } = s;
  const op = 'create';
  if (rng.bool(0.2)) {
    const bad = rng.pick([
      [{ embedDim: 6, numHeads: 4 }, RangeError, /embedDim|numHeads/],
      [{ embedDim: 0, numHeads: 1 }, RangeError, /embedDim/],
      [{ embedDim: 8, numHeads: 2, kdim: 2.5 }, RangeError, /kdim/],
      [{ embedDim: '8', numHeads: 2 }, TypeError, /embedDim/],
      [{ embedDim: 8, numHeads: 2, addBiasKV: 1 }, TypeError, /addBiasKV/],
      [{ embedDim: 2 ** 20, numHeads: 1 }, RangeError, /embedDim/],
    ]);
    expectError(op, () => attn.createMultiHeadAttention(bad[0]), bad[1], bad[2]);
  } else {
    stats.valid += 1;
    if (live.length >= kMaxLiveModules) {
      const victim = live.splice(rng.int(0, live.length - 1), 1)[0];
      victim.mha.dispose();
      disposed.push(victim.mha);
      if (disposed.length > 4) disposed.shift();
    }
    const config = randomMhaConfig(rng);
    const mha = guard(op, () => attn.createMultiHeadAttention(config));
    if (mha) live.push({ mha, config, params: null });
  }
}

/**
 * Loading random parameters into a live module: a broken state dict (its error, the parameters unchanged) or a valid one.
 * @param {SoakState} s
 */
function loadStateDictCall(s) {
  const { rng, stats, live, fail, expectError, guard } = s;
  const op = 'loadStateDict';
  if (live.length === 0) return;
  const m = rng.pick(live);
  const own = {};
  for (const [name, shape] of Object.entries(parameterShapes(m.config))) {
    own[name] = { data: rng.floats(size(shape), -0.7, 0.7), shape };
  }
  if (rng.bool(0.3)) {
    const victim = rng.pick(Object.keys(own));
    const named = new RegExp(victim.replace('.', '\\.'));
    const bad = rng.pick([
      () => [{ ...own, [victim]: undefined }, TypeError, named],
      () => {
        const d = { ...own };
        delete d[victim];
        return [d, RangeError, named];
      },
      () => [{ ...own, bogus_weight: new Float32Array(3) }, RangeError, /bogus_weight/],
      () => [{ ...own, [victim]: new Float32Array(size(own[victim].shape) + 1) }, RangeError, named],
      () => [{ ...own, [victim]: { data: own[victim].data, shape: [...own[victim].shape, 1] } }, RangeError, named],
    ])();
    const before = m.params ? m.mha.stateDict() : null;
    expectError(op, () => m.mha.loadStateDict(bad[0]), bad[1], bad[2]);
    if (before) {
      const after = m.mha.stateDict();
      for (const name of Object.keys(before)) {
        if (mismatch(after[name], before[name], { atol: 0, rtol: 0 }))
          fail(`loadStateDict: a rejected load changed ${name}`);
      }
    }
  } else {
    stats.valid += 1;
    if (guard(op, () => (m.mha.loadStateDict(own), true))) m.params = own;
  }
}

/**
 * A forward call of a live module: a broken one (its error) or a valid one, sometimes with backward, sometimes checked.
 * @param {SoakState} s
 */
function forwardCall(s) {
  const { rng, sample, stats, live, fail, expectError, guard, hasBackward } = s;
  const op = 'forward';
  if (live.length === 0) return;
  const m = rng.pick(live);
  const c = randomMhaCase(rng, { config: m.config }); // a forward call for this module's config
  if (rng.bool(0.2)) {
    const bad = rng.pick([
      () => [[{ data: c.query.data, shape: [...c.query.shape, 1] }, c.key, c.value, c.options], RangeError, /query/],
      () => [
        [c.query, c.key, c.value, { ...c.options, keyPaddingMask: { data: new Float64Array(1), shape: [1] } }],
        TypeError,
        /keyPaddingMask/,
      ],
      () => [
        [c.query, c.key, c.value, { ...c.options, attnMask: { data: new Uint8Array(7), shape: [7] } }],
        RangeError,
        /attnMask/,
      ],
      () => [[c.query, c.key, c.value, { ...c.options, averageAttnWeights: 'no' }], TypeError, /averageAttnWeights/],
      () => [
        [
          c.query,
          { data: c.key.data, shape: c.key.shape.map((d, i, a) => (i === a.length - 1 ? d + 1 : d)) },
          c.value,
          c.options,
        ],
        RangeError,
        /key/,
      ],
    ])();
    expectError(op, () => m.mha.forward(...bad[0]), bad[1], bad[2]);
  } else {
    stats.valid += 1;
    const options = { ...c.options };
    if (hasBackward() && rng.bool(0.2)) options.requiresGrad = true;
    const r = guard(op, () => m.mha.forward(c.query, c.key, c.value, options));
    if (!r) return;
    if (JSON.stringify(r.output.shape) !== JSON.stringify(c.query.shape))
      fail(`forward: output shape ${r.output.shape}`);
    if (options.requiresGrad) {
      const g = { data: rng.floats(r.output.data.length), shape: r.output.shape };
      stats.byOp.backward = (stats.byOp.backward ?? 0) + 1;
      const grads = guard('backward', () => m.mha.backward(g));
      if (grads && JSON.stringify(grads.gradQuery.shape) !== JSON.stringify(c.query.shape))
        fail('backward: gradQuery shape');
    }
    if (m.params && rng.bool(sample)) {
      stats.checked += 1;
      const ref = mhaRef(m.config, m.params, c.query, c.key, c.value, c.options);
      const mm = resultMismatch(r, ref, c.options);
      if (mm) fail(`forward: mismatch with the reference: ${mm} (config ${JSON.stringify(m.config)})`);
    }
  }
}

/**
 * stateDict() of a live module: what was loaded comes back.
 * @param {SoakState} s
 */
function stateDictCall(s) {
  const { rng, stats, live, fail, guard } = s;
  const op = 'stateDict';
  if (live.length === 0) return;
  const m = rng.pick(live);
  stats.valid += 1;
  const sd = guard(op, () => m.mha.stateDict());
  if (sd && m.params) {
    for (const [name, t] of Object.entries(m.params)) {
      if (mismatch(sd[name], t, { atol: 0, rtol: 0 })) fail(`stateDict: ${name} differs from what was loaded`);
    }
  }
}

/**
 * Disposing a live module (sometimes twice: idempotent).
 * @param {SoakState} s
 */
function disposeCall(s) {
  const { rng, stats, live, disposed, guard } = s;
  const op = 'dispose';
  if (live.length === 0) return;
  const victim = live.splice(rng.int(0, live.length - 1), 1)[0];
  stats.valid += 1;
  guard(op, () => victim.mha.dispose());
  if (rng.bool(0.3)) guard(op, () => victim.mha.dispose()); // idempotent
  disposed.push(victim.mha);
  if (disposed.length > 4) disposed.shift();
}

/**
 * Any call on a disposed module: an Error naming the disposal.
 * @param {SoakState} s
 */
function afterDisposeCall(s) {
  const { rng, disposed, expectError } = s;
  const op = 'afterDispose';
  if (disposed.length === 0) return;
  const m = rng.pick(disposed);
  const call = rng.pick([
    () =>
      m.forward(
        { data: new Float32Array(0), shape: [0, 1, 1] },
        { data: new Float32Array(0), shape: [0, 1, 1] },
        { data: new Float32Array(0), shape: [0, 1, 1] },
      ),
    () => m.stateDict(),
    () => m.loadStateDict({}),
  ]);
  expectError(op, call, Error, /disposed/);
}

/**
 * One random call; returns its operation's name.
 * @param {SoakState} s
 */
function step(s) {
  const roll = s.rng();
  const ops = [
    [0.35, 'sdpa', sdpaCall],
    [0.45, 'create', createCall],
    [0.55, 'loadStateDict', loadStateDictCall],
    [0.85, 'forward', forwardCall],
    [0.9, 'stateDict', stateDictCall],
    [0.95, 'dispose', disposeCall],
    [Infinity, 'afterDispose', afterDisposeCall],
  ];
  const [, op, call] = ops.find(([p]) => roll < p);
  call(s);
  return op;
}

export async function runSoak({
  calls = 100000,
  seed = 1,
  sample = 0.05,
  variants = kVariantNames,
  log = console.log,
} = {}) {
  const report = { ok: true, variants: {} };
  for (const variant of variants) {
    const attn = await init({ variant });
    const s = soakState(attn, makeRng(seed), sample);
    const { stats, live, fail } = s;
    // Warm-up: the biggest calls the generator makes, then a tenth of the run.
    const start = attn.memoryBytes();
    const warmup = Math.max(1000, Math.floor(calls / 10));
    const big = makeRng(seed + 1);
    for (let i = 0; i < 20; ++i) {
      const c = randomSdpaCase(big, { maxDim: 8 });
      const sz = (d) => ({ data: big.floats(size(d)), shape: d });
      attn.scaledDotProductAttention(sz([3, 3, 33, 33]), sz([3, 3, 33, 33]), sz([3, 3, 33, 33]), {
        attnMask: { data: new Float32Array(3 * 3 * 33 * 33), shape: [3, 3, 33, 33] },
      });
      void c;
    }
    let afterWarmup = start;
    for (let i = 0; i < calls; ++i) {
      if (i === warmup) afterWarmup = attn.memoryBytes();
      const op = step(s);
      stats.calls += 1;
      stats.byOp[op] = (stats.byOp[op] ?? 0) + 1;
    }
    if (calls <= warmup) afterWarmup = attn.memoryBytes();
    for (const m of live) m.mha.dispose();
    const end = attn.memoryBytes();
    const grew = end > afterWarmup;
    if (grew) fail(`wasm memory grew after warm-up: ${afterWarmup} -> ${end} bytes`);
    const ok = stats.failures.length === 0;
    report.ok = report.ok && ok;
    report.variants[variant] = { ...stats, memory: { start, afterWarmup, end } };
    log(
      `soak ${variant}: ${stats.calls} calls (${stats.valid} valid, ${stats.invalid} invalid, ${stats.poisoned} with NaN/Inf, ` +
        `${stats.checked} checked against the float64 reference); by operation ${JSON.stringify(stats.byOp)}`,
    );
    log(
      `soak ${variant}: wasm memory ${start} bytes at start, ${afterWarmup} after warm-up, ${end} at the end${grew ? ' (GREW)' : ''}`,
    );
    for (const f of stats.failures) log(`soak ${variant}: FAILURE ${f}`);
  }
  return report;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const opt = (name, def) => {
    const a = args.find((x) => x.startsWith(`--${name}=`));
    return a ? a.slice(name.length + 3) : def;
  };
  const calls = Number(args.find((x) => /^\d+$/.test(x)) ?? 100000);
  const t0 = performance.now();
  const report = await runSoak({
    calls,
    seed: Number(opt('seed', 1)),
    sample: Number(opt('sample', 0.05)),
    variants: opt('variants', 'simd,scalar').split(','),
    log: args.includes('--quiet') ? () => {} : console.log,
  });
  console.log(`soak: ${report.ok ? 'PASSED' : 'FAILED'} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  process.exit(report.ok ? 0 : 1);
}
