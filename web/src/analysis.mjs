// @ts-check
// attnlab/analysis: pure functions of the attention lists a model's forward returns (docs/api.md, "Rollout and
// flow: attnlab/analysis"). Needs no wasm and no init().
//
//   rollout(attentions, { residual, heads })               (B, T, T)  Abnar & Zuidema 2020's attention rollout
//   attentionFlow(attentions, { residual, heads, query })  (B, T)     their attention flow (max flow), T ≤ 256
//
// attentions[l]: { data, shape: [B, H, T, T] } (attnlab's Tensor) or { data, dims } (transformers.js's and
// onnxruntime-web's tensors), every layer of one shape. Both build, per row b of the batch and per layer l,
//   Â_l = residual·I + (1 − residual)·(mean over the chosen heads of A_l), each row renormalised to sum 1
// (a row that sums to 0 stays 0), in float64; results are float32 Tensors.

import { describe, readFiniteNumber, readOptions, readShape, typedArrayName } from './validate.mjs';

/** attentionFlow's largest sequence length. */
export const kMaxFlowLength = 256;

/**
 * The attention list as { B, H, T, layers: data arrays }: every layer present, 4-D (B, H, T, T), one shape.
 * @param {string} ctx
 * @param {unknown} attentions
 */
function readAttentions(ctx, attentions) {
  if (!Array.isArray(attentions)) {
    throw new TypeError(`${ctx}: attentions must be an array of (B, H, T, T) tensors, got ${describe(attentions)}`);
  }
  if (attentions.length === 0) throw new RangeError(`${ctx}: attentions must hold at least one layer, got none`);
  /** @type {Array<Float32Array | Float64Array>} */
  const layers = [];
  /** @type {number[]} */
  let dims = [];
  attentions.forEach((/** @type {any} */ a, l) => {
    const name = `attentions[${l}]`;
    if (a === null || a === undefined) {
      throw new TypeError(
        `${ctx}: ${name} is ${a}: a forward asked for some layers only (outputAttentions: [...]) returns null ` +
          'for the others; these need every layer (outputAttentions: true)',
      );
    }
    const data = a.data;
    const tag = typedArrayName(data);
    if (tag !== 'Float32Array' && tag !== 'Float64Array') {
      throw new TypeError(`${ctx}: ${name}.data must be a Float32Array or Float64Array, got ${describe(data)}`);
    }
    const { shape, size } = readShape(ctx, a.shape ?? a.dims, `${name}.shape`);
    if (shape.length !== 4) {
      throw new RangeError(`${ctx}: ${name} must be 4-D (B, H, T, T), got shape [${shape.join(', ')}]`);
    }
    if (shape[2] !== shape[3]) {
      throw new RangeError(
        `${ctx}: ${name} must be square (B, H, T, T) self-attention maps, got shape [${shape.join(', ')}]`,
      );
    }
    if (shape.some((d) => d === 0)) throw new RangeError(`${ctx}: ${name} is empty: shape [${shape.join(', ')}]`);
    if (size !== data.length) {
      throw new RangeError(`${ctx}: ${name}.data holds ${data.length} values; shape [${shape}] needs ${size}`);
    }
    if (l > 0 && shape.join() !== dims.join()) {
      throw new RangeError(
        `${ctx}: every layer must have one shape: attentions[0] is [${dims.join(', ')}], ${name} is [${shape.join(', ')}]`,
      );
    }
    dims = shape;
    layers.push(data);
  });
  const [B, H, T] = dims;
  return { B, H, T, layers };
}

/**
 * The options both functions share: residual in [0, 1] (default 0.5), heads 'mean' or distinct indices in [0, H).
 * @param {string} ctx
 * @param {any} options
 * @param {number} H
 * @param {string[]} known
 */
function readCommonOptions(ctx, options, H, known) {
  const o = readOptions(ctx, options, 'options', known);
  const residual = readFiniteNumber(ctx, o.residual, 'options.residual') ?? 0.5;
  if (residual < 0 || residual > 1) {
    throw new RangeError(`${ctx}: options.residual must be in [0, 1], got ${residual}`);
  }
  return { o, residual, heads: readHeads(ctx, o.heads, H) };
}

