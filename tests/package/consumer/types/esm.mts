// Type-checks the ESM typings (index.d.ts) as a `"type": "module"` consumer under moduleResolution nodenext.
import {
  createRng,
  init,
  readSafetensors,
  writeSafetensors,
  type Attnlab,
  type AttentionGradients,
  type AttentionResult,
  type LossAndGrad,
  type Mask,
  type SafetensorsTensors,
  type MultiHeadAttention,
  type MultiHeadAttentionGradients,
  type Rng,
  type Tensor,
  type TinyTransformer,
  type TinyTransformerOutput,
  type Tokens,
  type TrainStepResult,
} from 'attnlab';

const attn: Attnlab = await init({ variant: 'auto', wasmPaths: '/assets/' });
const variant: 'simd-threaded' | 'simd' | 'scalar' = attn.variant;
const version: string = attn.version;
const bytes: number = attn.memoryBytes();

const q: Tensor = { data: new Float32Array(12), shape: [3, 4] };
const boolMask: Mask = { data: new Uint8Array(9), shape: [3, 3] };
const floatMask: Mask = { data: new Float32Array(9), shape: [3, 3] };
const r: AttentionResult = attn.scaledDotProductAttention(q, q, q, { attnMask: boolMask, isCausal: true, scale: 0.5, needWeights: true });
const out: Float32Array = r.output.data;
const w: Float32Array | undefined = r.weights?.data;
attn.scaledDotProductAttention(q, q, q, { attnMask: floatMask });
attn.scaledDotProductAttention(q, q, q);

const mha: MultiHeadAttention = attn.createMultiHeadAttention({
  embedDim: 8, numHeads: 2, bias: true, addBiasKV: false, addZeroAttn: false, kdim: 8, vdim: 8, batchFirst: true,
});
mha.loadStateDict({ in_proj_weight: new Float32Array(192), 'out_proj.weight': { data: new Float32Array(64), shape: [8, 8] } });
const dict: Record<string, Tensor> = mha.stateDict();
const f = mha.forward(q, q, q, { keyPaddingMask: boolMask, attnMask: floatMask, needWeights: false, averageAttnWeights: false });
const fo: Tensor = f.output;
mha.forward(q, q, q, { requiresGrad: true });
const mg: MultiHeadAttentionGradients = mha.backward(q);
const gp: Tensor | undefined = mg.gradParams['in_proj_weight'];
const sg: AttentionGradients = attn.scaledDotProductAttentionBackward(q, q, q, q, { attnMask: boolMask, isCausal: true, scale: 0.5 });
const gq: Tensor = sg.gradQuery;
mha[Symbol.dispose]();
mha.dispose();
await init({ wasmPaths: { 'attnlab-simd.wasm': 'https://example.com/a.wasm' } });

const model: TinyTransformer = attn.createTinyTransformer({ vocabSize: 10, embedDim: 8, numHeads: 2, causal: true });
const tokens: Tokens = { data: new Int32Array(12), shape: [2, 6] };
model.loadStateDict({ 'readout.bias': new Float32Array(10), 'readout.weight': { data: new Float32Array(80), shape: [10, 8] } });
const params: Record<string, Tensor> = model.stateDict();
const mo: TinyTransformerOutput = model.forward(tokens);
const lg: LossAndGrad = model.lossAndGrad(tokens, tokens);
const loss: number = lg.loss + mo.logits.data.length + mo.weights.shape.length;
const ts: TrainStepResult = model.trainStep(tokens, tokens, { lr: 1e-3 });
model.trainStep(tokens, tokens);
model[Symbol.dispose]();
model.dispose();

const st: SafetensorsTensors = readSafetensors(new Uint8Array(16));
const meta: string | undefined = st.__metadata__['format'];
// (a Blob or File: anything with its size and byte ranges; this consumer has no DOM types)
const blob = { size: 0, slice: () => ({ arrayBuffer: async () => new ArrayBuffer(0) }) };
const fromBlob: Promise<SafetensorsTensors> = readSafetensors(blob);
const written: Uint8Array = writeSafetensors(params, { format: 'pt' });
writeSafetensors(await fromBlob, st.__metadata__);

const rng: Rng = createRng(7);
const draws: number = rng() + rng.int(6) + rng.normal() + createRng()();

// @ts-expect-error data must be a Float32Array
attn.scaledDotProductAttention({ data: [1, 2, 3], shape: [3] }, q, q);
// @ts-expect-error mask data is Uint8Array | Float32Array
attn.scaledDotProductAttention(q, q, q, { attnMask: { data: new Float64Array(9), shape: [3, 3] } });
// @ts-expect-error unknown variant
await init({ variant: 'gpu' });
// @ts-expect-error embedDim is required
attn.createMultiHeadAttention({ numHeads: 2 });
// @ts-expect-error isCausal is a boolean
attn.scaledDotProductAttention(q, q, q, { isCausal: 1 });
// @ts-expect-error needWeights is not an option of the backward
attn.scaledDotProductAttentionBackward(q, q, q, q, { needWeights: true });
// @ts-expect-error token data must be an Int32Array
model.forward({ data: new Float32Array(12), shape: [2, 6] });
// @ts-expect-error vocabSize is required
attn.createTinyTransformer({ embedDim: 8, numHeads: 2 });
// @ts-expect-error lr is a number
model.trainStep(tokens, tokens, { lr: '0.01' });
// @ts-expect-error the seed is a number
createRng('7');

export { bytes, dict, draws, fo, gp, gq, loss, meta, out, params, ts, variant, version, w, written };
