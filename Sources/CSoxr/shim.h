#ifndef TABBARD_CSOXR_SHIM_H
#define TABBARD_CSOXR_SHIM_H
#include <soxr.h>

/// A streaming resampler for interleaved Float32 at `quality` (SOXR_HQ, SOXR_VHQ …), on the
/// calling thread only (one thread: soxr's OpenMP build would otherwise be free to use more).
static inline soxr_t tabbard_soxr_create(double in_rate, double out_rate, unsigned channels,
                                         unsigned long quality, const char **error) {
    soxr_quality_spec_t q = soxr_quality_spec(quality, 0);
    soxr_runtime_spec_t r = soxr_runtime_spec(1);
    soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
    soxr_error_t e = 0;
    soxr_t s = soxr_create(in_rate, out_rate, channels, &e, &io, &q, &r);
    *error = e;
    return s;
}

/// soxr's quality recipes, by name (macros of macros do not reach Swift).
enum { TABBARD_SOXR_QQ = SOXR_QQ, TABBARD_SOXR_LQ = SOXR_LQ, TABBARD_SOXR_MQ = SOXR_MQ,
       TABBARD_SOXR_HQ = SOXR_HQ, TABBARD_SOXR_VHQ = SOXR_VHQ };
#endif
