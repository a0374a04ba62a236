/*
 * pcmwatch — what an ALSA playback client sees of its stream (docs/AUDIO.md, "PulseAudio's ALSA plugin",
 * "What is left" (4)): writes silence to DEVICE for SECONDS (S16_LE stereo 48 kHz, 50 ms buffer, non-blocking),
 * and every ~20 ms prints
 *     MS avail AVAIL delay DELAY state STATE written FRAMES
 * (ms since the start; snd_pcm_avail_delay; snd_pcm_state). bench/sink/unlinked.py runs it on the rig and
 * kills WirePlumber under it. Build: cc -O2 -o pcmwatch pcmwatch.c -lasound
 */
#include <alsa/asoundlib.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) { fprintf(stderr, "usage: pcmwatch DEVICE SECONDS [WAIT_MS]\n"); return 2; }
	double wait_ms = argc == 4 ? atof(argv[3]) : -1;
	snd_pcm_t *p;
	int e;
	if ((e = snd_pcm_open(&p, argv[1], SND_PCM_STREAM_PLAYBACK, 0)) < 0) { printf("open %s\n", snd_strerror(e)); return 1; }
	if ((e = snd_pcm_set_params(p, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, 2, 48000, 1, 50000)) < 0) {
		printf("params %s\n", snd_strerror(e));
		return 1;
	}
	snd_pcm_sw_params_t *sw;        /* the daemon's start threshold: the first frame starts the stream */
	snd_pcm_sw_params_alloca(&sw);
	snd_pcm_sw_params_current(p, sw);
	snd_pcm_sw_params_set_start_threshold(p, sw, 1);
	snd_pcm_sw_params(p, sw);
	snd_pcm_nonblock(p, 1);
	static short buf[256 * 2];
	double t0 = now_ms(), last = 0, dur = atof(argv[2]) * 1000;
	long written = 0;
	static short burst[576 * 2];
	for (int i = 0; i < 576 * 2; i++) burst[i] = 1000;
	int burst_done = 0;
	while (now_ms() - t0 < dur) {
		snd_pcm_sframes_t r;
		if (wait_ms >= 0 && (burst_done || now_ms() - t0 < wait_ms)) {
			struct timespec ts = { 0, 2000000 };
			nanosleep(&ts, NULL);
			r = 0;
		} else if (wait_ms >= 0) {
			r = snd_pcm_writei(p, burst, 576);
			printf("%.1f burst %ld\n", now_ms() - t0, (long)r);
			burst_done = 1;
			if (r < 0) r = 0;
		} else
			r = snd_pcm_writei(p, buf, 256);
		if (r == -EAGAIN) {
			struct timespec ts = { 0, 2000000 };
			nanosleep(&ts, NULL);
			r = 0;
		} else if (r < 0) {
			printf("%.1f write %s\n", now_ms() - t0, snd_strerror((int)r));
			if ((r = snd_pcm_recover(p, (int)r, 1)) < 0) { printf("recover %s\n", snd_strerror((int)r)); break; }
			continue;
		}
		written += r;
		if (now_ms() - last > 20) {
			snd_pcm_sframes_t a = 0, d = 0;
			snd_pcm_avail_delay(p, &a, &d);
			printf("%.1f avail %ld delay %ld state %s written %ld\n", now_ms() - t0, (long)a, (long)d,
			       snd_pcm_state_name(snd_pcm_state(p)), written);
			fflush(stdout);
			last = now_ms();
		}
	}
	snd_pcm_close(p);
	return 0;
}
