// Platform calls Swift's Glibc/Darwin modules do not export (the I/O loop's wake-up and timer, its name,
// accepting a connection, a heap block's size), and starting a child process without a shell.
#ifndef CPLATFORM_SHIM_H
#define CPLATFORM_SHIM_H

#ifdef __linux__
#include <sys/eventfd.h>
#include <sys/timerfd.h>
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

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <unistd.h>

/// The calling thread as a number, the same for as long as the thread lives and different from
/// every other live thread's (pthread_t is an integer on Linux and a pointer on Darwin).
static inline uintptr_t cplatform_current_thread(void) {
    return (uintptr_t)pthread_self();
}

#ifdef __linux__
#include <malloc.h>
#else
#include <malloc/malloc.h>
#endif

/// The bytes the allocator gave the block at `pointer`, at least what was asked (the tests that
/// keep a per-call object in its allocator size class read it).
static inline size_t cplatform_block_size(void *pointer) {
#ifdef __linux__
    return malloc_usable_size(pointer);
#else
    return malloc_size(pointer);
#endif
}

#if defined(__linux__) && !defined(__USE_GNU)
// glibc declares pipe2 only under _GNU_SOURCE.
extern int pipe2(int fds[2], int flags);
#endif

/// A pipe whose two descriptors are closed on exec, so a child started by another thread never
/// inherits them (one call on Linux; on Darwin the spawn closes everything it is not given).
static inline int cplatform_pipe_cloexec(int fds[2]) {
#ifdef __linux__
    return pipe2(fds, O_CLOEXEC);
#else
    if (pipe(fds) != 0) return -1;
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    return 0;
#endif
}

/// Starts `path` (no PATH search, no shell) with `argv` and `envp` as the leader of a new
/// process group, so that the group can be killed whole: standard input is /dev/null, standard
/// output and error are `stdout_fd` and `stderr_fd`, no other descriptor of this process is
/// inherited, no signal is blocked, and signals this process ignores (SIGPIPE, ...) are back to
/// their default. Returns 0, or the errno posix_spawn gave.
static inline int cplatform_spawn_in_new_group(pid_t *pid, const char *path, char *const argv[], char *const envp[],
                                               int stdout_fd, int stderr_fd) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int error = posix_spawn_file_actions_init(&actions);
    if (error != 0) return error;
    error = posix_spawnattr_init(&attributes);
    if (error != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return error;
    }
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    const int reset[] = {SIGPIPE, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGCHLD, SIGALRM, SIGUSR1, SIGUSR2,
                         SIGTSTP, SIGTTIN, SIGTTOU};
    for (unsigned i = 0; i < sizeof(reset) / sizeof(reset[0]); i++) sigaddset(&defaults, reset[i]);
    short flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
#ifdef __APPLE__
    flags |= POSIX_SPAWN_CLOEXEC_DEFAULT;
#endif
    if (error == 0) error = posix_spawnattr_setflags(&attributes, flags);
    if (error == 0) error = posix_spawnattr_setpgroup(&attributes, 0);
    if (error == 0) error = posix_spawnattr_setsigmask(&attributes, &none);
    if (error == 0) error = posix_spawnattr_setsigdefault(&attributes, &defaults);
    if (error == 0) error = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    if (error == 0) error = posix_spawn_file_actions_adddup2(&actions, stdout_fd, 1);
    if (error == 0) error = posix_spawn_file_actions_adddup2(&actions, stderr_fd, 2);
#ifdef __linux__
    if (error == 0) error = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
#endif
    if (error == 0) error = posix_spawn(pid, path, &actions, &attributes, argv, envp);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return error;
}

#endif
