// The whole page in both languages: the server, every part mounting without a console error, the language
// (?lang=, the switch, <html lang>, no catalogue key missing), the tutorial's § on every part in the table of
// contents' order, the §5 numbers, the shape chain and the X → heads → back check; screenshots of every part in
// both languages at 1280 and 400 px (build/screenshots/<part>-<lang>-<width>.png).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setUp, withPage, ctx, attr, shot, overflow, PARTS } from './harness.mjs';

setUp();

test('the server: redirect, MIME types, isolation headers, no escape from the repo', async () => {
  const r = await fetch(ctx.base, { redirect: 'manual' });
  assert.equal(r.status, 302);
  assert.equal(r.headers.get('location'), '/web/demo/');
  const wasm = await fetch(ctx.base + 'dist/attnlab-simd.wasm');
  assert.equal(wasm.status, 200);
  assert.equal(wasm.headers.get('content-type'), 'application/wasm');
  assert.equal(wasm.headers.get('cross-origin-opener-policy'), 'same-origin');
  assert.equal(wasm.headers.get('cross-origin-embedder-policy'), 'require-corp');
  const mjs = await fetch(ctx.base + 'dist/index.mjs');
  assert.match(mjs.headers.get('content-type'), /^text\/javascript/);
  for (const p of ['%2e%2e/%2e%2e/etc/passwd', '.git/config', 'nope.js'])
    assert.equal((await fetch(ctx.base + p)).status, 404, p);
});

const PRINTED0 = [0.2665, 0.1462, 0.5873];
const TRUE = [
  [0.50648, 0.18632, 0.3072],
  [0.18632, 0.50648, 0.3072],
  [0.27407, 0.27407, 0.45186],
];

