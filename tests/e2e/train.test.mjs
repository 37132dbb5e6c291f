// The training part (§10): reversal in 中文 at the default pace (loss falls, accuracy reaches 95 %, the maps
// change, each head's entropy leaves ln T, the mass on the anti-diagonal rises; pause, replay, reset, heads);
// the causal next-token and recall tasks at 400 px with the scalar build; the no-1/√dₖ toggle and the initial
// scale; and the training speed of both builds (logged to build/train-speed.json).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setUp, withPage, ROOT, attr, canvasInk, shot, overflow } from './harness.mjs';
import { fmt } from '../../web/demo/shared/format.js';

setUp();

/** Part 5's data- attributes as numbers (state, task and variant as strings). */
async function trainData(page) {
  const d = await page.$eval('#train', (el) => ({ ...el.dataset }));
  const out = {};
  for (const [k, v] of Object.entries(d))
    out[k] = ['state', 'task', 'variant', 'entropy', 'entropyInitial', 'mass'].includes(k) ? v : Number(v);
  return out;
}
/** Open part 12's 进阶 fold (learning rate, batch, pace, seed, stop, initial scale, no 1/√dₖ). */
const openAdvanced = (page) => page.$eval('#train-advanced', (d) => (d.open = true));
const trainState = (page, states, timeout = 90000) =>
  page.waitForFunction((s) => s.includes(document.querySelector('#train')?.dataset.state), states, { timeout });
/** The live heat maps: one matrix (rows = queries) per head. */
const trainMaps = (page) => page.$$eval('#train-maps canvas', (cs) => cs.map((c) => JSON.parse(c.dataset.matrix)));
function maxDiff(a, b) {
  let m = 0;
  a.forEach((mat, hh) =>
    mat.forEach((row, i) =>
      row.forEach((v, j) => {
        m = Math.max(m, Math.abs(v - b[hh][i][j]));
      }),
    ),
  );
  return m;
}
function assertRowsSumToOne(maps, what) {
  for (const m of maps)
    for (const row of m) assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-4, `${what}: row sums to 1`);
}

