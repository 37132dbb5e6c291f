// Run by export_gpt2.py once after export: prefill.onnx and decode.onnx under onnxruntime-node (1 thread) against
// PyTorch's float32 outputs (check-ref.safetensors: input_ids, logits, attn_l of a 64-token prefill). The decode
// graph fills a cache from nothing (P = 0, T = 61) and then decodes tokens 61, 62, 63 one at a time; its logits
// must match the prefill's rows. Prints { maxAbsDiff… } as JSON on stdout.
import { openAsBlob } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

import { repoRoot } from './files.mjs';

const require = createRequire(path.resolve(path.dirname(new URL(import.meta.url).pathname), '../package.json'));
const ort = require('onnxruntime-node');

const { readSafetensors } = await import(path.join(repoRoot, 'dist/index.mjs'));
const dir = process.argv[2];
const ref = await readSafetensors(await openAsBlob(path.join(dir, 'check-ref.safetensors')));
const ids = Array.from(ref.input_ids.data, (x) => BigInt(Math.round(x)));
const T = ids.length;
const [, , V] = ref.logits.shape;
const opts = { intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all' };
const maxAbs = (a, b, off = 0) => {
  let m = 0;
  for (let i = 0; i < a.length; ++i) m = Math.max(m, Math.abs(a[i] - b[off + i]));
  return m;
};

const prefill = await ort.InferenceSession.create(path.join(dir, 'prefill.onnx'), opts);
const out = await prefill.run({ input_ids: new ort.Tensor('int64', BigInt64Array.from(ids), [1, T]) });
const result = { prefillT: T, logits: maxAbs(out.logits.data, ref.logits.data), attentions: 0, decode: 0 };
const L = prefill.outputNames.length - 1;
for (let l = 0; l < L; ++l)
  result.attentions = Math.max(result.attentions, maxAbs(out[`attn_${l}`].data, ref[`attn_${l}`].data));
result.logitsAbsMax = ref.logits.data.reduce((m, x) => Math.max(m, Math.abs(x)), 0);

const decode = await ort.InferenceSession.create(path.join(dir, 'decode.onnx'), opts);
const H = out.attn_0.dims[1];
const past0 = decode.inputNames.filter((n) => n.startsWith('past_'));
const headDim = (() => {
  const meta = decode.inputMetadata?.find?.((m) => m.name === past0[0]);
  return meta?.shape?.[3] ?? 64;
})();
let feeds = {};
for (const n of past0) feeds[n] = new ort.Tensor('float32', new Float32Array(0), [1, H, 0, headDim]);
const P = T - 3;
feeds.input_ids = new ort.Tensor('int64', BigInt64Array.from(ids.slice(0, P)), [1, P]);
let r = await decode.run(feeds);
result.decode = maxAbs(r.logits.data, ref.logits.data.subarray(0, P * V));
for (let t = P; t < T; ++t) {
  feeds = { input_ids: new ort.Tensor('int64', BigInt64Array.from([ids[t]]), [1, 1]) };
  for (const n of past0) feeds[n] = r[n.replace('past_', 'present_')];
  r = await decode.run(feeds);
  result.decode = Math.max(result.decode, maxAbs(r.logits.data, ref.logits.data, t * V));
}
console.error(
  `  onnxruntime-node ${ort.env?.versions?.common ?? ''}: prefill T=${T} max |Δ logits| ${result.logits.toExponential(2)} ` +
    `(|logits| ≤ ${result.logitsAbsMax.toFixed(3)}), attentions ${result.attentions.toExponential(2)}; decode (P=0 → ` +
    `${P}, then 3 cached steps) ${result.decode.toExponential(2)}`,
);
console.log(JSON.stringify(result));
