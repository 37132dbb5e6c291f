// The bench's wasm memory capture; importing it patches WebAssembly, so run.mjs imports it before any wasm library.
// onnxruntime-web creates its (shared) memory in JS with `new WebAssembly.Memory`; tfjs-backend-wasm's module
// exports its memory from the instance. We record both, tagged with the library being loaded at that moment.
const capturedMemories = [];
let loadingTag = 'none';
{
  const OrigMemory = WebAssembly.Memory;
  const PatchedMemory = function Memory(...args) {
    const memory = new OrigMemory(...args);
    capturedMemories.push({ tag: loadingTag, memory });
    return memory;
  };
  PatchedMemory.prototype = OrigMemory.prototype;
  WebAssembly.Memory = PatchedMemory;
  const recordExports = (result) => {
    const instance = result instanceof WebAssembly.Instance ? result : result?.instance;
    if (instance) {
      for (const value of Object.values(instance.exports)) {
        if (value instanceof OrigMemory && !capturedMemories.some((m) => m.memory === value)) {
          capturedMemories.push({ tag: loadingTag, memory: value });
        }
      }
    }
    return result;
  };
  const origInstantiate = WebAssembly.instantiate;
  WebAssembly.instantiate = function instantiate(...args) {
    return origInstantiate.apply(this, args).then(recordExports);
  };
  if (WebAssembly.instantiateStreaming) {
    const origStreaming = WebAssembly.instantiateStreaming;
    WebAssembly.instantiateStreaming = function instantiateStreaming(...args) {
      return origStreaming.apply(this, args).then(recordExports);
    };
  }
}
export const memoriesOf = (tag) => capturedMemories.filter((m) => m.tag === tag).map((m) => m.memory);

/** Tags the memories created from now on with the library being loaded. */
export function setLoadingTag(tag) {
  loadingTag = tag;
}
