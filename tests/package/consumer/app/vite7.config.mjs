// Vite 7's dev server pre-bundles dependencies and then serves HTML for attnlab's .wasm: keep attnlab out of
// the pre-bundling. Workers need the 'es' format, as with Vite 8.
export default {
  logLevel: 'warn',
  optimizeDeps: { exclude: ['attnlab'] },
  worker: { format: 'es' },
};
