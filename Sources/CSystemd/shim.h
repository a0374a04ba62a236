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

/// mallopt(M_MMAP_THRESHOLD, bytes): a fixed threshold stops glibc's dynamic one from
/// growing each time a big buffer is freed (after which RSS ratchets up and stays).
static inline int tabbard_fix_mmap_threshold(int bytes) {
    return mallopt(M_MMAP_THRESHOLD, bytes);
}
#endif
