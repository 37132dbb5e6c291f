// The "Your model" part (#18 item 5), in both languages: the sample BERT layer (button) and the fixtures of
// scripts/make_hf_fixtures.py (set on the file input); the drawn weights against fromHuggingFace + forward run
// separately in the page, and against PyTorch's weights when the fixture's own input is pasted; GPT-2's causal
// mask; ViT; files and inputs it cannot use give a message in the part and no console error.
// Screenshots: build/screenshots/model-sample-<lang>-<width>.png.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setUp, withPage, ctx, ROOT, attr, canvasInk, shot, overflow, stopAtFirstToken } from './harness.mjs';

setUp();

const HF = path.join(ROOT, 'tests', 'fixtures', 'hf');
const fixture = (name) => JSON.parse(fs.readFileSync(path.join(HF, `${name}.json`), 'utf8'));
const MESSAGES = {
  en: {
    loaded: /Attention layers found: BERT layers 0–1 \(E = 16\)/,
    bad: /bad\.safetensors is not a usable \.safetensors file: .*header/,
  },
  zh: {
    loaded: /找到的注意力层：BERT 第 0–1 层（E = 16）/,
    bad: /bad\.safetensors 不是可用的 \.safetensors 文件：.*header/,
  },
};

/** Waits until the part has finished loading one more file than `before`. */
async function loaded(page, before) {
  await page.waitForFunction((n) => Number(document.getElementById('model').dataset.loads ?? 0) > n, before);
}
const loads = async (page) => Number((await attr(page, '#model', 'data-loads')) ?? 0);

async function setFile(page, file) {
  const before = await loads(page);
  await page.setInputFiles('#model-file', file);
  await loaded(page, before);
}

async function shown(page) {
  return {
    state: await attr(page, '#model', 'data-state'),
    weights: JSON.parse((await attr(page, '#model', 'data-weights')) ?? 'null'),
    shape: JSON.parse((await attr(page, '#model', 'data-shape')) ?? 'null'),
    maps: await page.$$eval('#model-maps canvas', (cs) => cs.length),
  };
}

/** The same layer on the part's input (data-input), built again in the page with the package's own calls. */
function pageReference(page, { url, arch, layer, numHeads, causal }) {
  return page.evaluate(
    async ({ url, arch, layer, numHeads, causal }) => {
      const { readSafetensors, fromHuggingFace } = await import('/dist/index.mjs');
      const { config, stateDict } = fromHuggingFace(readSafetensors(await (await fetch(url)).arrayBuffer()), {
        arch,
        layer,
        numHeads,
      });
      const mha = window.attnlabDemo.attn.createMultiHeadAttention(config);
      try {
        mha.loadStateDict(stateDict);
        const el = document.getElementById('model');
        const x = Float32Array.from(JSON.parse(el.dataset.input));
        const L = x.length / config.embedDim;
        const input = { data: x, shape: [1, L, config.embedDim] };
        const opts = { averageAttnWeights: false };
        if (causal)
          opts.attnMask = {
            data: Uint8Array.from({ length: L * L }, (_, k) => (k % L > Math.floor(k / L) ? 1 : 0)),
            shape: [L, L],
          };
        return Array.from(mha.forward(input, input, input, opts).weights.data);
      } finally {
        mha.dispose();
      }
    },
    { url, arch, layer, numHeads, causal },
  );
}

function assertClose(actual, expected, { atol, rtol }, label) {
  assert.equal(actual.length, expected.length, `${label}: length`);
  actual.forEach((a, i) =>
    assert.ok(
      Math.abs(a - expected[i]) <= atol + rtol * Math.abs(expected[i]),
      `${label}[${i}]: ${a} vs ${expected[i]}`,
    ),
  );
}

/** Per (head, query) row sums of weights (H, L, S). */
function rowSums(w, [H, L, S]) {
  return Array.from({ length: H * L }, (_, r) => w.slice(r * S, (r + 1) * S).reduce((a, b) => a + b, 0));
}

