#ifndef TABBARD_CALSA_SHIM_H
#define TABBARD_CALSA_SHIM_H
#include <alsa/asoundlib.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>

/// Where ALSA's error chatter goes: one formatted line to a Swift callback (or nowhere).
typedef void (*tabbard_alsa_log_fn)(const char *line);
static tabbard_alsa_log_fn tabbard_alsa_log_target = 0;

static void tabbard_alsa_error_handler(const char *file, int line, const char *function,
                                       int err, const char *fmt, ...) {
    if (!tabbard_alsa_log_target) return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char out[768];
    if (err)
        snprintf(out, sizeof out, "%s: %s (%s)", function ? function : "alsa", msg, snd_strerror(err));
    else
        snprintf(out, sizeof out, "%s: %s", function ? function : "alsa", msg);
    tabbard_alsa_log_target(out);
}

/// Routes alsa-lib's error messages to `fn` instead of stderr (NULL silences them).
static inline void tabbard_alsa_route_errors(tabbard_alsa_log_fn fn) {
    tabbard_alsa_log_target = fn;
    snd_lib_error_set_handler(tabbard_alsa_error_handler);
}

/* Small wrappers for things Swift cannot express directly. */

/* ppoll is declared only under _GNU_SOURCE; the prototype is glibc's. */
extern int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *tmo, const __sigset_t *sigmask);

/* pthread_setname_np is declared only under _GNU_SOURCE. */
extern int pthread_setname_np(pthread_t thread, const char *name);

/// Names the calling thread (shown by top -H, perf, gdb).
static inline void tabbard_set_thread_name(const char *name) { pthread_setname_np(pthread_self(), name); }

/// The calling thread's kernel id.
static inline int tabbard_gettid(void) { return (int)syscall(SYS_gettid); }

/// A non-blocking, close-on-exec eventfd (counter 0), or -1.
static inline int tabbard_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

/// poll with a nanosecond timeout (negative = forever); -1 with errno on failure.
static inline int tabbard_ppoll(struct pollfd *fds, unsigned long n, long long timeout_ns) {
    if (timeout_ns < 0) return ppoll(fds, (nfds_t)n, 0, 0);
    struct timespec ts;
    ts.tv_sec = (time_t)(timeout_ns / 1000000000LL);
    ts.tv_nsec = (long)(timeout_ns % 1000000000LL);
    return ppoll(fds, (nfds_t)n, &ts, 0);
}

/// snd_pcm_poll_descriptors_revents on a pollfd array owned by Swift.
static inline unsigned short tabbard_pcm_revents(snd_pcm_t *pcm, struct pollfd *fds, unsigned int n) {
    unsigned short revents = 0;
    if (snd_pcm_poll_descriptors_revents(pcm, fds, n, &revents) < 0) return POLLERR;
    return revents;
}
#endif
