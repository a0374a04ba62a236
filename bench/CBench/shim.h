#ifndef TABBARD_CBENCH_SHIM_H
#define TABBARD_CBENCH_SHIM_H
/* What the benchmark needs from Linux that the Glibc module does not show. */
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

/// Pins the calling thread to one CPU (sched_setaffinity, what `taskset -c CPU` does). 0 or -1.
static inline int bench_pin_thread(int cpu) {
    unsigned long mask[16] = {0};
    if (cpu < 0 || cpu >= (int)(sizeof mask * 8)) return -1;
    mask[cpu / (8 * sizeof(unsigned long))] = 1UL << (cpu % (8 * sizeof(unsigned long)));
    return (int)syscall(SYS_sched_setaffinity, 0, sizeof mask, mask);
}
#endif
