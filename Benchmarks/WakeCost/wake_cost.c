// What one thread wake costs on this machine: two threads hand a token back and forth through
// POSIX semaphores (futexes), each handoff waking the other thread, which was asleep. A unary call
// on Swift's default executor pays such wakes that gRPC C-core's completion-queue client (whose
// calling thread polls the queue) and a call on Channel.executor do not: the I/O thread resumes
// the caller's task on a Dispatch worker, and that worker wakes the I/O thread for the next call.
//
//     wake_cost [HANDOFFS]   prints one JSON line: CPU and wall time per handoff, context switches
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static sem_t ping, pong;
static long rounds;

static void *partner(void *unused) {
    (void)unused;
    for (long i = 0; i < rounds; i++) {
        sem_wait(&ping);
        sem_post(&pong);
    }
    return NULL;
}

static double seconds(struct timeval t) { return (double)t.tv_sec + (double)t.tv_usec / 1e6; }

int main(int argc, char **argv) {
    rounds = argc > 1 ? atol(argv[1]) / 2 : 50000;
    if (rounds < 1) {
        fprintf(stderr, "wake_cost: HANDOFFS must be at least 2\n");
        return 2;
    }
    sem_init(&ping, 0, 0);
    sem_init(&pong, 0, 0);
    pthread_t thread;
    if (pthread_create(&thread, NULL, partner, NULL) != 0) {
        fprintf(stderr, "wake_cost: cannot start a thread\n");
        return 1;
    }
    struct rusage before, after;
    struct timespec start, end;
    getrusage(RUSAGE_SELF, &before);
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (long i = 0; i < rounds; i++) {
        sem_post(&ping);
        sem_wait(&pong);
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    getrusage(RUSAGE_SELF, &after);
    pthread_join(thread, NULL);
    double handoffs = 2.0 * (double)rounds;
    double cpu = seconds(after.ru_utime) + seconds(after.ru_stime) - seconds(before.ru_utime) - seconds(before.ru_stime);
    double wall = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;
    long switches = (after.ru_nvcsw - before.ru_nvcsw) + (after.ru_nivcsw - before.ru_nivcsw);
    printf("{\"handoffs\": %.0f, \"cpu_us_per_handoff\": %.3f, \"wall_us_per_handoff\": %.3f, "
           "\"context_switches_per_handoff\": %.3f}\n",
           handoffs, cpu * 1e6 / handoffs, wall * 1e6 / handoffs, (double)switches / handoffs);
    return 0;
}
