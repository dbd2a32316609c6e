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

/// Live blocks are also counted by their allocator size (malloc_usable_size) in steps of this many
/// bytes: bucket i holds the blocks of [i * step, (i + 1) * step) bytes.
#define MALLOC_COUNTER_BLOCK_STEP 16
/// How many buckets there are; the last one also holds every larger block.
#define MALLOC_COUNTER_BLOCK_BUCKETS 4096

/// Copies the live-block counts of the first `capacity` buckets (at most
/// MALLOC_COUNTER_BLOCK_BUCKETS) into `out`; returns how many it copied. Two copies taken around
/// a moment show what was allocated in between and still held, block by block: BenchClient's
/// `inflight` mode reads it when 10,000 calls are parked.
uint64_t malloc_counter_live_blocks(int64_t *out, uint64_t capacity);

#endif