for (const lang of ['en', 'zh']) {
  for (const width of [1280, 400]) {
    test(`${lang} ${width}px: the sample BERT layer by its button, drawn as 4 heads + the mean`, async () => {
      await withPage(`?lang=${lang}`, width, async (page) => {
        assert.equal(await attr(page, '#model', 'data-state'), 'empty');
        const before = await loads(page);
        await page.click('#model-sample');
        await loaded(page, before);
        assert.match(await page.textContent('#model-file-msg'), MESSAGES[lang].loaded);
        const s = await shown(page);
        assert.equal(s.state, 'ready');
        assert.equal(await page.inputValue('#model-arch'), 'bert');
        assert.equal(await page.inputValue('#model-heads'), '4', 'E = 16: 4 heads guessed');
        assert.equal(s.maps, 5, '4 heads + the mean');
        const L = JSON.parse(await attr(page, '#model', 'data-tokens')).length;
        assert.ok(L > 5, `the example sentence's ${L} tokens`);
        assert.deepEqual(s.shape, [4, L, L]);
        for (const c of await canvasInk(page, '#model-maps canvas'))
          assert.ok(c.ink > 0.2 && c.colours > 3, JSON.stringify(c));
        assert.ok(Number(await attr(page, '#model-links .attnlab-token-links', 'data-links')) > 0, 'token links drawn');
        const ref = await pageReference(page, {
          url: '/web/demo/models/sample-bert.safetensors',
          arch: 'bert',
          layer: 0,
          numHeads: 4,
          causal: false,
        });
        assertClose(s.weights, ref, { atol: 1e-6, rtol: 0 }, 'layer 0');
        for (const sum of rowSums(s.weights, s.shape)) assert.ok(Math.abs(sum - 1) < 1e-5, `row sum ${sum}`);
        assert.ok((await overflow(page)) <= 0, 'no horizontal scrolling');
        await shot(page, 'model', `model-sample-${lang}-${width}`); // page.test.mjs shoots the empty part as model-<lang>-<width>
      });
    });
  }

  test(`${lang}: a malformed file, then a good one set on the file input`, async () => {
    await withPage(`?lang=${lang}`, async (page) => {
      await setFile(page, {
        name: 'bad.safetensors',
        mimeType: 'application/octet-stream',
        buffer: Buffer.from([7, 0, 0, 0, 0, 0, 0, 0, 1, 2]),
      });
      assert.match(await page.textContent('#model-file-msg .error-box'), MESSAGES[lang].bad);
      assert.equal((await shown(page)).maps, 0);
      await setFile(page, path.join(HF, 'bert_e16_h4.safetensors'));
      assert.equal(await page.$$eval('#model-file-msg .error-box', (e) => e.length), 0);
      assert.equal((await shown(page)).maps, 5);
    });
  });
}

/**
 * Sets fixture `name` (scripts/make_hf_fixtures.py) on the file input, pastes its first input item as
 * `format(rows)` with the fixture's layer and heads, and checks the drawn weights against PyTorch's.
 */
async function runFixture(page, name, format) {
  const f = fixture(name);
  const [, L, E] = f.input.shape;
  await setFile(page, path.join(HF, `${name}.safetensors`));
  assert.equal(await page.inputValue('#model-arch'), f.arch, 'architecture recognised from the names');
  await page.fill('#model-heads', String(f.numHeads));
  await page.fill('#model-layer', String(f.layer));
  await page.check('#model-mode-vectors');
  const rows = Array.from({ length: L }, (_, i) => f.input.data.slice(i * E, (i + 1) * E));
  await page.fill('#model-input', format(rows));
  await page.click('#model-run');
  const s = await shown(page);
  assert.equal(s.state, 'ready', await page.textContent('#model-msg'));
  assert.deepEqual(s.shape, [f.numHeads, L, L]);
  assert.equal(s.maps, f.numHeads + 1);
  assertClose(s.weights, f.weights.data.slice(0, f.numHeads * L * L), f.tolerance, `${name} vs PyTorch`);
  return { f, s, rows };
}

