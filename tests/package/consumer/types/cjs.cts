// Type-checks the CommonJS typings (index.d.cts): a .cts file compiles to require('attnlab').
import { init, type Attnlab, type Tensor } from 'attnlab';

async function main(): Promise<number> {
  const attn: Attnlab = await init({ variant: 'scalar' });
  const t: Tensor = { data: new Float32Array(4), shape: [1, 4] };
  const { output, weights } = attn.scaledDotProductAttention(t, t, t, { needWeights: false });
  // @ts-expect-error shape is number[]
  const bad: Tensor = { data: new Float32Array(4), shape: '1,4' };
  void bad;
  return output.data.length + (weights ? 1 : 0);
}
export = main;
