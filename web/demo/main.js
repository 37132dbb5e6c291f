// attnlab demo entry point: loads the package through its public API (init from /dist/index.mjs, the
// built npm package) and mounts the five parts. URL parameters: ?variant=simd|scalar|auto picks the build;
// ?bench=quick makes the speed test small (used by the end-to-end test); ?trainseed=N is part 5's first seed.

import { errText } from './util.js';

const params = new URLSearchParams(location.search);
const variant = ['simd', 'scalar', 'auto'].includes(params.get('variant')) ? params.get('variant') : 'auto';
const badge = document.getElementById('build');
const pick = document.getElementById('variant-pick');
pick.value = variant;
pick.addEventListener('change', () => {
  const p = new URLSearchParams(location.search);
  p.set('variant', pick.value);
  location.search = p.toString();
});

function fatal(msg) {
  const box = document.getElementById('fatal');
  box.hidden = false;
  box.textContent = msg;
  badge.textContent = 'attnlab not loaded';
  document.body.dataset.ready = 'error';
}

async function main() {
  let init;
  try {
    ({ init } = await import('/dist/index.mjs'));
  } catch (e) {
    fatal(`Could not import /dist/index.mjs (the built attnlab package): ${errText(e)}\n` +
      'Build it with `bash scripts/build.sh` (or `npm start`, which also builds), then reload.');
    return;
  }
  let attn;
  try {
    attn = await init({ variant });
  } catch (e) {
    fatal(`attnlab's init({ variant: '${variant}' }) failed: ${errText(e)}`);
    return;
  }
  badge.dataset.variant = attn.variant;
  badge.textContent = `attnlab ${attn.version} · build: ${attn.variant === 'simd' ? 'SIMD (WebAssembly SIMD128)' : 'scalar (no SIMD)'}`;
  document.title = `attnlab demo (${attn.variant})`;

  const parts = [
    ['sbs', './stepbystep.js'],
    ['mha', './mha.js'],
    ['speed', './speed.js'],
    ['pitfalls', './pitfalls.js'],
    ['train', './train.js'],
  ];
  for (const [id, mod] of parts) {
    const el = document.getElementById(id);
    try {
      const m = await import(mod);
      await m.mount(el, attn, { params });
      el.dataset.ready = '1';
    } catch (e) {
      console.error(e);
      el.dataset.ready = 'error';
      const box = document.createElement('div');
      box.className = 'error-box';
      box.textContent = `This part failed: ${errText(e)}`;
      el.append(box);
    }
  }
  window.attnlabDemo = { attn, variant: attn.variant };
  document.body.dataset.ready = '1';
}

main();
