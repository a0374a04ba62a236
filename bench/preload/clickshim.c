/*
 * clickshim: an LD_PRELOAD shim that timestamps audio reaching ALSA.
 *
 * It wraps snd_pcm_writei, snd_pcm_writen and snd_pcm_mmap_commit. When a call
 * hands ALSA a buffer holding a non-silent frame (any non-zero byte: silence is
 * all-zero in the signed formats tabbard and aplay use) and the previous call
 * on that process was silent (or it is the first call), it records an *onset*:
 * the CLOCK_MONOTONIC time at the call's entry, before ALSA sees the data.
 *
 * Onsets are written as text lines to the file or FIFO named by
 * $CLICKSHIM_OUT (opened once, at load time, O_WRONLY|O_APPEND|O_NONBLOCK):
 *
 *     onset <pid> <t_ns> <frames_in_call> <first_non_silent_frame>
 *
 * A line is shorter than PIPE_BUF, so lines from several processes never
 * interleave. Without $CLICKSHIM_OUT the shim only forwards the calls.
 *
 * Build: cc -O2 -shared -fPIC -o libclickshim.so clickshim.c -ldl
 */
#define _GNU_SOURCE
#include <alsa/asoundlib.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef snd_pcm_sframes_t (*writei_fn)(snd_pcm_t *, const void *, snd_pcm_uframes_t);
typedef snd_pcm_sframes_t (*writen_fn)(snd_pcm_t *, void **, snd_pcm_uframes_t);
typedef int (*mmap_begin_fn)(snd_pcm_t *, const snd_pcm_channel_area_t **, snd_pcm_uframes_t *, snd_pcm_uframes_t *);
typedef snd_pcm_sframes_t (*mmap_commit_fn)(snd_pcm_t *, snd_pcm_uframes_t, snd_pcm_uframes_t);
typedef ssize_t (*bytes_fn)(snd_pcm_t *, long);

static writei_fn real_writei;
static writen_fn real_writen;
static mmap_begin_fn real_mmap_begin;
static mmap_commit_fn real_mmap_commit;
static bytes_fn frames_to_bytes, samples_to_bytes;
static int out_fd = -1;
static int last_silent = 1;
static const snd_pcm_channel_area_t *mmap_areas;

static void resolve(void) {
    if (real_writei) return;
    real_writei = (writei_fn)dlsym(RTLD_NEXT, "snd_pcm_writei");
    real_writen = (writen_fn)dlsym(RTLD_NEXT, "snd_pcm_writen");
    real_mmap_begin = (mmap_begin_fn)dlsym(RTLD_NEXT, "snd_pcm_mmap_begin");
    real_mmap_commit = (mmap_commit_fn)dlsym(RTLD_NEXT, "snd_pcm_mmap_commit");
    frames_to_bytes = (bytes_fn)dlsym(RTLD_NEXT, "snd_pcm_frames_to_bytes");
    samples_to_bytes = (bytes_fn)dlsym(RTLD_NEXT, "snd_pcm_samples_to_bytes");
}

__attribute__((constructor)) static void clickshim_init(void) {
    const char *path = getenv("CLICKSHIM_OUT");
    if (path && *path) out_fd = open(path, O_WRONLY | O_APPEND | O_NONBLOCK | O_CLOEXEC);
}

static inline unsigned long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* Index of the first non-zero byte in p[0..n), or -1. */
static long first_nonzero(const unsigned char *p, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        unsigned long long w;
        memcpy(&w, p + i, 8);
        if (w) break;
    }
    for (; i < n; i++)
        if (p[i]) return (long)i;
    return -1;
}

static void report(unsigned long long t, unsigned long frames, long first_frame) {
    if (first_frame < 0) { last_silent = 1; return; }
    if (!last_silent) return;
    last_silent = 0;
    if (out_fd < 0) return;
    char line[128];
    int n = snprintf(line, sizeof line, "onset %d %llu %lu %ld\n", (int)getpid(), t, frames, first_frame);
    if (n > 0) { ssize_t w = write(out_fd, line, (size_t)n); (void)w; }
}

snd_pcm_sframes_t snd_pcm_writei(snd_pcm_t *pcm, const void *buffer, snd_pcm_uframes_t size) {
    unsigned long long t = now_ns();
    resolve();
    ssize_t bytes = frames_to_bytes(pcm, (long)size);
    long first = -1;
    if (bytes > 0) {
        long b = first_nonzero(buffer, (size_t)bytes);
        ssize_t fb = frames_to_bytes(pcm, 1);
        if (b >= 0) first = fb > 0 ? b / fb : 0;
    }
    report(t, size, first);
    return real_writei(pcm, buffer, size);
}

snd_pcm_sframes_t snd_pcm_writen(snd_pcm_t *pcm, void **bufs, snd_pcm_uframes_t size) {
    unsigned long long t = now_ns();
    resolve();
    long first = -1;
    ssize_t bytes = samples_to_bytes(pcm, (long)size);
    ssize_t sb = samples_to_bytes(pcm, 1);
    if (bytes > 0 && sb > 0) {
        /* Channel count is not at hand cheaply; frames_to_bytes / samples_to_bytes of one frame gives it. */
        ssize_t fb = frames_to_bytes(pcm, 1);
        long channels = fb > 0 ? fb / sb : 1;
        for (long ch = 0; ch < channels; ch++) {
            if (!bufs[ch]) continue;
            long b = first_nonzero(bufs[ch], (size_t)bytes);
            if (b >= 0 && (first < 0 || b / sb < first)) first = b / sb;
        }
    }
    report(t, size, first);
    return real_writen(pcm, bufs, size);
}

int snd_pcm_mmap_begin(snd_pcm_t *pcm, const snd_pcm_channel_area_t **areas,
                       snd_pcm_uframes_t *offset, snd_pcm_uframes_t *frames) {
    resolve();
    int r = real_mmap_begin(pcm, areas, offset, frames);
    if (r >= 0 && areas) mmap_areas = *areas;
    return r;
}

snd_pcm_sframes_t snd_pcm_mmap_commit(snd_pcm_t *pcm, snd_pcm_uframes_t offset, snd_pcm_uframes_t frames) {
    unsigned long long t = now_ns();
    resolve();
    long first = -1;
    if (mmap_areas && mmap_areas[0].addr) {
        /* Interleaved areas (the common case): one contiguous run from channel 0. */
        const snd_pcm_channel_area_t *a = &mmap_areas[0];
        const unsigned char *p = (const unsigned char *)a->addr + (a->first + offset * a->step) / 8;
        size_t bytes = frames * a->step / 8;
        long b = first_nonzero(p, bytes);
        if (b >= 0) first = b / (long)(a->step / 8 ? a->step / 8 : 1);
    }
    report(t, frames, first);
    return real_mmap_commit(pcm, offset, frames);
}
