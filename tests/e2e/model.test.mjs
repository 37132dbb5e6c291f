// The "Your model" part (#18 item 5), in both languages: the sample BERT layer (button) and the fixtures of
// scripts/make_hf_fixtures.py (set on the file input); the drawn weights against fromHuggingFace + forward run
// separately in the page, and against PyTorch's weights when the fixture's own input is pasted; GPT-2's causal
// mask; ViT; files and inputs it cannot use give a message in the part and no console error.
// Screenshots: build/screenshots/model-sample-<lang>-<width>.png.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setUp, withPage, ctx, ROOT, attr, canvasInk, shot, overflow } from './harness.mjs';

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
