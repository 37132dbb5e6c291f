// `using` works with the declared [Symbol.dispose] (needs lib esnext.disposable, as any `using` does).
import { init } from 'attnlab';

const attn = await init();
{
  using mha = attn.createMultiHeadAttention({ embedDim: 4, numHeads: 1 });
  mha.forward({ data: new Float32Array(8), shape: [2, 4] }, { data: new Float32Array(8), shape: [2, 4] }, { data: new Float32Array(8), shape: [2, 4] });
}
{
  using model = attn.createTinyTransformer({ vocabSize: 4, embedDim: 4, numHeads: 1 });
  model.trainStep({ data: new Int32Array(3), shape: [1, 3] }, { data: new Int32Array(3), shape: [1, 3] });
}
