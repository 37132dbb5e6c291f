// Vite 8 (dev server and production build): no attnlab-specific setting is needed. `worker.format: 'es'` is for
// the production build: attnlab loads its wasm glue with a dynamic import(), which needs code splitting, and
// Vite's default 'iife' worker format cannot split.
export default {
  base: './',
  logLevel: 'warn',
  build: { target: 'es2022', outDir: 'dist', emptyOutDir: true },
  worker: { format: 'es' },
};
