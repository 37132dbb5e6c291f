#!/usr/bin/env node
// Count-based baselines for the couplet model (issue 34 §1; docs/couplet-model.md, "Baselines"): how well the lower
// line's characters are predicted without a network. Fitted on the Song training pairs; each smoothing weight chosen
// on the Song validation pairs; reported on validation and on the Tang test pairs, per couplet k (1 首联 … 4 尾联).
//
//   node scripts/couplet/baselines.mjs [--data DIR]     (default <cache>/couplet/data, from prepare.mjs)
//
// Targets: the lower line's n characters (not [EOS]: the line's length is given by the upper line). In nats per
// character, with the argmax's exact-character accuracy:
//   unigram   p(c) = (count(c) + α) / (N + α·V)
//   bigram    λ·p(c | previous lower character, or the line start) + (1 − λ)·unigram
//   aligned   λ·p(c | the upper line's character at the same position) + (1 − λ)·unigram: the diagonal alignment
//             of a parallel couplet, as a lookup table (秦 → 函 is learned only if it was seen)
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultCache } from '../poems/cache.mjs';

const ALPHAS = [0.001, 0.01, 0.1, 1];
const LAMBDAS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];
const START = -1; // the bigram context of a line's first character

/**
 * The pairs of a <split>.u16 file (little-endian uint16 per pair: n, k, n upper ids, n lower ids).
 * @param {Uint8Array} bytes
 * @returns {{ k: number, upper: number[], lower: number[] }[]}
 */
export function readPairs(bytes) {
  if (bytes.byteLength % 2) throw new Error(`a .u16 file of ${bytes.byteLength} bytes (odd)`);
  const ids = new Uint16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const out = [];
  for (let i = 0; i < ids.length;) {
    const n = ids[i];
    if (n < 1 || i + 2 + 2 * n > ids.length) throw new Error(`a pair of length ${n} at ${i} runs past the file`);
    out.push({
      k: ids[i + 1],
      upper: [...ids.subarray(i + 2, i + 2 + n)],
      lower: [...ids.subarray(i + 2 + n, i + 2 + 2 * n)],
    });
    i += 2 + 2 * n;
  }
  return out;
}

/** Counts of the training pairs: unigram, and per context (previous lower character; aligned upper character). */
export function fitCounts(pairs) {
  const unigram = new Map();
  const bigram = new Map();
  const aligned = new Map();
  const bump = (m, key, c) => {
    if (!m.has(key)) m.set(key, { total: 0, next: new Map() });
    const e = m.get(key);
    e.total += 1;
    e.next.set(c, (e.next.get(c) ?? 0) + 1);
  };
  let total = 0;
  for (const { upper, lower } of pairs) {
    lower.forEach((c, i) => {
      unigram.set(c, (unigram.get(c) ?? 0) + 1);
      total += 1;
      bump(bigram, i === 0 ? START : lower[i - 1], c);
      bump(aligned, upper[i], c);
    });
  }
  return { unigram, total, bigram, aligned };
}

/**
 * One baseline's probability of c at position i of a pair, and its argmax.
 * @param {ReturnType<typeof fitCounts>} counts
 * @param {'unigram' | 'bigram' | 'aligned'} kind
 * @param {{ alpha: number, lambda: number, V: number }} p
 */
export function baseline(counts, kind, { alpha, lambda, V }) {
  const uni = (c) => ((counts.unigram.get(c) ?? 0) + alpha) / (counts.total + alpha * V);
  const top = [...counts.unigram].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0][0];
  if (kind === 'unigram') return { prob: (pair, i, c) => uni(c), argmax: () => top };
  const table = kind === 'bigram' ? counts.bigram : counts.aligned;
  const context = kind === 'bigram' ? (pair, i) => (i === 0 ? START : pair.lower[i - 1]) : (pair, i) => pair.upper[i];
  const best = new Map(
    [...table].map(([key, e]) => [key, [...e.next].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0][0]]),
  );
  const prob = (pair, i, c) => {
    const e = table.get(context(pair, i));
    return lambda * (e ? (e.next.get(c) ?? 0) / e.total : 0) + (e ? 1 - lambda : 1) * uni(c);
  };
  return { prob, argmax: (pair, i) => best.get(context(pair, i)) ?? top };
}

/** Mean −ln p per lower character and the argmax's accuracy, overall and per couplet k. */
export function evaluate(model, pairs) {
  const acc = new Map();
  const add = (key, nll, hit) => {
    const a = acc.get(key) ?? { nll: 0, hits: 0, n: 0 };
    acc.set(key, { nll: a.nll + nll, hits: a.hits + hit, n: a.n + 1 });
  };
  for (const pair of pairs) {
    pair.lower.forEach((c, i) => {
      const nll = -Math.log(model.prob(pair, i, c));
      const hit = model.argmax(pair, i) === c ? 1 : 0;
      add('all', nll, hit);
      add(`k${pair.k}`, nll, hit);
    });
  }
  const round = (x) => Number(x.toFixed(4));
  return Object.fromEntries(
    [...acc]
      .sort()
      .map(([key, a]) => [key, { loss: round(a.nll / a.n), accuracy: round(a.hits / a.n), characters: a.n }]),
  );
}

/** Each baseline with its smoothing chosen on validation, evaluated on validation and test. */
export function baselines(train, validation, test, V) {
  const counts = fitCounts(train);
  const loss = (kind, p) => evaluate(baseline(counts, kind, { V, ...p }), validation).all.loss;
  const alpha = ALPHAS.reduce((a, b) =>
    loss('unigram', { alpha: b, lambda: 0 }) < loss('unigram', { alpha: a, lambda: 0 }) ? b : a,
  );
  const out = {};
  for (const kind of /** @type {const} */ (['unigram', 'bigram', 'aligned'])) {
    const lambda =
      kind === 'unigram'
        ? 0
        : LAMBDAS.reduce((a, b) => (loss(kind, { alpha, lambda: b }) < loss(kind, { alpha, lambda: a }) ? b : a));
    const model = baseline(counts, kind, { alpha, lambda, V });
    out[kind] = { alpha, lambda, validation: evaluate(model, validation), test: evaluate(model, test) };
  }
  return out;
}

function main() {
  const argv = process.argv.slice(2);
  const dir = argv[0] === '--data' ? argv[1] : join(defaultCache(), 'couplet', 'data');
  const read = (split) => readPairs(new Uint8Array(readFileSync(join(dir, `${split}.u16`))));
  const V = JSON.parse(readFileSync(join(dir, 'vocab.json'), 'utf8')).tokens.length;
  const result = baselines(read('train'), read('validation'), read('test'), V);
  writeFileSync(join(dir, 'baselines.json'), JSON.stringify(result, null, 2) + '\n');
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
}

if (import.meta.url === `file://${process.argv[1]}`) main();
