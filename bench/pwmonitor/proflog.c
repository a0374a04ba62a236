/*
 * proflog — every sample of PipeWire's profiler (module-profiler, what pw-top reads), one line each, for lining
 * up with pwmonitor's --cycles trace (docs/PERFORMANCE.md, "Two probes"):
 *     C NSEC POSITION DURATION | DRIVER_ID NAME PREV_SIGNAL SIGNAL AWAKE FINISH STATUS | ID NAME PREV SIGNAL AWAKE FINISH STATUS ...
 * (CLOCK_MONOTONIC ns; the driver block first, then one block per follower; STATUS 3 = finished, 2 = awake,
 * 1 = triggered). Runs until killed. Build: cc -O2 -o proflog proflog.c $(pkg-config --cflags --libs libpipewire-0.3)
 */
#include <stdio.h>
#include <string.h>
#include <spa/pod/parser.h>
#include <spa/param/profiler.h>
#include <pipewire/pipewire.h>
#include <pipewire/impl.h>
#include <pipewire/extensions/profiler.h>
static struct pw_registry *reg; static struct pw_proxy *prof; static struct spa_hook rl, pl;
static void on_profile(void *data, const struct spa_pod *pod) {
	struct spa_pod *o;
	SPA_POD_STRUCT_FOREACH(pod, o) {
		if (!spa_pod_is_object_type(o, SPA_TYPE_OBJECT_Profiler)) continue;
		struct spa_pod_prop *p;
		SPA_POD_OBJECT_FOREACH((struct spa_pod_object *)o, p) {
			if (p->key == SPA_PROFILER_clock) {
				int32_t f, id; const char *n; int64_t nsec, pos, dur; struct spa_fraction r;
				spa_pod_parse_struct(&p->value, SPA_POD_Int(&f), SPA_POD_Int(&id), SPA_POD_String(&n), SPA_POD_Long(&nsec), SPA_POD_Fraction(&r), SPA_POD_Long(&pos), SPA_POD_Long(&dur));
				printf("C %lld %lld %lld", (long long)nsec, (long long)pos, (long long)dur);
			} else if (p->key == SPA_PROFILER_driverBlock || p->key == SPA_PROFILER_followerBlock) {
				int32_t id, st; const char *n; int64_t prev, sig, aw, fin;
				spa_pod_parse_struct(&p->value, SPA_POD_Int(&id), SPA_POD_String(&n), SPA_POD_Long(&prev), SPA_POD_Long(&sig), SPA_POD_Long(&aw), SPA_POD_Long(&fin), SPA_POD_Int(&st));
				printf(" | %d %s %lld %lld %lld %lld %d", id, n ? n : "?", (long long)prev, (long long)sig, (long long)aw, (long long)fin, st);
			}
		}
		printf("\n");
	}
	fflush(stdout);
}
static const struct pw_profiler_events pe = { PW_VERSION_PROFILER_EVENTS, .profile = on_profile };
static void on_global(void *d, uint32_t id, uint32_t perm, const char *type, uint32_t v, const struct spa_dict *props) {
	if (prof || strcmp(type, PW_TYPE_INTERFACE_Profiler)) return;
	prof = pw_registry_bind(reg, id, type, PW_VERSION_PROFILER, 0);
	pw_proxy_add_object_listener(prof, &pl, &pe, NULL);
}
static const struct pw_registry_events re = { PW_VERSION_REGISTRY_EVENTS, .global = on_global };
int main(int argc, char **argv) {
	pw_init(&argc, &argv);
	struct pw_main_loop *ml = pw_main_loop_new(NULL);
	struct pw_context *ctx = pw_context_new(pw_main_loop_get_loop(ml), NULL, 0);
	pw_context_load_module(ctx, PW_EXTENSION_MODULE_PROFILER, NULL, NULL);
	struct pw_core *core = pw_context_connect(ctx, NULL, 0);
	reg = pw_core_get_registry(core, PW_VERSION_REGISTRY, 0);
	pw_registry_add_listener(reg, &rl, &re, NULL);
	pw_main_loop_run(ml);
	return 0;
}
