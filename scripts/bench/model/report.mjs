// Renders the model bench's results (build/bench/model-wasm.json and model-native.json, whichever exist) as
// build/bench/model-results.md: `node scripts/bench/model/report.mjs [dir]`. run.sh calls it after the phases.
import fs from 'node:fs';
import path from 'node:path';

import { MiB, fmtMs } from '../stats.mjs';
import { dims } from './common.mjs';
import { repoRoot } from './files.mjs';

const fmtX = (x) => (x === null || x === undefined || !Number.isFinite(x) ? '—' : `${x.toFixed(2)}×`);
const mib = (b) => (b === undefined || b === null ? '—' : `${(b / MiB).toFixed(0)} MiB`);
const cell = (e, unit = 'ms') =>
  !e ? '—' : e.medianMs ? `${fmtMs(e.medianMs)} ${unit} [${fmtMs(e.minMs)}–${fmtMs(e.maxMs)}]` : e.status;
const find = (entries, name) => entries.find((e) => e.impl === name);
const ratioCell = (e) =>
  !e?.ratio
    ? '—'
    : `${fmtX(e.ratio)} (paired ${fmtX(e.ratioPaired)}, minima ${fmtX(e.ratioMin)}` +
      `${e.ratioCpu ? `, CPU time ${fmtX(e.ratioCpu)}` : ''})`;
const scaling = (entries, a, b) => {
  const x = find(entries, a);
  const y = find(entries, b);
  return x?.medianMs && y?.medianMs ? x.medianMs / y.medianMs : null;
};

/** The split of a breakdown (see breakdown.mjs): GEMMs, attention, the rest. The layers' GEMMs are priced at the
 *  rate of the MultiHeadAttention projections (mha_proj: layer-shaped GEMMs), the LM head is measured. */
export function split(b, hf) {
  const { V, E, L } = dims(hf);
  // one thread: minima of the CPU time (what the calls ran, whatever the neighbours did); two: of the wall time
  const basis = b.threads === 1 && b.cpuMin ? 'CPU time' : 'wall time';
  const m = basis === 'CPU time' ? b.cpuMin : (b.min ?? b.ms);
  const T = b.T;
  const layer = m.l2_attn - m.l1_attn; // one layer, attention returned
  const lm = m.l1_vocab - m.l1;
  const lmRate = (2 * T * E * V) / (lm / 1e3); // flop/s
  const gemmRate = m.mha_proj ? (4 * T * E * E) / (m.mha_proj / 1e3) : lmRate;
  const gemmLayer = ((24 * T * E * E) / gemmRate) * 1e3;
  const attention = m.sdpa_weights;
  const rest = layer - gemmLayer - attention;
  const embed = m.l1_attn - layer;
  const gemms = L * gemmLayer + lm;
  return {
    basis,
    measured: m.full_attn,
    measuredNoAttn: m.full,
    attnOutputsCost: m.full_attn - m.full,
    layerMs: layer,
    lmMs: lm,
    lmGflops: lmRate / 1e9,
    gemmGflops: gemmRate / 1e9,
    gemms,
    attention: L * attention,
    attentionOnline: L * m.sdpa_online,
    rest: L * rest + embed,
    sum: gemms + L * attention + L * rest + embed,
  };
}