/**
 * @param {string} ctx
 * @param {unknown} heads
 * @param {number} H
 * @returns {number[]}
 */
function readHeads(ctx, heads, H) {
  if (heads === undefined || heads === null || heads === 'mean') return Array.from({ length: H }, (_, h) => h);
  if (!Array.isArray(heads)) {
    throw new TypeError(`${ctx}: options.heads must be 'mean' or an array of head indices, got ${describe(heads)}`);
  }
  if (heads.length === 0) throw new RangeError(`${ctx}: options.heads must name at least one head, got []`);
  const seen = new Set();
  return heads.map((h, i) => {
    if (typeof h !== 'number') {
      throw new TypeError(`${ctx}: options.heads[${i}] must be a number, got ${describe(h)}`);
    }
    if (!Number.isInteger(h) || h < 0 || h >= H) {
      throw new RangeError(`${ctx}: options.heads[${i}] must be a head index in [0, ${H}), got ${h}`);
    }
    if (seen.has(h)) throw new RangeError(`${ctx}: options.heads names head ${h} twice`);
    seen.add(h);
    return h;
  });
}

/**
 * Â_l of row b: residual·I + (1 − residual)·(mean of the chosen heads), rows renormalised (a zero row stays 0).
 * @param {string} ctx
 * @param {Float32Array | Float64Array} data attentions[l].data, (B, H, T, T)
 * @param {number} l
 * @param {{ H: number, T: number }} dims
 * @param {number} b
 * @param {number[]} heads
 * @param {number} residual
 */
function augmented(ctx, data, l, { H, T }, b, heads, residual) {
  const TT = T * T;
  const out = new Float64Array(TT);
  for (const h of heads) {
    const base = (b * H + h) * TT;
    for (let k = 0; k < TT; ++k) {
      const v = data[base + k];
      if (!(v >= 0 && v < Infinity)) {
        const [i, j] = [Math.floor(k / T), k % T];
        throw new RangeError(
          `${ctx}: attentions[${l}] must hold finite weights >= 0, got ${v} at [${b}, ${h}, ${i}, ${j}]`,
        );
      }
      out[k] += v;
    }
  }
  const scale = (1 - residual) / heads.length;
  for (let i = 0; i < T; ++i) {
    let sum = 0;
    for (let j = 0; j < T; ++j) {
      const v = out[i * T + j] * scale + (i === j ? residual : 0);
      out[i * T + j] = v;
      sum += v;
    }
    if (sum > 0) for (let j = 0; j < T; ++j) out[i * T + j] /= sum;
  }
  return out;
}

/**
 * c = a · b for T × T row-major matrices: i-k-j order (rows of b read contiguously), four k at a time; a block of
 * four zeros in a (a causal map's upper triangle) is skipped.
 * @param {Float64Array} a
 * @param {Float64Array} b
 * @param {number} T
 */
function matmul(a, b, T) {
  const c = new Float64Array(T * T);
  for (let i = 0; i < T; ++i) {
    const ci = i * T;
    let k = 0;
    for (; k + 4 <= T; k += 4) {
      const [a0, a1, a2, a3] = [a[ci + k], a[ci + k + 1], a[ci + k + 2], a[ci + k + 3]];
      if (a0 === 0 && a1 === 0 && a2 === 0 && a3 === 0) continue;
      const b0 = k * T;
      const [b1, b2, b3] = [b0 + T, b0 + 2 * T, b0 + 3 * T];
      for (let j = 0; j < T; ++j) c[ci + j] += a0 * b[b0 + j] + a1 * b[b1 + j] + a2 * b[b2 + j] + a3 * b[b3 + j];
    }
    for (; k < T; ++k) {
      const aik = a[ci + k];
      const bk = k * T;
      for (let j = 0; j < T; ++j) c[ci + j] += aik * b[bk + j];
    }
  }
  return c;
}

