// Platform calls Swift's Glibc/Darwin modules do not export (the I/O loop's wake-up, its name).
#ifndef CPLATFORM_SHIM_H
#define CPLATFORM_SHIM_H

#ifdef __linux__
#include <sys/eventfd.h>
#include <sys/prctl.h>

/// Names the calling thread for ps, top -H, perf and gdb; the kernel keeps the first 15 bytes.
/// (prctl is variadic, so Swift cannot call it directly.)
static inline void cplatform_name_current_thread(const char *name) {
    prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}
#endif

#endif
