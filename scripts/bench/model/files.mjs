// The model bench's files (written by export_gpt2.py into build/bench/gpt2-small, outside git); they are read with
// the package's readSafetensors (dist/index.mjs).
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, '../../..');
export const modelDir = path.resolve(repoRoot, process.env.BENCH_MODEL_DIR ?? 'build/bench/gpt2-small');
