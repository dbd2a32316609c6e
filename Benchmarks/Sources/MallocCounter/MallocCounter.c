// A malloc-counting LD_PRELOAD library for the benchmarks. Every allocation entry point of the C
// library is replaced by one that bumps a counter and calls the next definition in link order
// (glibc's, or the jemalloc that h2load links). Counting is always on; BenchClient reads the
// counters before and after its timed calls (malloc_counter_snapshot), so warm-up and setup fall
// outside its figure. Live blocks are also kept by size (malloc_counter_live_blocks), so a
// moment's growth can be named block by block.
//
// When MALLOC_COUNTER_REPORT names a file, the whole process's counts are written there as JSON
// at exit: that is how h2load, which cannot call us, is counted.

#define _GNU_SOURCE
#include "MallocCounter.h"

#include <dlfcn.h>
#include <malloc.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static _Atomic uint64_t allocations, reallocations, frees, bytes;
// Bytes in live blocks, as the allocator sized them (malloc_usable_size): the heap this process
// holds, without RSS's page granularity.
static _Atomic int64_t live_bytes;
// The same live blocks counted by size (malloc_counter_live_blocks).
static _Atomic int64_t live_blocks[MALLOC_COUNTER_BLOCK_BUCKETS];

static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void (*next_free)(void *);
static void *(*next_memalign)(size_t, size_t);
static void *(*next_aligned_alloc)(size_t, size_t);
static int (*next_posix_memalign)(void **, size_t, size_t);
static void *(*next_valloc)(size_t);
static void *(*next_pvalloc)(size_t);

// dlsym itself may allocate (calloc) before the next malloc is known: those few blocks come from
// here and are never freed.
static _Alignas(16) char bootstrap[4096];
static _Atomic size_t bootstrap_used;
static _Atomic int resolving;

static void *bootstrap_allocate(size_t size) {
    size_t rounded = (size + 15) & ~(size_t)15;
    size_t offset = atomic_fetch_add(&bootstrap_used, rounded);
    if (offset + rounded > sizeof bootstrap) return NULL;
    return bootstrap + offset;
}

static int is_bootstrap(void *pointer) {
    return (char *)pointer >= bootstrap && (char *)pointer < bootstrap + sizeof bootstrap;
}

static void resolve(void) {
    if (next_malloc != NULL) return;
    atomic_store(&resolving, 1);
    next_calloc = dlsym(RTLD_NEXT, "calloc");
    next_malloc = dlsym(RTLD_NEXT, "malloc");
    next_realloc = dlsym(RTLD_NEXT, "realloc");
    next_free = dlsym(RTLD_NEXT, "free");
    next_memalign = dlsym(RTLD_NEXT, "memalign");
    next_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
    next_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    next_valloc = dlsym(RTLD_NEXT, "valloc");
    next_pvalloc = dlsym(RTLD_NEXT, "pvalloc");
    atomic_store(&resolving, 0);
}

static inline void count_allocation(size_t size) {
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&bytes, size, memory_order_relaxed);
}

static inline _Atomic int64_t *bucket(size_t usable) {
    size_t index = usable / MALLOC_COUNTER_BLOCK_STEP;
    return &live_blocks[index < MALLOC_COUNTER_BLOCK_BUCKETS ? index : MALLOC_COUNTER_BLOCK_BUCKETS - 1];
}

static inline void *count_live(void *pointer) {
    if (pointer != NULL) {
        size_t usable = malloc_usable_size(pointer);
        atomic_fetch_add_explicit(&live_bytes, (int64_t)usable, memory_order_relaxed);
        atomic_fetch_add_explicit(bucket(usable), 1, memory_order_relaxed);
    }
    return pointer;
}

static inline void count_dead(void *pointer) {
    size_t usable = malloc_usable_size(pointer);
    atomic_fetch_sub_explicit(&live_bytes, (int64_t)usable, memory_order_relaxed);
    atomic_fetch_sub_explicit(bucket(usable), 1, memory_order_relaxed);
}

void *malloc(size_t size) {
    if (next_malloc == NULL) {
        if (atomic_load(&resolving)) return bootstrap_allocate(size);
        resolve();
    }
    count_allocation(size);
    return count_live(next_malloc(size));
}

