// @ts-check
// attnlab/worker: the whole API off the calling thread. initWorker(options) starts a module Web Worker (in a page or
// a worker) or a Node worker_threads Worker running worker-host.mjs, which calls init(options) there; every
// function and object method of init()'s result is offered here returning a Promise, with the same results and
// the same errors (type and message) as rejections.
//
// Calls run one at a time, in order. Only the running call has been posted to the worker; the others wait here, so
// that `{ signal }` can drop a call that has not started (it rejects with an AbortError). A running
// model.generate() or model.train() is the exception: the worker yields to its messages between tokens or steps, so
// `signal` stops it too, and its onToken / onStep is called here for every token or step (progress messages; a
// training step waits for its onStep to have run, so that `false` stops exactly there). `{ transfer: true }` transfers the inputs'
// ArrayBuffers instead of copying them (the caller's arrays become detached). Results come back transferred.
// terminate() ends the worker and rejects every call that has not finished.

import { unreadToWire } from './safetensors.mjs';

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
  createModel: 1,
  loadModel: 1,
  memoryBytes: 0,
  loadStateDict: 1,
  stateDict: 0,
  forward: { mha: 3, model: 1, transformer: 1 },
  generate: 1,
  train: 1,
  backward: 1,
  headImportance: 1,
  attribution: 1,
  patchHeads: 2,
  dispose: 0,
  createKVCache: 1,
  length: 0,
  reset: 0,
};

/** Remote KV caches → their object ids, so that forward's `kvCache` option can name one in the worker. */
const remoteIds = new WeakMap();

/**
 * forward's options (argument `at`) with a remote `kvCache` replaced by `{ attnlabObjectId }` (worker-host.mjs
 * resolves it).
 * @param {any[]} args
 * @param {number} at
 */
function withCacheIds(args, at) {
  const o = args[at];
  if (o === null || typeof o !== 'object' || !remoteIds.has(o.kvCache)) return args;
  const out = args.slice();
  out[at] = { ...o, kvCache: { attnlabObjectId: remoteIds.get(o.kvCache) } };
  return out;
}