test(
  'part 5: training runs in a worker, the loss falls, accuracy rises, the maps change; pause, replay, reset, heads',
  { timeout: 240000 },
  async () => {
    await withPage('?lang=zh&trainseed=3', async (page) => {
      await trainState(page, ['ready']);
      let d = await trainData(page);
      assert.equal(d.step, 0);
      assert.equal(d.seed, 3);
      assert.equal(d.variant, await attr(page, '#build', 'data-variant'), 'the worker runs the build the page loaded');
      assert.match(await page.textContent('#train-build'), /^(SIMD|标量)$/);
      assert.deepEqual(
        await page.$$eval('#train-heads option', (os) => os.map((o) => o.value)),
        ['1', '2', '4', '8', '16'],
        'divisors of E = 16',
      );
      for (const id of [
        'train-heads',
        'train-lr',
        'train-batch',
        'train-pace',
        'train-seed',
        'train-stop',
        'train-init',
        'train-noscale',
      ]) {
        assert.ok(await page.$(`label[for="${id}"]`), `#${id} has a label`);
      }
      assert.equal(await page.$eval('#train-try-run', (b) => b.disabled), true, 'nothing to try before training');
      const untrained = await trainMaps(page);
      assert.equal(untrained.length, 2);
      assertRowsSumToOne(untrained, 'untrained');
      for (const c of await canvasInk(page, '#train-maps canvas'))
        assert.ok(c.ink > 0.2 && c.colours > 5, `heat map drawn: ${JSON.stringify(c)}`);
      const acc0 = d.accuracyInitial;

      // Train as a new user would (default pace, 30 steps/s): the maps change while it runs.
      await page.click('#train-start');
      await trainState(page, ['running']);
      await page.waitForFunction(() => Number(document.querySelector('#train').dataset.step) >= 25, null, {
        timeout: 30000,
      });
      const early = await trainMaps(page);
      assert.ok(maxDiff(untrained, early) > 0.02, `maps changed after 25 steps: ${maxDiff(untrained, early)}`);
      await trainState(page, ['done']);
      d = await trainData(page);
      const late = await trainMaps(page);
      console.log(
        `part 5, reverse (${d.variant}, 30 steps/s): ${(acc0 * 100).toFixed(1)} % → ${(d.accuracy * 100).toFixed(1)} % at step ${d.step}; ` +
          `loss ${d.lossInitial.toFixed(3)} → ${d.lossSmoothed.toFixed(3)} (smoothed); ${d.updates} map updates, ${d.updatesPerSecond.toFixed(1)}/s`,
      );
      assert.ok(d.lossSmoothed < 0.7 * d.lossInitial, `loss fell: ${d.lossInitial} → ${d.lossSmoothed}`);
      assert.ok(d.accuracy >= 0.95 && acc0 < 0.3, `accuracy rose: ${acc0} → ${d.accuracy}`);
      assert.equal(d.reachedStep, d.step, 'stopped where it reached 95 %');
      assert.ok(maxDiff(early, late) > 0.05 && maxDiff(untrained, late) > 0.2, 'maps changed between snapshots');
      assertRowsSumToOne(late, 'trained');
      assert.ok(d.updatesPerSecond >= 8, `map updates per second: ${d.updatesPerSecond} (the worker posts ≈ 16/s)`);
      assert.ok(d.updates >= 20, `${d.updates} map updates`);
      assert.ok(
        Number(await attr(page, '#train-example-table', 'data-correct')) >= 5,
        'the fixed example is (nearly) reversed',
      );
      assert.ok(Number(await attr(page, '#train-loss-chart', 'data-points')) === d.step);
      // uniform → structured: every head's entropy starts near ln T and at least one head falls well below it
      const lnT = Math.log(6);
      assert.ok(Math.abs(Number(await attr(page, '#train-entropy-chart', 'data-uniform')) - lnT) < 1e-9);
      const e0 = JSON.parse(d.entropyInitial);
      assert.equal(e0.length, 2);
      for (const e of e0) assert.ok(e > 0.8 * lnT, `untrained head entropy ${e} near ln 6 = ${lnT}`);
      const eNow = JSON.parse(await attr(page, '#train', 'data-entropy'));
      assert.ok(Math.min(...eNow) < 0.75 * lnT, `a head's entropy fell below ln T: ${eNow}`);
      const series = JSON.parse(await attr(page, '#train-entropy-chart', 'data-series'));
      assert.ok(series.length >= 10 && Math.min(...series.at(-1)[1]) < lnT);
      // the guide's first card quotes the step-0 entropies the chart starts from (hist.stats[0], data-entropy-initial) and its red line (computed, not typed)
      const card = await page.$$eval('#train-guide output[data-guide]', (os) =>
        Object.fromEntries(os.map((o) => [o.dataset.guide, o.textContent])),
      );
      assert.equal(card.start, e0.map((e) => fmt(e, 2)).join(' 和 '));
      assert.equal(card.uniform, fmt(lnT, 2));
      const mass = JSON.parse(await attr(page, '#train', 'data-mass'));
      assert.ok(Math.max(...mass) > 0.5, `a head puts most of its weight on the anti-diagonal: ${mass}`);
      for (const c of await canvasInk(page, '#train-entropy-chart, #train-mass-chart'))
        assert.ok(c.ink > 0.02, JSON.stringify(c));
      assert.ok(JSON.parse(await attr(page, '#train-acc-chart', 'data-series')).length >= 10);

      // Try it: the trained model on the page next to the shipped toy model (loaded with loadStateDict).
      await page.waitForSelector('#train-try-table');
      assert.equal(await page.$eval('#train-try-run', (b) => b.disabled), false);
      await page.fill('#train-try-text', 'A B C D E F');
      await page.press('#train-try-text', 'Enter');
      assert.deepEqual(JSON.parse(await attr(page, '#train-try-table', 'data-toy-predicted')), [...'FEDCBA']);
      assert.ok(
        Number(await attr(page, '#train-try-table', 'data-trained-correct')) >= 4,
        `trained model on A..F: ${await attr(page, '#train-try-table', 'data-trained-predicted')}`,
      );
      assert.equal(await page.$$eval('#train-try-maps canvas[data-model="toy"]', (cs) => cs.length), 2);
      assert.equal(await page.$$eval('#train-try-maps canvas[data-model="mine"]', (cs) => cs.length), 2);
      await page.fill('#train-try-text', 'A B zz');
      await page.press('#train-try-text', 'Enter');
      assert.match(await page.textContent('#train-try-msg'), /不在玩具模型的词表里："zz"/);
      await page.fill('#train-try-text', 'L K J I H G');
      await page.click('#train-try-run');
      assert.deepEqual(JSON.parse(await attr(page, '#train-try-table', 'data-toy-predicted')), [
        'G',
        'H',
        'I',
        'J',
        'K',
        'L',
      ]);
      await shot(page, 'train', 'train-trained-zh-1280');

      // Keep training at full speed (stopping at 95 % happens once), then pause: the step counter stops.
      await openAdvanced(page);
      await page.selectOption('#train-pace', '0');
      await page.click('#train-start');
      await trainState(page, ['running']);
      const s0 = d.step;
      await page.waitForFunction((s) => Number(document.querySelector('#train').dataset.step) > s + 20, s0, {
        timeout: 30000,
      });
      await page.click('#train-pause');
      await trainState(page, ['paused']);
      const s1 = (await trainData(page)).step;
      await page.waitForTimeout(800);
      d = await trainData(page);
      assert.equal(d.step, s1, 'paused: the step counter stands still');
      assert.equal(d.trainedStep, s1, 'the page holds the parameters of the step shown');
      assert.ok(d.stepsPerSecond > 0 && d.trainStepsPerSecond > 0);
      await page.click('#train-start');
      await page.waitForFunction((s) => Number(document.querySelector('#train').dataset.step) > s, s1, {
        timeout: 30000,
      });
      await page.click('#train-pause');
      await trainState(page, ['paused']);

      // Replay: the first kept snapshot is the untrained model.
      await page.$eval('#train-replay', (r) => {
        r.value = '0';
        r.dispatchEvent(new Event('input'));
      });
      assert.equal(await attr(page, '#train-maps', 'data-replay'), '0');
      assert.ok(maxDiff(untrained, await trainMaps(page)) < 1e-6, 'replay at step 0 shows the untrained maps');

      // Reset with a new seed: back to step 0 with another model; the heads control rebuilds the model.
      await page.click('#train-reset');
      await trainState(page, ['ready']);
      d = await trainData(page);
      assert.equal(d.step, 0);
      assert.notEqual(d.seed, 3);
      assert.ok(maxDiff(untrained, await trainMaps(page)) > 1e-3, 'another seed, other maps');
      assert.equal(await page.$eval('#train-try-run', (b) => b.disabled), true);
      await page.selectOption('#train-heads', '4');
      await trainState(page, ['ready']);
      const four = await trainMaps(page);
      assert.equal(four.length, 4);
      assertRowsSumToOne(four, '4 heads');
      assert.equal(await attr(page, '#train', 'data-heads'), '4');
    });
  },
);

