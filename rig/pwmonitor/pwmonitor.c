/*
 * pwmonitor — when a sound reaches the sink, read at the sink (docs/PERFORMANCE.md, "The click at the sink").
 *
 * A PipeWire capture stream on a sink's monitor (stream.capture.sink). For every buffer it takes the graph
 * cycle's time (pw_stream_get_time_n: CLOCK_MONOTONIC, the driver's cycle start) and the samples
 * (S16_LE, stereo, 48 kHz: what a click is written as). A click's onset is the first non-silent frame
 * after at least --gap-ms of silence; it reached the sink at
 *     start of the cycle in which the sink consumed it + offset / rate,
 * and the monitor delivers a cycle's output one cycle later, so that start is the previous buffer's time.
 * --calibrate N checks exactly that: a native playback stream writes an impulse at a known frame of a known
 * cycle, N times, and the residual (measured − known) is printed.
 *
 * Output, one line each, flushed:
 *   ready RATE                    the monitor is linked and capturing
 *   node ID                       its node's id in the graph (pw-top, pw-dump)
 *   onset NS FRAME [after-gap]    a click reached the sink at NS (CLOCK_MONOTONIC), FRAME = its frame in the dump;
 *                                 after-gap: in the first buffer after a gap (its cycle's time derived from the gap)
 *   watching profiler             late.c follows PipeWire's profiler (module-profiler)
 *   late at FRAME                 a cycle PipeWire completed without this capture (late.c): the buffers around
 *                                 dump frame FRAME may lack a cycle of the sink's output, with no gap reported
 *   gap FRAMES                    the monitor missed FRAMES frames (cycles it was not scheduled in: the dump has
 *                                 silence there, the onset detector counts them as silence)
 *   cycle NS FRAMES LATE AT       with --cycles: each captured buffer (its graph cycle's start, its size = the quantum,
 *                                 how long after that start this callback ran (ns), its first frame in the dump)
 *   cycles N quantum MIN MAX frames F   at exit
 *   calibration N residual_ns MIN P50 MAX   at exit with --calibrate
 *
 * Usage: pwmonitor [--target NODE] [--raw FILE|--wav FILE] [--threshold N] [--gap-ms MS] [--duration S]
 *                  [--count N] [--calibrate N] [--cycles] [--passive] [--stall MS [--stall-count N]]
 * Stops at --duration, after --count onsets, after the calibration, on SIGINT/SIGTERM, or when stdin closes
 * (when stdin is a pipe), then completes the dump. Build: cc pwmonitor.c $(pkg-config --cflags --libs libpipewire-0.3)
 */
#include <errno.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/stat.h>

#include <spa/param/audio/format-utils.h>
#include <pipewire/pipewire.h>

#include "late.h"

#define RATE 48000
#define CHANNELS 2
#define MAX_CAL 4096

struct monitor {
	struct pw_main_loop *loop;
	struct pw_stream *capture, *playback;
	struct spa_hook capture_listener, playback_listener;
	FILE *dump;
	int wav;
	int threshold;
	uint32_t gap_frames;
	long count;

	/* capture side (data thread) */
	int ready;
	int64_t prev_now;
	uint64_t prev_ticks, prev_frames;
	uint64_t frames, cycles, dumped;
	uint32_t qmin, qmax;
	uint64_t silent;
	long onsets;

	/* calibration: known impulse times (playback) and measured onsets (capture) */
	int calibrate;
	/* --cycles: one line per captured buffer (its graph-cycle time and size), to see the quantum change */
	int trace;
	int passive;
	int played, measured;
	int stopping;
	/* --stall MS [--stall-count N]: a test of the probe itself (tests/pipewire ProbeLate): the data thread sleeps
	 * MS after each of the first N buffers holding an onset, so that PipeWire completes cycles without it */
	double stall_ms;
	int stall_count, stalls;
	int64_t next_impulse;
	int64_t known[MAX_CAL], seen[MAX_CAL];
};

static struct monitor m;

/* Stopping: the capture ignores what comes after, and the main loop runs 1.1 s more for the profiler's last
 * report (it flushes once a second) of the cycles captured (late.c), then quits. */
