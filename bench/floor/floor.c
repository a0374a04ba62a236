/*
 * floor: the benchmark's reference server — the least a Unix-socket line
 * server can do. One epoll loop, edge of nothing: for every complete line it
 * reads it queues one canned reply of the same size and shape as tabbard's
 * `tab.select` reply; a line containing "subscribe" marks the connection as a
 * subscriber, and every other line also sends one canned event line to every
 * subscriber (the fan-out floor). One read per readable socket per turn, one
 * write per connection per turn (like a well-behaved daemon). No JSON, no
 * state, no journal: what is left is the kernel's Unix socket.
 *
 * With --journal FILE it also does the least a server that keeps its state
 * durably must do: every tab.select line is appended to FILE, one write() per
 * loop turn before any reply of that turn is sent (group commit), and the file
 * is emptied at 4 MiB (what a compaction does, without a snapshot). That is the
 * reference for tabbard's pipelined throughput with its journal.
 *
 * --journal-overwrite FILE writes with pwrite over a 64 MiB region of FILE, from
 * its start again when full: the same write per turn, but over pages written
 * before instead of new ones (what a journal ring or recycled journal files would
 * do). --journal-ring FILE and --journal-mmap FILE journal through a shared mapping of
 * a preallocated 8 MiB file instead (memcpy, no write per turn): the ring keeps
 * rewriting the same pages, the other starts a fresh file whenever it is full (a
 * page fault per 4 KiB, as a journal rotated at each compaction would). They
 * measure what an mmapped journal would buy (docs/PERFORMANCE.md).
 *
 * usage: floor [--journal|--journal-overwrite|--journal-ring|--journal-mmap FILE] SOCKET_PATH
 *        (prints nothing; answers a hello line on connect)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <sys/mman.h>

static const char HELLO[] =
    "{\"jsonrpc\":\"2.0\",\"method\":\"hello\",\"params\":{\"server\":\"floor\",\"protocol\":1}}\n";
/* Same length and shape as tabbard's tab.select reply. */
static const char REPLY[] =
    "{\"jsonrpc\":\"2.0\",\"id\":100000,\"result\":{\"seq\":1234567,\"selected\":\"nearby\","
    "\"previous\":\"home\",\"reselected\":false}}\n";
