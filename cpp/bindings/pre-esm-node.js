// --pre-js of the ES-module build: gives Emscripten 3.1.6's Node branch the `require` and `__dirname` an ES
// module lacks, and keeps it off `fetch` (which cannot read file paths). No effect in browsers and workers.
var ENV_NODE_ = typeof process == 'object' && typeof process.versions == 'object' && typeof process.versions.node == 'string';
var require = ENV_NODE_ ? process.getBuiltinModule : undefined;
var __dirname = ENV_NODE_ ? decodeURIComponent(new URL('.', _scriptDir).pathname) : '';
var fetch = ENV_NODE_ ? undefined : globalThis.fetch;
if (ENV_NODE_ && !Module['locateFile']) Module['locateFile'] = function (path, dir) { return dir + path; };
// Emscripten's pthread support (the threaded variants) assigns `global.Worker` in Node: it gets a module-local
// `global` and `Worker` instead, so that loading attnlab changes no global of the host.
var global = ENV_NODE_ ? Object.create(globalThis) : undefined;
var Worker = ENV_NODE_ ? process.getBuiltinModule('worker_threads').Worker : globalThis.Worker;
