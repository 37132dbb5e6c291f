// The model bench's shared pieces (wasm.mjs, native.mjs, report.mjs): cases and knobs, the token ids, byte and
// flop counts of a GPT-2 forward, and the round-robin timing loop.
import fs from 'node:fs';
import path from 'node:path';

import { makeRng } from '../../../tests/js/rng.mjs';
import { median } from '../stats.mjs';
import { modelDir } from './files.mjs';

export const QUICK = process.env.BENCH_QUICK === '1';
const list = (name, dflt) => (process.env[name] ? process.env[name].split(',').map(Number) : dflt);
/** Prefill lengths (every layer's attention returned). */
export const PREFILL_T = list('BENCH_MODEL_PREFILL', QUICK ? [32] : [128, 512]);
/** Decode contexts: the steps attend to C − ROUNDS·STEPS + 1 … C keys (the last one at C). */
export const DECODE_C = list('BENCH_MODEL_DECODE', QUICK ? [64] : [128, 512, 1024]);
export const STEPS = 8; // timed one-token steps per implementation per round
export const DECODE_ROUNDS = Number(process.env.BENCH_MODEL_DECODE_ROUNDS ?? (QUICK ? 2 : 4));
/** Timed prefill rounds: at least this many; short cases get more (up to PREFILL_ROUNDS_MAX) within ~60 s. */
export const PREFILL_ROUNDS = Number(process.env.BENCH_MODEL_ROUNDS ?? (QUICK ? 2 : 5));
export const PREFILL_ROUNDS_MAX = 12;
export const TOL_LOGITS = 2e-3; // max |Δ| of logits (|logits| ≲ 3 here) against attnlab-simd's
export const TOL_ATTN = 1e-4; // max |Δ| of attention probabilities
export const TOKEN_SEED = 4242;

export function readConfig() {
  return JSON.parse(fs.readFileSync(path.join(modelDir, 'config.json'), 'utf8'));
}

/** The token ids every implementation runs on: n ids in [0, V), seeded. */
export function tokenIds(n, V) {
  const rng = makeRng(TOKEN_SEED);
  return Int32Array.from({ length: n }, () => Math.floor(rng() * V));
}

/** Sizes of a GPT-2 config.json. */
export function dims(hf) {
  const E = hf.n_embd;
  const H = hf.n_head;
  return { V: hf.vocab_size, P: hf.n_positions, E, L: hf.n_layer, H, D: E / H };
}

/** Flops of a T-token prefill: the GEMMs (24·T·E² per layer + the LM head 2·T·E·V) and the attention over the
 *  T(T+1)/2 visible query-key pairs (QKᵀ and PV: 2·T(T+1)·E per layer). */
export function prefillFlops(hf, T) {
  const { V, E, L } = dims(hf);
  const gemm = 24 * T * E * E * L + 2 * T * E * V;
  const attention = 2 * T * (T + 1) * E * L;
  return { gemm, attention, total: gemm + attention };
}

/** Bytes a one-token step must read at least: every weight once (float32; of the embeddings only the LM head's
 *  V × E matrix and one position row) and K and V of `keys` cached positions in every layer. */
export function decodeBytes(hf, keys, bytesPerWeight = 4) {
  const { V, E, L } = dims(hf);
  const perLayer = E * 3 * E + 3 * E + E * E + E + 4 * E * E + 4 * E + 4 * E * E + E + 4 * E; // + norms below
  const weights = (L * perLayer + V * E + E + 2 * E) * bytesPerWeight;
  const cache = 2 * L * E * keys * 4;
  return { weights, cache, total: weights + cache };
}

export function summarize(times) {
  if (!times.length) return {};
  return {
    medianMs: median(times),
    minMs: Math.min(...times),
    maxMs: Math.max(...times),
    runs: times.length,
  };
}

