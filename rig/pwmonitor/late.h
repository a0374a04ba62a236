/* late.h — the cycles PipeWire handed on without waiting for pwmonitor (late.c). */
#ifndef PWMONITOR_LATE_H
#define PWMONITOR_LATE_H
#include <stdint.h>
#include <pipewire/pipewire.h>

/* Binds PipeWire's profiler on a connection of its own (main loop thread); prints "watching profiler". */
void late_init(struct pw_loop *loop, struct pw_stream *capture);
/* Data thread: a buffer of the cycle that started at `now` begins at dump frame `frame`. */
void late_record(int64_t now, uint64_t frame);
/* At exit, after the capture stopped: prints what is still pending; returns how many late cycles it printed. */
long late_finish(void);
#endif
