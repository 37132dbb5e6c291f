// The one seam through which attnlab splits independent work over threads.
//
// ParallelFor(n, fn) runs fn(i) once for every i in [0, n) and returns when all have finished. The calling thread
// works too; the other threads come from one process-wide pool of ThreadCount() - 1 workers (attnlab/threads.h).
// Builds without threads (ATTNLAB_THREADS=0: the single-thread WebAssembly variants) run the same code serially.
//
// Results never depend on the thread count as long as each output element is written by exactly one i with a
// fixed order of additions inside it: callers split over (batch × head) problems, query-row blocks and GEMM row
// blocks, never over a reduction. A ParallelFor inside a ParallelFor runs serially on its thread.
#ifndef ATTNLAB_SRC_PARALLEL_H_
#define ATTNLAB_SRC_PARALLEL_H_

#include <cstddef>
#include <functional>

#include "attnlab/threads.h"  // ThreadCount, SetThreadCount, ThreadsSupported

namespace attnlab {

// fn(i) for i in [0, n), spread over ThreadCount() threads; rethrows the first exception an fn threw (after every
// started fn has returned). n <= 1, one thread, or a nested call: serial on the calling thread.
void ParallelFor(size_t n, const std::function<void(size_t)>& fn);

// Below this many flops in all, waking the pool costs more than splitting gains.
constexpr double kMinParallelFlops = 1e6;
// The same for a decoding step's attention over a KV cache (a few queries per head: memory-bound, 0.1-0.6 ms). In
// the wasm threaded build on a 2-core AMD EPYC, splitting it over 2 threads made a step 1.3-2x slower up to 2 M
// flops (context 512 at E = 512, 8 heads) and gained nothing at 4 M (context 2048), per `npm run bench`.
constexpr double kMinParallelDecodeFlops = 8e6;

// ParallelFor for n items of about flops_per_item each: serial when the whole job is smaller than min_flops.
void ParallelFor(size_t n, double flops_per_item, const std::function<void(size_t)>& fn,
                 double min_flops = kMinParallelFlops);

// Row blocks: `rows` rows are split into RowBlocks(rows) blocks of kRowBlock rows (the last one shorter), a multiple
// of the GEMM's 64-row cache block (kGemmMc), so a split GEMM does exactly the arithmetic of the whole one.
constexpr size_t kRowBlock = 64;
inline size_t RowBlocks(size_t rows) { return (rows + kRowBlock - 1) / kRowBlock; }

}  // namespace attnlab

#endif  // ATTNLAB_SRC_PARALLEL_H_