/**
 * Attention rollout (Abnar & Zuidema 2020): R = Â_{L−1} ⋯ Â_1 Â_0 per batch row; R[b, i, j] is how much position
 * i's state after the last layer draws on input position j.
 * @param {Array<any>} attentions [l] (B, H, T, T)
 * @param {{ residual?: number, heads?: 'mean' | number[] }} [options]
 * @returns {{ data: Float32Array, shape: number[] }} (B, T, T)
 */
export function rollout(attentions, options) {
  const ctx = 'rollout';
  const { B, H, T, layers } = readAttentions(ctx, attentions);
  const { residual, heads } = readCommonOptions(ctx, options, H, ['residual', 'heads']);
  const out = new Float32Array(B * T * T);
  for (let b = 0; b < B; ++b) {
    let r = augmented(ctx, layers[0], 0, { H, T }, b, heads, residual);
    for (let l = 1; l < layers.length; ++l) {
      r = matmul(augmented(ctx, layers[l], l, { H, T }, b, heads, residual), r, T);
    }
    out.set(r, b * T * T);
  }
  return { data: out, shape: [B, T, T] };
}

/**
 * The layered graph of one batch row: node (k, i) = position i at layer boundary k (k = 0: the input, k = L:
 * after the last layer) is k·T + i; an edge (k+1, i) → (k, j) of capacity Â_k[i][j] for each Â_k[i][j] > 0, and its
 * reverse (capacity 0), in compressed adjacency lists.
 * @param {Float64Array[]} hats Â_0 … Â_{L−1}
 * @param {number} T
 */
function buildGraph(hats, T) {
  const L = hats.length;
  const n = (L + 1) * T;
  const degree = new Int32Array(n + 1);
  for (let k = 0; k < L; ++k) {
    for (let i = 0; i < T; ++i) {
      for (let j = 0; j < T; ++j) {
        if (hats[k][i * T + j] > 0) {
          degree[(k + 1) * T + i] += 1;
          degree[k * T + j] += 1;
        }
      }
    }
  }
  const start = new Int32Array(n + 1);
  for (let v = 0; v < n; ++v) start[v + 1] = start[v] + degree[v];
  const fill = start.slice(0, n);
  const to = new Int32Array(start[n]);
  const rev = new Int32Array(start[n]);
  const capacity = new Float64Array(start[n]);
  for (let k = 0; k < L; ++k) {
    for (let i = 0; i < T; ++i) {
      for (let j = 0; j < T; ++j) {
        const c = hats[k][i * T + j];
        if (!(c > 0)) continue;
        const [u, v] = [(k + 1) * T + i, k * T + j];
        const [e, r] = [fill[u]++, fill[v]++];
        to[e] = v;
        to[r] = u;
        rev[e] = r;
        rev[r] = e;
        capacity[e] = c;
      }
    }
  }
  return { n, start, to, rev, capacity };
}

/** A residual capacity at or below this is treated as saturated (capacities are at most 1). */
const kEps = 1e-13;

/**
 * Breadth-first levels from s over edges with residual capacity; returns whether t was reached.
 * @param {{ n: number, start: Int32Array, to: Int32Array }} g
 * @param {Float64Array} residual
 * @param {Int32Array} level
 * @param {Int32Array} queue
 * @param {number} s
 * @param {number} t
 */
function levels(g, residual, level, queue, s, t) {
  level.fill(-1);
  level[s] = 0;
  let [head, tail] = [0, 0];
  queue[tail++] = s;
  while (head < tail) {
    const u = queue[head++];
    for (let e = g.start[u]; e < g.start[u + 1]; ++e) {
      const v = g.to[e];
      if (level[v] < 0 && residual[e] > kEps) {
        level[v] = level[u] + 1;
        queue[tail++] = v;
      }
    }
  }
  return level[t] >= 0;
}

/**
 * One blocking flow of Dinic's algorithm, found iteratively (a path of edges on a stack, current-arc pointers).
 * @param {{ start: Int32Array, to: Int32Array, rev: Int32Array }} g
 * @param {{ residual: Float64Array, level: Int32Array, arc: Int32Array, path: Int32Array }} work
 * @param {number} s
 * @param {number} t
 */
