// readSafetensors and writeSafetensors (web/src/safetensors.mjs): exact dtype conversion against PyTorch's own
// (tests/fixtures/hf/, written by scripts/make_hf_fixtures.py), 16-bit data widened only when read, the header's
// __metadata__, the same tensors from bytes and from a Blob, round trips through the writer, and a RangeError that
// says what is wrong for every kind of malformed file (from bytes or a Blob), before anything is read out of bounds
// or allocated from a lying header.
import assert from 'node:assert/strict';
import { openAsBlob, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { readSafetensors, writeSafetensors } from '../../dist/index.mjs';
import { root } from './helpers.mjs';

const hfDir = join(root, 'tests', 'fixtures', 'hf');
const load = (name) => readSafetensors(readFileSync(join(hfDir, name)));

/** A safetensors file from a header object (written as given) and a data section. */
function fileOf(header, data = new Uint8Array(0), { headerLength } = {}) {
  const text = new TextEncoder().encode(typeof header === 'string' ? header : JSON.stringify(header));
  const out = new Uint8Array(8 + text.length + data.length);
  const view = new DataView(out.buffer);
  const n = headerLength ?? text.length;
  view.setUint32(0, n % 2 ** 32, true);
  view.setUint32(4, Math.floor(n / 2 ** 32), true);
  out.set(text, 8);
  out.set(data, 8 + text.length);
  return out;
}

/** A valid F32 file of named tensors { name: { data: Float32Array, shape } }. */
const f32File = (tensors) => writeSafetensors(tensors);

const bitsOf = (f32) => new Uint32Array(Float32Array.from(f32).buffer);

describe('readSafetensors: dtypes', () => {
  const t = load('dtypes.safetensors');

  test('F16 converts exactly as PyTorch does, subnormals, ±0, ±Infinity and NaN included', () => {
    assert.equal(t.f16.dtype, 'F16');
    assert.deepEqual(t.f16.shape, t.f16_as_f32.shape);
    const got = t.f16.data;
    const want = t.f16_as_f32.data;
    let nan = 0;
    for (let i = 0; i < want.length; ++i) {
      if (Number.isNaN(want[i])) {
        nan += 1;
        assert.ok(Number.isNaN(got[i]), `f16 element ${i}: expected NaN, got ${got[i]}`);
      } else {
        assert.ok(Object.is(got[i], want[i]), `f16 element ${i}: expected ${want[i]}, got ${got[i]}`);
      }
    }
    assert.ok(nan > 100, 'the fixture holds NaN patterns');
  });

  test('F16 edge patterns, decoded by hand', () => {
    const half = new Uint16Array([0x3c00, 0x0001, 0x03ff, 0x7bff, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0xc000]);
    const file = fileOf({ h: { dtype: 'F16', shape: [9], data_offsets: [0, 18] } }, new Uint8Array(half.buffer));
    const got = readSafetensors(file).h.data;
    const want = [1, 2 ** -24, 1023 * 2 ** -24, 65504, -0, Infinity, -Infinity, NaN, -2];
    want.forEach((w, i) => assert.ok(Object.is(got[i], w), `pattern ${half[i].toString(16)}: ${got[i]} ≠ ${w}`));
  });

  test('BF16 converts bit-exactly (the top half of a float32, NaN payloads kept)', () => {
    assert.equal(t.bf16.dtype, 'BF16');
    assert.deepEqual(bitsOf(t.bf16.data), bitsOf(t.bf16_as_f32.data));
  });

  test('F32 is read as stored, whatever the data section alignment', () => {
    const want = Float32Array.of(0, -0, 1.5, -2.25, 1e-45, 3.4e38, Infinity, -Infinity, NaN);
    assert.deepEqual(bitsOf(t.f32.data), bitsOf(want));
    // The data section starts at 8 + header length: an odd header length misaligns every float.
    const odd = fileOf(
      '{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}} ',
      new Uint8Array(Float32Array.of(1.25, -3).buffer),
    );
    assert.deepEqual(Array.from(readSafetensors(odd).x.data), [1.25, -3]);
  });

  test('other dtypes come as raw bytes with data null; __metadata__ is not a tensor', () => {
    const bert = load('bert_e16_h4.safetensors');
    assert.ok(!Object.keys(bert).includes('__metadata__'));
    assert.deepEqual(
      bert.__metadata__,
      { format: 'pt' },
      "the header's __metadata__, as safetensors' save_file wrote it",
    );
    const ids = bert['bert.embeddings.position_ids'];
    assert.equal(ids.dtype, 'I64');
    assert.equal(ids.data, null);
    assert.deepEqual(ids.shape, [1, 5]);
    assert.equal(Object.getPrototypeOf(ids.bytes), Uint8Array.prototype, 'a plain Uint8Array, even from a Node Buffer');
    assert.equal(ids.bytes.byteOffset, 0, 'a copy, not a view into the file');
    assert.deepEqual(Array.from(new BigInt64Array(ids.bytes.buffer), Number), [0, 1, 2, 3, 4]);
    const mask = load('gpt2_e16_h2.safetensors')['transformer.h.0.attn.bias'];
    assert.equal(mask.dtype, 'U8');
    assert.deepEqual(Array.from(mask.bytes.subarray(0, 6)), [1, 0, 0, 0, 0, 0]);
  });

  test('every fixture file reads, with each tensor of the size its shape says', () => {
    for (const name of readdirSync(hfDir).filter((n) => n.endsWith('.safetensors'))) {
      for (const [key, t] of Object.entries(load(name))) {
        const n = t.shape.reduce((a, b) => a * b, 1);
        if (t.data) assert.equal(t.data.length, n, `${name} ${key}`);
        else assert.ok(t.bytes.length >= n, `${name} ${key}`);
      }
    }
  });
});

describe('readSafetensors: round trips and inputs', () => {
  test('F32 tensors of every rank, empty ones included, round-trip exactly', () => {
    const tensors = {
      scalar: { data: Float32Array.of(7.5), shape: [] },
      empty: { data: new Float32Array(0), shape: [3, 0] },
      matrix: { data: Float32Array.from({ length: 12 }, (_, i) => Math.fround(Math.sin(i) * 1e3)), shape: [3, 4] },
      ['__proto__']: { data: Float32Array.of(1, 2), shape: [2] }, // computed: an own property, not the prototype
    };
    const back = readSafetensors(f32File(tensors));
    assert.deepEqual(Object.keys(back).sort(), Object.keys(tensors).sort());
    for (const [name, t] of Object.entries(tensors)) {
      assert.deepEqual(back[name].shape, t.shape, name);
      assert.deepEqual(Array.from(back[name].data), Array.from(t.data), name);
      assert.equal(back[name].dtype, 'F32');
    }
    assert.equal(Object.getPrototypeOf(back), Object.prototype, 'a tensor named __proto__ is an ordinary entry');
  });

  test('an ArrayBuffer, a Uint8Array and a Uint8Array at an offset of a larger buffer read the same', () => {
    const file = f32File({ a: { data: Float32Array.of(1, 2, 3), shape: [3] } });
    const big = new Uint8Array(file.length + 13);
    big.set(file, 5);
    for (const input of [file.buffer, file, big.subarray(5, 5 + file.length)]) {
      assert.deepEqual(Array.from(readSafetensors(input).a.data), [1, 2, 3]);
    }
  });

  test('a value that is not bytes is a TypeError naming bytes', () => {
    for (const bad of [undefined, 'abc', [1, 2], new Float32Array(4), { byteLength: 8 }]) {
      assert.throws(
        () => readSafetensors(bad),
        (e) =>
          e instanceof TypeError &&
          /readSafetensors: bytes must be an ArrayBuffer, a Uint8Array or a Blob/.test(e.message),
      );
    }
  });
});

/** The tensors' own enumerable contents, arrays as plain arrays (data read, so widened, here). */
const contents = (tensors) =>
  Object.fromEntries(
    Object.entries(tensors).map(([n, t]) => [
      n,
      {
        ...t,
        data: t.data && Array.from(t.data),
        bits: t.bits && Array.from(t.bits),
        bytes: t.bytes && Array.from(t.bytes),
      },
    ]),
  );
const fixtureNames = readdirSync(hfDir).filter((n) => n.endsWith('.safetensors'));

describe('readSafetensors: 16-bit data widened only when read; __metadata__', () => {
  test('an F16 / BF16 tensor keeps its bits and widens data on first read, once', () => {
    const t = load('dtypes.safetensors');
    for (const name of ['f16', 'bf16']) {
      const x = t[name];
      assert.equal(typeof Object.getOwnPropertyDescriptor(x, 'data').get, 'function', `${name}: not widened yet`);
      assert.ok(x.bits instanceof Uint16Array);
      const data = x.data;
      assert.ok(data instanceof Float32Array && data.length === x.bits.length);
      assert.equal(Object.getOwnPropertyDescriptor(x, 'data').value, data, `${name}: cached as a plain property`);
      assert.equal(x.data, data);
    }
    assert.equal(Object.getOwnPropertyDescriptor(t.f16_as_f32, 'data').get, undefined, 'F32 is read at once');
  });

  test('data set before it is read is the data; a spread copy has data', () => {
    const t = load('dtypes.safetensors');
    const mine = new Float32Array(t.bf16.bits.length);
    t.bf16.data = mine;
    assert.equal(t.bf16.data, mine);
    const copy = { ...t.f16 };
    assert.ok(copy.data instanceof Float32Array && copy.bits === t.f16.bits);
  });

  test('__metadata__ is a non-enumerable property: {} when the file has none; a tensor cannot shadow it', () => {
    const t = load('dtypes.safetensors');
    assert.deepEqual(t.__metadata__, {});
    assert.equal(Object.getOwnPropertyDescriptor(t, '__metadata__').enumerable, false);
    const file = writeSafetensors({ a: { data: Float32Array.of(1), shape: [1] } }, { format: 'pt', note: 'é' });
    assert.deepEqual(readSafetensors(file).__metadata__, { format: 'pt', note: 'é' });
    assert.deepEqual(Object.keys(readSafetensors(file)), ['a']);
  });
});

describe('readSafetensors of a Blob', () => {
  for (const name of fixtureNames) {
    test(`${name}: the same tensors and metadata as from its bytes (a Blob and fs.openAsBlob)`, async () => {
      const bytes = readFileSync(join(hfDir, name));
      const want = readSafetensors(bytes);
      for (const blob of [new Blob([bytes]), await openAsBlob(join(hfDir, name))]) {
        const pending = readSafetensors(blob);
        assert.ok(pending instanceof Promise);
        const got = await pending;
        assert.deepEqual(contents(got), contents(want));
        assert.deepEqual(got.__metadata__, want.__metadata__);
      }
    });
  }

  test('each tensor has a buffer of its own (never the whole file); F32 data is that buffer, not a copy', async () => {
    const t = await readSafetensors(new Blob([readFileSync(join(hfDir, 'dtypes.safetensors'))]));
    const f32 = t.f16_as_f32;
    assert.equal(f32.data.buffer.byteLength, f32.data.byteLength);
    assert.equal(t.f16.bits.buffer.byteLength, t.f16.bits.byteLength);
    assert.equal(typeof Object.getOwnPropertyDescriptor(t.bf16, 'data').get, 'function', 'still lazy');
  });
});

describe('writeSafetensors', () => {
  for (const name of fixtureNames) {
    test(`${name}: written back from its tensors and metadata, byte for byte the file (PyTorch's writer)`, () => {
      const bytes = new Uint8Array(readFileSync(join(hfDir, name)));
      const t = readSafetensors(bytes);
      assert.deepEqual(writeSafetensors(t, t.__metadata__), bytes);
    });
  }

  test('a 16-bit tensor whose data was read (unchanged) writes its bits; changed data is a RangeError', () => {
    const t = load('gpt2_bare_e8_h1_bf16.safetensors');
    const name = Object.keys(t).find((n) => t[n].dtype === 'BF16');
    t[name].data; // widened, unchanged
    assert.deepEqual(readSafetensors(writeSafetensors(t))[name].bits, t[name].bits);
    t[name].data[0] += 1;
    assert.throws(
      () => writeSafetensors(t),
      (e) => e instanceof RangeError && e.message.includes(`tensors[${JSON.stringify(name)}].data no longer equals`),
    );
  });

  const f = Float32Array.of(1, 2);
  const bad = [
    ['tensors not an object', [null], TypeError, /writeSafetensors: tensors must be an object/],
    ['a tensor that is an array', [{ a: f }], TypeError, /tensors\["a"\] must be a tensor/],
    ['an unknown dtype', [{ a: { data: f, shape: [2], dtype: 'F17' } }], RangeError, /tensors\["a"\]\.dtype/],
    ['a bad shape', [{ a: { data: f, shape: [-2] } }], TypeError, /tensors\["a"\]\.shape/],
    ['F32 without a Float32Array', [{ a: { data: [1, 2], shape: [2] } }], TypeError, /\.data must be a Float32Array/],
    ['BF16 without bits', [{ a: { data: f, shape: [2], dtype: 'BF16' } }], TypeError, /\.bits must be a Uint16Array/],
    ['I64 without bytes', [{ a: { data: null, shape: [2], dtype: 'I64' } }], TypeError, /\.bytes must be a Uint8Array/],
    ['a size that is not the shape', [{ a: { data: f, shape: [3] } }], RangeError, /has 8 bytes, but shape \[3\]/],
    ['a tensor named __metadata__', [{ __metadata__: { data: f, shape: [2] } }], RangeError, /cannot name a tensor/],
    ['metadata that is not strings', [{}, { n: 3 }], TypeError, /metadata\["n"\] must be a string/],
  ];
  for (const [what, args, Class, pattern] of bad) {
    test(`${what}: a ${Class.name} naming it`, () => {
      assert.throws(
        () => writeSafetensors(...args),
        (e) => e instanceof Class && pattern.test(e.message),
      );
    });
  }
});

describe('readSafetensors: malformed files are RangeErrors that say what is wrong', () => {
  const ok = { dtype: 'F32', shape: [2], data_offsets: [0, 8] };
  const eight = new Uint8Array(8);
  const nanBytes = new Uint8Array(new Float32Array(64).fill(NaN).buffer);
  const valid = f32File({ a: { data: Float32Array.of(1, 2, 3, 4), shape: [4] } });
  const cases = [
    ['an empty file', new Uint8Array(0), /8-byte header length/],
    ['7 bytes', new Uint8Array(7), /8-byte header length/],
    [
      'a header length past the end',
      fileOf({ a: ok }, eight, { headerLength: 1000 }),
      /header length 1000 runs past the end/,
    ],
    ['an absurd header length (2^40)', fileOf({ a: ok }, eight, { headerLength: 2 ** 40 }), /runs past the end/],
    [
      'a header length with every bit set',
      Uint8Array.of(255, 255, 255, 255, 255, 255, 255, 255, 123),
      /runs past the end/,
    ],
    ['a file of NaN floats', nanBytes, /runs past the end/],
    ['truncated inside the header', valid.subarray(0, 20), /runs past the end/],
    ['truncated inside the data', valid.subarray(0, valid.length - 3), /outside the data/],
    ['a header that is not JSON', fileOf('{"a": {'), /not valid UTF-8 JSON/],
    [
      'NaN in a shape (not JSON)',
      fileOf('{"a":{"dtype":"F32","shape":[NaN],"data_offsets":[0,4]}}', new Uint8Array(4)),
      /not valid UTF-8 JSON/,
    ],
    ['a header that is not UTF-8', fileOf('{}').fill(0xff, 8), /not valid UTF-8 JSON/],
    ['a header that is an array', fileOf([]), /must be a JSON object/],
    ['a header that is null', fileOf('null'), /must be a JSON object/],
    ['a header that is a string', fileOf('"tensors"'), /must be a JSON object/],
    ['an entry that is a number', fileOf({ a: 5 }), /tensor "a" must be an object/],
    ['an entry without dtype', fileOf({ a: { shape: [2], data_offsets: [0, 8] } }, eight), /tensor "a" has no dtype/],
    ['an entry without shape', fileOf({ a: { dtype: 'F32', data_offsets: [0, 8] } }, eight), /has no shape/],
    ['an entry without data_offsets', fileOf({ a: { dtype: 'F32', shape: [2] } }, eight), /has no data_offsets/],
    ['an unknown dtype', fileOf({ a: { ...ok, dtype: 'F17' } }, eight), /unknown dtype "F17"/],
    ['a negative dim', fileOf({ a: { ...ok, shape: [-2] } }, eight), /shape must be an array of non-negative integers/],
    ['a fractional dim', fileOf({ a: { ...ok, shape: [0.5, 4] } }, eight), /non-negative integers, got \[0.5,4\]/],
    ['a shape that is not an array', fileOf({ a: { ...ok, shape: '2' } }, eight), /non-negative integers/],
    [
      'three data offsets',
      fileOf({ a: { ...ok, data_offsets: [0, 4, 8] } }, eight),
      /data_offsets must be \[begin, end\]/,
    ],
    ['reversed offsets', fileOf({ a: { ...ok, data_offsets: [8, 0] } }, eight), /data_offsets \[8, 0\] are reversed/],
    ['offsets past the data', fileOf({ a: { ...ok, data_offsets: [0, 16] } }, eight), /lie outside the data \(8 bytes/],
    [
      'a byte count that is not shape × dtype size',
      fileOf({ a: { ...ok, shape: [3] } }, eight),
      /has 8 bytes, but shape \[3\] of F32 needs 12/,
    ],
    ['a huge declared shape', fileOf({ a: { ...ok, shape: [2 ** 40, 2 ** 40] } }, eight), /needs/],
    [
      'overlapping tensors',
      fileOf({ a: ok, b: { dtype: 'F16', shape: [2], data_offsets: [6, 10] } }, new Uint8Array(10)),
      /"a" \[0, 8\) and "b" \[6, 10\) overlap/,
    ],
    [
      '__metadata__ that is not an object',
      fileOf({ __metadata__: 'pt', a: ok }, eight),
      /__metadata__ must be an object/,
    ],
  ];
  for (const [what, bytes, pattern] of cases) {
    const matches = (e) =>
      e instanceof RangeError && e.message.startsWith('readSafetensors: ') && pattern.test(e.message);
    test(what, async () => {
      assert.throws(() => readSafetensors(bytes), matches);
      await assert.rejects(readSafetensors(new Blob([bytes])), matches, 'the same from a Blob');
    });
  }
  test(`${cases.length} malformed kinds are covered`, () => assert.ok(cases.length >= 20));
});
