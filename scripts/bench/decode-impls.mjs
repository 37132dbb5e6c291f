// The decode step of each peer (decode.mjs): prepareDecode(case, inputs) → { prefill(), step(i), dispose() }.
import { E, H } from './config.mjs';
import { decodeWeights } from './inputs.mjs';
import { decodeModel } from './onnx-models.mjs';

// onnxruntime-web: one session per (Hkv, op); the cache is functional (past_key/past_value in, present_key /
// present_value out, each a JS array copied into and out of the wasm heap by session.run), so a step feeds the
// previous step's present tensors back as past. The context's K/V: inputs.contextKv (decode.mjs projectContext).
export function ortDecode(ort, op, sessionOptions) {
  const sessions = new Map();
  return async ({ context, kvHeads }, inputs) => {
    const key = `${kvHeads}`;
    if (!sessions.has(key)) {
      const bytes = decodeModel(decodeWeights(kvHeads), E, H, kvHeads, op);
      sessions.set(key, await ort.InferenceSession.create(bytes, sessionOptions));
    }
    const session = sessions.get(key);
    const ctx = inputs.contextKv;
    const d = E / H;
    let pastKey;
    let pastValue;
    let length;
    return {
      prefill() {
        pastKey = new ort.Tensor('float32', ctx.k, [1, kvHeads, context, d]);
        pastValue = new ort.Tensor('float32', ctx.v, [1, kvHeads, context, d]);
        length = context;
      },
      async step(i) {
        const feeds = {
          x: new ort.Tensor('float32', inputs.tokens.subarray(i * E, (i + 1) * E), [1, 1, E]),
          past_key: pastKey,
          past_value: pastValue,
        };
        if (op === 'GroupQueryAttention') {
          feeds.seqlens_k = new ort.Tensor('int32', Int32Array.of(length), [1]); // total length − 1
          feeds.total_sequence_length = new ort.Tensor('int32', Int32Array.of(length + 1), []);
        }
        const out = await session.run(feeds);
        pastKey = out.present_key;
        pastValue = out.present_value;
        length += 1;
        return out.out.data;
      },
    };
  };
}

// plain JS (web/demo/shared/plain-attention.js createDecoder): the cache filled from the context's K/V, then one step per token.
export function plainDecode(createDecoder) {
  return ({ context, kvHeads }, inputs) => {
    const ctx = inputs.contextKv;
    const dec = createDecoder(decodeWeights(kvHeads), E, H, kvHeads, context + inputs.steps);
    return {
      prefill: () => dec.load(ctx.k, ctx.v, context),
      step: (i) => dec.step(inputs.tokens.subarray(i * E, (i + 1) * E)),
    };
  };
}