/**
 * One call: its message, what to transfer, how to settle it, and its abort signal. An interruptible call (generate)
 * keeps listening to its signal while it runs (the worker is told to stop), and gets progress messages.
 * @typedef {{ msg: any, transfer: Transferable[], resolve: Function, reject: Function, signal?: AbortSignal,
 *             onAbort?: () => void, interruptible?: boolean, onProgress?: (progress: any, id: number) => void,
 *             id?: number }} Entry
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
   * @param {{ onProgress?: (progress: any, id: number) => void }} [running] for an interruptible call (generate)
   */
  send(msg, call = {}, running = undefined) {
    if (this.#ended) return Promise.reject(this.#ended);
    const { signal } = call;
    if (signal?.aborted) return Promise.reject(abortError(signal));
    return new Promise((resolve, reject) => {
      // (readSafetensors' unread 16-bit tensors go as their bits: cloning them would widen their data)
      const wire = { ...msg, args: unreadToWire(msg.args) };
      /** @type {Entry} */
      const entry = { msg: wire, transfer: call.transfer ? [...buffersOf(wire.args)] : [], resolve, reject, signal };
      if (running) {
        entry.interruptible = true;
        entry.onProgress = running.onProgress;
      }
      if (signal) {
        entry.onAbort = () => {
          const i = this.#queue.indexOf(entry);
          if (i >= 0) {
            this.#queue.splice(i, 1);
            reject(abortError(signal));
          } else if (entry.interruptible && entry.id !== undefined) {
            this.#control(entry.id, 'abort'); // the worker stops before its next token
          } // any other call that has started runs to the end
        };
        signal.addEventListener('abort', entry.onAbort, { once: true });
      }
      this.#queue.push(entry);
      this.#pump();
    });
  }

  /**
   * Tells the worker to stop the running generation or training loop `id` ('stop': return what it did so far;
   * 'abort': AbortError), or to go on with the loop's next step ('continue').
   * @param {number} id
   * @param {'stop' | 'abort' | 'continue'} op
   */
  #control(id, op) {
    if (this.#ended || !this.#running.has(id)) return;
    try {
      this.#worker.postMessage({ id, op });
    } catch {
      // the worker is gone: #end rejects the call
    }
  }

  /**
   * Stops the running generation or training loop `id`, keeping what it did so far (onToken or onStep returned
   * false, or threw).
   * @param {number} id
   */
  stop(id) {
    this.#control(id, 'stop');
  }

  /**
   * Lets the training loop `id`, waiting for its onStep, run its next step.
   * @param {number} id
   */
  resume(id) {
    this.#control(id, 'continue');
  }

  #pump() {
    if (this.#running.size > 0 || this.#queue.length === 0) return;
    const entry = /** @type {any} */ (this.#queue.shift());
    if (!entry.interruptible) entry.signal?.removeEventListener('abort', entry.onAbort);
    const id = this.#nextId++;
    entry.id = id;
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
    if (msg.progress) {
      entry.onProgress?.(msg.progress, msg.id);
      return;
    }
    this.#running.delete(msg.id);
    if (entry.interruptible) entry.signal?.removeEventListener('abort', entry.onAbort);
    if (msg.ok) entry.resolve(msg.value);
    else if (msg.error.name === 'AbortError' && entry.signal?.aborted) entry.reject(abortError(entry.signal));
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
    const sent = method === 'forward' ? withCacheIds(args, optionsAt) : args;
    return client.send({ op: 'call', target, method, args: sent }, call).then(wrap);
  };
}

/**
 * model.generate in the worker: `onToken` (a function cannot be posted) stays here and is called for each progress
 * message; returning false (or throwing) stops the generation, whose result then ends at that token (or rejects
 * with the error). `signal` stops it even while it runs.
 * @param {WorkerClient} client
 * @param {number} objectId
 */
function remoteGenerate(client, objectId) {
  return (/** @type {any[]} */ ...given) => {
    const { args, call } = splitCallOptions(given, kOptionsAt.generate);
    const o = args[1];
    /** @type {Function | null} */
    let onToken = null;
    let sent = args;
    if (o !== null && typeof o === 'object' && typeof o.onToken === 'function') {
      const { onToken: f, ...rest } = o;
      onToken = f;
      sent = [args[0], rest, ...args.slice(2)];
    }
    let delivered = 0;
    let kept = -1; // how many ids the caller keeps, once onToken said stop
    /** @type {unknown} */
    let failure;
    let failed = false;
    const onProgress = (/** @type {any} */ p, /** @type {number} */ id) => {
      if (kept >= 0 || failed || call.signal?.aborted) return;
      ++delivered;
      try {
        if (onToken?.(p.id, p.step, p.attentions ? { attentions: p.attentions } : undefined) === false)
          kept = delivered;
      } catch (e) {
        failed = true;
        failure = e;
      }
      if (kept >= 0 || failed) client.stop(id);
    };
    const msg = { op: 'call', target: objectId, method: 'generate', args: sent, progress: onToken !== null };
    return client.send(msg, call, { onProgress }).then((/** @type {Int32Array} */ ids) => {
      if (failed) throw failure;
      if (call.signal?.aborted) throw abortError(call.signal); // aborted after the worker's last token
      return kept >= 0 ? ids.slice(0, kept) : ids;
    });
  };
}

/**
 * model.train in the worker: `onStep` (a function cannot be posted) stays here and is called for each progress
 * message, while the worker waits; then it goes on, or stops when onStep returned false or threw (the call then
 * resolves to the steps done, or rejects with the error). `signal` stops it between steps even while it runs.
 * @param {WorkerClient} client
 * @param {number} objectId
 */
function remoteTrain(client, objectId) {
  return (/** @type {any[]} */ ...given) => {
    const { args, call } = splitCallOptions(given, kOptionsAt.train);
    const o = args[1];
    /** @type {Function | null} */
    let onStep = null;
    let sent = args;
    if (o !== null && typeof o === 'object' && typeof o.onStep === 'function') {
      const { onStep: f, ...rest } = o;
      onStep = f;
      sent = [args[0], rest, ...args.slice(2)];
    }
    /** @type {unknown} */
    let failure;
    let failed = false;
    const onProgress = (/** @type {any} */ p, /** @type {number} */ id) => {
      if (failed || call.signal?.aborted) return; // (an abort has told the worker already)
      let go = true;
      try {
        go = onStep?.({ step: p.step, loss: p.loss, gradNorm: p.gradNorm }) !== false;
      } catch (e) {
        failed = true;
        failure = e;
        go = false;
      }
      if (call.signal?.aborted) return; // onStep aborted it
      if (go) client.resume(id);
      else client.stop(id);
    };
    const msg = { op: 'call', target: objectId, method: 'train', args: sent, progress: onStep !== null };
    return client.send(msg, call, { onProgress }).then((/** @type {any} */ result) => {
      if (failed) throw failure;
      if (call.signal?.aborted) throw abortError(call.signal); // aborted after the worker's last step
      return result;
    });
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

/**
 * The Promise version of a created object: every method of the synchronous one (a model's `config` as a value).
 * @param {WorkerClient} client
 * @param {'mha' | 'model' | 'transformer'} kind
 * @param {number} objectId
 * @param {any} [config] a Transformer's config
 * @param {{ kind?: string, task?: string }} [model] a Transformer's kind and task
 */
function remoteObject(client, kind, objectId, config, model) {
  const m = (/** @type {string} */ name, /** @type {number} */ at) => remote(client, objectId, name, at);
  /** @type {Record<string | symbol, any>} */
  const object = {
    loadStateDict: m('loadStateDict', kOptionsAt.loadStateDict),
    stateDict: m('stateDict', kOptionsAt.stateDict),
    forward: m('forward', kOptionsAt.forward[kind]),
    dispose: m('dispose', kOptionsAt.dispose),
  };
  if (kind === 'mha' || kind === 'transformer') {
    object.createKVCache = remote(client, objectId, 'createKVCache', kOptionsAt.createKVCache, (v) =>
      remoteCache(client, v.objectId),
    );
  }
  if (kind === 'mha') object.backward = m('backward', kOptionsAt.backward);
  else if (kind === 'transformer') {
    Object.assign(object, { config, kind: model?.kind, task: model?.task });
    object.generate = remoteGenerate(client, objectId);
    object.train = remoteTrain(client, objectId);
    object.headImportance = m('headImportance', kOptionsAt.headImportance);
    object.attribution = m('attribution', kOptionsAt.attribution);
    object.patchHeads = m('patchHeads', kOptionsAt.patchHeads);
  }
  // (an encoder–decoder's batch form: lossAndGrad(batch, call?), trainStep(batch, options): its options one earlier)
  const at = model?.kind === 'encoder-decoder' ? 1 : 2;
  if (kind === 'model' || kind === 'transformer')
    Object.assign(object, {
      lossAndGrad: m('lossAndGrad', at),
      trainStep: m('trainStep', at),
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
  const create = (/** @type {string} */ method, /** @type {'mha' | 'model' | 'transformer'} */ kind) =>
    remote(client, 0, method, kOptionsAt[method], ({ objectId, config, ...model }) =>
      remoteObject(client, kind, objectId, config, model),
    );
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
    createModel: create('createModel', 'transformer'),
    loadModel: create('loadModel', 'transformer'),
    terminate: () => client.terminate(),
  };
}
