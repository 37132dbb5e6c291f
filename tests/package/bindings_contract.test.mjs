// One description per seam (issue 27 item 2): each argument struct that crosses Embind is declared in
// cpp/bindings/marshal.h (C++ members), registered in cpp/bindings/embind.cc (value_object: JS name → member) and
// typed in cpp/bindings/embind.d.ts (the interface web/src is checked against). This test reads all three and
// fails when they disagree: a member not registered, a registered field missing from the types (or the reverse), a
// C++ type whose JS type does not match.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (p) => fs.readFileSync(path.join(root, p), 'utf8');

/** marshal.h: struct name → Map(member → C++ type). */
function marshalStructs(source) {
  const structs = new Map();
  const body = source.slice(source.indexOf('namespace marshal {'));
  for (const m of body.matchAll(/^struct (\w+) \{\n([\s\S]*?)^\};/gm)) {
    const members = new Map();
    const code = m[2].replace(/\/\/.*$/gm, '').replace(/\s+/g, ' ');
    for (const statement of code.split(';')) {
      const d = statement.trim().match(/^([\w:<>]+)\s+(.+)$/);
      if (!d) continue;
      for (const part of d[2].split(',')) members.set(part.trim().split(/\s*=/)[0].trim(), d[1]);
    }
    structs.set(m[1], members);
  }
  return structs;
}

/** embind.cc: C++ struct → { jsName, fields: Map(js field → member) }. */
function valueObjects(source) {
  const out = new Map();
  for (const m of source.matchAll(/value_object<(\w+)>\("(\w+)"\)((?:\s*\.field\("\w+", &\w+::\w+\))+)/g)) {
    const fields = new Map([...m[3].matchAll(/\.field\("(\w+)", &\w+::(\w+)\)/g)].map((f) => [f[1], f[2]]));
    out.set(m[1], { jsName: m[2], fields });
  }
  return out;
}

/** embind.d.ts: interface → Map(field → TS type), with the fields of what it extends. */
function interfaces(source) {
  const raw = new Map();
  for (const m of source.matchAll(/^export interface (\w+)(?: extends (\w+))? \{\n([\s\S]*?)^\}/gm)) {
    const fields = new Map();
    for (const f of m[3].matchAll(/^ {2}(\w+)\??: ([^;]+);/gm)) fields.set(f[1], f[2].trim());
    raw.set(m[1], { base: m[2], fields });
  }
  const resolve = (name) => {
    const r = raw.get(name);
    if (!r) return undefined;
    return new Map([...(r.base ? resolve(r.base) : []), ...r.fields]);
  };
  return new Map([...raw.keys()].map((k) => [k, resolve(k)]));
}

// How a C++ member type is seen from JS.
const JS_TYPE = {
  bool: 'boolean',
  int: 'number',
  float: 'number',
  double: 'number',
  uintptr_t: 'number',
  TensorArg: 'TensorArg',
  MaskArg: 'MaskArg',
  val: 'number[]',
};
const jsTypeOf = (cpp) => JS_TYPE[cpp] ?? 'RawEnumValue'; // (the remaining members are enums)

test('every value_object matches its marshal.h struct member for member, and its embind.d.ts interface', () => {
  const structs = marshalStructs(read('cpp/bindings/marshal.h'));
  const objects = valueObjects(read('cpp/bindings/embind.cc'));
  const types = interfaces(read('cpp/bindings/embind.d.ts'));
  assert.ok(objects.size >= 8, `found ${objects.size} value_objects`);
  for (const [cpp, { jsName, fields }] of objects) {
    const members = structs.get(cpp);
    assert.ok(members, `${cpp}: no struct in marshal.h`);
    assert.deepEqual(
      [...fields.values()].sort(),
      [...members.keys()].sort(),
      `${cpp}: the value_object's members are not the struct's`,
    );
    const iface = types.get(jsName.replace(/^_/, ''));
    assert.ok(iface, `${jsName}: no interface ${jsName.replace(/^_/, '')} in embind.d.ts`);
    assert.deepEqual([...iface.keys()].sort(), [...fields.keys()].sort(), `${jsName}: fields differ from embind.d.ts`);
    for (const [js, member] of fields) {
      const expected = jsTypeOf(members.get(member));
      const actual = iface.get(js);
      const ok = expected === 'number[]' ? /\[\]$/.test(actual) : actual === expected;
      assert.ok(ok, `${jsName}.${js}: C++ ${members.get(member)} is ${expected} in JS, embind.d.ts says ${actual}`);
    }
  }
});

test('the JS-facing argument structs do not share a name with a struct of the C++ API', () => {
  const structs = marshalStructs(read('cpp/bindings/marshal.h'));
  const api = ['attention.h', 'transformer.h', 'tiny_transformer.h', 'memory_needs.h']
    .map((f) => read(`cpp/include/attnlab/${f}`))
    .join('\n');
  const kernels = read('cpp/src/kernels.h');
  const clashes = [...structs.keys()].filter((name) => new RegExp(`\\b(struct|class) ${name}\\b`).test(api + kernels));
  assert.deepEqual(clashes, []);
});
