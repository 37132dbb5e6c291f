// The implementations the bench compares, loaded side by side in one process: attnlab (both builds), plain JS,
// onnxruntime-web, tfjs-backend-wasm and onnxruntime-node, each with its memory meter.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { attnlabImpls, maxThreads } from './attnlab-impls.mjs';
import { memoriesOf, setLoadingTag } from './capture-memory.mjs';
import { D, E, H, IMPL_FILTER } from './config.mjs';
import { ortDecode, plainDecode } from './decode-impls.mjs';
import { importOrtWebInstance } from './ort-web-instance.mjs';
import { stateDict } from './inputs.mjs';
import { MiB, fmtMiB } from './stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');
const pkgVersion = (name) =>
  JSON.parse(fs.readFileSync(path.join(here, 'node_modules', name, 'package.json'), 'utf8')).version;

// Each: { name, memKind, memBytes(), prepare(case, inputs) → async run() → Float32Array, skip?(case) → reason,
// prepareDecode?(decodeCase, inputs) → { prefill(), step(i) } (decode.mjs) }; a decode-only peer has no prepare.
export async function loadImplementations({ plainJs }) {
  const impls = [];
  // attnlab: every variant of wasm-variants.json that dist/ holds, the threaded one at each thread count
  impls.push(...(await attnlabImpls()));
  impls.push(await plainPeer(plainJs));
  const { sdpaModel, mhaModel } = await import('./onnx-models.mjs');
  const models = { sdpaBytes: sdpaModel(1 / Math.sqrt(D)), mhaBytes: mhaModel(stateDict, E, H) };
  const ortWeb = await ortWebPeers(models);
  impls.push(...ortWeb.impls);
  const tfjs = await tfjsPeer();
  impls.push(tfjs.impl);
  impls.push(await ortNodePeer(models));
  setLoadingTag('none');
  const versions = {
    node: process.version,
    'onnxruntime-web': pkgVersion('onnxruntime-web'),
    '@tensorflow/tfjs-core': pkgVersion('@tensorflow/tfjs-core'),
    '@tensorflow/tfjs-backend-wasm': pkgVersion('@tensorflow/tfjs-backend-wasm'),
    'onnxruntime-node': pkgVersion('onnxruntime-node'),
    'onnx-proto': pkgVersion('onnx-proto'),
    attnlab: JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).version,
    'attnlab dist built': fs.statSync(path.join(repoRoot, 'dist/attnlab-simd.wasm')).mtime.toISOString(),
  };
  const notes = {
    'ort-web memory': ortWeb.mem.length ? `${ortWeb.mem.length} WebAssembly.Memory captured` : 'not reachable, RSS',
    'tfjs SIMD': tfjs.simd,
    'tfjs memory': tfjs.mem.length ? `${tfjs.mem.length} WebAssembly.Memory captured` : 'not reachable, RSS',
  };
  return { impls: IMPL_FILTER ? impls.filter((i) => IMPL_FILTER.has(i.name)) : impls, versions, notes };
}

/** The plain-JS baseline (web/demo/shared/plain-attention.js, the demo's speed part measures it too). */
async function plainPeer(plainJs) {
  setLoadingTag('plain-js');
  const plain = await plainJs();
  return {
    name: 'plain JS',
    memKind: 'RSS Δ',
    memBytes: () => process.memoryUsage().rss,
    prepare({ op, L }, inp) {
      if (op === 'SDPA') return () => plain.sdpa(inp.q, inp.k, inp.v, H, L, L, D, D, 1 / Math.sqrt(D));
      return () => plain.mha(inp.x, L, E, H, stateDict);
    },
    prepareDecode: plainDecode(plain.createDecoder),
  };
}

/** onnxruntime-web (wasm backend, 1 thread, SIMD), at 2 threads where there are 2 cores, and its GQA decoder. */
async function ortWebPeers({ sdpaBytes, mhaBytes }) {
  const impls = [];
  setLoadingTag('ort-web');
  const ortWeb = await import('onnxruntime-web');
  ortWeb.env.wasm.numThreads = 1;
  ortWeb.env.wasm.simd = true; // (always on in 1.2x+ builds; kept for older versions)
  ortWeb.env.wasm.proxy = false;
  const webOpts = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };
  const webSessions = {
    SDPA: await ortWeb.InferenceSession.create(sdpaBytes, webOpts),
    MHA: await ortWeb.InferenceSession.create(mhaBytes, webOpts),
  };
  const ortWebMem = memoriesOf('ort-web');
  const ortWebImpl = {
    name: 'onnxruntime-web',
    memKind: ortWebMem.length ? 'wasm heap' : 'RSS Δ',
    memBytes: () =>
      ortWebMem.length ? ortWebMem.reduce((s, m) => s + m.buffer.byteLength, 0) : process.memoryUsage().rss,
    prepare: ortPrepare(ortWeb, webSessions),
    // ONNX Attention (opset 23) with past_key/past_value; the contrib GroupQueryAttention below
    prepareDecode: ortDecode(ortWeb, 'Attention', webOpts),
  };
  impls.push(ortWebImpl);
  // onnxruntime-web at numThreads 2 (its threaded wasm, pthreads as worker_threads): a second instance
  if (maxThreads() >= 2) {
    setLoadingTag('ort-web@2');
    const ortWeb2 = await importOrtWebInstance('threads-2');
    ortWeb2.env.wasm.numThreads = 2;
    ortWeb2.env.wasm.proxy = false;
    const sessions2 = {
      SDPA: await ortWeb2.InferenceSession.create(sdpaBytes, webOpts),
      MHA: await ortWeb2.InferenceSession.create(mhaBytes, webOpts),
    };
    const mem2 = memoriesOf('ort-web@2');
    impls.push({
      name: 'onnxruntime-web@2',
      threads: 2,
      memKind: mem2.length ? 'wasm heap' : 'RSS Δ',
      memBytes: () => (mem2.length ? mem2.reduce((s, m) => s + m.buffer.byteLength, 0) : process.memoryUsage().rss),
      prepare: ortPrepare(ortWeb2, sessions2),
      prepareDecode: ortDecode(ortWeb2, 'Attention', webOpts),
    });
  }
  impls.push({
    name: 'onnxruntime-web GQA',
    memKind: ortWebImpl.memKind,
    memBytes: ortWebImpl.memBytes,
    prepareDecode: ortDecode(ortWeb, 'GroupQueryAttention', webOpts),
  });

  return { impls, mem: ortWebMem };
}

