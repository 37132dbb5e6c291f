// @ts-check
// The one module that knows about attnlab's WebAssembly files.
//
// Builds of the same C++ ship side by side, one per row of wasm-variants.json (web/src/variants.mjs is generated
// from it): attnlab-simd-threaded.{mjs,wasm,worker.js} (SIMD128 + a pool of pthread workers on shared memory),
// attnlab-simd.{mjs,wasm} (SIMD128, one thread) and attnlab-scalar.{mjs,wasm} (no SIMD). This module
//   - probes each variant (WebAssembly.validate on its probe module; shared memory: SharedArrayBuffer, cross-origin
//     isolation in a page or worker, Node >= 20.16),
//   - picks the variant ('auto' → the first in the table whose probe passes),
//   - finds the .wasm next to this file (variants.mjs: `new URL('./attnlab-simd.wasm', import.meta.url)`, literal
//     so that bundlers such as Vite emit the file as an asset) unless `wasmPaths` says otherwise,
//   - fetches and instantiates it itself (through the glue's `instantiateWasm` hook), so that a failure is one
//     clear Error naming the file and the place it was loaded from, in Node, a page or a worker alike,
//   - for a threaded variant starts threads - 1 workers (they load the module before init resolves) and lets Node
//     exit while they idle (unref),
//   - memoises one module per (variant, threads, .wasm URL): the same options give the same module, and the
//     variants can be loaded side by side.

import { kVariants } from './variants.mjs';

const kByName = new Map(kVariants.map((v) => [v.name, v]));

/** The variants' names, most capable first (wasm-variants.json). */
export const variantNames = Object.freeze(kVariants.map((v) => v.name));

/** The .wasm file name of each variant, e.g. for a `wasmPaths` record. */
export const wasmFileNames = Object.freeze(Object.fromEntries(kVariants.map((v) => [v.name, v.wasmFile])));

// The default pool: one thread per core, at most 4. On the 2-vCPU machines we could measure, 2 threads gave
// (see README "Threads"); beyond 4, each further worker costs its start-up (it compiles the module) and its stack
// while MHA/SDPA at typical sizes (8 heads, a few 64-row blocks) has little left to split. Ask for more with
// init({ threads }).
export const kDefaultThreadCap = 4;
// The most init({ threads }) accepts: each thread is a worker with its own stack in the shared memory.
export const kMaxThreads = 64;

const probeResults = new Map();
/** Whether this runtime validates the variant's probe module (null: no probe). */
function wasmProbe(variant) {
  const bytes = variant.probe.wasm;
  if (!bytes) return typeof WebAssembly === 'object';
  const key = bytes.join(',');
  if (!probeResults.has(key)) {
    let ok;
    try {
      ok = typeof WebAssembly === 'object' && WebAssembly.validate(bytes);
    } catch {
      ok = false;
    }
    probeResults.set(key, ok);
  }
  return probeResults.get(key);
}

/** Whether this runtime supports WebAssembly SIMD128. */
export function simdSupport() {
  return wasmProbe(kByName.get('simd'));
}

// Node's process object where there is one (typed loosely: this package does not depend on @types/node).
const process = /** @type {any} */ (globalThis).process;

const isNode =
  typeof process === 'object' &&
  process !== null &&
  typeof process.versions === 'object' &&
  process.versions !== null &&
  typeof process.versions.node === 'string' &&
  typeof window === 'undefined';

async function nodeBuiltin(name) {
  if (typeof process.getBuiltinModule === 'function') return process.getBuiltinModule(name);
  const specifier = name; // a variable, so bundlers leave this import alone
  return import(/* @vite-ignore */ /* webpackIgnore: true */ specifier);
}

// Node >= 20.16: the version the package's engines field names, with shared memory and worker_threads as the
// threaded glue needs them.
function nodeAtLeast(major, minor) {
  const [a, b] = process.versions.node.split('.').map(Number);
  return a > major || (a === major && b >= minor);
}

/**
 * Why shared memory (a threaded variant) cannot work here, or null when it can: not cross-origin isolated (a page
 * or worker without the COOP/COEP headers), no SharedArrayBuffer, or Node older than 20.16.
 */
