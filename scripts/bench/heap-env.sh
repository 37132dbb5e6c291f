# Sourced by run.sh and native.sh: keep freed large blocks in glibc's heap for every implementation measured.
# Every implementation returns its results in fresh arrays of up to tens of MB. glibc serves such blocks with fresh
# mmaps, and in a sandboxed kernel (gVisor here) their page faults cost ~10 µs per 4 KiB page: a 2 MB output took
# 6-9 ms to allocate and fill, against 0.1 ms with the block reused (more than the attention itself at L = 512
# natively). Keeping them makes a run measure the libraries rather than the kernel, alike for every implementation;
# BENCH_FRESH_PAGES=1 measures with glibc's defaults. Both benchmarks record the setting in their results.
if [ "${BENCH_FRESH_PAGES:-0}" != 1 ]; then
  export MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-4294967296} MALLOC_TRIM_THRESHOLD_=${MALLOC_TRIM_THRESHOLD_:-4294967296}
fi
