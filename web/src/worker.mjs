// @ts-check
// attnlab/worker: the whole API off the calling thread. initWorker(options) starts a module Web Worker (in a page or
// a worker) or a Node worker_threads Worker running worker-host.mjs, which calls init(options) there; every
// function and object method of init()'s result is offered here returning a Promise, with the same results and
// the same errors (type and message) as rejections.
//
// Calls run one at a time, in order. Only the running call has been posted to the worker; the others wait here, so
// that `{ signal }` can drop a call that has not started (it rejects with an AbortError). `{ transfer: true }`
// transfers the inputs' ArrayBuffers instead of copying them (the caller's arrays become detached). Results come
// back transferred. terminate() ends the worker and rejects every call that has not finished.

const kCallOptions = ['signal', 'transfer'];

/** The DOMException an aborted call rejects with. */
function abortError(signal) {
  const reason = signal?.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  return new DOMException('attnlab worker: the call was aborted before it started', 'AbortError');
}

/** An Error of the class the worker reported (TypeError, RangeError, Error), with its message. */
function rebuildError({ name, message }) {
  const Class = { TypeError, RangeError }[name] ?? Error;
  const e = new Class(message);
  if (Class === Error && name !== 'Error') e.name = name;
  return e;
}

/** Every ArrayBuffer under the call's arguments (tensors, state dicts), for `{ transfer: true }`. */
function buffersOf(value, out = new Set()) {
  if (ArrayBuffer.isView(value)) {
    if (value.buffer instanceof ArrayBuffer) out.add(value.buffer);
  } else if (value && typeof value === 'object' && !(value instanceof ArrayBuffer)) {
    for (const v of Object.values(value)) buffersOf(v, out);
  }
  return out;
}

/**
 * Splits `{ signal, transfer }` off the argument at `at`: merged with the call's own options (they are removed
 * before the call), or a trailing argument of its own for methods without options.
 * @param {any[]} args
 * @param {number} at index of the options argument
 */
function splitCallOptions(args, at) {
  const o = args[at];
  if (o === null || typeof o !== 'object' || !kCallOptions.some((k) => k in o)) return { args, call: {} };
  const { signal, transfer, ...rest } = o;
  const out = args.slice();
  if (Object.keys(rest).length > 0) out[at] = rest;
  else out.length = at; // the options held nothing else: leave them out, as the caller of the sync API would
  return { args: out, call: { signal, transfer } };
}

/** Where each method's options argument is (the index `{ signal, transfer }` may be given at). */
const kOptionsAt = {
  scaledDotProductAttention: 3,
  scaledDotProductAttentionBackward: 4,
  createMultiHeadAttention: 1,
  createTinyTransformer: 1,
  memoryBytes: 0,
  loadStateDict: 1,
  stateDict: 0,
  forward: { mha: 3, model: 1 },
  backward: 1,
  lossAndGrad: 2,
  trainStep: 2,
  dispose: 0,
  createKVCache: 1,
  length: 0,
  reset: 0,
};

/** Remote KV caches → their object ids, so that forward's `kvCache` option can name one in the worker. */
const remoteIds = new WeakMap();

/** forward's options with a remote `kvCache` replaced by `{ attnlabObjectId }` (worker-host.mjs resolves it). */
function withCacheIds(args) {
  const o = args[3];
  if (o === null || typeof o !== 'object' || !remoteIds.has(o.kvCache)) return args;
  const out = args.slice();
  out[3] = { ...o, kvCache: { attnlabObjectId: remoteIds.get(o.kvCache) } };
  return out;
}

/**
 * One call: its message, what to transfer, how to settle it, and its abort signal.
 * @typedef {{ msg: any, transfer: Transferable[], resolve: Function, reject: Function, signal?: AbortSignal,
 *             onAbort?: () => void }} Entry
 */

class WorkerClient {
  #worker;
  #nextId = 1;
  /** @type {Map<number, Entry>} the posted (running) call */
  #running = new Map();
  /** @type {Entry[]} calls not posted yet */
  #queue = [];
  #ended = null;