/** Median over rounds of a's time ÷ b's time in the same round (times aligned by round). */
export function pairedRatio(aTimes, bTimes) {
  const n = Math.min(aTimes.length, bTimes.length);
  if (!n) return null;
  return median(Array.from({ length: n }, (_, i) => aTimes[i] / bTimes[i]));
}

/** Rounds of `live` entries, each run once per round by `runOne(entry, round)`, the start rotating per round. */
export async function roundRobin(live, rounds, runOne, { warmups = 0 } = {}) {
  for (let rep = -warmups; rep < rounds; ++rep) {
    const start = ((rep % live.length) + live.length) % live.length;
    for (let j = 0; j < live.length; ++j) await runOne(live[(start + j) % live.length], rep);
  }
}

export const fmt = (x, digits = 2) => (x === null || x === undefined || !Number.isFinite(x) ? '—' : x.toFixed(digits));

// Clocks of one timed call. On a shared machine the wall time includes the neighbours' share of the CPU; the CPU
// time is what the call itself ran: the main thread's (Linux schedstat: ns on the CPU, and ns waiting for it) for the
// peers that compute on the JS thread, the whole process's (process.cpuUsage: every thread) for the others.
const schedstat = `/proc/self/task/${process.pid}/schedstat`;
export function clocks() {
  let run = NaN;
  let wait = NaN;
  try {
    [run, wait] = fs.readFileSync(schedstat, 'utf8').split(' ').map(Number);
  } catch {
    // not Linux: wall and process CPU only
  }
  const c = process.cpuUsage();
  return { wall: performance.now(), mainRun: run / 1e6, mainWait: wait / 1e6, proc: (c.user + c.system) / 1e3 };
}
/** ms since `a`: { ms (wall), mainCpuMs, waitMs (main thread runnable but not running), procCpuMs }. */
export function since(a) {
  const b = clocks();
  return {
    ms: b.wall - a.wall,
    mainCpuMs: b.mainRun - a.mainRun,
    waitMs: b.mainWait - a.mainWait,
    procCpuMs: b.proc - a.proc,
  };
}

/** Copy bandwidth of a TypedArray.set over `bytes` (read + written bytes per second), best of `trials`, by the wall
 *  clock and by the JS thread's CPU time: { wall, cpu } (cpu NaN where schedstat is missing). */
export function copyBandwidth2(bytes, { seconds = 1, trials = 4 } = {}) {
  const n = Math.max(1024, Math.floor(bytes / 4));
  const src = new Float32Array(n).fill(1);
  const dst = new Float32Array(n);
  let wall = 0;
  let cpu = 0;
  for (let t = 0; t < trials; ++t) {
    let reps = 0;
    const c0 = clocks();
    let d;
    do {
      dst.set(src);
      ++reps;
      d = since(c0);
    } while (d.ms < (seconds * 1e3) / trials);
    wall = Math.max(wall, (8 * n * reps) / (d.ms / 1e3));
    cpu = Math.max(cpu, (8 * n * reps) / (d.mainCpuMs / 1e3));
  }
  return { wall, cpu };
}

/**
 * attnlab's one-token decoder of the benchmark: a KV cache of `maxLength`, filled with tokens [0, n) (last logits
 * only), then one token per step.
 * @param {any} model a Transformer
 * @param {(from: number, to: number) => object} toks the benchmark's tokens [from, to) as a (1, to − from) tensor
 * @param {number} maxLength
 */
export function cacheDecoder(model, toks, maxLength) {
  const cache = model.createKVCache({ batchSize: 1, maxLength });
  let pos = 0;
  return {
    fill(/** @type {number} */ n) {
      cache.reset();
      model.forward(toks(0, n), { kvCache: cache, lastLogitsOnly: true });
      pos = n;
    },
    step() {
      const r = model.forward(toks(pos, pos + 1), { kvCache: cache });
      pos += 1;
      return r.logits.data;
    },
    dispose: () => cache.dispose(),
  };
}
