// @ts-check
// The worker side of attnlab/worker (worker.mjs): runs init() and every call in a module Web Worker or a Node
// worker_threads Worker, one message at a time. Protocol (structured clone):
//   → { id, op: 'init', args: [options] }                       ← { id, ok: true, value: { variant, version, threads } }
//   → { id, op: 'call', target: 0 | objectId, method, args }    ← { id, ok: true, value } (ArrayBuffers transferred)
//   ← { id, ok: false, error: { name, message } }               the same error the synchronous API throws
//   model.generate: → { …, progress: true } asks for  ← { id, progress: { id, step, attentions? } } per token;
//                   → { id, op: 'stop' | 'abort' } ends the running generation (its ids so far, or an AbortError)
//   model.train:    → { …, progress: true } asks for  ← { id, progress: { step, loss, gradNorm } } per step, after
//                   which the worker waits for → { id, op: 'continue' | 'stop' | 'abort' } (so that no step runs after
//                   the caller's onStep said stop); without progress it runs on, and 'abort' stops it between steps
// Created objects (createMultiHeadAttention, createTinyTransformer, createModel, loadModel, createKVCache) stay
// here; the caller gets { objectId } (and a model's config, kind and task), and names a KV cache in forward's options as
// kvCache: { attnlabObjectId }.

import { startGeneration } from './generation.mjs';
import { init } from './index.mjs';
import { unreadFromWire } from './safetensors.mjs';
import { startTraining } from './training.mjs';

/** @type {any} */
let attn = null;
/** @type {Map<number, any>} objectId → MultiHeadAttention | TinyTransformer | Transformer | KVCache */
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

/**
 * The running generations and training loops by message id, and what 'stop' / 'abort' asked of them; `wake` resumes
 * a training loop waiting for its caller's onStep ('continue', 'stop' or 'abort').
 * @typedef {{ stop: boolean, abort: boolean, wake: (() => void) | null }} Control
 */
/** @type {Map<number, Control>} */
const runs = new Map();
const kCreators = ['createMultiHeadAttention', 'createTinyTransformer', 'createModel', 'loadModel', 'createKVCache'];

/**
 * forward's arguments with `kvCache: { attnlabObjectId }` (in the options at `at`) replaced by that cache
 * (disposed: its Error).
 * @param {any[]} args
 * @param {number} at
 * @param {string} ctx
 */
function withCaches(args, at, ctx) {
  const o = args[at];
  const id = o?.kvCache?.attnlabObjectId;
  if (typeof id !== 'number') return args;
  const cache = objects.get(id);
  if (!cache) {
    throw new Error(
      `${ctx}: this KVCache has been disposed; create a new one with ${ctx.split('.')[0]}.createKVCache()`,
    );
  }
  const out = args.slice();
  out[at] = { ...o, kvCache: cache };
  return out;
}

/** Lets the messages that arrived meanwhile ('stop', 'abort') run. */
const immediate = /** @type {any} */ (globalThis).setImmediate;
const yieldToMessages =
  typeof immediate === 'function'
    ? () => new Promise((resolve) => immediate(resolve))
    : (() => {
        const channel = new MessageChannel();
        /** @type {Array<() => void>} */
        const waiting = [];
        channel.port1.onmessage = () => waiting.shift()?.();
        return () =>
          new Promise((resolve) => {
            waiting.push(() => resolve(undefined));
            channel.port2.postMessage(null);
          });
      })();

/**
 * model.generate one token at a time, yielding to messages in between; each token is posted as progress when
 * the caller has an onToken.
 * @param {any} model
 * @param {{ id: number, args: any[], progress?: boolean }} msg
 * @param {(message: any, transfer?: Transferable[]) => void} post
 */
async function generate(model, msg, post) {
  /** @type {Control} */
  const control = { stop: false, abort: false, wake: null };
  runs.set(msg.id, control);
  try {
    const run = startGeneration(model, 'model.generate', msg.args[0], msg.args[1]);
    /** @type {number[]} */
    const ids = [];
    try {
      for (;;) {
        await yieldToMessages();
        if (control.abort) throw new DOMException('model.generate: aborted', 'AbortError');
        if (control.stop) break;
        const next = run.step();
        if (!next) break;
        ids.push(next.id);
        if (msg.progress) post({ id: msg.id, progress: next }, [...buffersOf(next.attentions)]);
      }
    } finally {
      run.close();
    }
    return Int32Array.from(ids);
  } finally {
    runs.delete(msg.id);
  }
}

/**
 * model.train one step at a time, yielding to messages in between; with progress, each step is posted and the next
 * waits until the caller's onStep has run ('continue').
 * @param {any} model
 * @param {{ id: number, args: any[], progress?: boolean }} msg
 * @param {(message: any, transfer?: Transferable[]) => void} post
 */
async function train(model, msg, post) {
  /** @type {Control} */
  const control = { stop: false, abort: false, wake: null };
  runs.set(msg.id, control);
  try {
    const run = startTraining(model, 'model.train', msg.args[0], msg.args[1]);
    for (;;) {
      await yieldToMessages();
      if (control.abort) throw new DOMException('model.train: aborted', 'AbortError');
      if (control.stop) break;
      const next = run.step();
      if (!next) break;
      if (msg.progress) {
        post({ id: msg.id, progress: next });
        await new Promise((resolve) => {
          control.wake = () => resolve(undefined);
        });
      }
    }
    return run.result();
  } finally {
    runs.delete(msg.id);
  }
}

/**
 * @param {{ id: number, op: string, target?: number, method?: string, args: any[], progress?: boolean }} msg
 * @param {(message: any, transfer?: Transferable[]) => void} post
 */
async function run(msg, post) {
  if (msg.op === 'init') {
    attn = await init(msg.args[0]);
    return { variant: attn.variant, version: attn.version, threads: attn.threads };
  }
  if (!attn) throw new Error('attnlab worker: init has not finished');
  const target = msg.target ? objects.get(msg.target) : attn;
  if (!target) throw new Error(`${msg.method}: this object has been disposed`);
  const method = /** @type {string} */ (msg.method);
  msg.args = unreadFromWire(msg.args); // (attnlab/worker posts readSafetensors' unread 16-bit tensors as bits)
  if (method === 'generate' && msg.target) return generate(target, msg, post);
  if (method === 'train' && msg.target) return train(target, msg, post);
  // forward's options: MultiHeadAttention.forward(query, key, value, options), a model's forward(tokens, options)
  const mha = msg.args.length > 2;
  const args =
    method === 'forward' ? withCaches(msg.args, mha ? 3 : 1, mha ? 'mha.forward' : 'model.forward') : msg.args;
  // (awaited: loadModel of a Blob gives a Promise)
  const result = method === 'length' ? target.length : await target[method](...args); // (KVCache's getter)
  if (msg.target && method === 'dispose') objects.delete(msg.target);
  if (kCreators.includes(method)) {
    const objectId = nextObjectId++;
    objects.set(objectId, result);
    if (method !== 'createModel' && method !== 'loadModel') return { objectId };
    return { objectId, config: result.config, kind: result.kind, task: result.task };
  }
  return result;
}

/**
 * @param {(message: any, transfer?: Transferable[]) => void} post
 * @param {any} msg
 */
async function handle(post, msg) {
  if (msg.op === 'stop' || msg.op === 'abort' || msg.op === 'continue') {
    const control = runs.get(msg.id);
    if (!control) return;
    if (msg.op !== 'continue') control[msg.op] = true;
    const wake = control.wake;
    control.wake = null;
    wake?.();
    return;
  }
  try {
    const value = await run(msg, post);
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