export function sharedMemoryProblem() {
  if (isNode) {
    if (!nodeAtLeast(20, 16)) return `Node ${process.versions.node} is older than 20.16`;
  } else if (globalThis.crossOriginIsolated !== true) {
    return (
      'the page is not cross-origin isolated: serve it (and this worker, if any) with the headers ' +
      '`Cross-Origin-Opener-Policy: same-origin` and `Cross-Origin-Embedder-Policy: require-corp`'
    );
  }
  if (typeof SharedArrayBuffer !== 'function') return 'this runtime has no SharedArrayBuffer';
  try {
    const memory = new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true });
    if (!(memory.buffer instanceof SharedArrayBuffer)) return 'this runtime has no shared WebAssembly memory';
  } catch {
    return 'this runtime has no shared WebAssembly memory';
  }
  return null;
}

/** Why `variant` cannot run here, or null when it can. */
function variantProblem(variant) {
  if (!wasmProbe(variant)) {
    return variant.probe.wasm ? 'this runtime does not support WebAssembly SIMD' : 'this runtime has no WebAssembly';
  }
  return variant.probe.sharedMemory ? sharedMemoryProblem() : null;
}

const glueChecks = new Map(); // glue file → Promise<string | null>
/**
 * Browsers: why a threaded variant's workers could not start, or null. Each worker imports the variant's glue by
 * its own URL, so the glue must be served as a module at that URL, next to this file, with its worker script:
 * true for the package as published (a plain static server, an import map, a CDN), not when a bundler has merged
 * the glue into its own chunks (webpack, Vite build). Asked once per glue with a HEAD request.
 */
function glueProblem(variant) {
  if (isNode) return Promise.resolve(null);
  if (!glueChecks.has(variant.glueFile)) {
    const here = import.meta.url; // a variable: bundlers must not take the URL below for an asset of theirs
    const url = new URL(variant.glueFile, here);
    const problem = (async () => {
      if (url.protocol === 'file:') return `its glue is not served next to this file (a bundle with ${url.href})`;
      const origin = globalThis.location?.origin;
      if (origin && url.origin !== origin) return `its workers cannot start from another origin (${url.origin})`;
      try {
        const response = await fetch(url.href, { method: 'HEAD', credentials: 'same-origin' });
        // Read the (empty) body: Chromium gives a HEAD response a body stream and, when nobody reads it, cancels
        // the request after its 200 arrived (net::ERR_ABORTED, a failed request in the network log).
        await response.arrayBuffer();
        const type = response.headers.get('Content-Type') || '';
        if (response.ok && /javascript/.test(type)) return null;
        return `its glue is not served as a module at ${url.href} (HTTP ${response.status}, ${type || 'no type'})`;
      } catch (e) {
        return `its glue could not be fetched from ${url.href} (${e?.message ?? e})`;
      }
    })();
    glueChecks.set(variant.glueFile, problem);
  }
  return glueChecks.get(variant.glueFile);
}

/** The default thread count: one per core (navigator.hardwareConcurrency / os.availableParallelism()), capped. */
async function defaultThreads() {
  let cores = globalThis.navigator?.hardwareConcurrency;
  if (isNode) {
    const os = await nodeBuiltin('node:os');
    cores = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  }
  return Math.max(1, Math.min(kDefaultThreadCap, Number.isInteger(cores) ? cores : 1));
}

/** Resolves a user-given location (URL, relative URL or, in Node, a file path) to an absolute URL. */
async function resolveLocation(location) {
  if (isNode) {
    if (/^[a-zA-Z][a-zA-Z0-9+.-]+:/.test(location)) return new URL(location); // file:, http:, data: …
    const path = await nodeBuiltin('node:path');
    const url = await nodeBuiltin('node:url');
    return url.pathToFileURL(path.resolve(location)); // absolute or cwd-relative path (also C:\… on Windows)
  }
  const base = globalThis.document?.baseURI ?? globalThis.location?.href ?? import.meta.url;
  return new URL(location, base);
}