static struct spa_source *stop_timer;
static void quit_now(void *data, uint64_t expirations) { (void)data; (void)expirations; pw_main_loop_quit(m.loop); }
static int do_stop(struct spa_loop *loop, bool async, uint32_t seq, const void *data, size_t size, void *user)
{
	(void)loop; (void)async; (void)seq; (void)data; (void)size; (void)user;
	if (stop_timer) return 0;
	struct pw_loop *l = pw_main_loop_get_loop(m.loop);
	stop_timer = pw_loop_add_timer(l, quit_now, NULL);
	struct timespec ts = { 1, 100000000 };
	pw_loop_update_timer(l, stop_timer, &ts, NULL, false);
	return 0;
}
static void quit(void)
{
	__atomic_store_n(&m.stopping, 1, __ATOMIC_RELEASE);
	pw_loop_invoke(pw_main_loop_get_loop(m.loop), do_stop, 0, NULL, 0, false, NULL);
}

static void put_le32(FILE *f, uint32_t v) { uint8_t b[4] = { v, v >> 8, v >> 16, v >> 24 }; fwrite(b, 1, 4, f); }
static void put_le16(FILE *f, uint16_t v) { uint8_t b[2] = { v, v >> 8 }; fwrite(b, 1, 2, f); }

static void wav_header(FILE *f, uint32_t data_bytes)
{
	fwrite("RIFF", 1, 4, f); put_le32(f, 36 + data_bytes); fwrite("WAVEfmt ", 1, 8, f);
	put_le32(f, 16); put_le16(f, 1); put_le16(f, CHANNELS); put_le32(f, RATE);
	put_le32(f, RATE * CHANNELS * 2); put_le16(f, CHANNELS * 2); put_le16(f, 16);
	fwrite("data", 1, 4, f); put_le32(f, data_bytes);
}