test("the fixtures' own inputs pasted as vectors give PyTorch's weights (BERT layer 1, ViT layer 2)", async () => {
  await withPage('?lang=en', async (page) => {
    const { rows } = await runFixture(page, 'bert_e16_h4', (rs) =>
      rs.map((r, i) => `t${i}: ${r.join(', ')}`).join('\n'),
    );
    assert.deepEqual(
      JSON.parse(await attr(page, '#model', 'data-tokens')),
      rows.map((_, i) => `t${i}`),
    );
    await runFixture(page, 'vit_e32_h4', (rs) => rs.map((r) => r.join(' ')).join('\n'));
    // a row of the wrong width is named
    await page.fill('#model-input', `${rows[0].join(' ')}\n1 2 3`);
    await page.click('#model-run');
    assert.equal(await attr(page, '#model', 'data-state'), 'error');
    assert.match(await page.textContent('#model-msg'), /Row 1 has 16 numbers, but this layer needs E = 32/);
    assert.equal((await shown(page)).maps, 0);
  });
});

test('GPT-2: the architecture is recognised, the mask is causal, and wrong choices are explained', async () => {
  await withPage('?lang=en', async (page) => {
    const { f, s } = await runFixture(page, 'gpt2_e16_h2', (rs) => JSON.stringify([rs]));
    assert.equal(await page.isChecked('#model-causal'), true);
    assert.equal(f.causal, true);
    const L = f.input.shape[1];
    s.weights.forEach((w, k) => {
      if (k % L > Math.floor(k / L) % L) assert.equal(w, 0, `future key ${k}`);
    });
    // random hidden states: the same seed gives the same weights as the layer run in the page
    await page.check('#model-mode-random');
    const ref = await pageReference(page, {
      url: '/tests/fixtures/hf/gpt2_e16_h2.safetensors',
      arch: 'gpt2',
      layer: f.layer,
      numHeads: f.numHeads,
      causal: true,
    });
    assertClose((await shown(page)).weights, ref, { atol: 1e-6, rtol: 0 }, 'random input');

    const expectError = async (act, pattern) => {
      await act();
      assert.equal(await attr(page, '#model', 'data-state'), 'error');
      assert.match(await page.textContent('#model-msg .error-box'), pattern);
      assert.equal((await shown(page)).maps, 0);
    };
    await expectError(async () => {
      await page.fill('#model-heads', '3');
      await page.dispatchEvent('#model-heads', 'change');
    }, /numHeads = 3 must divide the embedding size E = 16/);
    await page.fill('#model-heads', '2');
    await expectError(async () => {
      await page.fill('#model-layer', '7');
      await page.dispatchEvent('#model-layer', 'change');
    }, /no GPT-2 layer 7 in this file; it has layers 0, 1/);
    await page.fill('#model-layer', '0');
    await expectError(
      () => page.selectOption('#model-arch', 'vit'),
      /gpt2_e16_h2\.safetensors has no ViT attention layer/,
    );
    await page.selectOption('#model-arch', 'gpt2');
    assert.equal(await attr(page, '#model', 'data-state'), 'ready');
  });
});

test('a JSON state dict loads; files that are neither format are named', async () => {
  await withPage('?lang=en', async (page) => {
    await setFile(page, path.join(ROOT, 'web', 'demo', 'models', 'toy-reverse.json'));
    assert.equal(await page.isDisabled('#model-arch'), true);
    assert.equal(await page.inputValue('#model-heads'), '2');
    assert.match(await page.textContent('#model-file-msg'), /nn\.MultiheadAttention state dict, E = 16, 2 heads/);
    assert.equal((await shown(page)).maps, 3);

    const notJson = path.join(ctx.tmp, 'layer.json');
    fs.writeFileSync(notJson, '{"embed_dim": 16, "num_heads": ');
    await setFile(page, notJson);
    assert.match(await page.textContent('#model-file-msg .error-box'), /layer\.json is not valid JSON/);
    await setFile(page, {
      name: 'weights.bin',
      mimeType: 'application/octet-stream',
      buffer: Buffer.from('hello, not a model'),
    });
    assert.match(
      await page.textContent('#model-file-msg .error-box'),
      /weights\.bin is neither a \.safetensors file nor a JSON state dict/,
    );
    assert.equal((await shown(page)).maps, 0);
    assert.equal(await attr(page, '#model', 'data-state'), 'empty');
  });
});

