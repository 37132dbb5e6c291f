// Production build of the consumer app. `worker.format: 'es'` because attnlab loads its wasm glue with a
// dynamic import(), which needs code splitting (Vite's default 'iife' worker format cannot split).
export default {
  base: './',
  logLevel: 'warn',
  build: { target: 'es2022', outDir: 'dist', emptyOutDir: true },
  worker: { format: 'es' },
};
