// The one module that knows about attnlab's WebAssembly files.
//
// Two builds of the same C++ ship side by side: attnlab-simd.{mjs,wasm} (WebAssembly SIMD128) and
// attnlab-scalar.{mjs,wasm} (no SIMD, for runtimes without it). This module
//   - detects SIMD support with WebAssembly.validate on a tiny SIMD module,
//   - picks the variant ('auto' → 'simd' when supported, else 'scalar'),
//   - finds the .wasm next to this file (`new URL('./attnlab-simd.wasm', import.meta.url)`, written literally so
//     that bundlers such as Vite emit the file as an asset) unless `wasmPaths` says otherwise,
//   - fetches and instantiates it itself (through the glue's `instantiateWasm` hook), so that a failure is one
//     clear Error naming the file and the place it was loaded from, in Node, a page or a worker alike,
//   - memoises one module per (variant, .wasm URL): the same options give the same module, and the SIMD and
//     scalar builds can be loaded side by side.

const kVariants = {
  simd: {
    wasmFile: 'attnlab-simd.wasm',
    glueFile: 'attnlab-simd.mjs',
    importGlue: () => import('./attnlab-simd.mjs'),
    defaultWasmUrl: () => new URL('./attnlab-simd.wasm', import.meta.url),
  },
  scalar: {
    wasmFile: 'attnlab-scalar.wasm',
    glueFile: 'attnlab-scalar.mjs',
    importGlue: () => import('./attnlab-scalar.mjs'),
    defaultWasmUrl: () => new URL('./attnlab-scalar.wasm', import.meta.url),
  },
};

/** The .wasm file name of each variant, e.g. for a `wasmPaths` record. */
export const wasmFileNames = Object.freeze({ simd: kVariants.simd.wasmFile, scalar: kVariants.scalar.wasmFile });

// A module using one SIMD instruction (i8x16.splat + i8x16.popcnt), from wasm-feature-detect.
const kSimdProbe = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11,
]);

let simdSupported;
/** Whether this runtime supports WebAssembly SIMD128. */
export function simdSupport() {
  if (simdSupported === undefined) {
    try {
      simdSupported = typeof WebAssembly === 'object' && WebAssembly.validate(kSimdProbe);
    } catch {
      simdSupported = false;
    }
  }
  return simdSupported;
}

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
  if (options === undefined || options === null) return { variant: 'auto', wasmPaths: undefined };
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`init: options must be an object, got ${typeof options}`);
  }
  const { variant = 'auto', wasmPaths } = options;
  if (typeof variant !== 'string') {
    throw new TypeError(`init: variant must be 'auto', 'simd' or 'scalar', got ${typeof variant}`);
  }
  if (variant !== 'auto' && variant !== 'simd' && variant !== 'scalar') {
    throw new RangeError(`init: variant must be 'auto', 'simd' or 'scalar', got ${JSON.stringify(variant)}`);
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
  return { variant, wasmPaths: wasmPaths ?? undefined };
}

/** The URL the .wasm of `variant` is loaded from, given `wasmPaths`. */
export async function wasmUrlFor(variant, wasmPaths) {
  const { wasmFile, defaultWasmUrl } = kVariants[variant];
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
  '_sdpa',
  '_sdpaMemory',
  '_sdpaBackward',
  '_sdpaBackwardMemory',
  '_multiHeadAttentionMemory',
  '_tinyTransformerMemory',
  '_MultiHeadAttention',
  '_TinyTransformer',
];

async function instantiate(variant, url) {
  const spec = kVariants[variant];
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
  const ready = factory({
    locateFile: (path) => (path === spec.wasmFile ? url.href : new URL(path, url).href),
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
  });
  const Module = await Promise.race([ready, failure]);
  for (const name of kRequiredExports) {
    if (Module[name] === undefined) {
      throw new Error(`attnlab: ${spec.glueFile} loaded from ${url.href} does not export Module.${name}`);
    }
  }
  return Module;
}

const modules = new Map(); // `${variant} ${url}` → Promise<{ Module, variant, wasmUrl }>

/**
 * Loads (once) the raw Emscripten module for `options` ({ variant, wasmPaths } as in init()).
 * Resolves to { Module, variant: 'simd' | 'scalar', wasmUrl: string }.
 */
export async function loadModule(options) {
  const { variant: requested, wasmPaths } = checkInitOptions(options);
  let variant = requested;
  if (variant === 'auto') variant = simdSupport() ? 'simd' : 'scalar';
  else if (variant === 'simd' && !simdSupport()) {
    throw new Error(
      "attnlab: this runtime does not support WebAssembly SIMD; use init({ variant: 'scalar' or 'auto' })",
    );
  }
  const url = await wasmUrlFor(variant, wasmPaths);
  const key = `${variant} ${url.href}`;
  let entry = modules.get(key);
  if (!entry) {
    entry = instantiate(variant, url).then((Module) => ({ Module, variant, wasmUrl: url.href, key }));
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