function checkInitOptions(options) {
  if (options === undefined || options === null) return { variant: 'auto', threads: undefined, wasmPaths: undefined };
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`init: options must be an object, got ${typeof options}`);
  }
  const { variant = 'auto', threads, wasmPaths } = options;
  const names = ['auto', ...variantNames].map((n) => `'${n}'`).join(', ');
  if (typeof variant !== 'string') {
    throw new TypeError(`init: variant must be one of ${names}, got ${typeof variant}`);
  }
  if (variant !== 'auto' && !kByName.has(variant)) {
    throw new RangeError(`init: variant must be one of ${names}, got ${JSON.stringify(variant)}`);
  }
  if (threads !== undefined && threads !== null) {
    if (typeof threads !== 'number') throw new TypeError(`init: threads must be a number, got ${typeof threads}`);
    if (!Number.isInteger(threads) || threads < 1 || threads > kMaxThreads) {
      throw new RangeError(`init: threads must be an integer in [1, ${kMaxThreads}], got ${threads}`);
    }
  }
  if (wasmPaths !== undefined && wasmPaths !== null) {
    if (typeof wasmPaths === 'object' && !Array.isArray(wasmPaths)) {
      for (const [file, url] of Object.entries(wasmPaths)) {
        if (typeof url !== 'string' && !(url instanceof URL)) {
          throw new TypeError(`init: wasmPaths[${JSON.stringify(file)}] must be a URL string, got ${typeof url}`);
        }
      }
    } else if (typeof wasmPaths !== 'string' && !(wasmPaths instanceof URL)) {
      throw new TypeError(
        `init: wasmPaths must be a URL prefix string or a { fileName: url } record, got ${
          Array.isArray(wasmPaths) ? 'an array' : typeof wasmPaths
        }`,
      );
    }
  }
  return { variant, threads: threads ?? undefined, wasmPaths: wasmPaths ?? undefined };
}

/** The URL the .wasm of `variant` is loaded from, given `wasmPaths`. */
export async function wasmUrlFor(variant, wasmPaths) {
  const { wasmFile, defaultWasmUrl } = kByName.get(variant);
  if (wasmPaths instanceof URL) return new URL(wasmFile, wasmPaths);
  if (typeof wasmPaths === 'string') return resolveLocation(wasmPaths + wasmFile); // a prefix, as in onnxruntime-web
  if (wasmPaths && Object.prototype.hasOwnProperty.call(wasmPaths, wasmFile)) {
    return resolveLocation(String(wasmPaths[wasmFile]));
  }
  return defaultWasmUrl();
}

