// A Qwen2.5-0.5B-shaped BF16 checkpoint (qwen2: 24 layers, 14 heads, 2 KV heads, E 896, MLP 4864, V 151,936, tied
// embeddings; random weights, 988 MB) and what loading it costs in Node: readSafetensors' time and the process's
// RSS, then loadModel's time, RSS and wasm memory (docs/benchmarks.md, "Loading a 16-bit checkpoint"). Not a test.
//   node scripts/bench/model/qwen-shaped.mjs make DIR          writes DIR/config.json and DIR/model.safetensors
//   node --expose-gc scripts/bench/model/qwen-shaped.mjs load DIR [bytes|blob] [DIST]
//        bytes: readSafetensors(fs.readFileSync(…)); blob: await readSafetensors(await fs.openAsBlob(…));
//        DIST: the package folder to measure (default dist/), e.g. an older build's JS for a before/after.
// Prints one JSON line.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { rng } from '../../../web/demo/shared/random.js';
import { repoRoot } from './files.mjs';

const kConfig = {
  architectures: ['Qwen2ForCausalLM'],
  model_type: 'qwen2',
  hidden_size: 896,
  intermediate_size: 4864,
  num_attention_heads: 14,
  num_key_value_heads: 2,
  num_hidden_layers: 24,
  vocab_size: 151936,
  max_position_embeddings: 32768,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000,
  tie_word_embeddings: true,
  torch_dtype: 'bfloat16',
  hidden_act: 'silu',
  use_sliding_window: false,
};

/** Hugging Face's qwen2 parameter names and shapes for kConfig. */
function shapes() {
  const { hidden_size: E, intermediate_size: F, num_key_value_heads: KV, vocab_size: V } = kConfig;
  const kv = (E / kConfig.num_attention_heads) * KV;
  const out = [['model.embed_tokens.weight', [V, E]]];
  for (let l = 0; l < kConfig.num_hidden_layers; ++l) {
    const p = `model.layers.${l}.`;
    out.push(
      [`${p}input_layernorm.weight`, [E]],
      [`${p}self_attn.q_proj.weight`, [E, E]],
      [`${p}self_attn.q_proj.bias`, [E]],
      [`${p}self_attn.k_proj.weight`, [kv, E]],
      [`${p}self_attn.k_proj.bias`, [kv]],
      [`${p}self_attn.v_proj.weight`, [kv, E]],
      [`${p}self_attn.v_proj.bias`, [kv]],
      [`${p}self_attn.o_proj.weight`, [E, E]],
      [`${p}post_attention_layernorm.weight`, [E]],
      [`${p}mlp.gate_proj.weight`, [F, E]],
      [`${p}mlp.up_proj.weight`, [F, E]],
      [`${p}mlp.down_proj.weight`, [E, F]],
    );
  }
  out.push(['model.norm.weight', [E]]);
  return out;
}

/** Writes the folder: norms 1, every other value ±[2^-8, 2^-4) with a random 7-bit mantissa (BF16). */
async function make(dir) {
  const { writeSafetensors } = await import(pathToFileURL(path.join(repoRoot, 'dist/index.mjs')).href);
  const random = rng(1);
  const tensors = {};
  for (const [name, shape] of shapes()) {
    const bits = new Uint16Array(shape.reduce((a, b) => a * b, 1));
    if (name.endsWith('norm.weight')) bits.fill(0x3f80);
    else for (let i = 0; i < bits.length; ++i) bits[i] = 0x3b80 + Math.floor(random() * 512) + (i & 1) * 0x8000;
    tensors[name] = { dtype: 'BF16', shape, bits };
  }
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(kConfig, null, 2));
  fs.writeFileSync(path.join(dir, 'model.safetensors'), writeSafetensors(tensors, { format: 'pt' }));
}

const mib = (bytes) => Math.round(bytes / 2 ** 20);
const rss = () => {
  globalThis.gc?.();
  return mib(process.memoryUsage().rss);
};

/** Reads and loads the folder; the times and memory after each step. */
async function load(dir, how = 'bytes', dist = path.join(repoRoot, 'dist')) {
  const { init, readSafetensors } = await import(pathToFileURL(path.join(dist, 'index.mjs')).href);
  const attn = await init({ variant: 'simd' });
  const file = path.join(dir, 'model.safetensors');
  const config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
  const out = { how, dist: path.relative(repoRoot, dist) || '.', rssStartMiB: rss() };
  let t0 = performance.now();
  let tensors =
    how === 'blob' ? await readSafetensors(await fs.openAsBlob(file)) : readSafetensors(fs.readFileSync(file));
  out.readSeconds = +((performance.now() - t0) / 1000).toFixed(2);
  out.rssAfterReadMiB = rss();
  t0 = performance.now();
  const model = attn.loadModel({ config, tensors });
  out.loadSeconds = +((performance.now() - t0) / 1000).toFixed(2);
  out.rssAfterLoadMiB = rss();
  out.wasmMiB = mib(attn.memoryBytes());
  tensors = null;
  out.rssWithoutTensorsMiB = rss();
  const { logits } = model.forward({ data: Int32Array.of(9707, 11, 1879), shape: [1, 3] });
  out.logitsFinite = logits.data.every(Number.isFinite);
  model.dispose();
  console.log(JSON.stringify(out));
}

const [command, dir, ...rest] = process.argv.slice(2);
if (command === 'make' && dir) await make(dir);
else if (command === 'load' && dir) await load(dir, ...rest);
else {
  console.error('usage: qwen-shaped.mjs make DIR | load DIR [bytes|blob] [DIST]');
  process.exit(2);
}