for (const lang of ['zh', 'en']) {
  test(
    `${lang}: every part renders in the tutorial's order, with its §, the §5 numbers and the heads check (1280 px)`,
    { timeout: 120000 },
    async () => {
      await withPage(`?lang=${lang}`, async (page, problems, finished) => {
        assert.equal(await page.evaluate(() => document.documentElement.lang), lang === 'zh' ? 'zh-CN' : 'en');
        assert.equal(
          await page.evaluate(() => window.crossOriginIsolated),
          true,
          'COOP/COEP make the page cross-origin isolated',
        );
        // The loader's probe of the threaded glue completes (it used to end in net::ERR_ABORTED after its 200, its
        // body unread); withPage then checks that no request failed at all.
        assert.ok(finished.includes('HEAD /dist/attnlab-simd-threaded.mjs'), finished.join('\n'));
        assert.ok(['simd', 'scalar', 'simd-threaded'].includes(await attr(page, '#build', 'data-variant')));
        assert.deepEqual(
          await page.$$eval('#toc a', (as) => as.map((a) => a.getAttribute('href'))),
          PARTS.map((p) => `#part-${p}`),
        );
        for (const p of PARTS) {
          assert.equal(await attr(page, `#${p}`, 'data-ready'), '1', `part ${p} mounted`);
          assert.match(await page.textContent(`#part-${p} h2 .sec`), /§\d/, `part ${p} names its §`);
        }
        const secs = await page.$$eval('.part h2 .sec', (els) => els.map((e) => e.textContent));
        assert.match(secs[0], /§1–2/, 'the page opens on §2.2, before any formula');
        assert.match(secs[4], /§5/);
        assert.match(secs[6], /§6\.2/);
        assert.match(secs[11], /§10/);
        // Chinese text where the page is in Chinese, English where it is in English
        const intro = await page.textContent('#part-sbs .intro');
        if (lang === 'zh') assert.match(intro, /注意力/);
        else assert.match(intro, /weighted sum/);
        assert.match(await page.textContent('#sbs-sec5 h3'), lang === 'zh' ? /教程第 5 节的示例/ : /section 5 example/);

        // §5: printed next to computed; attnlab's weights are the true ones, and the reason is given
        const computed = await page.$$eval('#sbs-sec5 td.computed', (tds) =>
          tds.map((td) => [+td.dataset.i, +td.dataset.j, Number(td.dataset.value)]),
        );
        assert.equal(computed.length, 9);
        for (const [i, j, v] of computed) assert.ok(Math.abs(v - TRUE[i][j]) < 1e-4, `row ${i}, key ${j}: ${v}`);
        const printed = await page.$$eval('#sbs-sec5 td.printed', (tds) => tds.map((td) => Number(td.textContent)));
        assert.deepEqual(printed.slice(0, 3), PRINTED0);
        assert.match(await page.textContent('#sbs-sec5-why'), /q0·k0 = 2/);
        // the live view starts on the same example and agrees
        const w00 = Number(await attr(page, '#sbs-weights td[data-i="0"][data-j="0"]', 'data-value'));
        assert.ok(Math.abs(w00 - 0.50648) < 1e-4);

        // X → heads → back: the shape chain and the check against mha.forward
        assert.deepEqual(JSON.parse(await attr(page, '#heads-chain', 'data-shapes')), [
          [2, 4, 8],
          [2, 4, 8],
          [2, 4, 2, 4],
          [2, 2, 4, 4],
          [2, 2, 4, 4],
          [2, 2, 4, 4],
          [2, 4, 8],
          [2, 4, 8],
        ]);
        assert.match(await page.textContent('#heads-chain'), /\(2, 4, 2, 4\).*\(2, 2, 4, 4\)/);
        assert.equal(await attr(page, '#heads-check', 'data-ok'), '1', await page.textContent('#heads-check'));
        assert.ok(Number(await attr(page, '#heads-check', 'data-diff')) < 1e-5);

        if (lang === 'zh') {
          // no English sentence left in the rendered 中文 page (code, formulas and chart marks aside)
          const english = await page.evaluate(() => {
            const re = /(?:\b[A-Za-z][a-z'’]+\b[ ,]+){2,}\b[A-Za-z][a-z'’]+\b/;
            const out = [];
            const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
            while (walker.nextNode()) {
              const n = walker.currentNode;
              if (n.parentElement.closest('code, pre, .mono, .formula, script, style, textarea, svg')) continue;
              if (re.test(n.textContent)) out.push(n.textContent.trim().slice(0, 80));
            }
            for (const el of document.querySelectorAll('[aria-label], [title]')) {
              for (const a of ['aria-label', 'title'])
                if (re.test(el.getAttribute(a) || '')) out.push(el.getAttribute(a));
            }
            return out;
          });
          assert.deepEqual(english, []);
        }
        // every placeholder filled, no catalogue key shown instead of its text
        const text = await page.evaluate(() => document.body.innerText);
        assert.doesNotMatch(text, /\{[a-zA-Z]+\}/, 'an unfilled {placeholder}');
        assert.doesNotMatch(
          text,
          /\b(page|part|simple|sbs|dk|why|dot|cross|heads|mha|decode|myths|pf|train|task|speed|sd|toy|heat)\.(?!forward\b)[a-zA-Z-]+\b/,
          'a catalogue key on the page',
        );
        for (const p of PARTS) await shot(page, p, `${p}-${lang}-1280`);
      });
    },
  );

  test(`${lang}: the §2.2 panel opens the page (scores → softmax → mix, 1/n marked, guess first); the folds`, async () => {
    await withPage(`?lang=${lang}`, async (page) => {
      const first = await page.$eval('#parts section', (s) => s.id);
      assert.equal(first, 'part-simple');
      assert.doesNotMatch(await page.textContent('#simple-table'), /[QKV]ᵀ|√d|softmax\(/, 'no Q, K, V or formula yet');
      const weights = async () => JSON.parse(await attr(page, '#simple', 'data-weights'));
      const softmax = (s) => s.map((x) => Math.exp(x)).map((e, _, a) => e / a.reduce((p, y) => p + y, 0));
      const scores = await page.$$eval('#simple-table input[type=range]', (els) => els.map((e) => Number(e.value)));
      let w = await weights();
      w.forEach((v, j) => assert.ok(Math.abs(v - softmax(scores)[j]) < 1e-6, `weight ${j}`));
      assert.equal(w.indexOf(Math.max(...w)), 1, '猫 gets the largest weight');
      // every bar marks 1/n
      const marks = await page.$$eval('.simple-bar .uniform', (els) => els.map((e) => e.style.left));
      assert.deepEqual(new Set(marks), new Set([`${100 / scores.length}%`]));
      // guess first: the answer is hidden until asked for, and the sliders confirm it (猫 + 1 → ratio × e)
      assert.equal(await page.isVisible('#simple-answer'), false);
      await page.click('#simple-reveal');
      assert.match(await page.textContent('#simple-answer'), /2\.718/);
      assert.ok(Math.abs(Number(await attr(page, '#simple-answer', 'data-value')) - Math.E) < 1e-4, 'computed: e');
      await page.fill('#simple-score-1', String(scores[1] + 1));
      const w2 = await weights();
      assert.ok(Math.abs(w2[1] / w2[5] / (w[1] / w[5]) - Math.E) < 1e-3, 'the ratio grows e times');
      await page.click('#simple-preset-equal');
      w = await weights();
      assert.ok(
        w.every((v) => Math.abs(v - 1 / scores.length) < 1e-6),
        'equal scores: uniform',
      );
      assert.match(await page.textContent('#simple-mix'), lang === 'zh' ? /动物/ : /animal/);
      // the residual switch: a fourth column, own + new, and a note with 叫's "sound" both ways
      const columns = () => page.$$eval('#simple-mix tr:first-child th', (th) => th.length);
      assert.equal(await columns(), 4);
      await page.check('#simple-residual');
      assert.equal(await columns(), 5);
      assert.match(await page.textContent('#simple-residual-note'), /1\.13/);
      await page.uncheck('#simple-residual');
      assert.equal(await page.textContent('#simple-residual-note'), '');
      // step by step: the advanced controls wait in a closed fold
      assert.equal(await page.$eval('#sbs-advanced', (d) => d.open), false);
      assert.equal(await page.isVisible('#sbs-causal-lower-right'), false);
      assert.match(await page.textContent('#sbs-advanced > summary'), lang === 'zh' ? /进阶/ : /Advanced/);
      await page.click('#sbs-advanced > summary');
      assert.equal(await page.isVisible('#sbs-causal-lower-right'), true);
      assert.match(await page.textContent('#sbs-modern-note'), /Gemma 2/);
      // parts 7, 12 and 13 keep their side paths in closed 进阶 folds too (#37): what each holds, hidden until opened
      for (const [fold, inside] of [
        ['#heads-advanced', '#heads-merged'],
        ['#train-advanced', '#train-lr'],
        ['#poem-advanced', '#poem-mask-reset'],
      ]) {
        assert.equal(await page.$eval(fold, (d) => d.open), false, fold);
        assert.match(await page.textContent(`${fold} > summary`), lang === 'zh' ? /^进阶：/ : /^Advanced: /);
        assert.equal(await page.isVisible(inside), false, `${inside} waits in ${fold}`);
        await page.click(`${fold} > summary`);
        assert.equal(await page.isVisible(inside), true, `${inside} shown once ${fold} is open`);
      }
      // heat-map legends mark 1/n: step by step's weights (Lk = 3) and part 8's maps
      assert.equal(Number(await attr(page, '#part-sbs .legend[data-mark]', 'data-mark')), 1 / 3);
      assert.ok(Number(await attr(page, '#part-mha .legend[data-mark]', 'data-mark')) > 0);
      await shot(page, 'simple', `simple-${lang}-guess`);
    });
  });

  test(`${lang}: the guided path (#28): 2–3 cards in every part, stepped by button and arrow key; links to the poem chapter`, async () => {
    await withPage(`?lang=${lang}`, async (page) => {
      const guides = await page.$$eval('section.guide', (els) => els.map((e) => [e.id, Number(e.dataset.steps)]));
      assert.deepEqual(
        guides.map(([id]) => id),
        PARTS.map((p) => `${p}-guide`),
      );
      for (const [id, n] of guides) assert.ok(n >= 2 && n <= 3, `${id}: ${n} cards`);
      const shown = () => page.$$eval('#simple-guide li', (li) => li.filter((x) => !x.hidden).map((x) => x.value));
      assert.deepEqual(await shown(), [1]);
      assert.equal(await page.isDisabled('#simple-guide-prev'), true);
      assert.match(
        await page.textContent('#simple-guide .guide-count'),
        lang === 'zh' ? /第 1 步，共 3 步/ : /step 1 of 3/,
      );
      // card 1: equal scores → every weight 0.1, as the card says
      assert.match(await page.textContent('#simple-guide li[value="1"]'), /0\.1/);
      await page.click('#simple-preset-equal');
      const w = JSON.parse(await attr(page, '#simple', 'data-weights'));
      assert.ok(
        w.every((v) => Math.abs(v - 0.1) < 1e-6),
        `${w}`,
      );
      await page.click('#simple-preset-tutorial');
      // card 2 (button): 猫 from 3 to 4 → the ratio to 喂食 goes from 4.48 to 12.18
      await page.click('#simple-guide-next');
      assert.deepEqual(await shown(), [2]);
      assert.match(await page.textContent('#simple-guide li[value="2"]'), /4\.48.*12\.18/);
      await page.fill('#simple-score-1', '4');
      const w2 = JSON.parse(await attr(page, '#simple', 'data-weights'));
      assert.equal((w2[1] / w2[5]).toFixed(2), '12.18');
      // card 3 by the keyboard (focus in the box, →), then back with ←; the last card disables "next"
      await page.focus('#simple-guide-prev');
      await page.keyboard.press('ArrowRight');
      assert.deepEqual(await shown(), [3]);
      assert.equal(await attr(page, '#simple-guide', 'data-step'), '3');
      assert.equal(await page.isDisabled('#simple-guide-next'), true);
      await page.keyboard.press('ArrowLeft');
      assert.deepEqual(await shown(), [2]);
      // the untrained maps (part 8, §8.1's box) point to the poem chapter; the link goes there
      for (const sel of ['#mha-source-desc a.part-link', '#part-myths a.part-link', '#mha-guide a[href="#part-poem"]'])
        assert.equal(await attr(page, sel, 'href'), '#part-poem', sel);
      await page.click('#part-myths a.part-link');
      await page.waitForFunction(() => location.hash === '#part-poem');
      await shot(page, 'simple', `simple-${lang}-guide`);
    });
  });

  test(`${lang}: guess first in parts 2–5 and 10 (§3.2 CNN layers, q doubled, √dₖ spread, §5, §8.2 masking): hidden, then computed`, async () => {
    await withPage(`?lang=${lang}`, async (page) => {
      /** @param {string} part */
      const reveal = async (part) => {
        assert.equal(await page.isVisible(`#${part}-answer`), false, `${part}: hidden first`);
        await page.click(`#${part}-reveal`);
        assert.equal(await page.isVisible(`#${part}-answer`), true);
        return {
          text: await page.textContent(`#${part}-answer`),
          value: Number(await attr(page, `#${part}-answer`, 'data-value')),
        };
      };
      const why = await reveal('why');
      assert.equal(why.value, lang === 'zh' ? 7 : 5, '猫…叫 14 apart: 7 layers; cat…crying 9 apart: 5');
      assert.match(why.text, lang === 'zh' ? /7 层/ : /5 layers/);
      assert.deepEqual(
        await page.$$eval('#why-table tr[data-cnn]', (r) => r.map((e) => Number(e.dataset.cnn))),
        [4, 64, 256, 1024],
      );
      const before = Math.max(...JSON.parse(await attr(page, '#dot', 'data-weights')));
      const dot = await reveal('dot');
      assert.ok(dot.value > before + 0.01, `q doubled: ${before} → ${dot.value}`);
      const dk = await reveal('dk');
      assert.ok(Math.abs(dk.value - 4) < 0.4, `spread 16 → 256: ${dk.value}`);
      assert.equal(await page.isVisible('#sbs-sec5-answer'), false, '§5: the table waits for the answer');
      const sec5 = await reveal('sbs');
      assert.equal(sec5.value.toFixed(5), '0.50648');
      assert.match(sec5.text, /k0.*0\.50648.*k2.*0\.5873/s);
      assert.equal(await page.isVisible('#sbs-sec5-answer'), true);
      assert.equal(await page.isVisible('#myth-contrib'), false, '§8.2: the table waits for the answer');
      const myths = await reveal('myths');
      assert.equal(myths.value.toFixed(3), '0.359', 'masking k0 moves the output by 0.359');
      // k0's places in the two rankings (the table's own numbers): last of 4 by ‖α·v‖, second by masking
      assert.match(
        myths.text,
        lang === 'zh' ? /按 ‖α₀ⱼ·vⱼ‖ 排第 4（共 4 个），按屏蔽的效果排第 2/ : /4 by ‖α₀ⱼ·vⱼ‖ and 2 by masking/,
      );
      assert.equal(await page.isVisible('#myth-contrib'), true);
      await shot(page, 'why', `why-${lang}-guess`);
    });
  });

  test(`${lang}: the layout works at 400 px (scalar build for one of them)`, { timeout: 120000 }, async () => {
    await withPage(`?lang=${lang}${lang === 'en' ? '&variant=scalar' : ''}`, 400, async (page) => {
      if (lang === 'en') assert.equal(await attr(page, '#build', 'data-variant'), 'scalar');
      const over = await overflow(page);
      assert.ok(over <= 0, `page is ${over} px wider than the 400 px window`);
      for (const p of PARTS) await shot(page, p, `${p}-${lang}-400`);
    });
  });
}

test('the language switch and navigator.language', async () => {
  const zhPage = await ctx.browser.newPage({ locale: 'zh-CN' });
  try {
    await zhPage.goto(ctx.base + 'web/demo/?bench=quick');
    await zhPage.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 90000 });
    assert.equal(await zhPage.evaluate(() => document.documentElement.lang), 'zh-CN', 'zh-* browsers get 中文');
    assert.equal(await attr(zhPage, '#lang-zh', 'aria-current'), 'true');
    await zhPage.click('#lang-en');
    await zhPage.waitForFunction(
      () => document.body.dataset.ready === '1' && document.documentElement.lang === 'en',
      null,
      { timeout: 90000 },
    );
    assert.match(zhPage.url(), /lang=en/);
    assert.match(zhPage.url(), /bench=quick/, 'the switch keeps the other parameters');
  } finally {
    await zhPage.close();
  }
  const enPage = await ctx.browser.newPage({ locale: 'en-US' });
  try {
    await enPage.goto(ctx.base + 'web/demo/');
    await enPage.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 90000 });
    assert.equal(await enPage.evaluate(() => document.documentElement.lang), 'en');
  } finally {
    await enPage.close();
  }
});
