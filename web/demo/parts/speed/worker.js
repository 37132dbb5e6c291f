// @ts-check
// Module Web Worker of the speed part: runs compute.js's benchmark off the page's thread, so that even L = 2048
// never blocks the page.
//
// in:  { sizes: number[], E, H, jsMaxL }
// out: { type: 'note' | 'progress' | 'result' | 'done' | 'error', ... }

import { init } from '../../attnlab.js';
import { loadBuilds, runBenchmark } from './compute.js';

self.onmessage = async (ev) => {
  const { sizes, E = 512, H = 8, jsMaxL = 512 } = ev.data;
  /** @param {import('./compute.js').Message} m */
  const post = (m) => postMessage(m);
  try {
    // The threaded build needs shared memory, which only a cross-origin-isolated page (and its workers) has.
    const builds = await loadBuilds(init, self.crossOriginIsolated, post);
    const results = await runBenchmark(builds, { sizes, E, H, jsMaxL }, post);
    postMessage({
      type: 'done',
      results,
      builds: builds.map((b) => ({ variant: b.attn.variant, threads: b.attn.threads })),
      cores: navigator.hardwareConcurrency,
    });
  } catch (e) {
    postMessage({ type: 'error', message: `${e.name || 'Error'}: ${e.message}` });
  }
};
