// WebAssembly SIMD128 peak: a hand-assembled wasm module (bytes written below, no toolchain) whose exported
// `peak(iters)` runs K independent chains acc = f32x4.add(f32x4.mul(acc, m), a), unrolled U times per loop
// iteration. Each chain step is 8 flops (4 lanes × mul + add; SIMD128 has no FMA). We try several K, since
// the best count depends on the CPU's latency × throughput and V8's 15 usable SIMD registers, and keep the best.
// The chains stay latency-bound when the count that would hide a mul + add latency does not fit in the
// registers (on the Zen 5 we bench on, the rate still rises at 16 chains, spilled), so a second module measures a
// cache-resident GEMM register tile instead (tilePeakModuleBytes: 4 x 8 floats of C, 8 independent accumulators,
// A broadcast and B loaded from L1, as a GEMM's inner loop does); the peak is the better of the two.

const U = 4; // chain steps per loop iteration

function uleb(n) {
  const out = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
}

function section(id, bytes) {
  return [id, ...uleb(bytes.length), ...bytes];
}

function f32x4Const(x) {
  const b = new Uint8Array(16);
  const dv = new DataView(b.buffer);
  for (let i = 0; i < 4; ++i) dv.setFloat32(i * 4, x, true);
  return [0xfd, 0x0c, ...b]; // v128.const
}

// A module that exports one function, peak: (i32) -> f32, with `body` (its locals and code), and optionally
// memoryPages pages (64 KiB each) of memory.
function peakModule(body, { memoryPages = 0 } = {}) {
  const code = [1, ...uleb(body.length), ...body];
  const name = [...new TextEncoder().encode('peak')];
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00], // "\0asm", version 1
    ...section(1, [1, 0x60, 1, 0x7f, 1, 0x7d]), // type: (i32) -> f32
    ...section(3, [1, 0]),
    ...(memoryPages ? section(5, [1, 0x00, ...uleb(memoryPages)]) : []), // memory: min pages, no max
    ...section(7, [1, ...uleb(name.length), ...name, 0x00, 0]),
    ...section(10, code),
  ]);
}

export function peakModuleBytes(K) {
  const M = K + 1; // local index of m; a is K + 2; accumulators 1..K; param 0 = iters (i32)
  const Aidx = K + 2;
  const body = [];
  body.push(1, ...uleb(K + 2), 0x7b); // one local group: K + 2 v128
  for (let k = 0; k < K; ++k) body.push(...f32x4Const(0.5 + 0.01 * k), 0x21, ...uleb(1 + k)); // acc_k
  body.push(...f32x4Const(0.9999), 0x21, ...uleb(M));
  body.push(...f32x4Const(0.001), 0x21, ...uleb(Aidx));
  body.push(0x03, 0x40); // loop
  for (let u = 0; u < U; ++u) {
    for (let k = 0; k < K; ++k) {
      body.push(0x20, ...uleb(1 + k), 0x20, ...uleb(M), 0xfd, 0xe6, 0x01); // f32x4.mul
      body.push(0x20, ...uleb(Aidx), 0xfd, 0xe4, 0x01); // f32x4.add
      body.push(0x21, ...uleb(1 + k));
    }
  }
  // iters -= 1; br_if iters != 0
  body.push(0x20, 0x00, 0x41, 0x01, 0x6b, 0x22, 0x00, 0x0d, 0x00, 0x0b);
  // return lane 0 of the sum of all accumulators (keeps every chain live)
  body.push(0x20, 0x01);
  for (let k = 1; k < K; ++k) body.push(0x20, ...uleb(1 + k), 0xfd, 0xe4, 0x01);
  body.push(0xfd, 0x1f, 0x00, 0x0b); // f32x4.extract_lane 0; end
  return peakModule(body);
}

// Best GFLOP/s of `trials` timed calls of peak(iters) (flopsPerIter flops per unit of iters), after 5 warm-up calls
// of warmIters (V8 tiers a function up between calls; wasm has no on-stack replacement) and doubling iters from
// startIters until one call takes seconds / 4 or iters passes maxIters.
function bestGflops(peak, flopsPerIter, { warmIters, startIters, maxIters, seconds, trials }) {
  for (let i = 0; i < 5; ++i) peak(warmIters);
  let iters = startIters;
  for (;;) {
    const t0 = performance.now();
    peak(iters);
    const dt = (performance.now() - t0) / 1e3;
    if (dt > seconds / 4 || iters > maxIters) break;
    iters *= 2;
  }
  let best = 0;
  for (let t = 0; t < trials; ++t) {
    const t0 = performance.now();
    peak(iters);
    const dt = (performance.now() - t0) / 1e3;
    best = Math.max(best, (iters * flopsPerIter) / dt / 1e9);
  }
  return best;
}

