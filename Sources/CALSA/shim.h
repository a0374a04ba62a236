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

/* ------------------------------------------------------------------------
 * libsamplerate, loaded at run time.
 *
 * The package links only the libraries named in the module maps; resampling
 * is needed only for sounds whose rate differs from the device's, so the
 * converter is looked up with dlopen("libsamplerate.so.0") (Debian package
 * libsamplerate0, already pulled in by alsa-utils) the first time a sound
 * needs it. The structure below is libsamplerate's stable SRC_DATA ABI
 * (0.1.x and 0.2.x).
 * ---------------------------------------------------------------------- */
typedef struct {
    const float *data_in;
    float *data_out;
    long input_frames, output_frames;
    long input_frames_used, output_frames_gen;
    int end_of_input;
    double src_ratio;
} tabbard_src_data;

typedef int (*tabbard_src_simple_fn)(tabbard_src_data *data, int converter_type, int channels);
typedef const char *(*tabbard_src_strerror_fn)(int error);

/// Converts `in_frames` interleaved frames with libsamplerate's src_simple.
/// Returns the number of frames generated (>= 0), -1 when the library cannot
/// be loaded, or -(1000 + code) for a libsamplerate error (see
/// tabbard_src_strerror).
static inline long tabbard_src_convert(const float *in, long in_frames, float *out, long out_capacity,
                                       double ratio, int channels, int converter) {
    static void *lib = 0;
    static tabbard_src_simple_fn simple = 0;
    if (!simple) {
        if (!lib) lib = dlopen("libsamplerate.so.0", RTLD_NOW | RTLD_LOCAL);
        if (!lib) return -1;
        simple = (tabbard_src_simple_fn)dlsym(lib, "src_simple");
        if (!simple) return -1;
    }
    tabbard_src_data d;
    d.data_in = in;
    d.data_out = out;
    d.input_frames = in_frames;
    d.output_frames = out_capacity;
    d.input_frames_used = 0;
    d.output_frames_gen = 0;
    d.end_of_input = 1;
    d.src_ratio = ratio;
    int err = simple(&d, converter, channels);
    if (err) return -(1000 + (long)err);
    return d.output_frames_gen;
}

/// libsamplerate's message for an error code (or a generic one when unavailable).
static inline const char *tabbard_src_strerror(int code) {
    void *lib = dlopen("libsamplerate.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return "libsamplerate.so.0 not available";
    tabbard_src_strerror_fn fn = (tabbard_src_strerror_fn)dlsym(lib, "src_strerror");
    const char *s = fn ? fn(code) : "unknown libsamplerate error";
    dlclose(lib);
    return s ? s : "unknown libsamplerate error";
}

/// Whether libsamplerate can be loaded (for stats and docs).
static inline int tabbard_src_available(void) {
    void *lib = dlopen("libsamplerate.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return 0;
    dlclose(lib);
    return 1;
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