function renderSplit(list, hf, title) {
  if (!list?.length) return [];
  const rows = list.map((b) => ({ b, s: split(b, hf) }));
  const { L, H, D } = dims(hf);
  const pct = (x, s) => `${fmtMs(x)} ms (${((100 * x) / s.sum).toFixed(0)} %)`;
  return [
    `### Where attnlab's time goes: ${title}`,
    '',
    'A prefill with every attention returned, split with public calls only (minima of interleaved repetitions: ' +
      'CPU time at one thread, wall time at two): ' +
      `GEMMs = the LM head (a 1-layer model with and without the ${hf.vocab_size}-word vocabulary) + ${L} × one ` +
      "layer's 24·T·E² flops at the rate of a MultiHeadAttention's Q and output projections (one key: " +
      'layer-shaped GEMMs); attention = ' +
      `${L} × a causal \`scaledDotProductAttention\` (${H}, T, ${D}) with weights; the rest = the remainder of one ` +
      `layer (2 layers − 1 layer, vocabulary 8) × ${L}, plus embeddings and the final norm.`,
    '',
    '| build | T | measured | sum of parts | GEMMs | attention (with weights) | the rest | GEMM rate: layers, LM head | ' +
      'cost of returning the attentions | attention without weights (online) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      ({ b, s }) =>
        `| ${b.impl} (${s.basis}) | ${b.T} | ${fmtMs(s.measured)} ms | ${fmtMs(s.sum)} ms | ${pct(s.gemms, s)} | ` +
        `${pct(s.attention, s)} | ${pct(s.rest, s)} | ${s.gemmGflops.toFixed(1)}, ${s.lmGflops.toFixed(1)} GFLOP/s | ` +
        `${fmtMs(s.attnOutputsCost)} ms | ${fmtMs(s.attentionOnline)} ms |`,
    ),
    '',
  ];
}

function prefillTable(prefill, names, pairs, title) {
  const head = names.map((n) => n.replace(/^attnlab-/, ''));
  const lines = [
    `### ${title}`,
    '',
    `| T | ${head.join(' | ')} | ${pairs.map((p) => p.label).join(' | ')} |`,
    `|---:|${names.map(() => '---:').join('|')}|${pairs.map(() => '---:').join('|')}|`,
  ];
  for (const c of prefill) {
    lines.push(
      `| ${c.T} | ${names.map((n) => cell(find(c.entries, n))).join(' | ')} | ` +
        `${pairs.map((p) => p.value(c.entries)).join(' | ')} |`,
    );
  }
  return [...lines, ''];
}

function decodeTable(decode, names, pairs, title) {
  const head = names.map((n) => n.replace(/^attnlab-/, ''));
  const lines = [
    `### ${title}`,
    '',
    `| C (keys) | ${head.join(' | ')} | ${pairs.map((p) => p.label).join(' | ')} |`,
    `|---:|${names.map(() => '---:').join('|')}|${pairs.map(() => '---:').join('|')}|`,
  ];
  for (const c of decode) {
    const tok = (e) =>
      !e
        ? '—'
        : e.medianMs
          ? `${e.medianMs.toFixed(1)} ms (${e.tokensPerS.toFixed(1)}/s, ${e.pctCopyBw.toFixed(0)} %)`
          : e.status;
    lines.push(
      `| ${c.C} (${c.start + 1}–${c.C}) | ${names.map((n) => tok(find(c.entries, n))).join(' | ')} | ` +
        `${pairs.map((p) => p.value(c.entries)).join(' | ')} |`,
    );
  }
  return [...lines, ''];
}

/** One thread, by CPU time (what each call ran, whatever the neighbours took): prefill GFLOP/s, decode bytes read
 *  per CPU-second against the copy bandwidth by CPU time. */
