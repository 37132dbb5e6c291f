// --pre-js of the node-run test and example programs: keep Emscripten's Node branch off `fetch`.
var fetch = (typeof process == 'object' && typeof process.versions == 'object' && typeof process.versions.node == 'string') ? undefined : globalThis.fetch;