/** @tensorflow/tfjs-backend-wasm (1 thread: the non-threaded SIMD binary). */
async function tfjsPeer() {
  setLoadingTag('tfjs-wasm');
  const tf = await import('@tensorflow/tfjs-core');
  const tfWasm = await import('@tensorflow/tfjs-backend-wasm');
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
  tfWasm.setThreadsCount?.(1);
  tfWasm.setWasmPaths(path.join(here, 'node_modules/@tensorflow/tfjs-backend-wasm/dist/'));
  if (!(await tf.setBackend('wasm'))) throw new Error('tfjs: could not set the wasm backend');
  await tf.ready();
  const tfSimd = tf.env().getBool('WASM_HAS_SIMD_SUPPORT');
  // tfjs-backend-wasm's BatchMatMul only takes its XNNPACK path for batch 1 without transpose flags (anything
  // else runs a scalar blocked loop, ~10× slower), so the graph below is written for that: weights stored
  // pre-transposed once, Kᵀ by an explicit transpose, and the heads as a loop of 2-D matmuls.
  const tfW = {
    wInT: tf.transpose(tf.tensor2d(stateDict.in_proj_weight, [3 * E, E])), // (E, 3E)
    bIn: tf.tensor1d(stateDict.in_proj_bias),
    wOutT: tf.transpose(tf.tensor2d(stateDict['out_proj.weight'], [E, E])),
    bOut: tf.tensor1d(stateDict['out_proj.bias']),
  };
  const tfMem = memoriesOf('tfjs-wasm');
  const impl = {
    name: 'tfjs-backend-wasm',
    memKind: tfMem.length ? 'wasm heap' : 'RSS Δ',
    memBytes: () => (tfMem.length ? tfMem.reduce((s, m) => s + m.buffer.byteLength, 0) : process.memoryUsage().rss),
    prepare({ op, L }, inp) {
      const scale = 1 / Math.sqrt(D);
      // q (L, d), k (L, d), v (L, d) for one head → (L, d)
      const head = (q, k, v) => tf.matMul(tf.softmax(tf.mul(tf.matMul(q, tf.transpose(k)), scale)), v);
      if (op === 'SDPA') {
        return () => {
          const q = tf.tensor3d(inp.q, [H, L, D]);
          const k = tf.tensor3d(inp.k, [H, L, D]);
          const v = tf.tensor3d(inp.v, [H, L, D]);
          const out = tf.tidy(() => {
            const [qs, ks, vs] = [q, k, v].map((t) => tf.unstack(t));
            return tf.stack(qs.map((qh, h) => head(qh, ks[h], vs[h])));
          });
          const data = out.dataSync();
          tf.dispose([q, k, v, out]);
          return data;
        };
      }
      return () => {
        const x = tf.tensor2d(inp.x, [L, E]);
        const out = tf.tidy(() => {
          const proj = tf.add(tf.matMul(x, tfW.wInT), tfW.bIn); // (L, 3E)
          const heads = [];
          for (let h = 0; h < H; ++h) {
            const part = (i) => tf.slice(proj, [0, i * E + h * D], [L, D]);
            heads.push(head(part(0), part(1), part(2)));
          }
          return tf.add(tf.matMul(tf.concat(heads, 1), tfW.wOutT), tfW.bOut);
        });
        const data = out.dataSync();
        tf.dispose([x, out]);
        return data;
      };
    },
  };
  return { impl, simd: tfSimd, mem: tfMem };
}

/** onnxruntime-node (native, 1 thread): the native reference. */
async function ortNodePeer({ sdpaBytes, mhaBytes }) {
  setLoadingTag('ort-node');
  const ortNode = await import('onnxruntime-node');
  const nodeOpts = {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  };
  const nodeSessions = {
    SDPA: await ortNode.InferenceSession.create(sdpaBytes, nodeOpts),
    MHA: await ortNode.InferenceSession.create(mhaBytes, nodeOpts),
  };
  return {
    name: 'onnxruntime-node',
    memKind: 'RSS Δ',
    memBytes: () => process.memoryUsage().rss,
    prepare: ortPrepare(ortNode, nodeSessions),
    // Its L×L intermediates at L = 8192 are 2 GiB each (it holds several); only try with room to spare.
    skip: ({ L }) =>
      L >= 8192 && os.freemem() < 8 * 1024 * MiB
        ? `skipped: needs ~6 GiB of RAM for the L×L intermediates, ${fmtMiB(os.freemem())} free`
        : null,
  };
}

function ortPrepare(ort, sessions) {
  return ({ op, L }, inp) => {
    const session = sessions[op];
    if (op === 'SDPA') {
      return async () => {
        const t = (data) => new ort.Tensor('float32', data, [H, L, D]);
        const out = await session.run({ q: t(inp.q), k: t(inp.k), v: t(inp.v) });
        return out.out.data;
      };
    }
    return async () => {
      const out = await session.run({ x: new ort.Tensor('float32', inp.x, [1, L, E]) });
      return out.out.data;
    };
  };
}
