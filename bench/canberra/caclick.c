/*
 * caclick — libcanberra as a desktop application uses it for event sounds: one context, the sample cached
 * once (in the sound server: the pulse backend uploads it), then one ca_context_play per event.
 *
 * Usage: caclick FILE.wav      then one line on stdin per click; for each it prints
 *   t NS          CLOCK_MONOTONIC just before ca_context_play (the request time)
 *   err MESSAGE   when ca_context_play failed
 * Prints "ready DRIVER" once the context is open and the sample cached. The benchmark (bench/sink) reads
 * the onsets at the sink with pwmonitor. Build: cc caclick.c $(pkg-config --cflags --libs libcanberra)
 */
#include <canberra.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
	if (argc != 2) { fprintf(stderr, "usage: caclick FILE.wav\n"); return 2; }
	ca_context *c;
	int r = ca_context_create(&c);
	if (r == 0) r = ca_context_change_props(c, CA_PROP_APPLICATION_NAME, "tabbard-bench", NULL);
	if (r == 0) r = ca_context_open(c);
	if (r == 0) r = ca_context_cache(c, CA_PROP_EVENT_ID, "tabbard-bench-click", CA_PROP_MEDIA_FILENAME, argv[1],
					 CA_PROP_CANBERRA_CACHE_CONTROL, "permanent", NULL);
	if (r != 0) { printf("err %s\n", ca_strerror(r)); return 1; }
	printf("ready\n");
	fflush(stdout);
	char line[64];
	uint32_t id = 0;
	while (fgets(line, sizeof line, stdin)) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		r = ca_context_play(c, ++id, CA_PROP_EVENT_ID, "tabbard-bench-click", CA_PROP_MEDIA_FILENAME, argv[1],
				    CA_PROP_CANBERRA_CACHE_CONTROL, "permanent", NULL);
		if (r == 0) printf("t %lld\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
		else printf("err %s\n", ca_strerror(r));
		fflush(stdout);
	}
	ca_context_destroy(c);
	return 0;
}
