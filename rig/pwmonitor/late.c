/*
 * late.c — the cycles in which PipeWire handed on the sink's output without waiting for pwmonitor
 * (docs/PERFORMANCE.md, "Two probes").
 *
 * PipeWire 0.3.65 makes the driver (the null sink) wait for every follower, this capture included, before it
 * processes a cycle, so a capture that is slow still gets every buffer. But when a cycle is not complete by the
 * driver's next timer, the driver completes it anyway ("graph not finished", impl-node.c node_ready): the sink's
 * monitor then hands on its next output while the late capture has not taken the previous one. Such a cycle can
 * cost the probe a quantum that nothing in its stream shows (the clock it reads advances one quantum a callback);
 * seen once in run 8 of "Two probes", with probe B not finished at the completion of the damaged click's cycle.
 *
 * PipeWire's profiler (module-profiler, loaded by the default pipewire.conf; what pw-top reads) records, at each
 * cycle's completion, every follower's status. This file binds it on a connection of its own and, for each
 * cycle completed while this capture had not finished, prints
 *     late at FRAME     the buffers around dump frame FRAME may lack a cycle of the sink's output
 * (FRAME: this probe's first buffer of that cycle or after, less one cycle), so that a click there is not judged;
 * and for each other follower not finished at a cycle's completion
 *     incomplete NSEC ID STATUS NAME   (NSEC: the cycle's start, CLOCK_MONOTONIC; STATUS: 1 triggered, 2 awake)
 */
#include <stdio.h>
#include <string.h>

#include <spa/pod/parser.h>
#include <spa/param/profiler.h>
#include <pipewire/pipewire.h>
#include <pipewire/impl.h>            /* pw_context_load_module */
#include <pipewire/extensions/profiler.h>

#include "late.h"

#define ACTIVATION_FINISHED 3         /* pipewire/private.h */
#define RECORDS 16384
#define PENDING 256

/* What the data thread captured: each buffer's cycle (its start, CLOCK_MONOTONIC) and its first frame in the dump. */
static struct { int64_t now; uint64_t frame; } rec[RECORDS];
static uint64_t rec_count;            /* written by the data thread only, read by the main thread */

static struct {
	struct pw_context *context;
	struct pw_core *core;
	struct pw_registry *registry;
	struct pw_proxy *profiler;
	struct spa_hook registry_listener, profiler_listener;
	struct pw_stream *capture;
	int64_t pending[PENDING];      /* cycles completed without this capture, not yet matched to the dump */
	int n_pending;
	long late;
} L;

void late_record(int64_t now, uint64_t frame)
{
	uint64_t i = __atomic_load_n(&rec_count, __ATOMIC_RELAXED);
	rec[i % RECORDS].now = now;
	rec[i % RECORDS].frame = frame;
	__atomic_store_n(&rec_count, i + 1, __ATOMIC_RELEASE);
}

/* The dump frame of the buffer before the first one from a cycle starting at or after `at`; -1: none came yet,
 * -2: nothing captured before it (the capture had not started). */
static int64_t frame_near(int64_t at)
{
	uint64_t n = __atomic_load_n(&rec_count, __ATOMIC_ACQUIRE);
	if (n == 0) return -1;
	if (rec[(n - 1) % RECORDS].now < at) return -1;
	for (uint64_t k = 1; k < n && k < RECORDS - 64; k++) {   /* newest first; keep off the writer's slots */
		uint64_t i = (n - 1 - k) % RECORDS;
		if (rec[i].now < at) return (int64_t)rec[i].frame;
	}
	return -2;
}

static void resolve(void)
{
	int kept = 0;
	for (int i = 0; i < L.n_pending; i++) {
		int64_t f = frame_near(L.pending[i]);
		if (f == -1) { L.pending[kept++] = L.pending[i]; continue; }
		if (f >= 0) { printf("late at %lld\n", (long long)f); L.late++; }
	}
	L.n_pending = kept;
	fflush(stdout);
}