static void on_capture(void *data)
{
	(void)data;
	struct pw_buffer *b = pw_stream_dequeue_buffer(m.capture);
	if (b == NULL) return;
	if (__atomic_load_n(&m.stopping, __ATOMIC_ACQUIRE)) { pw_stream_queue_buffer(m.capture, b); return; }
	struct spa_data *d = &b->buffer->datas[0];
	struct pw_time t;
	pw_stream_get_time_n(m.capture, &t, sizeof t);
	struct timespec wall;
	clock_gettime(CLOCK_MONOTONIC, &wall);
	const int16_t *s = d->data ? SPA_PTROFF(d->data, d->chunk->offset, int16_t) : NULL;
	uint32_t n = d->chunk->size / (CHANNELS * sizeof(int16_t));
	if (s == NULL || n == 0 || t.now == 0) { pw_stream_queue_buffer(m.capture, b); return; }

	int after_gap = 0, stall = 0;
	if (!m.ready) {
		m.ready = 1;
		printf("ready %d\nnode %u\n", RATE, pw_stream_get_node_id(m.capture));
	} else if (t.ticks - m.prev_ticks != m.prev_frames) {
		/* Cycles the monitor did not see (typically the first cycle after the graph restarts: the capture
		 * is scheduled from the second). What they carried is not known: the dump gets silence in their
		 * place (so its frames stay on the driver's timeline) and the onset detector counts them as
		 * silence. This buffer holds the sink's output of the last missed cycle, whose start is this
		 * cycle's start minus that cycle's length: exact when the missed frames are whole cycles of this
		 * buffer's size (a graph restarting at its quantum), else the gap is taken as one cycle. */
		int64_t missed = (int64_t)(t.ticks - m.prev_ticks) - (int64_t)m.prev_frames;
		printf("gap %lld at %llu\n", (long long)missed, (unsigned long long)m.frames);  /* at: its first frame in the dump */
		if (missed > 0 && missed < (int64_t)RATE * 10) {
			int64_t last = missed % n == 0 ? n : missed;
			m.prev_now = t.now - last * 1000000000LL / RATE;
			m.silent += (uint64_t)missed;
			if (m.dump) {
				static const int16_t zero[CHANNELS * 256];
				for (int64_t k = 0; k < missed; k += 256) {
					int64_t c = missed - k < 256 ? missed - k : 256;
					fwrite(zero, CHANNELS * sizeof(int16_t), (size_t)c, m.dump);
				}
				m.dumped += (uint64_t)missed;
			}
			m.frames += (uint64_t)missed;
			after_gap = 1;
		} else {
			m.prev_now = 0; /* a jump back or a long hole: no time for this buffer's consuming cycle */
		}
	}
	late_record(t.now, m.frames);
	if (m.trace) printf("cycle %lld %u %lld %llu\n", (long long)t.now, n,
			    (long long)(wall.tv_sec * 1000000000LL + wall.tv_nsec - t.now), (unsigned long long)m.frames);
	if (n < m.qmin || m.qmin == 0) m.qmin = n;
	if (n > m.qmax) m.qmax = n;
	m.cycles++;

	for (uint32_t i = 0; i < n; i++) {
		int loud = 0;
		for (int c = 0; c < CHANNELS; c++) {
			int v = s[i * CHANNELS + c];
			if (v > m.threshold || -v > m.threshold) loud = 1;
		}
		if (!loud) { m.silent++; continue; }
		if (m.silent >= m.gap_frames && m.prev_now != 0) {
			int64_t when = m.prev_now + (int64_t)i * 1000000000LL / RATE;
			printf("onset %lld %llu%s\n", (long long)when, (unsigned long long)(m.frames + i),
			       after_gap ? " after-gap" : "");
			m.onsets++;
			stall = 1;
			if (m.calibrate && m.measured < MAX_CAL) m.seen[m.measured++] = when;
		}
		m.silent = 0;
	}
	if (m.dump) { fwrite(s, CHANNELS * sizeof(int16_t), n, m.dump); m.dumped += n; }
	m.frames += n;
	m.prev_now = t.now;
	m.prev_ticks = t.ticks;
	m.prev_frames = n;
	fflush(stdout);
	pw_stream_queue_buffer(m.capture, b);
	if (stall && m.stall_ms > 0 && m.stalls < m.stall_count) {
		long long ns = (long long)(m.stall_ms * 1e6);
		struct timespec ts = { (time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL) };
		m.stalls++;
		nanosleep(&ts, NULL);
	}

	if ((m.count > 0 && m.onsets >= m.count) || (m.calibrate && m.measured >= m.calibrate))
		quit(); /* pw_main_loop_quit is an invoke: safe from the data thread */
}

/* The calibration stream: silence, and every 100–300 ms an impulse (8 frames) at a known frame of the cycle. */
static void on_playback(void *data)
{
	(void)data;
	struct pw_buffer *b = pw_stream_dequeue_buffer(m.playback);
	if (b == NULL) return;
	struct spa_data *d = &b->buffer->datas[0];
	struct pw_time t;
	pw_stream_get_time_n(m.playback, &t, sizeof t);
	uint32_t stride = CHANNELS * sizeof(int16_t);
	uint32_t n = d->maxsize / stride;
	if (b->requested && b->requested < n) n = b->requested;
	int16_t *s = d->data;
	memset(s, 0, n * stride);
	if (m.ready && t.now != 0 && t.now >= m.next_impulse && m.played < m.calibrate && n > 16) {
		uint32_t k = (uint32_t)(m.played * 97) % (n - 8);
		for (uint32_t i = k; i < k + 8; i++) s[i * CHANNELS] = s[i * CHANNELS + 1] = 12000;
		m.known[m.played++] = t.now + (int64_t)k * 1000000000LL / RATE;
		m.next_impulse = t.now + (100 + (m.played * 37) % 200) * 1000000LL;
	}
	d->chunk->offset = 0;
	d->chunk->stride = stride;
	d->chunk->size = n * stride;
	pw_stream_queue_buffer(m.playback, b);
}

static void on_state(void *data, enum pw_stream_state old, enum pw_stream_state state, const char *error)
{
	(void)old;
	if (state == PW_STREAM_STATE_ERROR) {
		fprintf(stderr, "pwmonitor: %s stream: %s\n", (const char *)data, error ? error : "error");
		quit();
	}
}

