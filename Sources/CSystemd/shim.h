#ifndef TABBARD_CSYSTEMD_SHIM_H
#define TABBARD_CSYSTEMD_SHIM_H
#include <systemd/sd-daemon.h>
#include <sys/socket.h>
#include <sys/types.h>

/// Peer credentials of a connected AF_UNIX socket (SO_PEERCRED); returns 0 or -errno.
static inline int tabbard_peer_cred(int fd, int *pid, unsigned *uid, unsigned *gid) {
    struct { int pid; unsigned uid; unsigned gid; } cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, 17 /* SO_PEERCRED */, &cred, &len) != 0) return -1;
    *pid = cred.pid; *uid = cred.uid; *gid = cred.gid;
    return 0;
}
#endif
