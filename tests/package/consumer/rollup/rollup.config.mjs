import { nodeResolve } from '@rollup/plugin-node-resolve';
import { importMetaAssets } from '@web/rollup-plugin-import-meta-assets';

export default {
  input: 'rollup/main.js',
  output: { dir: 'rollup/dist', format: 'es' },
  plugins: [nodeResolve(), importMetaAssets()],
};
