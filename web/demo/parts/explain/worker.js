// @ts-check
// Module Web Worker of part "explain": runs the uniform-attention baseline (baseline.js) off the page's thread.
// in:  { variant, records, seed, steps }  (records: held-out.jsonl's)
// out: { type: 'step', kind, step, loss } every 10 steps, then { type: 'done', result } or { type: 'error', message }

import { init } from '../../attnlab.js';
import { uniformBaseline } from './baseline.js';

self.onmessage = async (ev) => {
  const { variant, records, seed, steps } = ev.data;
  try {
    const attn = await init({ variant });
    const onStep = (/** @type {string} */ kind, /** @type {number} */ step, /** @type {number} */ loss) => {
      if (step % 10 === 0) postMessage({ type: 'step', kind, step, loss });
    };
    const r = uniformBaseline(attn, records, { seed, steps, onStep });
    const pick = (/** @type {typeof r.learned} */ x) => ({ accuracy: x.accuracy, loss: x.losses.at(-1) });
    postMessage({ type: 'done', result: { ...r, learned: pick(r.learned), uniform: pick(r.uniform) } });
  } catch (e) {
    postMessage({ type: 'error', message: `${e.name || 'Error'}: ${e.message}` });
  }
};
