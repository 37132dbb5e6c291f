// No hand-written JavaScript function in web/ or scripts/ is longer than kMaxLines lines (issue #27: short functions
// of named steps, not one long closure), except those listed with a reason in docs/architecture.md ("Function
// length"). A function's length counts every line from its start to its closing brace, nested functions included.
// Files: tracked, or new and not ignored (as scripts/check-js.sh picks them); parsed with TypeScript's parser. No
// JS file of the library (web/src/) is longer than kMaxFileLines.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const kMaxLines = 120;
/** The longest a library source file may be (issue #32: web/src/transformer.mjs had four concerns in 1,335). */
const kMaxFileLines = 700;

/** The JS files of web/ and scripts/. */
function sources() {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '--', 'web', 'scripts'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return [...new Set(out.split('\n'))].filter((f) => /\.(js|mjs|cjs)$/.test(f) && fs.existsSync(path.join(ROOT, f)));
}

/** Every function of a file with a body: { name, line, lines }. */
export function functionLengths(file, text) {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const found = [];
  const nameOf = (node) => {
    if (node.name) return node.name.getText(sf);
    const p = node.parent;
    if (p && (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)))
      return p.name.getText(sf);
    if (p && ts.isBinaryExpression(p)) return p.left.getText(sf);
    return '(anonymous)';
  };
  const visit = (node) => {
    if (ts.isFunctionLike(node) && node.body) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(node.end).line;
      found.push({ name: nameOf(node), line: first + 1, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

/** The exceptions of docs/architecture.md: rows `| path | function | … |` whose path is a JS file. */
function exceptions() {
  const doc = fs.readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
  const rows = [...doc.matchAll(/^\|\s*`([^`]+\.(?:js|mjs|cjs))`\s*\|\s*`([^`]+)`\s*\|/gm)];
  return new Set(rows.map((m) => `${m[1]}:${m[2]}`));
}

test(`no function in web/ or scripts/ is longer than ${kMaxLines} lines (exceptions: docs/architecture.md)`, () => {
  const allowed = exceptions();
  const files = sources();
  assert.ok(files.length > 50, `found ${files.length} files`);
  const long = [];
  for (const f of files) {
    for (const fn of functionLengths(f, fs.readFileSync(path.join(ROOT, f), 'utf8'))) {
      if (fn.lines > kMaxLines && !allowed.has(`${f}:${fn.name}`))
        long.push(`${f}:${fn.line} ${fn.name}: ${fn.lines} lines`);
    }
  }
  assert.deepEqual(long, []);
});

test(`no JS file in web/src/ is longer than ${kMaxFileLines} lines (one concern per file)`, () => {
  const files = sources().filter((f) => f.startsWith('web/src/'));
  assert.ok(files.length > 15, `found ${files.length} files`);
  const long = files
    .map((f) => [f, fs.readFileSync(path.join(ROOT, f), 'utf8').split('\n').length - 1])
    .filter(([, n]) => n > kMaxFileLines)
    .map(([f, n]) => `${f}: ${n} lines`);
  assert.deepEqual(long, []);
});

test('the measure counts a function from its first line to its closing brace, nested ones included', () => {
  const text = 'function a() {\n  const b = () => {\n    return 1;\n  };\n  return b;\n}\nconst c = function () {};\n';
  assert.deepEqual(functionLengths('x.js', text), [
    { name: 'a', line: 1, lines: 6 },
    { name: 'b', line: 2, lines: 3 },
    { name: 'c', line: 7, lines: 1 },
  ]);
});