test(
  'part 5: the causal next-token and recall tasks learn too; 400 px layout with the scalar build',
  { timeout: 240000 },
  async () => {
    await withPage('?lang=en&variant=scalar&trainseed=2', 400, async (page) => {
      await trainState(page, ['ready']);
      assert.equal((await trainData(page)).variant, 'scalar');
      await openAdvanced(page);
      await page.selectOption('#train-pace', '0');

      // next token (causal): nothing above the diagonal, ever
      await page.check('#train-task-next');
      await trainState(page, ['ready']);
      assert.equal(await attr(page, '#train', 'data-task'), 'next');
      await page.click('#train-start');
      await trainState(page, ['done']);
      let d = await trainData(page);
      console.log(
        `part 5, next token (scalar): ${(d.accuracy * 100).toFixed(1)} % at step ${d.step}, ${(d.reachedMs / 1000).toFixed(2)} s`,
      );
      assert.ok(d.accuracy >= 0.95 && d.lossSmoothed < 0.7 * d.lossInitial);
      for (const m of await trainMaps(page))
        m.forEach((row, i) =>
          row.forEach((v, j) => {
            if (j > i) assert.equal(v, 0, 'causal');
          }),
        );
      await page.waitForSelector('#train-try-table');
      assert.equal(await page.$('#train-try-table[data-toy-predicted]'), null, 'no toy model for this task');

      // key-value recall, compared with the shipped recall toy model
      await page.check('#train-task-recall');
      await trainState(page, ['ready']);
      await page.click('#train-start');
      await trainState(page, ['done']);
      d = await trainData(page);
      console.log(
        `part 5, recall (scalar): ${(d.accuracy * 100).toFixed(1)} % at step ${d.step}, ${(d.reachedMs / 1000).toFixed(2)} s`,
      );
      assert.ok(d.accuracy >= 0.95 && d.lossSmoothed < 0.7 * d.lossInitial);
      await page.waitForSelector('#train-try-table');
      const total = Number(await attr(page, '#train-try-table', 'data-total'));
      assert.equal(total, 3);
      assert.equal(
        Number(await attr(page, '#train-try-table', 'data-toy-correct')),
        total,
        'the shipped recall model answers',
      );

      // reversal, for the 400 px screenshot
      await page.check('#train-task-reverse');
      await trainState(page, ['ready']);
      await page.click('#train-start');
      await trainState(page, ['done']);
      await page.waitForSelector('#train-try-table');
      const over = await overflow(page);
      assert.ok(over <= 0, `page is ${over} px wider than the 400 px window`);
      await shot(page, 'train', 'train-trained-en-400');
    });
  },
);