static const struct pw_stream_events capture_events = {
	PW_VERSION_STREAM_EVENTS, .state_changed = on_state, .process = on_capture,
};
static const struct pw_stream_events playback_events = {
	PW_VERSION_STREAM_EVENTS, .state_changed = on_state, .process = on_playback,
};

static struct pw_stream *connect(const char *name, const char *target, enum spa_direction dir,
				 const struct pw_stream_events *ev, struct spa_hook *hook)
{
	struct pw_properties *p = pw_properties_new(PW_KEY_MEDIA_TYPE, "Audio",
		PW_KEY_MEDIA_CATEGORY, dir == SPA_DIRECTION_INPUT ? "Capture" : "Playback",
		PW_KEY_MEDIA_ROLE, "Production", PW_KEY_TARGET_OBJECT, target, NULL);
	if (dir == SPA_DIRECTION_INPUT) pw_properties_set(p, PW_KEY_STREAM_CAPTURE_SINK, "true");
	else pw_properties_set(p, PW_KEY_NODE_LATENCY, "256/48000");
	/* --passive: the capture does not keep the graph running (as when nothing else plays) */
	if (dir == SPA_DIRECTION_INPUT && m.passive) pw_properties_set(p, PW_KEY_NODE_PASSIVE, "true");
	struct pw_stream *st = pw_stream_new_simple(pw_main_loop_get_loop(m.loop), name, p, ev, (void *)name);
	uint8_t buf[1024];
	struct spa_pod_builder pb = SPA_POD_BUILDER_INIT(buf, sizeof buf);
	const struct spa_pod *params[1];
	params[0] = spa_format_audio_raw_build(&pb, SPA_PARAM_EnumFormat,
		&SPA_AUDIO_INFO_RAW_INIT(.format = SPA_AUDIO_FORMAT_S16_LE, .channels = CHANNELS, .rate = RATE,
					 .position = { SPA_AUDIO_CHANNEL_FL, SPA_AUDIO_CHANNEL_FR }));
	(void)hook;
	if (pw_stream_connect(st, dir, PW_ID_ANY, PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_MAP_BUFFERS |
			      PW_STREAM_FLAG_RT_PROCESS, params, 1) < 0) {
		fprintf(stderr, "pwmonitor: cannot connect the %s stream\n", name);
		exit(2);
	}
	return st;
}

