// ESM consumer of attnlab/analysis: the subpath resolves through the exports map and computes without wasm.
// One layer, one head, T = 2, A = [[1, 0], [0.5, 0.5]], residual 0.5: Â = [[1, 0], [0.25, 0.75]]; the flow from
// position 1 to input 0 is Â[1][0] = 0.25.
import assert from 'node:assert/strict';

import { attentionFlow, rollout } from 'attnlab/analysis';

const attentions = [{ data: new Float32Array([1, 0, 0.5, 0.5]), shape: [1, 1, 2, 2] }];
const r = rollout(attentions);
assert.deepEqual(r.shape, [1, 2, 2]);
assert.deepEqual(Array.from(r.data), [1, 0, 0.25, 0.75]);
const f = attentionFlow(attentions, { query: 1 });
assert.deepEqual(Array.from(f.data), [0.25, 0.75]);
console.log('attnlab/analysis: rollout and attentionFlow of a 2-position layer as computed by hand');
