// The demo's own rules (web/demo/README.md, "Layout"): every module is type-checked (// @ts-check), module-level
// constants are SCREAMING_SNAKE_CASE (functions, also `const f = () => …`, are camelCase), compute.js (and the
// modules of its part it imports) and shared/ touch no DOM, and every part of main.js's PARTS is a folder
// parts/<id>/ with compute.js and view.js whose compute has its node test here (tests/js/demo/parts/<id>/
// compute.test.mjs).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { DEMO, ROOT } from './helpers.mjs';

const modules = () =>
  fs
    .readdirSync(DEMO, { recursive: true })
    .filter((f) => f.endsWith('.js'))
    .map((f) => ({ file: f, text: fs.readFileSync(path.join(DEMO, f), 'utf8') }));

test('every module of web/demo is // @ts-check', () => {
  const unchecked = modules()
    .filter((m) => !m.text.startsWith('// @ts-check\n'))
    .map((m) => m.file);
  assert.deepEqual(unchecked, []);
});

test('module-level constants are SCREAMING_SNAKE_CASE; functions are camelCase', () => {
  const bad = [];
  for (const { file, text } of modules()) {
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
    for (const st of sf.statements) {
      if (!ts.isVariableStatement(st) || !(st.declarationList.flags & ts.NodeFlags.Const)) continue;
      for (const d of st.declarationList.declarations) {
        if (!ts.isIdentifier(d.name)) continue;
        let init = d.initializer;
        while (init && (ts.isParenthesizedExpression(init) || ts.isAsExpression(init))) init = init.expression;
        const fn = init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init));
        const name = d.name.text;
        if (fn ? !/^[a-z][A-Za-z0-9]*$/.test(name) : !/^[A-Z][A-Z0-9_]*$/.test(name)) bad.push(`${file}: ${name}`);
      }
    }
  }
  assert.deepEqual(bad, []);
});

test('compute.js, the modules of its part that it imports, and shared/ touch no DOM', () => {
  const all = modules();
  // a part's compute split in files (parts/poem/heads.js): what compute.js imports from its own folder
  const computeOwn = all
    .filter((m) => /(^|\/)compute\.js$/.test(m.file))
    .flatMap((m) => [...m.text.matchAll(/from '\.\/([\w-]+\.js)'/g)].map((i) => path.join(path.dirname(m.file), i[1])));
  const dom = all
    .filter((m) => /(^|\/)compute\.js$|^shared\//.test(m.file) || computeOwn.includes(m.file))
    .filter((m) => /(?<![.\w])(document|window)\./.test(m.text.replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, '')))
    .map((m) => m.file);
  assert.deepEqual(dom, []);
});

test('every part is parts/<id>/ with compute.js, view.js and a node test of its compute', () => {
  const main = fs.readFileSync(path.join(DEMO, 'main.js'), 'utf8');
  const ids = [...main.matchAll(/\{ id: '([a-z-]+)', sec: /g)].map((m) => m[1]);
  assert.ok(ids.length >= 13, ids.join());
  const views = fs
    .readdirSync(path.join(DEMO, 'parts'))
    .filter((id) => fs.existsSync(path.join(DEMO, 'parts', id, 'view.js')));
  assert.deepEqual(views.sort(), [...ids].sort(), 'every parts/<id>/view.js is in PARTS');
  for (const id of ids) {
    for (const f of [
      `web/demo/parts/${id}/compute.js`,
      `web/demo/parts/${id}/view.js`,
      `tests/js/demo/parts/${id}/compute.test.mjs`,
    ])
      assert.ok(fs.existsSync(path.join(ROOT, f)), f);
  }
});

test('the page imports the package only through attnlab.js, attnlab-viz.js, attnlab-worker.js and attnlab-analysis.js', () => {
  const reach = modules()
    .filter((m) => !/^(attnlab(-viz|-worker|-analysis)?|tokenizers)\.js$/.test(m.file))
    .filter((m) => /from '[^']*dist\/|import\('[^']*dist\/|web\/src/.test(m.text))
    .map((m) => m.file);
  assert.deepEqual(reach, []);
  // the one third-party module, @huggingface/tokenizers, only through tokenizers.js (the site build ships it)
  const vendor = modules()
    .filter((m) => m.file !== 'tokenizers.js' && /node_modules\/|from '@/.test(m.text))
    .map((m) => m.file);
  assert.deepEqual(vendor, []);
});
