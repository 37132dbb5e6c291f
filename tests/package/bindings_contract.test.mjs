// One description per seam (issue 27 item 2): each argument struct that crosses Embind is described once, as a table
// in cpp/bindings/args.h (C++ type, member, JS name, default, doc). The C++ struct, its value_object registration
// (embind.cc) and its TypeScript interface (cpp/bindings/embind-args.d.ts, generated) all come from that table;
// this test checks that they still do.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';

import { parseArgs, renderTypes } from '../../scripts/gen-bindings.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (p) => fs.readFileSync(path.join(root, p), 'utf8');
const structs = parseArgs(read('cpp/bindings/args.h'));

test("args.h describes every argument struct, each JS name once and in the API's camelCase", () => {
  assert.deepEqual(
    structs.map((s) => s.name),
    [
      'TensorArg',
      'MaskArg',
      'SdpaCallArgs',
      'MhaConfigArgs',
      'MhaForwardArgs',
      'TinyTransformerArgs',
      'TransformerForwardArgs',
      'AdamWArgs',
    ],
  );
  for (const s of structs) {
    assert.ok(s.doc, `${s.name}: no comment above its table`);
    const js = s.members.map((m) => m.js);
    assert.equal(new Set(js).size, js.length, `${s.name}: a JS name twice`);
    for (const m of s.members) assert.match(m.js, /^[a-z][A-Za-z0-9]*$/, `${s.name}.${m.member}`);
  }
});

test('embind-args.d.ts is what scripts/gen-bindings.mjs makes of args.h', () => {
  assert.equal(read('cpp/bindings/embind-args.d.ts'), renderTypes(structs), 'run node scripts/gen-bindings.mjs');
});

test('the structs and their value_object registrations come from the tables, not from hand-written copies', () => {
  const args = read('cpp/bindings/args.h');
  assert.match(args, /#define ATTNLAB_ARG_MEMBER\(type, member, js, init, doc\) type member = init;/);
  assert.match(args, /^ATTNLAB_ARG_STRUCTS\(ATTNLAB_ARG_STRUCT\)$/m);
  const embind = read('cpp/bindings/embind.cc');
  assert.match(embind, /#define ATTNLAB_ARG_FIELD\(type, member, js, init, doc\) \.field\(js, &Struct::member\)/);
  assert.match(embind, /emscripten::value_object<name>\("_" #name\) table\(ATTNLAB_ARG_FIELD\);/);
  assert.match(embind, /^ {2}ATTNLAB_ARG_STRUCTS\(ATTNLAB_VALUE_OBJECT\)$/m);
  for (const file of ['cpp/bindings/embind.cc', 'cpp/bindings/marshal.h']) {
    const text = read(file);
    for (const { name } of structs) {
      assert.doesNotMatch(text, new RegExp(`\\bstruct ${name}\\b`), `${file} defines ${name} by hand`);
      assert.doesNotMatch(text, new RegExp(`value_object<${name}>`), `${file} registers ${name} by hand`);
    }
  }
});

test('every member reaches the C++ API: each conversion of args.h reads each member of its struct', () => {
  const args = read('cpp/bindings/args.h');
  // Members the bindings pass beside the options (the tensors of a call, a vision model's pixels, the seed of a
  // constructor).
  const besides = new Set(['query', 'key', 'value', 'tokens', 'pixel_values', 'seed']);
  for (const s of structs.filter((x) => !['TensorArg', 'MaskArg'].includes(x.name))) {
    const fn = args.match(new RegExp(`inline \\w+(?:::\\w+)? \\w+Of\\(const ${s.name}& a\\) \\{[\\s\\S]*?\\n\\}`));
    assert.ok(fn, `args.h: no conversion of ${s.name}`);
    for (const m of s.members.filter((x) => !besides.has(x.member))) {
      assert.match(fn[0], new RegExp(`\\ba\\.${m.member}\\b`), `${s.name}'s conversion drops ${m.member}`);
    }
  }
});

test('the JS-facing argument structs do not share a name with a struct of the C++ API', () => {
  const api = ['attention.h', 'transformer.h', 'tiny_transformer.h', 'memory_needs.h']
    .map((f) => read(`cpp/include/attnlab/${f}`))
    .join('\n');
  const kernels = read('cpp/src/attention/kernels.h');
  const clashes = structs
    .map((s) => s.name)
    .filter((name) => new RegExp(`\\b(struct|class) ${name}\\b`).test(api + kernels));
  assert.deepEqual(clashes, []);
});
