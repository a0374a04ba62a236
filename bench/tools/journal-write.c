/*
 * What a journal `write` costs on this file system: appending to a file that grows
 * (what tabbard's journal does), versus overwriting pages of a file that was written
 * before (a journal ring or recycled journal files would).
 *
 * build: cc -O2 -o /tmp/journal-write bench/tools/journal-write.c
 * usage: taskset -c 0 /tmp/journal-write DIR CHUNK_BYTES WRITES
 *        (5,000 bytes is one turn of 64 pipelined selects, 40,000 one of 8 clients)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: journal-write DIR CHUNK_BYTES WRITES\n"); return 2; }
    size_t chunk = (size_t)atol(argv[2]);
    int n = atoi(argv[3]);
    const size_t region = 64u << 20;
    char path[4096];
    snprintf(path, sizeof path, "%s/journal-write.test", argv[1]);
    char *buf = malloc(chunk), *zeros = calloc(1, 1 << 20);
    memset(buf, 'x', chunk);

    /* Appending: O_APPEND, the file emptied every 64 MiB (a compaction's new journal). */
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
    double t0 = now();
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        if (len + chunk > region) { if (ftruncate(fd, 0) != 0) return 1; len = 0; }
        if (write(fd, buf, chunk) != (ssize_t)chunk) return 1;
        len += chunk;
    }
    double append = (now() - t0) / n * 1e6;
    close(fd);

    /* Overwriting: the same 64 MiB, written once beforehand, rewritten in place. */
    unlink(path);
    fd = open(path, O_RDWR | O_CREAT, 0600);
    for (size_t o = 0; o < region; o += 1 << 20) if (pwrite(fd, zeros, 1 << 20, (off_t)o) != 1 << 20) return 1;
    fdatasync(fd);
    t0 = now();
    off_t off = 0;
    for (int i = 0; i < n; i++) {
        if ((size_t)off + chunk > region) off = 0;
        if (pwrite(fd, buf, chunk, off) != (ssize_t)chunk) return 1;
        off += (off_t)chunk;
    }
    double overwrite = (now() - t0) / n * 1e6;
    close(fd);
    unlink(path);
    printf("%zu-byte writes: append %.2f µs, overwrite %.2f µs\n", chunk, append, overwrite);
    return 0;
}
