#ifndef MALLOC_COUNTER_H
#define MALLOC_COUNTER_H

#include <stdint.h>

/// What libMallocCounter.so has seen since the process started, across all threads.
struct malloc_counts {
    uint64_t allocations;  ///< malloc, calloc, realloc of NULL, posix_memalign, aligned_alloc, memalign, valloc
    uint64_t reallocations; ///< realloc of a live block (it may move)
    uint64_t frees;        ///< free of a non-NULL block (and realloc to size 0)
    uint64_t bytes;        ///< bytes asked for by allocations and reallocations
    int64_t live_bytes;    ///< bytes in blocks not yet freed (malloc_usable_size), counted from the start
};

/// Copies the counters. BenchClient finds this with dlsym when the library is preloaded
/// (LD_PRELOAD), and reads it before and after the timed calls.
void malloc_counter_snapshot(struct malloc_counts *out);

#endif