static void on_profile(void *data, const struct spa_pod *pod)
{
	(void)data;
	uint32_t me = pw_stream_get_node_id(L.capture);
	struct spa_pod *o;
	SPA_POD_STRUCT_FOREACH(pod, o) {
		if (!spa_pod_is_object_type(o, SPA_TYPE_OBJECT_Profiler)) continue;
		int64_t nsec = 0;
		int late = 0, n_others = 0;
		struct other { int32_t id, status; const char *name; } others[8];
		struct spa_pod_prop *p;
		SPA_POD_OBJECT_FOREACH((struct spa_pod_object *)o, p) {
			if (p->key == SPA_PROFILER_clock) {
				int32_t flags = 0, id = 0;
				const char *name = NULL;
				spa_pod_parse_struct(&p->value, SPA_POD_Int(&flags), SPA_POD_Int(&id), SPA_POD_String(&name),
						     SPA_POD_Long(&nsec));
			} else if (p->key == SPA_PROFILER_followerBlock) {
				int32_t id = 0, status = 0;
				const char *name = NULL;
				int64_t prev = 0, signal = 0, awake = 0, finish = 0;
				if (spa_pod_parse_struct(&p->value, SPA_POD_Int(&id), SPA_POD_String(&name), SPA_POD_Long(&prev),
							 SPA_POD_Long(&signal), SPA_POD_Long(&awake), SPA_POD_Long(&finish),
							 SPA_POD_Int(&status)) >= 0) {
					if ((uint32_t)id == me)
						late = status != ACTIVATION_FINISHED;
					else if (status != ACTIVATION_FINISHED && n_others < 8)
						others[n_others++] = (struct other){ id, status, name };
				}
			}
		}
		if (late && nsec != 0 && L.n_pending < PENDING) L.pending[L.n_pending++] = nsec;
		/* another follower the driver completed this cycle without: a stream there gave the sink nothing this
		 * cycle (its output is silence in the sink's mix), e.g. tabbard's after a graph restart */
		for (int i = 0; i < n_others && nsec != 0; i++)
			printf("incomplete %lld %d %d %s\n", (long long)nsec, others[i].id, others[i].status,
			       others[i].name ? others[i].name : "-");
	}
	resolve();
}

static const struct pw_profiler_events profiler_events = { PW_VERSION_PROFILER_EVENTS, .profile = on_profile };

static void on_global(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version,
		      const struct spa_dict *props)
{
	(void)data; (void)permissions; (void)version; (void)props;
	if (L.profiler != NULL || strcmp(type, PW_TYPE_INTERFACE_Profiler) != 0) return;
	L.profiler = pw_registry_bind(L.registry, id, type, PW_VERSION_PROFILER, 0);
	if (L.profiler == NULL) return;
	pw_proxy_add_object_listener(L.profiler, &L.profiler_listener, &profiler_events, NULL);
	printf("watching profiler\n");
	fflush(stdout);
}

static const struct pw_registry_events registry_events = { PW_VERSION_REGISTRY_EVENTS, .global = on_global };

void late_init(struct pw_loop *loop, struct pw_stream *capture)
{
	L.capture = capture;
	L.context = pw_context_new(loop, NULL, 0);
	if (L.context == NULL) return;
	pw_context_load_module(L.context, PW_EXTENSION_MODULE_PROFILER, NULL, NULL);   /* the interface's marshaller */
	L.core = pw_context_connect(L.context, NULL, 0);
	if (L.core == NULL) { fprintf(stderr, "pwmonitor: no profiler connection: late cycles are not reported\n"); return; }
	L.registry = pw_core_get_registry(L.core, PW_VERSION_REGISTRY, 0);
	pw_registry_add_listener(L.registry, &L.registry_listener, &registry_events, NULL);
}

long late_finish(void)
{
	resolve();
	if (L.profiler) { spa_hook_remove(&L.profiler_listener); pw_proxy_destroy(L.profiler); }
	if (L.registry) { spa_hook_remove(&L.registry_listener); pw_proxy_destroy((struct pw_proxy *)L.registry); }
	if (L.core) pw_core_disconnect(L.core);
	if (L.context) pw_context_destroy(L.context);
	return L.late;
}
