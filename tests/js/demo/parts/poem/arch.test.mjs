// Mirrors web/demo/parts/poem/arch.js: the block diagram's parameter counts against the tensors a model really holds
// (the shipped poem model, and fresh models with biases, grouped-query heads and an untied head), the sliding-window
// copy of the poem model (the band its attention keeps, the full model's logits when the window covers the poem),
// and the mass on earlier lines of attention whose answer is known.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  earlierLineMass,
  llamaStages,
  parameterShares,
  windowedModel,
  windowLosses,
  lineOnlyLoss,
} from '../../../../../web/demo/parts/poem/arch.js';
import { meanLoss, poemFromText, poemPositions } from '../../../../../web/demo/parts/poem/heads.js';
import { charTokenizer } from '../../../../../web/demo/shared/char-tokenizer.js';
import { readSafetensors } from '../../../../../web/demo/attnlab.js';
import { DEMO, maxDiff, simd } from '../../helpers.mjs';

const DIR = path.join(DEMO, 'models/tang-song-quatrains-char-llama');
const read = (f) => fs.readFileSync(path.join(DIR, f));
const POEMS = ['白日依山尽，黄河入海流。欲穷千里目，更上一层楼。', '春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。'];

async function poemModel() {
  const attn = await simd();
  const model = attn.loadModel({
    config: JSON.parse(read('config.json')),
    tensors: readSafetensors(new Uint8Array(read('model.safetensors'))),
  });
  return { attn, model, tok: charTokenizer(JSON.parse(read('tokenizer.json'))) };
}

/** The model's parameters per group, counted from its state dict by tensor name. */
function countByName(model) {
  const groups = { embedding: 0, attention: 0, mlp: 0, norm: 0 };
  for (const [name, tensor] of Object.entries(model.stateDict())) {
    const n = tensor.data.length;
    if (name.includes('self_attn.')) groups.attention += n;
    else if (name.includes('.mlp.')) groups.mlp += n;
    else if (name.includes('norm')) groups.norm += n;
    else groups.embedding += n;
  }
  return groups;
}

test('parameterShares: the poem model, 1,677,184 parameters, as its tensors count them', async () => {
  const { model } = await poemModel();
  try {
    const { groups, total, shares } = parameterShares(model.config);
    assert.deepEqual(groups, countByName(model));
    assert.equal(total, 1677184);
    assert.ok(Math.abs(Object.values(shares).reduce((a, b) => a + b, 0) - 1) < 1e-12);
  } finally {
    model.dispose();
  }
});

test('parameterShares: biases, grouped-query heads and an untied head', async () => {
  const attn = await simd();
  const base = { arch: 'llama', vocabSize: 50, contextLength: 16, embedDim: 24, numLayers: 2, numHeads: 4 };
  for (const extra of [
    { numKVHeads: 2, hiddenDim: 40, attentionBias: 'qkv', tieEmbeddings: false },
    { numKVHeads: 1, headDim: 8, hiddenDim: 36, attentionBias: 'all', tieEmbeddings: true },
  ]) {
    const model = attn.createModel({ ...base, ...extra, seed: 3 });
    try {
      assert.deepEqual(parameterShares(model.config).groups, countByName(model), JSON.stringify(extra));
    } finally {
      model.dispose();
    }
  }
});

test('llamaStages: the shapes through one block at T = 26', async () => {
  const { model } = await poemModel();
  try {
    const stages = llamaStages(model.config, 26);
    const shape = (key) => stages.find((s) => s.key === key).shape;
    assert.deepEqual(shape('embed'), [26, 128]);
    assert.deepEqual(shape('qkv'), [12, 26, 32]);
    assert.deepEqual(shape('attn'), [4, 26, 26]);
    assert.deepEqual(shape('swiglu'), [26, 352]);
    assert.deepEqual(shape('head'), [26, 6822]);
  } finally {
    model.dispose();
  }
});

