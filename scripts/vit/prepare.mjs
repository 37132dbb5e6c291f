#!/usr/bin/env node
// The ViT chapter's data (issue 34 §2; docs/vit-model.md): Fashion-MNIST from Debian's dataset-fashion-mnist
// (Expat, © 2017 Zalando SE), 28 × 28 grey images in 10 classes, read from its idx files as they are.
//
//   node scripts/vit/prepare.mjs [--source DIR] [--out DIR] [--validation N]
//
// --source      the idx .gz files (default /usr/share/datasets/fashion-mnist, `apt-get install dataset-fashion-mnist`)
// --out         where the prepared data goes (default <cache>/vit/data, the cache of scripts/poems/cache.mjs)
// --validation  the last N training images are the validation split, for tuning (default 5000)
//
// Splits: the standard 60,000 training images are train (the first 60,000 − N) and validation (the last N); the
// standard 10,000 test images are test, never trained or tuned on. The normalisation (mean, std of the train split's
// pixels after rescaling by 1/255) is computed on train alone and written as a Hugging Face ViTImageProcessor config
// (size 28, one channel, no resizing).
//
// Output (--out): <split>.images.u8 (n × 784 pixels, row-major, 0 = background as in the source), <split>.labels.u8,
// labels.json (id2label, English and Chinese), preprocessor_config.json, stats.json (counts per class, mean, std,
// the files' SHA-256s).
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { defaultCache } from '../poems/cache.mjs';

export const SIDE = 28;
export const LABELS = [
  ['T-shirt/top', 'T恤/上衣'],
  ['Trouser', '裤子'],
  ['Pullover', '套头衫'],
  ['Dress', '连衣裙'],
  ['Coat', '外套'],
  ['Sandal', '凉鞋'],
  ['Shirt', '衬衫'],
  ['Sneaker', '运动鞋'],
  ['Bag', '包'],
  ['Ankle boot', '短靴'],
];
const IMAGES_MAGIC = 0x803;
const LABELS_MAGIC = 0x801;

function parseArgs(argv) {
  const args = { source: '/usr/share/datasets/fashion-mnist', out: null, validation: 5000 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
    const v = argv[++i];
    if (a === '--source') args.source = v;
    else if (a === '--out') args.out = v;
    else if (a === '--validation') args.validation = Number(v);
    else throw new Error(`unknown argument ${a}`);
  }
  if (!Number.isInteger(args.validation) || args.validation < 1) throw new Error('--validation: an integer >= 1');
  args.out ??= join(defaultCache(), 'vit', 'data');
  return args;
}

// An idx file (big-endian magic, then one uint32 per dimension, then uint8 data): { dims, data }. `name` names the
// file in errors.
export function readIdx(bytes, magic, name) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.byteLength < 4 || view.getUint32(0) !== magic) {
    const got = bytes.byteLength < 4 ? 'fewer than 4 bytes' : `0x${view.getUint32(0).toString(16)}`;
    throw new Error(`${name}: expected idx magic 0x${magic.toString(16)}, got ${got}`);
  }
  const rank = magic & 0xff;
  const header = 4 + 4 * rank;
  if (bytes.byteLength < header) throw new Error(`${name}: header of ${header} bytes, file of ${bytes.byteLength}`);
  const dims = Array.from({ length: rank }, (_, i) => view.getUint32(4 + 4 * i));
  const size = dims.reduce((a, b) => a * b, 1);
  if (bytes.byteLength !== header + size) {
    throw new Error(`${name}: dims ${dims.join(' × ')} need ${header + size} bytes, file has ${bytes.byteLength}`);
  }
  return { dims, data: bytes.subarray(header) };
}

