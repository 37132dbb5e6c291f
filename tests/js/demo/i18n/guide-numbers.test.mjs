// The numbers the guided paths (web/demo/i18n/zh-guide.js, en-guide.js) quote from seeded draws, recomputed from the
// parts' compute.js as the page runs them: a card must say what the page shows, in both languages. (The draws are the
// package's createRng, through web/demo/shared/random.js: a change of generator moves these numbers.)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import zh from '../../../../web/demo/i18n/zh.js';
import en from '../../../../web/demo/i18n/en.js';
import { attend, SEQS } from '../../../../web/demo/parts/cross/compute.js';
import { dkLabData } from '../../../../web/demo/parts/dk/compute.js';
import { E, H, headsChain, wrongTransposeWeights } from '../../../../web/demo/parts/heads/compute.js';
import { RANDOM_E, readTokens, runLayer } from '../../../../web/demo/parts/mha/compute.js';
import { freshLayer } from '../../../../web/demo/parts/myths/compute.js';
import { maskZero, NO_SCALE_DRAWS } from '../../../../web/demo/parts/pitfalls/compute.js';
import { SENTENCES } from '../../../../web/demo/shared/inputs.js';
import { simd } from '../helpers.mjs';

/** Asserts that both cards `key` contain every text of `parts` (numbers formatted as the card writes them). */
function says(key, parts, cats = { zh, en }) {
  for (const [lang, cat] of Object.entries(cats)) {
    for (const p of parts) assert.ok(cat[key].includes(p), `${key} (${lang}) should say ${p}: ${cat[key]}`);
  }
}

test('dk.1: the unscaled largest weight at dₖ = 1024, and the scaled one near 0.25 (± 0.06) from dₖ = 2 on', async () => {
  const lab = dkLabData(await simd());
  says('guide.dk.1', [`约 ${lab.unscaled.maxWeight.at(-1).toFixed(2)}`], { zh });
  says('guide.dk.1', [`about ${lab.unscaled.maxWeight.at(-1).toFixed(2)}`], { en });
  for (const w of lab.scaled.maxWeight.slice(1)) assert.ok(Math.abs(w - 0.25) < 0.06, `scaled largest weight ${w}`);
});

test("cross.1: each decoder word's row peaks on the word it translates, with the weights the cards quote", async () => {
  const attn = await simd();
  /** The weight of decoder word i on encoder word `to`. */
  const weight = (seqs, i, to) => {
    const r = attend(attn, 'cross', seqs);
    const row = Array.from(r.weights.data.subarray(i * r.Lk, (i + 1) * r.Lk));
    assert.equal(r.kTok[row.indexOf(Math.max(...row))], seqs.align[i], `${seqs.dec[i]} peaks on ${seqs.align[i]}`);
    return row[r.kTok.indexOf(to)].toFixed(2);
  };
  const [z, e] = [SEQS.zh, SEQS.en];
  says('guide.cross.1', [weight(z, 2, 'crying'), weight(z, 1, 'is'), weight(z, 0, 'cat'), weight(z, 0, 'is')], { zh });
  says('guide.cross.1', [weight(e, 0, 'the'), weight(e, 2, 'crying'), weight(e, 1, 'cat'), weight(e, 1, 'is')], { en });
});

test("heads.3: the wrong transpose's largest difference from head 1's weights at B = 2", async () => {
  const attn = await simd();
  const mha = attn.createMultiHeadAttention({ embedDim: E, numHeads: H, batchFirst: true });
  try {
    says('guide.heads.3', [wrongTransposeWeights(attn, headsChain(attn, mha, 2)).diff.toFixed(3)]);
  } finally {
    mha.dispose();
  }
});

test("mha.1: the untrained layer's 4 heads, in the row of the sentence's last verb or pronoun: where each peaks", async () => {
  const attn = await simd();
  /** Per head, the token its row `query` peaks on, and that weight. */
  const peaks = (lang, query) => {
    const { labels, padded } = /** @type {any} */ (readTokens(SENTENCES[lang], null, 0));
    const mha = attn.createMultiHeadAttention({ embedDim: RANDOM_E, numHeads: 4, batchFirst: true });
    try {
      const cfg = { numHeads: 4, embedDim: RANDOM_E, kdim: RANDOM_E, vdim: RANDOM_E };
      const { result } = runLayer(mha, cfg, labels, padded, false);
      const L = labels.length;
      const q = labels.lastIndexOf(query);
      return [0, 1, 2, 3].map((h) => {
        const row = Array.from(result.weights.subarray((h * L + q) * L, (h * L + q + 1) * L));
        const top = Math.max(...row);
        return { token: labels[row.indexOf(top)], top };
      });
    } finally {
      mha.dispose();
    }
  };
  const inEn = peaks('en', 'it');
  says('guide.mha.1', [`(${inEn.map((p) => p.token).join(', ')})`, 'none above 0.25'], { en });
  assert.equal(new Set(inEn.map((p) => p.token)).size, 4, 'four different words');
  inEn.forEach((p) => assert.ok(p.top < 0.25, `${p.token}: ${p.top}`));
  const inZh = peaks('zh', '叫');
  assert.ok(!inZh.some((p) => p.token === '猫'), 'no head peaks on 猫');
  says('guide.mha.1', [...new Set(inZh.map((p) => `“${p.token}”`))], { zh });
});

test('myths.1: the untrained layer’s mean row entropy against uniform', async () => {
  const r = freshLayer(await simd());
  says('guide.myths.1', [r.entropy.toFixed(3), r.uniform.toFixed(3)]);
});

test("pitfalls: row 5 says how many draws it takes the median of; the last card's leaks", async () => {
  for (const cat of [zh, en]) assert.ok(cat['pf.no-scale.why'].includes(`${NO_SCALE_DRAWS} `), cat['pf.no-scale.why']);
  const attn = await simd();
  says('guide.pitfalls.3', [
    `${(maskZero(attn, 2).leak * 100).toFixed(1)} %`,
    `${(maskZero(attn, 3).leak * 100).toFixed(1)} %`,
  ]);
});
