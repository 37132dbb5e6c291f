// Memory of one attnlab model in a fresh process (spawned by wasm.mjs, one per checkpoint file):
//   node --expose-gc scripts/bench/model/memory.mjs model.safetensors|model-f16.safetensors [variant] [T]
// Prints JSON: wasm memory (the instance's memory size: it grows on demand and never shrinks, so it is the peak so
// far) after init, after loadModel and after a T-token forward with every layer's attention; the JS heap
// (heapUsed) and ArrayBuffers (Node's arrayBuffers: typed arrays outside the wasm memory) at the same points, after
// gc, with the file's bytes held (while loading) and dropped (after).
import fs from 'node:fs';
import path from 'node:path';

import { dims, readConfig, tokenIds } from './common.mjs';
import { modelDir, repoRoot } from './files.mjs';

const file = process.argv[2] ?? 'model.safetensors';
const variant = process.argv[3] ?? 'simd';
const T = Number(process.argv[4] ?? 512);
const gc = globalThis.gc ?? (() => {});
const js = () => {
  gc();
  gc();
  const m = process.memoryUsage();
  return { heapUsed: m.heapUsed, arrayBuffers: m.arrayBuffers, rss: m.rss };
};

const hf = readConfig();
const { init, readSafetensors } = await import(path.join(repoRoot, 'dist/index.mjs'));
const attn = await init({ variant });
const out = { file, variant, T, afterInit: { wasm: attn.memoryBytes(), js: js() } };
let bytes = fs.readFileSync(path.join(modelDir, file));
out.fileBytes = bytes.byteLength;
let tensors = readSafetensors(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
out.withFile = { wasm: attn.memoryBytes(), js: js() };
const t0 = performance.now();
const model = attn.loadModel({ config: hf, tensors });
out.loadS = (performance.now() - t0) / 1e3;
out.atLoadWithFile = { wasm: attn.memoryBytes(), js: js() };
bytes = null;
tensors = null;
out.atLoad = { wasm: attn.memoryBytes(), js: js() };
const ids = tokenIds(T, dims(hf).V);
let r = model.forward({ data: ids, shape: [1, T] }, { outputAttentions: true });
out.outputBytes = r.logits.data.byteLength + r.attentions.reduce((s, a) => s + a.data.byteLength, 0);
out.atT = { wasm: attn.memoryBytes(), js: js() };
r = null;
out.afterT = { wasm: attn.memoryBytes(), js: js() };
model.dispose();
console.log(JSON.stringify(out));
process.exit(0);