// Returns { gflops, chains, perChains: {K: gflops} }: best of `trials` timed calls per K after warm-up.
export async function measureSimdPeak({ chains = [4, 6, 8, 10, 12], seconds = 0.25, trials = 5 } = {}) {
  const perChains = {};
  let best = { gflops: 0, chains: 0 };
  for (const K of chains) {
    const { instance } = await WebAssembly.instantiate(peakModuleBytes(K));
    const bestK = bestGflops(instance.exports.peak, U * K * 8, {
      warmIters: 10000,
      startIters: 100000,
      maxIters: 1e9,
      seconds,
      trials,
    });
    perChains[K] = bestK;
    if (bestK > best.gflops) best = { gflops: bestK, chains: K };
  }
  return { ...best, perChains };
}

// The register tile: peak(iters) runs iters passes of 256 steps; per step it loads 2 vectors of B (one 128-byte
// panel row) and broadcasts 4 floats of A, then 8 f32x4.mul + 8 f32x4.add into 8 accumulators: 64 flops a step.
// A (4 KiB) and B (32 KiB) stay in L1; memory is zero-filled, and products of zeros cost what any others do.
const kTileSteps = 256;
export const kTileFlopsPerIter = kTileSteps * 64;

export function tilePeakModuleBytes() {
  // locals: 0 iters (param), 1 a pointer, 2 b pointer, 3 step counter (i32); 4..11 accumulators, 12 b0, 13 b1,
  // 14..17 the broadcast A values (all loads first: V8 then keeps every value in its own register)
  const acc = (r, j) => 4 + r * 2 + j;
  const get = (i) => [0x20, ...uleb(i)];
  const set = (i) => [0x21, ...uleb(i)];
  const i32 = (n) => [0x41, ...uleb(n)]; // (small non-negative constants only: uleb equals sleb below 64)
  const memarg = (alignLog2, offset) => [...uleb(alignLog2), ...uleb(offset)];
  const body = [2, 3, 0x7f, 14, 0x7b]; // local groups: 3 i32, 14 v128
  body.push(0x03, 0x40); // loop: passes
  body.push(...i32(0), ...set(1), 0x41, 0x80, 0x20, ...set(2), 0x41, 0x80, 0x02, ...set(3)); // a = 0, b = 4096, 256 steps
  body.push(0x03, 0x40); // loop: steps
  body.push(...get(2), 0xfd, 0x00, ...memarg(4, 0), ...set(12)); // b0 = v128.load b
  body.push(...get(2), 0xfd, 0x00, ...memarg(4, 16), ...set(13)); // b1 = v128.load b + 16
  for (let r = 0; r < 4; ++r) body.push(...get(1), 0xfd, 0x09, ...memarg(2, 4 * r), ...set(14 + r)); // a_r = splat
  for (let r = 0; r < 4; ++r) {
    for (let j = 0; j < 2; ++j) {
      const mulAdd = [0xfd, 0xe6, 0x01, 0xfd, 0xe4, 0x01]; // f32x4.mul, f32x4.add
      body.push(...get(acc(r, j)), ...get(14 + r), ...get(12 + j), ...mulAdd, ...set(acc(r, j)));
    }
  }
  body.push(...get(1), ...i32(16), 0x6a, ...set(1)); // a += 16
  body.push(...get(2), 0x41, 0x80, 0x01, 0x6a, ...set(2)); // b += 128
  body.push(...get(3), ...i32(1), 0x6b, 0x22, ...uleb(3), 0x0d, 0x00, 0x0b); // --steps; br_if; end
  body.push(...get(0), ...i32(1), 0x6b, 0x22, 0x00, 0x0d, 0x00, 0x0b); // --iters; br_if; end
  body.push(...get(acc(0, 0)));
  for (let k = 1; k < 8; ++k) body.push(...get(4 + k), 0xfd, 0xe4, 0x01);
  body.push(0xfd, 0x1f, 0x00, 0x0b); // f32x4.extract_lane 0; end
  return peakModule(body, { memoryPages: 1 });
}

// Returns { gflops }: best of `trials` timed calls of the register-tile module after warm-up.
export async function measureTilePeak({ seconds = 0.25, trials = 5 } = {}) {
  const { instance } = await WebAssembly.instantiate(tilePeakModuleBytes());
  const gflops = bestGflops(instance.exports.peak, kTileFlopsPerIter, {
    warmIters: 10,
    startIters: 100,
    maxIters: 1e7,
    seconds,
    trials,
  });
  return { gflops };
}
