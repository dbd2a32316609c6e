// Platform calls Swift's Glibc/Darwin modules do not export (the I/O loop's wake-up, its name,
// accepting a connection).
#ifndef CPLATFORM_SHIM_H
#define CPLATFORM_SHIM_H

#ifdef __linux__
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <stddef.h>
#include <sys/socket.h>

#ifndef __USE_GNU
// glibc declares accept4 only under _GNU_SOURCE, which Swift's Glibc module is not built with.
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);
#endif

/// Accepts a connection as a non-blocking descriptor closed on exec, in one call (no window in
/// which a process forked meanwhile inherits it).
static inline int cplatform_accept_nonblocking(int listener) {
    return accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

/// Names the calling thread for ps, top -H, perf and gdb; the kernel keeps the first 15 bytes.
/// (prctl is variadic, so Swift cannot call it directly.)
static inline void cplatform_name_current_thread(const char *name) {
    prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}
#endif

#endif