static const char SUBSCRIBED[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"seq\":1234567,\"state\":{}}}\n";
/* Same shape as tabbard's tab.selected event. */
static const char EVENT[] =
    "{\"jsonrpc\":\"2.0\",\"method\":\"tab.selected\",\"params\":{\"seq\":1234567,\"tab\":\"nearby\","
    "\"previous\":\"home\",\"source\":\"program\"}}\n";

struct conn {
    int fd;
    int subscriber;
    int dirty;
    size_t len, cap, sent;
    char *out;
    size_t plen;           /* bytes of an unfinished line kept from the last read */
    char partial[512];
};

#define MAXFD 65536
static struct conn *conns[MAXFD];
static int subs[MAXFD];
static int nsubs;
static int dirty[MAXFD];
static int ndirty;

static void queue(struct conn *c, const char *p, size_t n) {
    if (c->len + n > c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 4096;
        while (cap < c->len + n) cap *= 2;
        c->out = realloc(c->out, cap);
        c->cap = cap;
    }
    memcpy(c->out + c->len, p, n);
    c->len += n;
    if (!c->dirty) { c->dirty = 1; dirty[ndirty++] = c->fd; }
}

static void drop(int ep, struct conn *c) {
    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    if (c->subscriber)
        for (int i = 0; i < nsubs; i++)
            if (subs[i] == c->fd) { subs[i] = subs[--nsubs]; break; }
    conns[c->fd] = NULL;
    free(c->out);
    free(c);
}

static int journal_fd = -1;
static char *jbuf;
static size_t jlen, jcap;
static off_t joff;

static void journal(const char *p, size_t n) {
    if (jlen + n + 1 > jcap) {
        jcap = jcap ? jcap * 2 : 65536;
        while (jcap < jlen + n + 1) jcap *= 2;
        jbuf = realloc(jbuf, jcap);
    }
    memcpy(jbuf + jlen, p, n);
    jbuf[jlen + n] = '\n';
    jlen += n + 1;
}

enum { JOURNAL_WRITE, JOURNAL_OVERWRITE, JOURNAL_RING, JOURNAL_FRESH } journal_mode;
static char *jmap;
static const size_t jmapcap = 8 << 20;

static void journal_map(void) {
    if (jmap) munmap(jmap, jmapcap);
    if (ftruncate(journal_fd, 0) != 0 || posix_fallocate(journal_fd, 0, (off_t)jmapcap) != 0) { perror("floor: journal"); exit(1); }
    jmap = mmap(NULL, jmapcap, PROT_READ | PROT_WRITE, MAP_SHARED, journal_fd, 0);
    if (jmap == MAP_FAILED) { perror("floor: mmap"); exit(1); }
    joff = 0;
}

static void journal_commit(void) {
    if (journal_fd < 0 || jlen == 0) return;
    if (journal_mode == JOURNAL_OVERWRITE) {
        if ((size_t)joff + jlen > (size_t)64 << 20) joff = 0;
        if (pwrite(journal_fd, jbuf, jlen, joff) == (ssize_t)jlen) joff += (off_t)jlen;
        jlen = 0;
        return;
    }
    if (journal_mode != JOURNAL_WRITE) {
        if (!jmap) journal_map();
        if ((size_t)joff + jlen > jmapcap) {
            if (journal_mode == JOURNAL_RING) joff = 0; else journal_map();
        }
        memcpy(jmap + joff, jbuf, jlen);
        joff += (off_t)jlen;
        jlen = 0;
        return;
    }
    if (write(journal_fd, jbuf, jlen) == (ssize_t)jlen) joff += (off_t)jlen;
    jlen = 0;
    if (joff > 4 << 20) { if (ftruncate(journal_fd, 0) == 0) {} lseek(journal_fd, 0, SEEK_SET); joff = 0; }
}

static void line(struct conn *c, const char *p, size_t n) {
    if (n == 0) return;
    if (memmem(p, n, "\"subscribe\"", 11)) {
        if (!c->subscriber) { c->subscriber = 1; subs[nsubs++] = c->fd; }
        queue(c, SUBSCRIBED, sizeof SUBSCRIBED - 1);
        return;
    }
    queue(c, REPLY, sizeof REPLY - 1);
    if (memmem(p, n, "tab.select", 10)) {
        if (journal_fd >= 0) journal(p, n);
        for (int i = 0; i < nsubs; i++) queue(conns[subs[i]], EVENT, sizeof EVENT - 1);
    }
}

int main(int argc, char **argv) {
    if (argc == 4 && strncmp(argv[1], "--journal", 9) == 0) {
        if (strcmp(argv[1], "--journal-ring") == 0) journal_mode = JOURNAL_RING;
        else if (strcmp(argv[1], "--journal-overwrite") == 0) journal_mode = JOURNAL_OVERWRITE;
        else if (strcmp(argv[1], "--journal-mmap") == 0) journal_mode = JOURNAL_FRESH;
        else if (strcmp(argv[1], "--journal") != 0) { fprintf(stderr, "floor: unknown option %s\n", argv[1]); return 2; }
        journal_fd = open(argv[2], (journal_mode == JOURNAL_WRITE ? O_WRONLY | O_APPEND : O_RDWR) | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (journal_fd < 0) { perror("floor: journal"); return 1; }
        argv += 2;
        argc -= 2;
    }
    if (argc != 2) { fprintf(stderr, "usage: floor [--journal|--journal-overwrite|--journal-ring|--journal-mmap FILE] SOCKET_PATH\n"); return 2; }
    signal(SIGPIPE, SIG_IGN);
    int ls = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    strncpy(sa.sun_path, argv[1], sizeof sa.sun_path - 1);
    unlink(argv[1]);
    if (bind(ls, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(ls, 4096) < 0) { perror("floor: bind"); return 1; }
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = ls };
    epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
    static char buf[65536];
    struct epoll_event evs[256];
    for (;;) {
        int n = epoll_wait(ep, evs, 256, -1);
        if (n < 0) { if (errno == EINTR) continue; return 1; }
        for (int k = 0; k < n; k++) {
            int fd = evs[k].data.fd;
            if (fd == ls) {
                int c;
                while ((c = accept4(ls, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
                    if (c >= MAXFD) { close(c); continue; }
                    struct conn *cn = calloc(1, sizeof *cn);
                    cn->fd = c;
                    conns[c] = cn;
                    struct epoll_event e = { .events = EPOLLIN | EPOLLRDHUP, .data.fd = c };
                    epoll_ctl(ep, EPOLL_CTL_ADD, c, &e);
                    queue(cn, HELLO, sizeof HELLO - 1);
                }
                continue;
            }
            struct conn *c = conns[fd];
            if (!c) continue;
            ssize_t r = read(fd, buf, sizeof buf);
            if (r <= 0) {
                if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
                drop(ep, c);
                continue;
            }
            size_t start = 0;
            for (;;) {
                char *nl = memchr(buf + start, '\n', (size_t)r - start);
                if (!nl) break;
                size_t end = (size_t)(nl - buf);
                if (c->plen) {
                    size_t m = end - start;
                    if (c->plen + m > sizeof c->partial) m = sizeof c->partial - c->plen;
                    memcpy(c->partial + c->plen, buf + start, m);
                    line(c, c->partial, c->plen + m);
                    c->plen = 0;
                } else {
                    line(c, buf + start, end - start);
                }
                start = end + 1;
            }
            if (start < (size_t)r) {
                size_t m = (size_t)r - start;
                if (c->plen + m > sizeof c->partial) m = sizeof c->partial - c->plen;
                memcpy(c->partial + c->plen, buf + start, m);
                c->plen += m;
            }
        }
        journal_commit();  /* the turn's changes are in the file before any reply leaves */
        /* One write per connection per turn. */
        for (int i = 0; i < ndirty; i++) {
            struct conn *c = conns[dirty[i]];
            if (!c) continue;
            c->dirty = 0;
            while (c->sent < c->len) {
                ssize_t w = send(c->fd, c->out + c->sent, c->len - c->sent, MSG_NOSIGNAL);
                if (w > 0) { c->sent += (size_t)w; continue; }
                break;  /* EAGAIN: the benchmark's clients always read; a stuck one just stays queued */
            }
            if (c->sent == c->len) c->sent = c->len = 0;
        }
        ndirty = 0;
    }
}
