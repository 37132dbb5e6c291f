// Which real checkpoints load within attnlab's wasm memory cap (docs/benchmarks.md, "What fits"; not a test): for each
// config.json below (the published checkpoints' sizes), the parameter memory that loadModel checks before anything is
// allocated, as the library itself reports it (the raw module's _transformerMemory, the figures of loadModel's
// RangeError), in float32 and in 16 bits, against _maxMemoryBytes. A load also stages one piece of a tensor (at most
// _loadPieceBytes(), with its float32 copies): that part is in the sum.
//   node scripts/bench/model/fits.mjs [DIST]        (default dist/)
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { repoRoot } from './files.mjs';

const llama = (o) => ({ model_type: 'llama', rms_norm_eps: 1e-5, rope_theta: 10000, ...o });
const qwen = (type, o) => ({ model_type: type, rms_norm_eps: 1e-6, rope_theta: 1e6, vocab_size: 151936, ...o });
const gpt2 = (name, n_embd, n_layer, n_head) => [
  name,
  { model_type: 'gpt2', vocab_size: 50257, n_positions: 1024, n_embd, n_layer, n_head },
];
// [name, config.json]: the keys that set the parameter count (hidden sizes, layers, heads, vocabulary, tying).
const kCheckpoints = [
  gpt2('GPT-2 (124 M)', 768, 12, 12),
  gpt2('GPT-2 medium (355 M)', 1024, 24, 16),
  gpt2('GPT-2 large (774 M)', 1280, 36, 20),
  gpt2('GPT-2 XL (1.56 B)', 1600, 48, 25),
  [
    'SmolLM2-360M',
    llama({
      max_position_embeddings: 8192,
      hidden_size: 960,
      intermediate_size: 2560,
      num_hidden_layers: 32,
      num_attention_heads: 15,
      num_key_value_heads: 5,
      vocab_size: 49152,
      tie_word_embeddings: true,
    }),
  ],
  [
    'Qwen2.5-0.5B',
    qwen('qwen2', {
      max_position_embeddings: 32768,
      hidden_size: 896,
      intermediate_size: 4864,
      num_hidden_layers: 24,
      num_attention_heads: 14,
      num_key_value_heads: 2,
      tie_word_embeddings: true,
    }),
  ],
  [
    'Qwen3-0.6B',
    qwen('qwen3', {
      max_position_embeddings: 40960,
      hidden_size: 1024,
      intermediate_size: 3072,
      num_hidden_layers: 28,
      num_attention_heads: 16,
      num_key_value_heads: 8,
      head_dim: 128,
      tie_word_embeddings: true,
    }),
  ],
  [
    'TinyLlama-1.1B',
    llama({
      max_position_embeddings: 2048,
      hidden_size: 2048,
      intermediate_size: 5632,
      num_hidden_layers: 22,
      num_attention_heads: 32,
      num_key_value_heads: 4,
      vocab_size: 32000,
      tie_word_embeddings: false,
    }),
  ],
  [
    'Llama-3.2-1B (sizes; its rope_scaling is refused)',
    llama({
      max_position_embeddings: 131072,
      hidden_size: 2048,
      intermediate_size: 8192,
      num_hidden_layers: 16,
      num_attention_heads: 32,
      num_key_value_heads: 8,
      vocab_size: 128256,
      tie_word_embeddings: true,
    }),
  ],
  [
    'Qwen2.5-1.5B',
    qwen('qwen2', {
      max_position_embeddings: 131072,
      hidden_size: 1536,
      intermediate_size: 8960,
      num_hidden_layers: 28,
      num_attention_heads: 12,
      num_key_value_heads: 2,
      tie_word_embeddings: true,
    }),
  ],
  [
    'Qwen3-1.7B',
    qwen('qwen3', {
      max_position_embeddings: 40960,
      hidden_size: 2048,
      intermediate_size: 6144,
      num_hidden_layers: 28,
      num_attention_heads: 16,
      num_key_value_heads: 8,
      head_dim: 128,
      tie_word_embeddings: true,
    }),
  ],
  [
    'SmolLM2-1.7B',
    llama({
      max_position_embeddings: 8192,
      hidden_size: 2048,
      intermediate_size: 8192,
      num_hidden_layers: 24,
      num_attention_heads: 32,
      num_key_value_heads: 32,
      vocab_size: 49152,
      tie_word_embeddings: true,
    }),
  ],
];

const MiB = 2 ** 20;

/** The raw module of `dist` (the simd glue's factory, as the package's loader calls it in Node). */
async function rawModule(dist) {
  const factory = (await import(pathToFileURL(path.join(dist, 'attnlab-simd.mjs')).href)).default;
  return factory();
}

async function main(dist) {
  const M = await rawModule(dist);
  const cap = M._maxMemoryBytes();
  const needs = (config, storage) => {
    const parts = M._transformerMemory(JSON.stringify(config), true, storage, true);
    return { total: parts.reduce((s, [, b]) => s + b, 0), parts };
  };
  console.log(`cap ${cap / MiB} MiB; MiB needed to load (parameters + one piece while loading)`);
  console.log('| checkpoint | parameters | float32 | fits | 16-bit | fits |');
  console.log('|---|---:|---:|:-:|---:|:-:|');
  for (const [name, config] of kCheckpoints) {
    const f32 = needs(config, M._WeightStorage.Float32);
    const b16 = needs(config, M._WeightStorage.BF16);
    const loading = f32.parts.at(-1)[1];
    const params = (f32.total - loading) / 4; // (vectors included; packing pads nothing at these sizes)
    const cell = (n) => [(n.total / MiB).toFixed(0), n.total < cap ? 'yes' : 'no'];
    console.log(`| ${name} | ${(params / 1e6).toFixed(0)} M | ${cell(f32).join(' | ')} | ${cell(b16).join(' | ')} |`);
  }
}

await main(path.resolve(process.argv[2] ?? path.join(repoRoot, 'dist')));
