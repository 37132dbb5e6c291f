// Type-checks the typings under moduleResolution "bundler" (what Vite projects use).
import { init } from 'attnlab';
import type { MultiHeadAttentionForwardOptions, SdpaOptions, StateDict, Variant } from 'attnlab';

const options: SdpaOptions = { isCausal: true };
const forward: MultiHeadAttentionForwardOptions = { needWeights: true, averageAttnWeights: true };
const state: StateDict = { 'out_proj.bias': new Float32Array(4) };
const v: Variant = 'scalar';
init({ variant: v }).then((attn) => attn.scaledDotProductAttention({ data: new Float32Array(4), shape: [1, 4] }, { data: new Float32Array(4), shape: [1, 4] }, { data: new Float32Array(4), shape: [1, 4] }, options));
export { forward, state };
