#ifndef TABBARD_CSYSTEMD_SHIM_H
#define TABBARD_CSYSTEMD_SHIM_H
#include <systemd/sd-daemon.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <signal.h>

/// Peer credentials of a connected AF_UNIX socket (SO_PEERCRED); returns 0 or -1.
static inline int tabbard_peer_cred(int fd, int *pid, unsigned *uid, unsigned *gid) {
    struct { int pid; unsigned uid; unsigned gid; } cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, 17 /* SO_PEERCRED */, &cred, &len) != 0) return -1;
    *pid = cred.pid; *uid = cred.uid; *gid = cred.gid;
    return 0;
}

extern int accept4(int, struct sockaddr *, socklen_t *, int);

/// accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC (not visible from Glibc without _GNU_SOURCE).
static inline int tabbard_accept(int fd) {
    return accept4(fd, 0, 0, 04000 /* SOCK_NONBLOCK */ | 02000000 /* SOCK_CLOEXEC */);
}
#include <malloc.h>
#include <systemd/sd-bus.h>
#include <stdio.h>
#include <string.h>
#include <stdint.h>

#include <sys/resource.h>

/// RLIMIT_RTPRIO's soft limit (-1 when unknown) and a bounded RLIMIT_RTTIME (RTKit requires one).
static inline long tabbard_rtprio_limit(void) {
    struct rlimit l;
    return getrlimit(RLIMIT_RTPRIO, &l) == 0 ? (long)l.rlim_cur : -1;
}
static inline int tabbard_bound_rttime(unsigned long usec) {
    struct rlimit l = { usec, usec };
    return setrlimit(RLIMIT_RTTIME, &l);
}

/// Asks RTKit (org.freedesktop.RealtimeKit1 on the system bus) to make thread `tid`
/// SCHED_FIFO at `prio`, lowered to RTKit's MaxRealtimePriority. Returns the priority
/// granted (> 0) or -errno with the reason in `why`.
static inline int tabbard_rtkit_make_realtime(uint64_t tid, int prio, char *why, int whylen) {
    sd_bus *bus = NULL;
    sd_bus_error e = SD_BUS_ERROR_NULL;
    int r = sd_bus_open_system(&bus);
    if (r < 0) { snprintf(why, whylen, "no system bus for RTKit (%s)", strerror(-r)); return r; }
    int32_t max = 0;
    if (sd_bus_get_property_trivial(bus, "org.freedesktop.RealtimeKit1", "/org/freedesktop/RealtimeKit1",
                                    "org.freedesktop.RealtimeKit1", "MaxRealtimePriority", &e, 'i', &max) >= 0
        && max > 0 && prio > max)
        prio = max;
    sd_bus_error_free(&e);
    e = SD_BUS_ERROR_NULL;
    r = sd_bus_call_method(bus, "org.freedesktop.RealtimeKit1", "/org/freedesktop/RealtimeKit1",
                           "org.freedesktop.RealtimeKit1", "MakeThreadRealtime", &e, NULL, "tu", tid, (uint32_t)prio);
    if (r < 0) snprintf(why, whylen, "RTKit refused (%s)", e.message ? e.message : strerror(-r));
    sd_bus_error_free(&e);
    sd_bus_flush_close_unref(bus);
    return r < 0 ? r : prio;
}

/// mallopt(M_MMAP_THRESHOLD, bytes): a fixed threshold stops glibc's dynamic one from
/// growing each time a big buffer is freed (after which RSS ratchets up and stays).
static inline int tabbard_fix_mmap_threshold(int bytes) {
    return mallopt(M_MMAP_THRESHOLD, bytes);
}
#endif