test('a file dropped on the zone loads like a picked one', async () => {
  await withPage('?lang=en', async (page) => {
    const before = await loads(page);
    await page.evaluate(async () => {
      const bytes = await (await fetch('/tests/fixtures/hf/vit_e32_h4.safetensors')).arrayBuffer();
      const dataTransfer = new DataTransfer();
      dataTransfer.items.add(new File([bytes], 'dropped-vit.safetensors'));
      const zone = document.getElementById('model-drop');
      zone.dispatchEvent(new DragEvent('dragover', { dataTransfer, bubbles: true, cancelable: true }));
      zone.dispatchEvent(new DragEvent('drop', { dataTransfer, bubbles: true, cancelable: true }));
    });
    await loaded(page, before);
    assert.match(await page.textContent('#model-file-msg'), /dropped-vit\.safetensors: .*ViT layers 0–2 \(E = 32\)/);
    assert.equal(await page.inputValue('#model-arch'), 'vit');
    assert.equal((await shown(page)).maps, 5);
  });
});

// ---- the whole checkpoint (#25 item 4) ---------------------------------------------------------------------------
const POEM_DIR = path.join(ROOT, 'web', 'demo', 'models', 'tang-song-quatrains-char-llama');
const POEM_FILES = ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'].map((f) =>
  path.join(POEM_DIR, f),
);
const GPT2_FILES = [
  path.join(ROOT, 'tests/fixtures/models/gpt2_f32/config.json'),
  path.join(ROOT, 'tests/fixtures/models/gpt2_f32/model.safetensors'),
  path.join(ROOT, 'tests/fixtures/demo-gpt2/tokenizer.json'),
  path.join(ROOT, 'tests/fixtures/demo-gpt2/tokenizer_config.json'),
];
const CKPT = {
  en: {
    poem: /Loaded the poem model \(tang-song-quatrains-char-llama\): llama, 4 layers × 4 heads/,
    missing: /lacks model\.safetensors/,
  },
  zh: {
    poem: /已加载诗歌模型（tang-song-quatrains-char-llama）：llama，4 层 × 每层 4 个头/,
    missing: /缺少 model\.safetensors/,
  },
};
const ckpt = (page) => page.$eval('#model-ckpt', (el) => ({ ...el.dataset }));

/** Waits until the whole-model panel has finished one more load than before `act`. */
async function ckptLoad(page, act) {
  const before = Number((await ckpt(page)).loads ?? 0);
  await act();
  await page.waitForFunction((n) => Number(document.getElementById('model-ckpt').dataset.loads ?? 0) > n, before, {
    timeout: 60000,
  });
  return ckpt(page);
}

/** Types a prompt, generates with the given settings and waits for the grid; returns the panel's data. */
async function generate(page, { prompt, max, temp = '0.8', seed = '3', eos = true }) {
  await page.fill('#model-prompt', prompt);
  await page.fill('#model-max', String(max));
  await page.fill('#model-temp', temp);
  await page.fill('#model-gen-seed', seed);
  await page.setChecked('#model-eos', eos);
  await page.click('#model-generate');
  await page.waitForFunction(
    () => ['done', 'error'].includes(document.getElementById('model-ckpt').dataset.state),
    null,
    {
      timeout: 60000,
    },
  );
  return ckpt(page);
}