// One standard set ('train' or 't10k') as { images (n × 784 uint8), labels (n uint8) }, checked.
export function readSet(dir, prefix) {
  const file = (kind) => join(dir, `${prefix}-${kind}.gz`);
  const images = readIdx(gunzipSync(readFileSync(file('images-idx3-ubyte'))), IMAGES_MAGIC, file('images-idx3-ubyte'));
  const labels = readIdx(gunzipSync(readFileSync(file('labels-idx1-ubyte'))), LABELS_MAGIC, file('labels-idx1-ubyte'));
  const [n, h, w] = images.dims;
  if (h !== SIDE || w !== SIDE) throw new Error(`${prefix} images: expected ${SIDE} × ${SIDE}, got ${h} × ${w}`);
  if (labels.dims[0] !== n) throw new Error(`${prefix}: ${n} images but ${labels.dims[0]} labels`);
  const bad = labels.data.findIndex((l) => l >= LABELS.length);
  if (bad >= 0) throw new Error(`${prefix} labels: label ${labels.data[bad]} at ${bad}, expected 0..9`);
  return { images: images.data, labels: labels.data };
}

// The mean and standard deviation (population) of every pixel of `images`, rescaled by 1/255, in float64.
export function pixelMoments(images) {
  let sum = 0;
  let sumSq = 0;
  for (const p of images) {
    sum += p;
    sumSq += p * p;
  }
  const mean = sum / images.length;
  const variance = sumSq / images.length - mean * mean;
  return { mean: mean / 255, std: Math.sqrt(variance) / 255 };
}

// ViTImageProcessor's config: rescale by 1/255, normalise by the train split's moments, no resizing (the data's size).
export function preprocessorConfig({ mean, std }) {
  const round = (x) => Number(x.toFixed(6));
  return {
    image_processor_type: 'ViTImageProcessor',
    do_resize: false,
    size: { height: SIDE, width: SIDE },
    do_rescale: true,
    rescale_factor: 1 / 255,
    do_normalize: true,
    image_mean: [round(mean)],
    image_std: [round(std)],
  };
}

function splitSets(train, test, validation) {
  const cut = train.labels.length - validation;
  if (cut < 1) throw new Error(`--validation: at most ${train.labels.length - 1}, got ${validation}`);
  const px = SIDE * SIDE;
  return {
    train: { images: train.images.subarray(0, cut * px), labels: train.labels.subarray(0, cut) },
    validation: { images: train.images.subarray(cut * px), labels: train.labels.subarray(cut) },
    test,
  };
}

function writeSplits(out, splits) {
  const sha256 = {};
  const counts = {};
  for (const [name, { images, labels }] of Object.entries(splits)) {
    for (const [suffix, bytes] of [
      ['images.u8', images],
      ['labels.u8', labels],
    ]) {
      writeFileSync(join(out, `${name}.${suffix}`), bytes);
      sha256[`${name}.${suffix}`] = createHash('sha256').update(bytes).digest('hex');
    }
    counts[name] = { images: labels.length, perClass: LABELS.map((_, c) => labels.filter((l) => l === c).length) };
  }
  return { sha256, counts };
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  const splits = splitSets(readSet(args.source, 'train'), readSet(args.source, 't10k'), args.validation);
  mkdirSync(args.out, { recursive: true });
  const { sha256, counts } = writeSplits(args.out, splits);
  const moments = pixelMoments(splits.train.images);
  const id2label = Object.fromEntries(LABELS.map(([en], i) => [i, en]));
  const labels = { id2label, zh: Object.fromEntries(LABELS.map(([, zh], i) => [i, zh])) };
  for (const [file, value] of [
    ['labels.json', labels],
    ['preprocessor_config.json', preprocessorConfig(moments)],
  ]) {
    const text = JSON.stringify(value, null, 2) + '\n';
    writeFileSync(join(args.out, file), text);
    sha256[file] = createHash('sha256').update(text).digest('hex');
  }
  const source = { package: 'dataset-fashion-mnist (Debian 12)', licence: 'Expat', dir: args.source };
  const stats = { source, splits: counts, trainPixels: moments, sha256 };
  writeFileSync(join(args.out, 'stats.json'), JSON.stringify(stats, null, 2) + '\n');
  process.stdout.write(JSON.stringify(stats, null, 2) + '\n');
  process.stderr.write(`vit: wrote ${args.out}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    main();
  } catch (e) {
    process.stderr.write(`${e.stack ?? e}\n`);
    process.exit(1);
  }
}
