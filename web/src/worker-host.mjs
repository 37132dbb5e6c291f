// @ts-check
// The worker side of attnlab/worker (worker.mjs): runs init() and every call in a module Web Worker or a Node
// worker_threads Worker, one message at a time. Protocol (structured clone):
//   → { id, op: 'init', args: [options] }                       ← { id, ok: true, value: { variant, version, threads } }
//   → { id, op: 'call', target: 0 | objectId, method, args }    ← { id, ok: true, value } (ArrayBuffers transferred)
//   ← { id, ok: false, error: { name, message } }               the same error the synchronous API throws
// Created objects (createMultiHeadAttention, createTinyTransformer, mha.createKVCache) stay here; the caller gets
// { objectId }, and names a KV cache in forward's options as kvCache: { attnlabObjectId }.

import { init } from './index.mjs';

/** @type {any} */
let attn = null;
/** @type {Map<number, any>} objectId → MultiHeadAttention | TinyTransformer */
const objects = new Map();
let nextObjectId = 1;

/** Every ArrayBuffer under `value` (results: tensors and records of tensors), to transfer instead of copying. */
function buffersOf(value, out = new Set()) {
  if (ArrayBuffer.isView(value)) {
    if (value.buffer instanceof ArrayBuffer) out.add(value.buffer);
  } else if (value && typeof value === 'object') {
    for (const v of Object.values(value)) buffersOf(v, out);
  }
  return out;
}

/** forward's arguments with `kvCache: { attnlabObjectId }` replaced by that cache (disposed: its Error). */
function withCaches(args) {
  const o = args[3];
  const id = o?.kvCache?.attnlabObjectId;
  if (typeof id !== 'number') return args;
  const cache = objects.get(id);
  if (!cache) throw new Error('mha.forward: this KVCache has been disposed; create a new one with mha.createKVCache()');
  return [...args.slice(0, 3), { ...o, kvCache: cache }];
}

/** @param {{ op: string, target?: number, method?: string, args: any[] }} msg */
async function run(msg) {
  if (msg.op === 'init') {
    attn = await init(msg.args[0]);
    return { variant: attn.variant, version: attn.version, threads: attn.threads };
  }
  if (!attn) throw new Error('attnlab worker: init has not finished');
  const target = msg.target ? objects.get(msg.target) : attn;
  if (!target) throw new Error(`${msg.method}: this object has been disposed`);
  const method = /** @type {string} */ (msg.method);
  const args = method === 'forward' ? withCaches(msg.args) : msg.args;
  const result = method === 'length' ? target.length : target[method](...args); // (KVCache's getter)
  if (msg.target && method === 'dispose') objects.delete(msg.target);
  if (method === 'createMultiHeadAttention' || method === 'createTinyTransformer' || method === 'createKVCache') {
    const objectId = nextObjectId++;
    objects.set(objectId, result);
    return { objectId };
  }
  return result;
}

/**
 * @param {(message: any, transfer?: Transferable[]) => void} post
 * @param {any} msg
 */
async function handle(post, msg) {
  try {
    const value = await run(msg);
    post({ id: msg.id, ok: true, value }, [...buffersOf(value)]);
  } catch (e) {
    const error = /** @type {Error} */ (e);
    post({ id: msg.id, ok: false, error: { name: error?.name ?? 'Error', message: String(error?.message ?? error) } });
  }
}

// A Web Worker has `self`; a Node worker has parentPort. The specifier is a variable so that bundlers leave it.
if (typeof self !== 'undefined' && typeof self.postMessage === 'function') {
  const scope = /** @type {any} */ (self);
  scope.addEventListener('message', (/** @type {MessageEvent} */ e) =>
    handle((m, t) => scope.postMessage(m, t), e.data),
  );
} else {
  const workerThreads = 'node:worker_threads';
  const { parentPort } = await import(/* @vite-ignore */ /* webpackIgnore: true */ workerThreads);
  parentPort.on('message', (/** @type {any} */ msg) => handle((m, t) => parentPort.postMessage(m, t), msg));
}