async function fetchWasm(url, imports) {
  if (isNode && url.protocol === 'file:') {
    const fs = await nodeBuiltin('node:fs/promises');
    const nodeUrl = await nodeBuiltin('node:url');
    const bytes = await fs.readFile(nodeUrl.fileURLToPath(url));
    return WebAssembly.instantiate(bytes, imports);
  }
  if (typeof fetch !== 'function') throw new Error('this runtime has no fetch()');
  const response = await fetch(url.href, { credentials: 'same-origin' });
  if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`.trim());
  const type = response.headers.get('Content-Type') || '';
  if (typeof WebAssembly.instantiateStreaming === 'function' && type.split(';')[0].trim() === 'application/wasm') {
    return WebAssembly.instantiateStreaming(response, imports);
  }
  return WebAssembly.instantiate(await response.arrayBuffer(), imports); // e.g. a server without the wasm MIME type
}

function loadError(spec, variant, url, cause) {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new Error(
    `attnlab: could not load ${spec.wasmFile} (variant '${variant}') from ${url.href}: ${reason}. ` +
      `If the .wasm files are served from another place, pass init({ wasmPaths }) with their folder URL ` +
      `(a prefix ending in '/') or a { '${spec.wasmFile}': url } record.`,
    { cause },
  );
}

const kRequiredExports = [
  '_malloc',
  '_free',
  'HEAPU8',
  'HEAPF32',
  'HEAP32',
  '_MaskKind',
  '_maxMemoryBytes',
  '_setThreads',
  '_threads',
  '_sdpa',
  '_sdpaMemory',
  '_sdpaBackward',
  '_sdpaBackwardMemory',
  '_multiHeadAttentionMemory',
  '_tinyTransformerMemory',
  '_MultiHeadAttention',
  '_TinyTransformer',
];

async function instantiate(variant, url, threads) {
  const spec = kByName.get(variant);
  let factory;
  try {
    factory = (await spec.importGlue()).default;
  } catch (cause) {
    throw new Error(
      `attnlab: could not import the glue ${spec.glueFile} next to ${import.meta.url}: ${cause?.message ?? cause}`,
      { cause },
    );
  }
  let failed;
  const failure = new Promise((_, reject) => {
    failed = reject;
  });
  const options = {
    instantiateWasm(imports, receiveInstance) {
      fetchWasm(url, imports).then(
        (result) => {
          try {
            receiveInstance(result.instance, result.module);
          } catch (e) {
            failed(loadError(spec, variant, url, e));
          }
        },
        (e) => failed(loadError(spec, variant, url, e)),
      );
      return {}; // instantiation is asynchronous
    },
  };
  if (spec.threads) {
    // threads - 1 workers besides the calling thread; at least one, since the glue of Emscripten 3.1.6 waits for
    // the pool to load and never finishes with an empty one. No locateFile: the glue then finds its worker with
    // `new URL('attnlab-…worker.js', import.meta.url)`, next to itself, as bundlers expect (a worker cannot come
    // from another origin, so wasmPaths moves only the .wasm).
    options.attnlabPoolSize = Math.max(1, threads - 1);
    if (isNode) await checkWorkerFile(spec);
  } else {
    options.locateFile = (path) => (path === spec.wasmFile ? url.href : new URL(path, url).href);
  }
  const ready = factory(options); // the glue's Module is `options` itself: options.PThread holds the pool
  const workers = () => [...(options.PThread?.unusedWorkers ?? []), ...(options.PThread?.runningWorkers ?? [])];
  let Module;
  try {
    Module = await Promise.race([ready, failure]);
  } catch (e) {
    for (const w of workers()) w.terminate(); // a failed load leaves no worker behind
    throw e;
  }
  for (const name of kRequiredExports) {
    if (Module[name] === undefined) {
      throw new Error(`attnlab: ${spec.glueFile} loaded from ${url.href} does not export Module.${name}`);
    }
  }
  if (spec.threads) {
    Module._setThreads(threads);
    // Idle workers must not keep Node alive (they do while init runs): the process exits when the caller's work is.
    if (isNode) for (const w of workers()) w.unref();
  }
  return Module;
}

/** Node: a clear Error when the pthread worker script is missing (a missing worker would otherwise never load). */
async function checkWorkerFile(spec) {
  const workerFile = spec.files.find((f) => f.endsWith('.worker.js'));
  const fs = await nodeBuiltin('node:fs/promises');
  const here = import.meta.url; // not `new URL(…, import.meta.url)` with a computed name: bundlers reject that
  const where = new URL(workerFile, here);
  try {
    await fs.access(where);
  } catch (cause) {
    throw new Error(`attnlab: the pthread worker ${workerFile} of variant '${spec.name}' is missing at ${where.href}`, {
      cause,
    });
  }
}

const modules = new Map(); // `${variant} ${threads} ${url}` → Promise<{ Module, variant, threads, wasmUrl, key }>

/**
 * Loads (once) the raw Emscripten module for `options` ({ variant, threads, wasmPaths } as in init()).
 * Resolves to { Module, variant, threads, wasmUrl: string, key }.
 */
export async function loadModule(options) {
  const { variant: requested, threads: requestedThreads, wasmPaths } = checkInitOptions(options);
  let variant = requested;
  // A threaded variant also needs its glue where its workers will import it (see glueProblem).
  const problemOf = async (v) => variantProblem(v) ?? (v.threads ? await glueProblem(v) : null);
  if (variant === 'auto') {
    variant = undefined;
    for (const v of kVariants) {
      if ((await problemOf(v)) === null) {
        variant = v.name;
        break;
      }
    }
    if (!variant) throw new Error('attnlab: this runtime has no WebAssembly');
  } else {
    const problem = await problemOf(kByName.get(variant));
    if (problem) {
      throw new Error(`attnlab: variant '${variant}' cannot run here: ${problem}; use init({ variant: 'auto' })`);
    }
  }
  const threads = kByName.get(variant).threads ? (requestedThreads ?? (await defaultThreads())) : 1;
  const url = await wasmUrlFor(variant, wasmPaths);
  const key = `${variant} ${threads} ${url.href}`;
  let entry = modules.get(key);
  if (!entry) {
    entry = instantiate(variant, url, threads).then((Module) => ({ Module, variant, threads, wasmUrl: url.href, key }));
    modules.set(key, entry);
    entry.catch(() => {
      if (modules.get(key) === entry) modules.delete(key); // a failed load may be retried
    });
  }
  return entry;
}

/** Forgets a loaded module (after it aborted), so that the next init() with the same options loads a fresh one. */
export function forgetModule(key) {
  modules.delete(key);
}
