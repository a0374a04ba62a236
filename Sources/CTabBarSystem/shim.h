#ifndef TABBARD_CTABBARSYSTEM_SHIM_H
#define TABBARD_CTABBARSYSTEM_SHIM_H
#include <sys/socket.h>
#include <sys/epoll.h>

/// accept4 is declared by <sys/socket.h> only with _GNU_SOURCE, which Swift's Glibc does not set.
extern int accept4(int, struct sockaddr *, socklen_t *, int);

/// accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC: a client socket that is non-blocking and
/// not inherited by anything exec'ed, atomically.
static inline int tabbard_system_accept(int fd) {
    return accept4(fd, 0, 0, 04000 /* SOCK_NONBLOCK */ | 02000000 /* SOCK_CLOEXEC */);
}
#endif
