// How many threads attnlab's calls may use. Native builds and the simd-threaded WebAssembly variant split each
// call's independent work ((batch × head) problems, row blocks of the projections) over a pool of that many threads,
// the calling thread included; the single-thread WebAssembly variants always use 1. Results never depend on it:
// every output element is computed by one thread, in the same order of additions.
#ifndef ATTNLAB_THREADS_H_
#define ATTNLAB_THREADS_H_

#include <cstddef>

namespace attnlab {

// Threads a call may use, counting the caller; at least 1. Default 1.
size_t ThreadCount();

// Sets it (0 is taken as 1) and resizes the pool. Call it between calls, not during one. Builds without threads
// keep 1.
void SetThreadCount(size_t n);

// Whether this build can use more than one thread.
bool ThreadsSupported();

}  // namespace attnlab

#endif  // ATTNLAB_THREADS_H_
