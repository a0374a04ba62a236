#ifndef TABBARD_CALSA_SHIM_H
#define TABBARD_CALSA_SHIM_H
#include <alsa/asoundlib.h>
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
#endif
