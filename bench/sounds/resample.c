/* The cost and quality of resampling at load (docs/SOUNDS.md, "Resampling"): libsamplerate's
 * src_simple (what tabbard used before) against libsoxr's quality recipes (what it uses now).
 *
 *   cost:   CPU ms per second of audio, 1 s of stereo 44.1 → 48 kHz, and 1 s of stereo 384 → 48 kHz
 *           (the bound: a file at the highest rate accepted), best of 5 runs.
 *   SNR:    a 1 kHz tone at −1 dBFS, 44.1 → 48 kHz, against the exact tone at 48 kHz (dB).
 *   alias:  a 30 kHz tone at −1 dBFS in a 96 kHz file, 96 → 48 kHz: what is left of it (dBFS;
 *           the ideal is nothing, it is above the new Nyquist frequency).
 *
 * Build and run: make bench-sounds (or cc -O2 resample.c -lsoxr /usr/lib/x86_64-linux-gnu/libsamplerate.so.0 -lm). */
#include <math.h>
#include <soxr.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct { const float *in; float *out; long in_frames, out_frames, used, gen; int end; double ratio; } src_data;
int src_simple(src_data *d, int type, int channels);

static double now(void) { struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec / 1e9; }

/* kind 0: libsamplerate converter q; kind 1: soxr recipe q. Returns frames made. */
static long convert(int kind, unsigned long q, const float *in, long frames, int ch, int from, int to, float *out, long cap) {
    if (kind == 0) {
        src_data d = {in, out, frames, cap, 0, 0, 1, (double)to / from};
        if (src_simple(&d, (int)q, ch)) return -1;
        return d.gen;
    }
    soxr_quality_spec_t qs = soxr_quality_spec(q, 0);
    soxr_runtime_spec_t rs = soxr_runtime_spec(1);
    soxr_error_t e = 0;
    soxr_t s = soxr_create(from, to, ch, &e, NULL, &qs, &rs);
    size_t used = 0, made = 0, more = 0;
    soxr_process(s, in, frames, &used, out, cap, &made);
    soxr_process(s, NULL, 0, NULL, out + made * ch, cap - made, &more);
    soxr_delete(s);
    return (long)(made + more);
}

static float *tone(double hz, int rate, int ch, long frames, double amp) {
    float *x = malloc(sizeof(float) * frames * ch);
    for (long f = 0; f < frames; f++)
        for (int c = 0; c < ch; c++) x[f * ch + c] = (float)(amp * sin(2 * M_PI * hz * f / rate));
    return x;
}

static double cost(int kind, unsigned long q, int from) {
    long frames = from;  /* 1 s */
    float *in = tone(440, from, 2, frames, 0.5);
    long cap = 48000 + 4096;
    float *out = malloc(sizeof(float) * cap * 2);
    double best = 1e9;
    for (int r = 0; r < 5; r++) {
        double t0 = now();
        convert(kind, q, in, frames, 2, from, 48000, out, cap);
        double t = now() - t0;
        if (t < best) best = t;
    }
    free(in); free(out);
    return best * 1000;
}

static double snr(int kind, unsigned long q) {
    double amp = pow(10, -1 / 20.0);
    float *in = tone(1000, 44100, 1, 44100, amp);
    float out[60000];
    long n = convert(kind, q, in, 44100, 1, 44100, 48000, out, 60000);
    double sig = 0, err = 0;
    for (long f = 4800; f < n - 4800; f++) {
        double want = amp * sin(2 * M_PI * 1000.0 * f / 48000);
        sig += want * want;
        err += (out[f] - want) * (out[f] - want);
    }
    free(in);
    return 10 * log10(sig / err);
}

static double alias(int kind, unsigned long q) {
    double amp = pow(10, -1 / 20.0);
    float *in = tone(30000, 96000, 1, 96000, amp);
    float out[60000];
    long n = convert(kind, q, in, 96000, 1, 96000, 48000, out, 60000);
    double e = 0;
    long k = 0;
    for (long f = 4800; f < n - 4800; f++, k++) e += out[f] * out[f];
    free(in);
    return 10 * log10(e / k * 2 + 1e-30);  /* as the peak of a sine: dBFS */
}

int main(void) {
    struct { const char *name; int kind; unsigned long q; } all[] = {
        {"libsamplerate best (before)", 0, 0}, {"libsamplerate medium", 0, 1}, {"libsamplerate fastest", 0, 2},
        {"soxr quick", 1, SOXR_QQ}, {"soxr low (16-bit)", 1, SOXR_LQ}, {"soxr medium (16-bit)", 1, SOXR_MQ},
        {"soxr high (20-bit, used)", 1, SOXR_HQ}, {"soxr very high (28-bit)", 1, SOXR_VHQ},
    };
    printf("| resampler | ms per s, 44.1→48 kHz stereo | ms per s, 384→48 kHz stereo | SNR 1 kHz (dB) | 30 kHz left after 96→48 (dBFS) |\n|---|---|---|---|---|\n");
    for (unsigned i = 0; i < sizeof all / sizeof all[0]; i++)
        printf("| %s | %.2f | %.2f | %.1f | %.1f |\n", all[i].name, cost(all[i].kind, all[i].q, 44100),
               cost(all[i].kind, all[i].q, 384000), snr(all[i].kind, all[i].q), alias(all[i].kind, all[i].q));
    return 0;
}