test('windowedModel: the band of W keys, and the full model once the window covers the poem', async () => {
  const { attn, model, tok } = await poemModel();
  const poem = poemFromText(tok, POEMS[0]);
  const T = poem.ids.length;
  const tokens = { data: poem.ids, shape: [1, T] };
  try {
    const full = model.forward(tokens).logits.data;
    for (const W of [3, T]) {
      const m = windowedModel(attn, model, W);
      try {
        const { logits, attentions } = m.forward(tokens, { outputAttentions: true });
        const a = attentions[0].data; // (1, H, T, T), head 0
        for (let i = 0; i < T; i++) {
          let row = 0;
          for (let j = 0; j < T; j++) {
            if (j <= i - W || j > i) assert.equal(a[i * T + j], 0, `W ${W}: (${i}, ${j}) outside the band`);
            row += a[i * T + j];
          }
          assert.ok(Math.abs(row - 1) < 1e-5);
        }
        if (W === T) assert.ok(maxDiff(logits.data, full) < 1e-5);
        else assert.ok(maxDiff(logits.data, full) > 1e-2, 'a window of 3 changes the logits');
      } finally {
        m.dispose();
      }
    }
  } finally {
    model.dispose();
  }
});

test('windowLosses: each window against the full model on the same poems', async () => {
  const { attn, model, tok } = await poemModel();
  const poems = POEMS.map((p) => poemFromText(tok, p));
  try {
    const rows = windowLosses(attn, model, poems, [1, 40, null]);
    const full = meanLoss(model, poems);
    assert.equal(rows[2].loss, full);
    assert.ok(Math.abs(rows[1].loss - full) < 1e-5, 'a window of 40 covers a 26-token poem');
    assert.ok(rows[0].delta > 0.5, `one key per query loses the context: +${rows[0].delta}`);
    assert.equal(rows[0].delta, rows[0].loss - full);
  } finally {
    model.dispose();
  }
});

test('earlierLineMass: heads that look one back, at [BOS], or at the line above', () => {
  const chars = ['[BOS]', ...'白日依山尽，黄河入海流。'];
  const pos = poemPositions(chars);
  const T = chars.length;
  const head = (pick) => {
    const a = new Float32Array(T * T);
    for (let i = 0; i < T; i++) a[i * T + pick(i)] = 1;
    return a;
  };
  const previous = head((i) => Math.max(0, i - 1));
  const bos = head(() => 0);
  const above = head((i) => (i >= 7 && i <= 11 ? i - 6 : i)); // 黄 → 白 … 流 → 尽
  const data = new Float32Array(3 * T * T);
  [previous, bos, above].forEach((a, h) => data.set(a, h * T * T));
  const [mass] = earlierLineMass([{ data, shape: [1, 3, T, T] }], pos);
  // line 2's characters are 黄河入海流 (5 rows); looking one back, only 黄 reaches line 1 (its "，")
  assert.deepEqual(mass, [1 / 5, 0, 1]);
});

test('lineOnlyLoss: a line read alone after [BOS], against the whole poem, on the same targets', async () => {
  const { model, tok } = await poemModel();
  const poem = poemFromText(tok, POEMS[0]);
  const V = model.config.vocabSize;
  const nll = (logits, row, target) => {
    const r = Array.from(logits.subarray(row * V, (row + 1) * V));
    const max = Math.max(...r);
    return Math.log(r.reduce((a, x) => a + Math.exp(x - max), 0)) + max - r[target];
  };
  const forward = (ids) => model.forward({ data: ids, shape: [1, ids.length] }).logits.data;
  try {
    // by hand, line by line: [BOS] + the line's 6 tokens; targets are its tokens 2 … 6 (5 per line)
    const whole = forward(poem.ids);
    let lineOnly = 0;
    let full = 0;
    for (const start of [1, 7, 13, 19]) {
      const alone = Int32Array.from([poem.ids[0], ...poem.ids.subarray(start, start + 6)]);
      const logits = forward(alone);
      for (let k = 2; k < 7; k++) {
        lineOnly += nll(logits, k - 1, alone[k]);
        full += nll(whole, start + k - 2, alone[k]);
      }
    }
    const got = lineOnlyLoss(model, [poem]);
    assert.equal(got.targets, 20);
    assert.ok(Math.abs(got.lineOnly - lineOnly / 20) < 1e-9, `${got.lineOnly} vs ${lineOnly / 20}`);
    assert.ok(Math.abs(got.full - full / 20) < 1e-9, `${got.full} vs ${full / 20}`);
    assert.ok(got.lineOnly > got.full, 'the lines above help');
    // a one-line "poem": reading the line alone is reading the whole
    const first = { ids: poem.ids.subarray(0, 7), chars: poem.chars.slice(0, 7) };
    const one = lineOnlyLoss(model, [first]);
    assert.ok(Math.abs(one.lineOnly - one.full) < 1e-12);
  } finally {
    model.dispose();
  }
});