  constructor(worker, isNode) {
    this.#worker = worker;
    const onMessage = (msg) => this.#settle(msg);
    const onFailure = (e) => this.#end(new Error(`attnlab worker failed: ${e?.message ?? e}`));
    if (isNode) {
      worker.on('message', onMessage);
      worker.on('error', onFailure);
      worker.on('exit', (code) => this.#end(new Error(`attnlab worker exited (code ${code})`)));
    } else {
      worker.addEventListener('message', (e) => onMessage(e.data));
      worker.addEventListener('error', (e) => {
        e.preventDefault?.();
        onFailure(e);
      });
      worker.addEventListener('messageerror', () => onFailure(new Error('a message could not be deserialised')));
    }
  }

  /**
   * Queues one call; resolves to its value.
   * @param {any} msg without id
   * @param {{ signal?: AbortSignal, transfer?: boolean }} call
   */
  send(msg, call = {}) {
    if (this.#ended) return Promise.reject(this.#ended);
    const { signal } = call;
    if (signal?.aborted) return Promise.reject(abortError(signal));
    return new Promise((resolve, reject) => {
      /** @type {Entry} */
      const entry = { msg, transfer: call.transfer ? [...buffersOf(msg.args)] : [], resolve, reject, signal };
      if (signal) {
        entry.onAbort = () => {
          const i = this.#queue.indexOf(entry);
          if (i >= 0) {
            this.#queue.splice(i, 1);
            reject(abortError(signal));
          } // a call that has started runs to the end
        };
        signal.addEventListener('abort', entry.onAbort, { once: true });
      }
      this.#queue.push(entry);
      this.#pump();
    });
  }

  #pump() {
    if (this.#running.size > 0 || this.#queue.length === 0) return;
    const entry = /** @type {any} */ (this.#queue.shift());
    entry.signal?.removeEventListener('abort', entry.onAbort);
    const id = this.#nextId++;
    this.#running.set(id, entry);
    try {
      this.#worker.postMessage({ id, ...entry.msg }, entry.transfer);
    } catch (e) {
      this.#running.delete(id);
      entry.reject(e); // e.g. an argument that cannot be cloned: a DataCloneError, like postMessage's own
      this.#pump();
    }
  }

  #settle(msg) {
    const entry = this.#running.get(msg.id);
    if (!entry) return;
    this.#running.delete(msg.id);
    if (msg.ok) entry.resolve(msg.value);
    else entry.reject(rebuildError(msg.error));
    this.#pump();
  }

  #end(error) {
    if (this.#ended) return;
    this.#ended = error;
    for (const entry of [...this.#running.values(), ...this.#queue.splice(0)]) {
      entry.signal?.removeEventListener('abort', entry.onAbort);
      entry.reject(error);
    }
    this.#running.clear();
  }

  terminate() {
    this.#end(new Error('attnlab worker: terminated'));
    this.#worker.terminate();
  }
}

/**
 * A Promise-returning stand-in for a method: splits off { signal, transfer }, queues the call.
 * @param {WorkerClient} client
 * @param {number} target 0 for the instance, else the object's id
 * @param {string} method
 * @param {number} optionsAt
 * @param {(value: any) => any} [wrap]
 */
function remote(client, target, method, optionsAt, wrap = (v) => v) {
  return (...given) => {
    const { args, call } = splitCallOptions(given, optionsAt);
    const sent = method === 'forward' ? withCacheIds(args) : args;
    return client.send({ op: 'call', target, method, args: sent }, call).then(wrap);
  };
}

/** The Promise version of a KV cache living in the worker: length() (a Promise), reset(), dispose(). */
function remoteCache(client, objectId) {
  const m = (/** @type {string} */ name) => remote(client, objectId, name, kOptionsAt[name]);
  const cache = { length: m('length'), reset: m('reset'), dispose: m('dispose') };
  if (typeof Symbol.asyncDispose === 'symbol') cache[Symbol.asyncDispose] = cache.dispose;
  remoteIds.set(cache, objectId);
  return cache;
}

/** The Promise version of a created object: every method of the synchronous one. */
function remoteObject(client, kind, objectId) {
  const m = (/** @type {string} */ name, /** @type {number} */ at) => remote(client, objectId, name, at);
  const object = {
    loadStateDict: m('loadStateDict', kOptionsAt.loadStateDict),
    stateDict: m('stateDict', kOptionsAt.stateDict),
    forward: m('forward', kOptionsAt.forward[kind]),
    dispose: m('dispose', kOptionsAt.dispose),
  };
  if (kind === 'mha') {
    object.backward = m('backward', kOptionsAt.backward);
    object.createKVCache = remote(client, objectId, 'createKVCache', kOptionsAt.createKVCache, (v) =>
      remoteCache(client, v.objectId),
    );
  } else
    Object.assign(object, {
      lossAndGrad: m('lossAndGrad', kOptionsAt.lossAndGrad),
      trainStep: m('trainStep', kOptionsAt.trainStep),
    });
  if (typeof Symbol.asyncDispose === 'symbol') object[Symbol.asyncDispose] = object.dispose;
  return object;
}

/** A Worker running worker-host.mjs: a module Web Worker where `Worker` exists, else Node's worker_threads. */
async function startWorker() {
  if (typeof Worker === 'function') {
    // Written in one expression, the pattern that Vite and webpack 5 recognise and bundle as a module worker.
    return { worker: new Worker(new URL('./worker-host.mjs', import.meta.url), { type: 'module' }), isNode: false };
  }
  const workerThreads = 'node:worker_threads'; // a variable: bundlers leave it alone
  const { Worker: NodeWorker } = await import(/* @vite-ignore */ /* webpackIgnore: true */ workerThreads);
  return { worker: new NodeWorker(new URL('./worker-host.mjs', import.meta.url)), isNode: true };
}

/**
 * Starts a worker, runs init(options) in it and resolves to the Promise version of init()'s result.
 * @param {unknown} [options] init()'s options
 */
export async function initWorker(options) {
  const { worker, isNode } = await startWorker();
  const client = new WorkerClient(worker, isNode);
  let info;
  try {
    info = await client.send({ op: 'init', args: [options] });
  } catch (e) {
    client.terminate();
    throw e;
  }
  const create = (/** @type {string} */ method, /** @type {string} */ kind) =>
    remote(client, 0, method, kOptionsAt[method], ({ objectId }) => remoteObject(client, kind, objectId));
  return {
    variant: info.variant,
    version: info.version,
    threads: info.threads,
    memoryBytes: remote(client, 0, 'memoryBytes', kOptionsAt.memoryBytes),
    scaledDotProductAttention: remote(client, 0, 'scaledDotProductAttention', kOptionsAt.scaledDotProductAttention),
    scaledDotProductAttentionBackward: remote(
      client,
      0,
      'scaledDotProductAttentionBackward',
      kOptionsAt.scaledDotProductAttentionBackward,
    ),
    createMultiHeadAttention: create('createMultiHeadAttention', 'mha'),
    createTinyTransformer: create('createTinyTransformer', 'model'),
    terminate: () => client.terminate(),
  };
}
