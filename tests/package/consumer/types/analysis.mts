// Type-checks attnlab/analysis (analysis.d.ts) as a `"type": "module"` consumer under moduleResolution nodenext:
// what a forward returns goes in, float32 (B, T, T) and (B, T) tensors come out.
import {
  attentionFlow,
  kMaxFlowLength,
  rollout,
  type AnalysisTensor,
  type AttentionFlowOptions,
  type AttentionsInput,
  type RolloutOptions,
} from 'attnlab/analysis';
import type { Tensor } from 'attnlab';

const layer: Tensor = { data: new Float32Array(16), shape: [1, 1, 4, 4] };
const dimsLayer: AttentionsInput = { data: new Float64Array(16), dims: [1, 1, 4, 4] };
const options: RolloutOptions = { residual: 0.5, heads: [0] };
const r: AnalysisTensor = rollout([layer, dimsLayer], options);
const rolled: Float32Array = r.data;
rollout([layer], { heads: 'mean' });
rollout([layer]);
const flowOptions: AttentionFlowOptions = { query: 3, residual: 0 };
const f: Tensor = attentionFlow([layer], flowOptions);
const limit: number = kMaxFlowLength;
// @ts-expect-error query is required
attentionFlow([layer], { residual: 0.5 });
// @ts-expect-error heads is 'mean' or indices
rollout([layer], { heads: 'max' });
// @ts-expect-error data is Float32Array | Float64Array
rollout([{ data: [0, 1], shape: [1, 1, 1, 2] }]);

export { f, limit, rolled };