test(
  'training without 1/√dₖ and with another initial scale: the page says so and the model starts peaked',
  { timeout: 120000 },
  async () => {
    await withPage('?lang=en&trainseed=4', async (page) => {
      await trainState(page, ['ready']);
      const plain = JSON.parse(await attr(page, '#train', 'data-entropy'));
      await openAdvanced(page);
      await page.check('#train-noscale');
      await page.waitForFunction(
        () =>
          document.querySelector('#train').dataset.noScale === '1' &&
          document.querySelector('#train').dataset.state === 'ready',
      );
      const noScale = JSON.parse(await attr(page, '#train', 'data-entropy'));
      assert.ok(
        Math.min(...noScale) < Math.min(...plain),
        `without the scale the first weights are more peaked: ${noScale} vs ${plain}`,
      );
      await page.uncheck('#train-noscale');
      await page.selectOption('#train-init', '10');
      await page.waitForFunction(
        () =>
          document.querySelector('#train').dataset.initScale === '10' &&
          document.querySelector('#train').dataset.state === 'ready',
      );
      const big = JSON.parse(await attr(page, '#train', 'data-entropy'));
      assert.ok(
        Math.min(...big) < 0.5 * Math.min(...plain),
        `a large initial scale makes the first weights peaked: ${big}`,
      );
      assert.match(await page.textContent('#train-scale-note'), /loadStateDict/);
    });
  },
);

test(
  'part 5: training speed of the reversal task, SIMD and scalar builds (logged, build/train-speed.json)',
  { timeout: 240000 },
  async () => {
    const results = [];
    for (const variant of ['simd', 'scalar']) {
      await withPage(`?lang=en&variant=${variant}&trainseed=1`, async (page) => {
        await trainState(page, ['ready']);
        await openAdvanced(page);
        await page.selectOption('#train-pace', '0'); // full speed, batch 32, lr 0.01, 2 heads (the defaults)
        await page.click('#train-start');
        await trainState(page, ['done']);
        const at95 = await trainData(page);
        // keep training for a steady-state rate: the median of 8 one-second rates, sampled every 500 ms
        await page.click('#train-start');
        await trainState(page, ['running']);
        await page.waitForTimeout(1000);
        const wall = [];
        const inside = [];
        for (let k = 0; k < 8; k++) {
          await page.waitForTimeout(500);
          const x = await trainData(page);
          wall.push(x.stepsPerSecond);
          inside.push(x.trainStepsPerSecond);
        }
        await page.click('#train-pause');
        await trainState(page, ['paused']);
        const d = await trainData(page);
        const median = (a) => a.slice().sort((p, q) => p - q)[a.length >> 1];
        const r = {
          variant,
          stepsTo95: at95.reachedStep,
          secondsTo95: at95.reachedMs / 1000,
          trainStepSecondsTo95: at95.reachedTrainMs / 1000,
          stepsPerSecond: median(wall),
          trainStepOnlyStepsPerSecond: median(inside),
          samples: { wall, inside },
          steps: d.step,
          warmUpMs: d.warmUpMs,
          batch: 32,
          T: 6,
          E: 16,
          heads: 2,
          lr: 0.01,
        };
        results.push(r);
        console.log(
          `part 5 speed [${variant}]: ${r.stepsPerSecond.toFixed(0)} steps/s (with evaluation and drawing), ` +
            `${r.trainStepOnlyStepsPerSecond.toFixed(0)} steps/s counting only trainStep (medians of 1-s windows); ` +
            `95 % at step ${r.stepsTo95} after ${r.secondsTo95.toFixed(2)} s (${r.trainStepSecondsTo95.toFixed(2)} s inside trainStep; evaluated every 10 steps)`,
        );
        assert.equal(d.variant, variant);
        assert.ok(r.stepsPerSecond > 0 && r.stepsTo95 > 0);
      });
    }
    fs.writeFileSync(
      path.join(ROOT, 'build', 'train-speed.json'),
      JSON.stringify(
        { date: new Date().toISOString(), cores: os.cpus().length, loadavg: os.loadavg(), results },
        null,
        2,
      ) + '\n',
    );
  },
);
