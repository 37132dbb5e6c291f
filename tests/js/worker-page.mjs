// Imported by the pages of the Chromium worker tests (transformer, transformer_train), not by Node: the same model
// made on the page and in a module Web Worker, both of the SIMD build.
export async function pageAndWorkerModels(config) {
  const { init } = await import('/dist/index.mjs');
  const { initWorker } = await import('/dist/worker.mjs');
  const attn = await init({ variant: 'simd' });
  const w = await initWorker({ variant: 'simd' });
  return { w, local: attn.createModel(config), remote: await w.createModel(config) };
}