for (const lang of ['zh', 'en']) {
  test(`${lang}: the poem model by one click writes token by token; a stop; the grid, a head's map, a token's links`, async () => {
    await withPage(`?lang=${lang}`, async (page) => {
      const loaded = await ckptLoad(page, () => page.click('#model-poem'));
      assert.equal(loaded.state, 'ready', await page.textContent('#model-ckpt-msg'));
      assert.match(await page.textContent('#model-ckpt-msg'), CKPT[lang].poem);
      const d = await generate(page, { prompt: '春风', max: 6 });
      assert.equal(d.state, 'done', await page.textContent('#model-ckpt-msg'));
      const ids = JSON.parse(d.ids);
      assert.equal(d.promptLen, '3', '[BOS] 春 风');
      assert.ok(ids.length > 3 && ids.length <= 9, d.ids);
      assert.equal(d.stopped, '0');
      assert.equal(await page.$$eval('#model-out .model-tok.gen', (b) => b.length), ids.length - 3);
      assert.equal(await page.$$eval('#model-grid .poem-head', (b) => b.length), 16, '4 layers × 4 heads');
      assert.equal(
        await page.textContent('#model-grid .poem-head[data-layer="0"][data-head="0"] .poem-head-id'),
        lang === 'zh' ? '头 1' : 'head 1',
      );
      await page.click('#model-grid .poem-head[data-layer="2"][data-head="1"]');
      assert.equal(await attr(page, '#model-head-map', 'data-layer'), '2');
      assert.equal(await attr(page, '#model-head-map', 'data-head'), '1');
      for (const c of await canvasInk(page, '#model-head-map')) assert.ok(c.ink > 0.05, JSON.stringify(c));
      await page.click('#model-out .model-tok[data-i="3"]');
      assert.equal(await attr(page, '#model-head-map', 'data-token'), '3');
      assert.ok(Number(await attr(page, '#model-head-links .attnlab-token-links', 'data-links')) > 0, 'links drawn');
      // a longer generation (past the end-of-text token) stopped after its first tokens
      await stopAtFirstToken(page, 'model-out', '.model-tok.gen', 'model-stop');
      const s = await generate(page, { prompt: '', max: 79, eos: false });
      assert.equal(s.state, 'done');
      assert.equal(s.stopped, '1', 'stopped');
      const n = JSON.parse(s.ids).length - 1;
      assert.ok(n >= 1 && n < 79, `${n} new tokens`);
      assert.match(
        await page.textContent('#model-progress-text'),
        lang === 'zh' ? /生成了 \d+ 个新词元后停止/ : /Stopped after \d+ new tokens/,
      );
      assert.ok((await overflow(page)) <= 0, 'no horizontal scrolling');
      await shot(page, 'model', `model-whole-${lang}-1280`);
    });
  });

  test(`${lang}: the folder's four files on the file input give the one-click model's text; errors; GPT-2; one layer still`, async () => {
    await withPage(`?lang=${lang}`, async (page) => {
      await ckptLoad(page, () => page.click('#model-poem'));
      const a = await generate(page, { prompt: '明月', max: 5, seed: '11' });
      const b0 = await ckptLoad(page, () => page.setInputFiles('#model-file', POEM_FILES));
      assert.equal(b0.state, 'ready');
      const b = await generate(page, { prompt: '明月', max: 5, seed: '11' });
      assert.equal(b.ids, a.ids, 'the same model through the same path');
      assert.equal(b.text, a.text);
      // a folder without its weights: named, and the part goes on
      const bad = await ckptLoad(page, () => page.setInputFiles('#model-file', [POEM_FILES[0], POEM_FILES[2]]));
      assert.equal(bad.state, 'error');
      assert.match(await page.textContent('#model-ckpt-msg .error-box'), CKPT[lang].missing);
      const g = await ckptLoad(page, () => page.setInputFiles('#model-file', GPT2_FILES));
      assert.equal(g.state, 'ready', await page.textContent('#model-ckpt-msg'));
      const d = await generate(page, { prompt: 'The cat sat', max: 4, eos: false });
      assert.equal(d.state, 'done');
      assert.deepEqual(JSON.parse(d.ids).slice(0, 4), [50, 58, 63, 65]);
      assert.equal(JSON.parse(d.ids).length, 8);
      assert.equal(await page.$$eval('#model-grid .poem-head', (x) => x.length), 8, '2 layers × 4 heads');
      // the one-layer path beside it
      const before = await loads(page);
      await page.click('#model-sample');
      await loaded(page, before);
      assert.equal((await shown(page)).maps, 5);
      assert.equal((await ckpt(page)).state, 'done', 'the whole model is untouched');
    });
  });
}
