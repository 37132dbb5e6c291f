// scripts/vit/prepare.mjs (the ViT chapter's data, docs/vit-model.md) on a slice of Fashion-MNIST
// (tests/fixtures/fashion-mnist/): the standard training images split into train and validation, the standard test
// images untouched, pixels and labels as in the idx files, the normalisation from train alone, and clear errors on
// malformed files.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { gunzipSync, gzipSync } from 'node:zlib';
import { readIdx, readSet } from '../../scripts/vit/prepare.mjs';
import { root } from './helpers.mjs';

const fixture = join(root, 'tests/fixtures/fashion-mnist');
const raw = (name) => gunzipSync(readFileSync(join(fixture, name)));

function prepare(source, out, validation) {
  const script = join(root, 'scripts/vit/prepare.mjs');
  const args = [script, '--source', source, '--out', out, '--validation', String(validation)];
  return JSON.parse(execFileSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
}

// Mean and standard deviation of bytes / 255, two passes (the script uses one).
function moments(bytes) {
  const x = Array.from(bytes, (b) => b / 255);
  const mean = x.reduce((a, b) => a + b, 0) / x.length;
  return { mean, std: Math.sqrt(x.reduce((a, b) => a + (b - mean) ** 2, 0) / x.length) };
}

test('prepare.mjs on the slice: train and validation from the training file, test as it is', () => {
  const out = mkdtempSync(join(tmpdir(), 'attnlab-vit-'));
  try {
    const stats = prepare(fixture, out, 4);
    const trainImages = raw('train-images-idx3-ubyte.gz').subarray(16);
    const trainLabels = raw('train-labels-idx1-ubyte.gz').subarray(8);
    const read = (f) => new Uint8Array(readFileSync(join(out, f)));
    assert.deepEqual(read('train.images.u8'), new Uint8Array(trainImages.subarray(0, 8 * 784)));
    assert.deepEqual(read('validation.images.u8'), new Uint8Array(trainImages.subarray(8 * 784)));
    assert.deepEqual([...read('train.labels.u8')], [9, 0, 0, 3, 0, 2, 7, 2]);
    assert.deepEqual([...read('validation.labels.u8')], [5, 5, 0, 9]);
    assert.deepEqual(read('test.images.u8'), new Uint8Array(raw('t10k-images-idx3-ubyte.gz').subarray(16)));
    assert.deepEqual([...read('test.labels.u8')], [9, 2, 1, 1, 6, 1]);
    assert.deepEqual(stats.splits.train.perClass, [3, 0, 2, 1, 0, 0, 0, 1, 0, 1]);
    assert.equal(trainLabels.length, 12);

    const config = JSON.parse(readFileSync(join(out, 'preprocessor_config.json'), 'utf8'));
    const expected = moments(trainImages.subarray(0, 8 * 784));
    assert.ok(Math.abs(config.image_mean[0] - expected.mean) < 1e-6, `mean ${config.image_mean[0]}`);
    assert.ok(Math.abs(config.image_std[0] - expected.std) < 1e-6, `std ${config.image_std[0]}`);
    assert.deepEqual(config.size, { height: 28, width: 28 });
    assert.equal(config.do_resize, false);
    const labels = JSON.parse(readFileSync(join(out, 'labels.json'), 'utf8'));
    assert.equal(labels.id2label[9], 'Ankle boot');

    const again = mkdtempSync(join(tmpdir(), 'attnlab-vit-'));
    try {
      assert.deepEqual(prepare(fixture, again, 4).sha256, stats.sha256, 'the same files on a second run');
    } finally {
      rmSync(again, { recursive: true, force: true });
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test('readIdx and readSet refuse malformed files, naming the file', () => {
  const labels = raw('train-labels-idx1-ubyte.gz');
  assert.throws(() => readIdx(labels, 0x803, 'x.idx'), /x\.idx: expected idx magic 0x803, got 0x801/);
  assert.throws(() => readIdx(labels.subarray(0, 10), 0x801, 'x.idx'), /x\.idx: dims 12 need 20 bytes, file has 10/);
  assert.throws(() => readIdx(labels.subarray(0, 2), 0x801, 'x.idx'), /fewer than 4 bytes/);

  const dir = mkdtempSync(join(tmpdir(), 'attnlab-vit-bad-'));
  try {
    copyFileSync(join(fixture, 't10k-images-idx3-ubyte.gz'), join(dir, 't10k-images-idx3-ubyte.gz'));
    writeFileSync(join(dir, 't10k-labels-idx1-ubyte.gz'), gzipSync(labels)); // 12 labels for 6 images
    assert.throws(() => readSet(dir, 't10k'), /t10k: 6 images but 12 labels/);
    const wrongLabel = Buffer.from(raw('t10k-labels-idx1-ubyte.gz'));
    wrongLabel[8] = 10;
    writeFileSync(join(dir, 't10k-labels-idx1-ubyte.gz'), gzipSync(wrongLabel));
    assert.throws(() => readSet(dir, 't10k'), /t10k labels: label 10 at 0, expected 0\.\.9/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
