// Loading attnlab in Node leaves the host's process alone (issue #16): no process listener is added, an unrelated
// throw later ends the process exactly as it would without attnlab (exit code, stack), a user's own
// 'uncaughtException' handler still keeps the process alive, and --unhandled-rejections=warn still holds.
// Each case runs in a child process and is compared with the same script run without loading attnlab.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';

import { VARIANTS, distDir } from './helpers.mjs';

const kIndex = pathToFileURL(join(distDir, 'index.mjs')).href;
const kAll = JSON.stringify([...VARIANTS, 'auto']); // every variant of wasm-variants.json, then 'auto'

// Runs `body` as an ES module in a fresh node; with `load`, every variant is initialised first.
function run(body, { load, nodeArgs = [] }) {
  const prelude = load
    ? `const { init } = await import(${JSON.stringify(kIndex)});
       for (const variant of ${kAll}) await init({ variant });`
    : '';
  const r = spawnSync(process.execPath, [...nodeArgs, '--input-type=module', '-e', `${prelude}\n${body}`], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('init() of every variant adds no process listener, no global, and changes no exit code', () => {
  const body = `
    const globalsBefore = Object.getOwnPropertyNames(globalThis).sort();
    const { init } = await import(${JSON.stringify(kIndex)});
    const counts = () => Object.fromEntries(process.eventNames().map((e) => [String(e), process.listenerCount(e)]));
    const before = counts();
    const exitCode = process.exitCode;
    for (const variant of ${kAll}) await init({ variant });
    const globalsAfter = Object.getOwnPropertyNames(globalThis).sort();
    console.log(JSON.stringify({ before, after: counts(), exitCodeKept: process.exitCode === exitCode,
                                 globalsBefore, globalsAfter }));`;
  const r = run(body, { load: false });
  assert.equal(r.status, 0, r.stderr);
  const { before, after, exitCodeKept, globalsBefore, globalsAfter } = JSON.parse(r.stdout);
  assert.deepEqual(after, before);
  assert.deepEqual(globalsAfter, globalsBefore); // e.g. Emscripten's pthread glue sets global.Worker in Node
  assert.equal(after.uncaughtException ?? 0, 0);
  assert.equal(after.unhandledRejection ?? 0, 0);
  assert.equal(exitCodeKept, true);
});

test("a later unrelated throw exits with Node's own code and the user's stack", () => {
  const body = `setTimeout(function userTimer() { throw new Error('user failure 123'); }, 10);`;
  const without = run(body, { load: false });
  const withAttnlab = run(body, { load: true });
  assert.notEqual(without.status, 0);
  assert.equal(withAttnlab.status, without.status);
  assert.match(withAttnlab.stderr, /Error: user failure 123\n\s+at (Timeout\.)?userTimer/);
  // Node prints the throwing source line first: the user's, not a line of minified glue.
  assert.equal(withAttnlab.stderr.split('\n')[1], without.stderr.split('\n')[1]);
  assert.ok(
    withAttnlab.stderr.length < without.stderr.length + 500,
    `stderr grew to ${withAttnlab.stderr.length} chars`,
  );
});

test("a user's uncaughtException handler still keeps the process alive", () => {
  const body = `
    const seen = [];
    process.on('uncaughtException', (e) => seen.push(e.message));
    setTimeout(() => { throw new Error('first'); }, 5);
    setTimeout(() => { throw new Error('second'); }, 20);
    setTimeout(() => console.log('alive after ' + seen.join(',')), 50);`;
  const r = run(body, { load: true });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'alive after first,second');
});

test('--unhandled-rejections=warn is not overridden', () => {
  const body = `Promise.reject(new Error('ignored rejection')); setTimeout(() => console.log('still running'), 50);`;
  const without = run(body, { load: false, nodeArgs: ['--unhandled-rejections=warn'] });
  const withAttnlab = run(body, { load: true, nodeArgs: ['--unhandled-rejections=warn'] });
  assert.equal(without.status, 0, without.stderr);
  assert.equal(withAttnlab.status, 0, withAttnlab.stderr);
  assert.equal(withAttnlab.stdout.trim(), 'still running');
  // And by default (throw mode) an unhandled rejection still ends the process as it would without attnlab.
  const strict = run(body, { load: true });
  assert.equal(strict.status, run(body, { load: false }).status);
  assert.notEqual(strict.status, 0);
});
