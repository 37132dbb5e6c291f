// The couplet page scripts' command line (held-out.mjs, heads.mjs, snapshots.mjs): `--name value` pairs into the
// defaults' keys, --help prints the script's header comment, an unknown or incomplete argument is an error.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readSafetensors } from '../../dist/index.mjs';
import { charTokenizer } from '../../web/demo/shared/char-tokenizer.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const MODEL = join(ROOT, 'web/demo/models/song-couplet-char-marian');

/** The leading // comment of a script, for --help. */
function header(file) {
  const lines = readFileSync(file, 'utf8').split('\n');
  return lines
    .filter((l, i) => i > 0 || !l.startsWith('#!'))
    .filter((l, i, a) => a.slice(0, i + 1).every((x) => x.startsWith('//')))
    .map((l) => l.replace(/^\/\/ ?/, ''))
    .join('\n');
}

/**
 * @param {string[]} argv
 * @param {Record<string, any>} defaults  camelCase keys; --kebab-case flags
 * @param {string} script  import.meta.url of the script
 */
export function parseArgs(argv, defaults, script) {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(header(fileURLToPath(script)) + '\n');
    process.exit(0);
  }
  const args = { ...defaults };
  const name = script.split('/').pop();
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '').replace(/-(\w)/g, (_, c) => c.toUpperCase());
    if (!argv[i].startsWith('--') || !(key in defaults) || argv[i + 1] === undefined)
      throw new Error(`${name}: unknown or incomplete argument ${argv[i]} (see --help)`);
    args[key] = typeof defaults[key] === 'number' ? Number(argv[i + 1]) : argv[i + 1];
  }
  return args;
}

/** A model folder's config, tokenizer and (unless weights is given) model.safetensors → a loaded model. */
export function loadCouplet(attn, dir, weights = join(dir, 'model.safetensors')) {
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  const tok = charTokenizer(JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8')));
  return { model: attn.loadModel({ config, tensors: readSafetensors(readFileSync(weights)) }), tok, config };
}

/** Runs main, printing an error's stack and exiting 1. */
export function run(main) {
  main().catch((e) => {
    process.stderr.write(`${e.stack ?? e}\n`);
    process.exit(1);
  });
}
