// The package's subpath exports are wired everywhere they must be: each "./X" of package.json's "exports" that names
// dist/X.mjs has its source web/src/X.mjs and types web/src/X.d.ts, scripts/build.sh's .d.mts loop generates
// dist/X.d.mts, scripts/test-package.sh expects it in the tarball and lints the entry point (attw), and the pure-JS
// entry points (no wasm: attnlab/viz, attnlab/analysis) declare in their .d.ts every name their module exports.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { test } from 'node:test';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const read = (f) => readFileSync(join(root, f), 'utf8');
const pkg = JSON.parse(read('package.json'));

/** [subpath, module name] of every JS module export: '.' → index, './viz' → viz, … */
const modules = Object.entries(pkg.exports)
  .map(([subpath, target]) => [subpath, target?.import?.default ?? target?.default])
  .filter(([, file]) => typeof file === 'string' && file.endsWith('.mjs'))
  .map(([subpath, file]) => [subpath, file.replace(/^\.\/dist\/(.+)\.mjs$/, '$1')]);

test('attnlab/analysis is a subpath export', () => {
  assert.deepEqual(pkg.exports['./analysis'], { types: './dist/analysis.d.mts', default: './dist/analysis.mjs' });
});

test('every module export has its source, types, .d.mts generation, tarball entry and lint', () => {
  const build = read('scripts/build.sh');
  const loop = build.match(/^for f in ([\w ]+); do$/m)?.[1].split(' ') ?? [];
  const packageTest = read('scripts/test-package.sh');
  const attw = packageTest.match(/--profile esm-only \\\n\s+--entrypoints ([^)]+)\)/)?.[1].split(' ') ?? [];
  assert.ok(modules.length >= 4, `found ${modules.length} module exports`);
  for (const [subpath, name] of modules) {
    assert.ok(existsSync(join(root, `web/src/${name}.mjs`)), `web/src/${name}.mjs (${subpath})`);
    assert.ok(existsSync(join(root, `web/src/${name}.d.ts`)), `web/src/${name}.d.ts (${subpath})`);
    assert.ok(loop.includes(name), `scripts/build.sh's .d.mts loop names ${name}: ${loop.join(' ')}`);
    assert.ok(packageTest.includes(`dist/${name}.d.mts`), `scripts/test-package.sh expects dist/${name}.d.mts`);
    if (subpath !== '.') assert.ok(attw.includes(subpath), `attw checks ${subpath}: ${attw.join(' ')}`);
  }
});

test("the pure-JS entry points' types declare every name the module exports", async () => {
  for (const name of ['viz', 'analysis']) {
    const exported = Object.keys(await import(pathToFileURL(join(root, `web/src/${name}.mjs`)).href)).sort();
    const types = read(`web/src/${name}.d.ts`);
    const declared = [...types.matchAll(/^export declare (?:function|const) (\w+)/gm)].map((m) => m[1]).sort();
    assert.deepEqual(exported, declared, `web/src/${name}.d.ts`);
  }
});