function blockingFlow(g, { residual, level, arc, path }, s, t) {
  let total = 0;
  let depth = 0;
  let u = s;
  for (;;) {
    if (u === t) {
      let push = Infinity;
      for (let d = 0; d < depth; ++d) push = Math.min(push, residual[path[d]]);
      let back = depth;
      for (let d = depth - 1; d >= 0; --d) {
        residual[path[d]] -= push;
        residual[g.rev[path[d]]] += push;
        if (residual[path[d]] <= kEps) back = d;
      }
      total += push;
      depth = back; // retreat to the tail of the first saturated edge
      u = depth === 0 ? s : g.to[path[depth - 1]];
      continue;
    }
    let e = arc[u];
    while (e < g.start[u + 1] && !(residual[e] > kEps && level[g.to[e]] === level[u] + 1)) e += 1;
    arc[u] = e;
    if (e < g.start[u + 1]) {
      path[depth++] = e;
      u = g.to[e];
    } else {
      if (depth === 0) return total;
      level[u] = -1; // a dead end for the rest of this phase
      depth -= 1;
      u = depth === 0 ? s : g.to[path[depth - 1]];
      arc[u] += 1;
    }
  }
}

/**
 * The max flow from s to t (Dinic's algorithm on the residual graph).
 * @param {ReturnType<typeof buildGraph>} g
 * @param {number} s
 * @param {number} t
 */
function maxFlow(g, s, t) {
  const residual = g.capacity.slice();
  const work = {
    residual,
    level: new Int32Array(g.n),
    arc: new Int32Array(g.n),
    path: new Int32Array(g.n),
  };
  const queue = new Int32Array(g.n);
  let flow = 0;
  while (levels(g, residual, work.level, queue, s, t)) {
    work.arc.set(g.start.subarray(0, g.n));
    flow += blockingFlow(g, work, s, t);
  }
  return flow;
}

/**
 * @param {string} ctx
 * @param {unknown} query
 * @param {number} T
 */
function readQuery(ctx, query, T) {
  if (query === undefined || query === null) {
    throw new TypeError(`${ctx}: options.query is required: the position whose flow to the inputs is measured`);
  }
  if (typeof query !== 'number') throw new TypeError(`${ctx}: options.query must be a number, got ${describe(query)}`);
  if (!Number.isInteger(query) || query < 0 || query >= T) {
    throw new RangeError(`${ctx}: options.query must be a position in [0, ${T}), got ${query}`);
  }
  return query;
}

/**
 * Attention flow (Abnar & Zuidema 2020): per batch row, entry j is the max flow from `query`'s node after the last
 * layer to input position j's node, through edges (k+1, i) → (k, j) of capacity Â_k[i][j]. Not normalised.
 * @param {Array<any>} attentions [l] (B, H, T, T), T ≤ 256
 * @param {{ residual?: number, heads?: 'mean' | number[], query: number }} options
 * @returns {{ data: Float32Array, shape: number[] }} (B, T)
 */
export function attentionFlow(attentions, options) {
  const ctx = 'attentionFlow';
  const { B, H, T, layers } = readAttentions(ctx, attentions);
  if (T > kMaxFlowLength) {
    throw new RangeError(`${ctx}: attentions have T = ${T} positions; attention flow takes at most ${kMaxFlowLength}`);
  }
  const { o, residual, heads } = readCommonOptions(ctx, options, H, ['residual', 'heads', 'query']);
  const query = readQuery(ctx, o.query, T);
  const L = layers.length;
  const out = new Float32Array(B * T);
  for (let b = 0; b < B; ++b) {
    const hats = layers.map((data, l) => augmented(ctx, data, l, { H, T }, b, heads, residual));
    const g = buildGraph(hats, T);
    for (let j = 0; j < T; ++j) out[b * T + j] = maxFlow(g, L * T + query, j);
  }
  return { data: out, shape: [B, T] };
}
