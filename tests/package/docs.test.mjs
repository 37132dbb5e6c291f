// The docs' links hold: every relative Markdown link (and its #anchor) in the repository's .md files, every
// `docs/…` path cited in code, types and Markdown, and every repository path a Markdown file cites in backticks
// exists. The README stays a front page (≤ 180 lines, a link to every docs/*.md) whose measured numbers are those
// of docs/benchmarks.md. Run by npm test (scripts/test.sh): node --test tests/package/
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const tracked = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f && existsSync(join(root, f)));
const markdown = tracked.filter((f) => f.endsWith('.md'));
const code = tracked.filter(
  (f) => /\.(mjs|js|cjs|ts|mts|cts|cc|h|sh|py|json|md)$/.test(f) && !f.startsWith('tests/fixtures/'),
);

/** GitHub's anchor of a heading. */
function slug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const anchorsCache = new Map();
function anchorsOf(file) {
  if (!anchorsCache.has(file)) {
    const text = readFileSync(join(root, file), 'utf8').replace(/```[\s\S]*?```/g, '');
    anchorsCache.set(file, new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]))));
  }
  return anchorsCache.get(file);
}

/** Markdown text without fenced code blocks (examples there are not links). */
const prose = (file) => readFileSync(join(root, file), 'utf8').replace(/```[\s\S]*?```/g, '');

test('every relative Markdown link points at a file (and heading) that exists', () => {
  const broken = [];
  for (const file of markdown) {
    for (const [, target] of prose(file).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue; // http:, https:, mailto:
      const [path, anchor] = target.split('#');
      const resolved = path ? normalize(join(dirname(file), decodeURIComponent(path))) : file;
      if (!existsSync(join(root, resolved))) {
        broken.push(`${file}: (${target}) → ${resolved} does not exist`);
      } else if (anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) {
        broken.push(`${file}: (${target}) → no heading #${anchor} in ${resolved}`);
      }
    }
  }
  assert.deepEqual(broken, []);
  assert.ok(markdown.includes('docs/api.md') && markdown.includes('README.md'));
});

test('every docs/… path cited in code, types and Markdown exists', () => {
  const missing = [];
  for (const file of code) {
    const text = readFileSync(join(root, file), 'utf8');
    for (const m of text.matchAll(/(?<![\w/.-])(?:\.\.\/)*docs\/[\w.-]+(?:\/[\w.-]+)*/g)) {
      const cited = m[0].replace(/^(\.\.\/)+/, '').replace(/[.]+$/, '');
      if (!existsSync(join(root, cited))) missing.push(`${file}: ${m[0]}`);
    }
  }
  assert.deepEqual(missing, []);
});

test('every repository path a Markdown file cites in backticks exists', () => {
  const missing = [];
  const kTop = /^(cpp|web|tests|scripts|docs)\/[^\s`*…<>]*$/; // dist/ and build/ are made by the build
  for (const file of markdown) {
    for (const [, cited] of prose(file).matchAll(/`([^`\s]+)`/g)) {
      const path = cited.replace(/[:,;]+$/, '').split(/[#(]/)[0];
      if (!kTop.test(path)) continue;
      if (!existsSync(join(root, path))) missing.push(`${file}: \`${cited}\``);
    }
  }
  assert.deepEqual(missing, []);
});

test('the README and the shipped types point at the API reference', () => {
  assert.match(readFileSync(join(root, 'README.md'), 'utf8'), /\]\(docs\/api\.md\)/);
  assert.match(readFileSync(join(root, 'web', 'src', 'index.d.ts'), 'utf8'), /docs\/api\.md/);
  assert.equal(relative(root, join(root, 'docs', 'api.md')), 'docs/api.md');
});

/** The sections of a Markdown file by `## ` heading (code blocks included), keyed by heading text. */
function sections(file) {
  const out = new Map();
  let name = '';
  for (const line of readFileSync(join(root, file), 'utf8').split('\n')) {
    const m = /^## (.+)$/.exec(line);
    if (m) name = m[1].trim();
    out.set(name, (out.get(name) ?? '') + line + '\n');
  }
  return out;
}

test('the README is a front page: short, and it links every doc in docs/', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const lines = readme.split('\n').length - (readme.endsWith('\n') ? 1 : 0);
  assert.ok(lines <= 180, `README.md has ${lines} lines; keep it a front page (≤ 180) and move details to docs/`);
  const docs = tracked.filter((f) => /^docs\/[^/]+\.md$/.test(f));
  assert.ok(docs.length >= 6, `docs/*.md: ${docs.join(', ')}`);
  const unlinked = docs.filter((f) => !readme.includes(`](${f})`) && !readme.includes(`](${f}#`));
  assert.deepEqual(unlinked, [], 'every docs/*.md is linked from the README');
});

test("the README's measured numbers live in docs/benchmarks.md", () => {
  // One home per measured number: the README's "Speed" section quotes docs/benchmarks.md, and no other section of
  // the README gives a time.
  const readme = sections('README.md');
  const speed = readme.get('Speed');
  assert.ok(speed, 'README.md has a "## Speed" section');
  const benchmarks = readFileSync(join(root, 'docs', 'benchmarks.md'), 'utf8');
  const known = new Set(benchmarks.match(/\d+(?:\.\d+)?/g));
  const unknown = (speed.replace(/\]\([^)]*\)/g, '').match(/\d+(?:\.\d+)?/g) ?? []).filter((n) => !known.has(n));
  assert.deepEqual(unknown, [], 'every number of the README\'s "Speed" section appears in docs/benchmarks.md');
  assert.match(speed, /AMD EPYC/, 'the speed line names the CPU it was measured on');
  const timed = [...readme]
    .filter(
      ([name, text]) => name !== 'Speed' && /\d\s*(?:ms|µs|GFLOP\/s|GB\/s)\b/.test(text.replace(/```[\s\S]*?```/g, '')),
    )
    .map(([name]) => name);
  assert.deepEqual(timed, [], 'measured times appear only in the "Speed" section');
});
