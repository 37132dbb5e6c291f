// The model bench's files (written by export_gpt2.py into build/bench/gpt2-small, outside git) and a minimal
// safetensors reader for them (F32 / F16 headers; the data stay views of the file's bytes).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, '../../..');
export const modelDir = path.resolve(repoRoot, process.env.BENCH_MODEL_DIR ?? 'build/bench/gpt2-small');

/** { name: { dtype, shape, data: Float32Array | Uint16Array } } (without __metadata__). */
export function readSafetensorsLite(file) {
  const buf = fs.readFileSync(file);
  const bytes = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const base = 8 + n;
  const out = {};
  for (const [name, d] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const [a, b] = d.data_offsets;
    // copy into an aligned buffer (the file's data offset need not be a multiple of 4)
    const raw = bytes.slice(base + a, base + b);
    const data = d.dtype === 'F32' ? new Float32Array(raw.buffer) : new Uint16Array(raw.buffer);
    out[name] = { dtype: d.dtype, shape: d.shape, data };
  }
  return out;
}