function cpuTable(phase, ortName, title) {
  const rows = [];
  const attn = (es) => es.filter((e) => e.kind === 'attnlab' && e.threads === 1 && e.cpuMedianMs);
  for (const c of phase.prefill) {
    const o = find(c.entries, ortName);
    for (const e of attn(c.entries)) {
      rows.push(
        `| prefill T = ${c.T} | ${e.impl.replace(/^attnlab-/, '')} | ${fmtMs(e.cpuMedianMs)} ms ` +
          `(${(c.flops.total / (e.cpuMedianMs / 1e3) / 1e9).toFixed(1)} GFLOP/s) | ${o?.cpuMedianMs ? fmtMs(o.cpuMedianMs) : '—'} ms ` +
          `(${o?.cpuMedianMs ? (c.flops.total / (o.cpuMedianMs / 1e3) / 1e9).toFixed(1) : '—'} GFLOP/s) | ${fmtX(e.ratioCpu)} |`,
      );
    }
  }
  for (const c of phase.decode) {
    const o = find(c.entries, ortName);
    const share = (x) => (x?.pctCopyBwCpu ? `, ${x.readGBsCpu.toFixed(1)} GB/s = ${x.pctCopyBwCpu.toFixed(0)} %` : '');
    for (const e of attn(c.entries)) {
      rows.push(
        `| decode C = ${c.C} | ${e.impl.replace(/^attnlab-/, '')} | ${e.cpuMedianMs.toFixed(1)} ms${share(e)} | ` +
          `${o?.cpuMedianMs ? o.cpuMedianMs.toFixed(1) : '—'} ms${share(o)} | ${fmtX(e.ratioCpu)} |`,
      );
    }
  }
  const bw = phase.bandwidth?.copyBytesPerCpuS;
  return [
    `### ${title}`,
    '',
    "CPU time of each call (median over the timed rounds): the JS thread's for attnlab and onnxruntime-web, the " +
      "process's for onnxruntime-node and the native program. Decode: bytes read per token (weights + cache) ÷ CPU " +
      `time, and its share of the copy bandwidth by CPU time (${bw ? (bw / 1e9).toFixed(1) : '—'} GB/s, read + written).`,
    '',
    `| case | attnlab build | attnlab CPU time | ${ortName} CPU time | ${ortName} ÷ attnlab |`,
    '|---|---|---:|---:|---:|',
    ...rows,
    '',
  ];
}

