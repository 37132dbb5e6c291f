// Shared by the demo's node tests (tests/js/demo/, mirroring web/demo/): the repository root, the demo folder, and
// attnlab's simd build (dist/, from bash scripts/build.sh) as the page's modules get it.

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../../../web/demo/attnlab.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const DEMO = path.join(ROOT, 'web/demo');

/** attnlab's simd build (memoised by init). */
export const simd = () => init({ variant: 'simd' });

/** Largest |a[i] − b[i]|. @param {ArrayLike<number>} a @param {ArrayLike<number>} b */
export function maxDiff(a, b) {
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
  return d;
}
