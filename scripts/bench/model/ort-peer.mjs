// An onnxruntime peer of the model bench (onnxruntime-web in wasm.mjs, onnxruntime-node in native.mjs): the
// prefill.onnx and decode.onnx sessions of export_gpt2.py behind the interface cases.mjs times.
import { dims } from './common.mjs';

/**
 * @param ort the onnxruntime module (its Tensor class)
 * @param sessions { prefill, decode } InferenceSessions
 * @param o { name, threads, hf, ids (Int32Array), mem?, memBytes?, loadS?, startPasts (Map shared by the peers
 *   of one process: the cache after n tokens, computed once) }
 */
export function ortPeer(ort, sessions, o) {
  const { H, D, L } = dims(o.hf);
  const ids = o.ids;
  const bigIds = (a, b) => BigInt64Array.from(ids.subarray(a, b), (x) => BigInt(x));
  const attnNames = Array.from({ length: L }, (_, l) => `attn_${l}`);
  const pastNames = sessions.decode.inputNames.filter((n) => n.startsWith('past_'));
  const startPasts = o.startPasts ?? new Map();
  return {
    name: o.name,
    kind: 'ort',
    threads: o.threads,
    cpu: o.cpu, // 'main' (onnxruntime-web at 1 thread computes on the JS thread) or 'process'
    mem: o.mem,
    loadS: o.loadS,
    memBytes: o.memBytes,
    sessions,
    prefill(T) {
      return async () => {
        const out = await sessions.prefill.run({ input_ids: new ort.Tensor('int64', bigIds(0, T), [1, T]) });
        return { logits: out.logits.data, attentions: attnNames.map((n) => out[n].data) };
      };
    },
    decoder() {
      let past = null;
      let pos = 0;
      return {
        // The cache after n tokens: decode.onnx once over ids[0, n) from an empty past (P = 0), computed by the
        // first onnxruntime peer that needs it and shared (its arrays) with the others; not timed.
        async fill(n) {
          let start = startPasts.get(n);
          if (!start) {
            const feeds = { input_ids: new ort.Tensor('int64', bigIds(0, n), [1, n]) };
            for (const p of pastNames) feeds[p] = new ort.Tensor('float32', new Float32Array(0), [1, H, 0, D]);
            const out = await sessions.decode.run(feeds);
            start = Object.fromEntries(pastNames.map((p) => [p, out[p.replace('past_', 'present_')].data]));
            startPasts.set(n, start);
          }
          past = Object.fromEntries(pastNames.map((p) => [p, new ort.Tensor('float32', start[p], [1, H, n, D])]));
          pos = n;
        },
        // One token: its logits; the presents become the next step's past (copied in and out by onnxruntime).
        async step() {
          const out = await sessions.decode.run({
            input_ids: new ort.Tensor('int64', bigIds(pos, pos + 1), [1, 1]),
            ...past,
          });
          past = Object.fromEntries(pastNames.map((p) => [p, out[p.replace('past_', 'present_')]]));
          pos += 1;
          return out.logits.data;
        },
        dispose() {
          past = null;
        },
      };
    },
  };
}