export function render(wasm, native) {
  const hf = wasm?.model?.config ?? native?.model?.config;
  const out = ['# attnlab whole-model benchmark', ''];
  const r = wasm ?? native;
  const loads = [...(wasm?.machine.loadavg ?? []), ...(native?.machine.loadavg ?? [])].map((l) => l[0]);
  out.push(
    `${r.machine.cpu}, ${r.machine.cores} cores; load average (1 min) during the runs ${Math.min(...loads).toFixed(1)}–` +
      `${Math.max(...loads).toFixed(1)}; ${wasm ? `wasm phase ${wasm.date} (${wasm.wallS.toFixed(0)} s)` : ''}` +
      `${native ? `, native phase ${native.date} (${native.wallS.toFixed(0)} s)` : ''}.`,
    '',
  );
  if (wasm) {
    const st = wasm.model.stamp;
    out.push(
      `Model: ${wasm.model.dir} (GPT-2-small shape: ${hf.n_layer} layers, ${hf.n_head} heads, E ${hf.n_embd}, ` +
        `V ${hf.vocab_size}, context ${hf.n_positions}; ${st?.parameters ?? '?'} parameters, seeded random weights; ` +
        `onnxruntime-node vs PyTorch after export: max |Δ logits| ${st?.check?.logits?.toExponential(1) ?? '?'}). ` +
        `Versions: ${Object.entries({ ...wasm.versions, ...(native?.versions ?? {}) })
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}. Copy bandwidth (${wasm.bandwidth.method}): ` +
        `${(wasm.bandwidth.copyBytesPerS / 1e9).toFixed(1)} GB/s.`,
      '',
      'Cells: median [min–max] over interleaved rounds; ratios: onnxruntime at the same thread count ÷ attnlab ' +
        '(medians; paired = median over rounds of the two times in the same round; minima = best ÷ best; CPU ' +
        "time = the same with each call's CPU time, one thread only: what the call ran, whatever its neighbours did).",
      '',
    );
    const names = wasm.prefill[0].entries.map((e) => e.impl);
    const attn1 = names.filter((n) => n.startsWith('attnlab') && !n.endsWith('@2'));
    const pairs = [
      ...attn1.map((n) => ({
        label: `${n.replace(/^attnlab-/, '')} ÷ ort-web`,
        value: (es) => ratioCell(find(es, n)),
      })),
      { label: 'threaded@2 ÷ ort-web@2', value: (es) => ratioCell(find(es, 'attnlab-simd-threaded@2')) },
      {
        label: 'scaling 2 ÷ 1 thread (attnlab, ort-web)',
        value: (es) =>
          `${fmtX(scaling(es, 'attnlab-simd-threaded@1', 'attnlab-simd-threaded@2'))}, ` +
          `${fmtX(scaling(es, 'onnxruntime-web', 'onnxruntime-web@2'))}`,
      },
    ];
    out.push(...prefillTable(wasm.prefill, names, pairs, "Prefill in wasm, every layer's attention returned"));
    out.push(
      ...decodeTable(
        wasm.decode,
        names,
        pairs,
        'Decode in wasm: ms per token (tokens/s, share of the copy bandwidth: weights + cache bytes read per token ÷ time)',
      ),
    );
    out.push(...cpuTable(wasm, 'onnxruntime-web', 'One thread by CPU time (wasm)'));
    out.push(...renderSplit(wasm.breakdown, hf, 'wasm'));
    out.push(
      '### Memory (wasm)',
      '',
      `| implementation | wasm memory at load | after prefill T = ${wasm.memory[0]?.prefillT} (peak) | ` +
        'JS heap + ArrayBuffers Δ at load |',
      '|---|---:|---:|---:|',
    );
    for (const m of wasm.memory) {
      out.push(
        `| ${m.impl} | ${mib(m.wasmAtLoad)} | ${mib(m.wasmAfterPrefill)} | ` +
          `${mib(m.jsAtLoad.heapUsed + m.jsAtLoad.arrayBuffers)} |`,
      );
    }
    for (const f of wasm.memoryFresh ?? []) {
      out.push(
        `| attnlab-simd, ${f.file} (fresh process) | ${mib(f.atLoad.wasm)} | ${mib(f.atT.wasm)} (T = ${f.T}) | ` +
          `${mib(f.atLoad.js.heapUsed + f.atLoad.js.arrayBuffers)} (file held while loading: ` +
          `${mib(f.atLoadWithFile.js.heapUsed + f.atLoadWithFile.js.arrayBuffers)}; outputs at T: ` +
          `${mib(f.outputBytes)}) |`,
      );
    }
    out.push('');
  }
  if (native) {
    const names = native.prefill[0].entries.map((e) => e.impl);
    const pairs = [
      { label: 'native@1 ÷ ort-node', value: (es) => ratioCell(find(es, 'attnlab-native@1')) },
      { label: 'native@2 ÷ ort-node@2', value: (es) => ratioCell(find(es, 'attnlab-native@2')) },
      {
        label: 'scaling 2 ÷ 1 thread (attnlab, ort-node)',
        value: (es) =>
          `${fmtX(scaling(es, 'attnlab-native@1', 'attnlab-native@2'))}, ` +
          `${fmtX(scaling(es, 'onnxruntime-node', 'onnxruntime-node@2'))}`,
      },
    ];
    out.push(
      `Native: attnlab Highway target ${native.versions['attnlab native target']}; check against onnxruntime-node ` +
        `at T = ${native.check.T}: max |Δ logits| ${native.check.maxAbsDiffLogits.toExponential(1)}; copy bandwidth ` +
        `${(native.bandwidth.copyBytesPerS / 1e9).toFixed(1)} GB/s.`,
      '',
    );
    out.push(...prefillTable(native.prefill, names, pairs, "Prefill natively, every layer's attention returned"));
    out.push(
      ...decodeTable(
        native.decode,
        names,
        pairs,
        'Decode natively: ms per token (tokens/s, share of the copy bandwidth)',
      ),
    );
    out.push(...cpuTable(native, 'onnxruntime-node', 'One thread by CPU time (native)'));
    out.push(...renderSplit(native.breakdown, hf, 'native'));
  }
  return out.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = path.resolve(repoRoot, process.argv[2] ?? process.env.BENCH_OUT ?? 'build/bench');
  const read = (f) =>
    fs.existsSync(path.join(dir, f)) ? JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) : null;
  const wasm = read('model-wasm.json');
  const native = read('model-native.json');
  const md = render(wasm, native);
  fs.writeFileSync(path.join(dir, 'model-results.md'), md);
  console.log(md);
}