void *calloc(size_t count, size_t size) {
    if (next_calloc == NULL) {
        if (atomic_load(&resolving)) {
            if (size != 0 && count > SIZE_MAX / size) return NULL;
            return bootstrap_allocate(count * size);  // static storage is already zero
        }
        resolve();
    }
    count_allocation(count * size);
    return count_live(next_calloc(count, size));
}

void *realloc(void *pointer, size_t size) {
    if (next_realloc == NULL) resolve();
    if (is_bootstrap(pointer)) {
        // Never happens in practice (dlsym does not grow its blocks); refuse rather than guess.
        errno = ENOMEM;
        return NULL;
    }
    if (pointer == NULL) {
        count_allocation(size);
        return count_live(next_realloc(pointer, size));
    }
    if (size == 0) {
        atomic_fetch_add_explicit(&frees, 1, memory_order_relaxed);
        count_dead(pointer);
        return next_realloc(pointer, size);
    }
    atomic_fetch_add_explicit(&reallocations, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&bytes, size, memory_order_relaxed);
    size_t before = malloc_usable_size(pointer);
    void *moved = next_realloc(pointer, size);
    if (moved != NULL) {
        size_t after = malloc_usable_size(moved);
        atomic_fetch_add_explicit(&live_bytes, (int64_t)after - (int64_t)before, memory_order_relaxed);
        atomic_fetch_sub_explicit(bucket(before), 1, memory_order_relaxed);
        atomic_fetch_add_explicit(bucket(after), 1, memory_order_relaxed);
    }
    return moved;
}

void *reallocarray(void *pointer, size_t count, size_t size) {
    if (size != 0 && count > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(pointer, count * size);
}

void free(void *pointer) {
    if (pointer == NULL || is_bootstrap(pointer)) return;
    if (next_free == NULL) resolve();
    atomic_fetch_add_explicit(&frees, 1, memory_order_relaxed);
    count_dead(pointer);
    next_free(pointer);
}

void cfree(void *pointer) { free(pointer); }

void *memalign(size_t alignment, size_t size) {
    if (next_memalign == NULL) resolve();
    count_allocation(size);
    return count_live(next_memalign(alignment, size));
}

void *aligned_alloc(size_t alignment, size_t size) {
    if (next_aligned_alloc == NULL) resolve();
    count_allocation(size);
    return count_live(next_aligned_alloc(alignment, size));
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    if (next_posix_memalign == NULL) resolve();
    count_allocation(size);
    int result = next_posix_memalign(out, alignment, size);
    if (result == 0) count_live(*out);
    return result;
}

void *valloc(size_t size) {
    if (next_valloc == NULL) resolve();
    count_allocation(size);
    return count_live(next_valloc(size));
}

void *pvalloc(size_t size) {
    if (next_pvalloc == NULL) resolve();
    count_allocation(size);
    return count_live(next_pvalloc(size));
}

void malloc_counter_snapshot(struct malloc_counts *out) {
    out->allocations = atomic_load_explicit(&allocations, memory_order_relaxed);
    out->reallocations = atomic_load_explicit(&reallocations, memory_order_relaxed);
    out->frees = atomic_load_explicit(&frees, memory_order_relaxed);
    out->bytes = atomic_load_explicit(&bytes, memory_order_relaxed);
    out->live_bytes = atomic_load_explicit(&live_bytes, memory_order_relaxed);
}

uint64_t malloc_counter_live_blocks(int64_t *out, uint64_t capacity) {
    uint64_t count = capacity < MALLOC_COUNTER_BLOCK_BUCKETS ? capacity : MALLOC_COUNTER_BLOCK_BUCKETS;
    for (uint64_t index = 0; index < count; index++) {
        out[index] = atomic_load_explicit(&live_blocks[index], memory_order_relaxed);
    }
    return count;
}

__attribute__((destructor)) static void report_at_exit(void) {
    const char *path = getenv("MALLOC_COUNTER_REPORT");
    if (path == NULL || *path == '\0') return;
    struct malloc_counts counts;
    malloc_counter_snapshot(&counts);
    char line[256];
    int length = snprintf(line, sizeof line,
                          "{\"allocations\": %llu, \"reallocations\": %llu, \"frees\": %llu, \"bytes\": %llu, \"live_bytes\": %lld}\n",
                          (unsigned long long)counts.allocations, (unsigned long long)counts.reallocations,
                          (unsigned long long)counts.frees, (unsigned long long)counts.bytes, (long long)counts.live_bytes);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return;
    if (length > 0) (void)!write(fd, line, (size_t)length);
    close(fd);
}