static void on_signal(void *data, int sig) { (void)data; (void)sig; quit(); }
static void on_timeout(void *data, uint64_t expirations) { (void)data; (void)expirations; quit(); }
static struct spa_source *stdin_source;
static void on_stdin(void *data, int fd, uint32_t mask)
{
	(void)data;
	char buf[256];
	if ((mask & (SPA_IO_HUP | SPA_IO_ERR)) || read(fd, buf, sizeof buf) <= 0) {
		if (stdin_source) pw_loop_destroy_source(pw_main_loop_get_loop(m.loop), stdin_source);
		stdin_source = NULL;
		quit();
	}
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static void usage(void)
{
	fprintf(stderr, "usage: pwmonitor [--target NODE] [--raw FILE|--wav FILE] [--threshold N] [--gap-ms MS]\n"
			"                 [--duration S] [--count N] [--calibrate N] [--cycles] [--passive]\n"
			"                 [--stall MS [--stall-count N]] [--realtime PRIO]\n");
	exit(2);
}

int main(int argc, char *argv[])
{
	const char *target = getenv("RIG_SINK"), *raw = NULL, *wav = NULL;
	double duration = 0, gap_ms = 30;
	int realtime = 0;
	if (target == NULL) target = "tabbard_rig_sink";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--cycles")) { m.trace = 1; continue; }
		if (!strcmp(a, "--passive")) { m.passive = 1; continue; }
		if (v == NULL) usage();
		if (!strcmp(a, "--target")) target = v;
		else if (!strcmp(a, "--raw")) raw = v;
		else if (!strcmp(a, "--wav")) wav = v;
		else if (!strcmp(a, "--threshold")) m.threshold = atoi(v);
		else if (!strcmp(a, "--gap-ms")) gap_ms = atof(v);
		else if (!strcmp(a, "--duration")) duration = atof(v);
		else if (!strcmp(a, "--count")) m.count = atol(v);
		else if (!strcmp(a, "--stall")) m.stall_ms = atof(v);
		else if (!strcmp(a, "--stall-count")) m.stall_count = atoi(v);
		else if (!strcmp(a, "--realtime")) realtime = atoi(v);
		else if (!strcmp(a, "--calibrate")) m.calibrate = atoi(v) < MAX_CAL ? atoi(v) : MAX_CAL;
		else usage();
		i++;
	}
	if (m.stall_ms > 0 && m.stall_count == 0) m.stall_count = 1;
	m.gap_frames = (uint32_t)(gap_ms * RATE / 1000);
	m.silent = m.gap_frames;
	if (raw || wav) {
		m.dump = fopen(raw ? raw : wav, "wb");
		if (m.dump == NULL) { perror(raw ? raw : wav); return 2; }
		m.wav = wav != NULL;
		if (m.wav) wav_header(m.dump, 0);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	pw_init(&argc, &argv);
	m.loop = pw_main_loop_new(NULL);
	struct pw_loop *l = pw_main_loop_get_loop(m.loop);
	pw_loop_add_signal(l, SIGINT, on_signal, NULL);
	pw_loop_add_signal(l, SIGTERM, on_signal, NULL);
	struct stat st0;
	if (fstat(0, &st0) == 0 && S_ISFIFO(st0.st_mode)) stdin_source = pw_loop_add_io(l, 0, SPA_IO_IN | SPA_IO_HUP | SPA_IO_ERR, false, on_stdin, NULL);
	if (duration > 0) {
		struct spa_source *timer = pw_loop_add_timer(l, on_timeout, NULL);
		struct timespec ts = { (time_t)duration, (long)((duration - (time_t)duration) * 1e9) };
		pw_loop_update_timer(l, timer, &ts, NULL, false);
	}
	m.capture = connect("pwmonitor", target, SPA_DIRECTION_INPUT, &capture_events, &m.capture_listener);
	if (m.calibrate) m.playback = connect("pwmonitor-calibration", target, SPA_DIRECTION_OUTPUT, &playback_events,
					      &m.playback_listener);
	late_init(l, m.capture);
	if (realtime > 0) {
		/* The main loop completes the server's Start when the graph restarts (a passive probe, nothing
		 * else playing): at normal priority it can lose the race to the first cycle, whose trigger
		 * PipeWire 0.3.65 then reads away, and the sink waits for this probe a whole cycle
		 * (docs/DESKTOP.md, "The click after idle: the first cycle"). Only this thread. */
		struct sched_param sp = { .sched_priority = realtime };
		if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) perror("pwmonitor: sched_setscheduler");
	}
	pw_main_loop_run(m.loop);

	if (m.playback) pw_stream_destroy(m.playback);
	pw_stream_destroy(m.capture); /* stops the data thread's callbacks before we read m */
	long late = late_finish();
	printf("cycles %llu quantum %u %u frames %llu late %ld\n", (unsigned long long)m.cycles, m.qmin, m.qmax,
	       (unsigned long long)m.frames, late);
	int status = 0;
	if (m.calibrate) {
		int n = m.played < m.measured ? m.played : m.measured;
		static int64_t r[MAX_CAL];
		for (int i = 0; i < n; i++) r[i] = m.seen[i] - m.known[i];
		qsort(r, n, sizeof r[0], cmp64);
		if (n > 0) printf("calibration %d residual_ns %lld %lld %lld\n", n, (long long)r[0], (long long)r[n / 2],
				  (long long)r[n - 1]);
		else printf("calibration 0\n");
		if (n < m.calibrate || m.played != m.measured) status = 1;
	}
	if (m.dump) {
		if (m.wav) { fseek(m.dump, 0, SEEK_SET); wav_header(m.dump, (uint32_t)(m.dumped * CHANNELS * 2)); }
		if (fclose(m.dump) != 0) { perror("dump"); status = 2; }
	}
	pw_main_loop_destroy(m.loop);
	pw_deinit();
	return status;
}
