/*
 * fbdclient: the benchmark's feedbackd client — one long-lived D-Bus
 * connection (sd-bus) that calls org.sigxcpu.Feedback.TriggerFeedback on
 * command and timestamps it. It must stay connected: feedbackd ends every
 * event whose caller leaves the bus, so a one-shot `gdbus call` cancels its
 * own sound before it is played.
 *
 * usage: fbdclient BUS_ADDRESS APP_ID
 *
 * On start it waits (up to 10 s) until org.sigxcpu.Feedback has an owner on
 * the bus (it never auto-starts it), then prints "ready". Then, one command
 * per line on stdin, one answer line each on stdout:
 *
 *   trigger EVENT  ->  ok T0_NS T1_NS ID        T0: CLOCK_MONOTONIC right before
 *                                               the call is sent; T1: reply read
 *                      err T0_NS MESSAGE
 *   end ID         ->  ended ID T_NS           EndFeedback(ID) sent, then waits up
 *                                               to 5 s for the FeedbackEnded signal
 *                      ended ID -1             (it did not come)
 *   wait ID MS     ->  same as end, without calling EndFeedback first
 *
 * Build: cc -O2 -o fbdclient fbdclient.c -lsystemd
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <systemd/sd-bus.h>

#define SERVICE "org.sigxcpu.Feedback"
#define PATH "/org/sigxcpu/Feedback"
#define IFACE "org.sigxcpu.Feedback"

static unsigned long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* Ids of events whose FeedbackEnded arrived (a small ring is plenty: one event at a time). */
static unsigned ended_ids[64];
static unsigned ended_n;

static int on_ended(sd_bus_message *m, void *userdata, sd_bus_error *err) {
    (void)userdata; (void)err;
    unsigned id = 0, reason = 0;
    if (sd_bus_message_read(m, "uu", &id, &reason) >= 0) ended_ids[ended_n++ % 64] = id;
    return 0;
}

static int seen_ended(unsigned id) {
    unsigned n = ended_n < 64 ? ended_n : 64;
    for (unsigned k = 0; k < n; k++)
        if (ended_ids[k] == id) return 1;
    return 0;
}

static int wait_ended(sd_bus *bus, unsigned id, unsigned long long timeout_ms) {
    unsigned long long deadline = now_ns() + timeout_ms * 1000000ull;
    while (!seen_ended(id)) {
        int r = sd_bus_process(bus, NULL);
        if (r < 0) return r;
        if (r > 0) continue;
        unsigned long long now = now_ns();
        if (now >= deadline) return 0;
        r = sd_bus_wait(bus, (deadline - now) / 1000);
        if (r < 0 && r != -EINTR) return r;
    }
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: fbdclient BUS_ADDRESS APP_ID\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *app = argv[2];
    sd_bus *bus = NULL;
    int r = sd_bus_new(&bus);
    if (r >= 0) r = sd_bus_set_address(bus, argv[1]);
    if (r >= 0) r = sd_bus_set_bus_client(bus, 1);
    if (r >= 0) r = sd_bus_start(bus);
    if (r < 0) {
        printf("err 0 cannot connect to %s: %s\n", argv[1], strerror(-r));
        return 1;
    }
    r = sd_bus_match_signal(bus, NULL, SERVICE, PATH, IFACE, "FeedbackEnded", on_ended, NULL);
    if (r < 0) {
        printf("err 0 AddMatch FeedbackEnded: %s\n", strerror(-r));
        return 1;
    }

    unsigned long long deadline = now_ns() + 10000000000ull;
    for (;;) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        int has = 0;
        r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "NameHasOwner", &e, &reply, "s", SERVICE);
        if (r >= 0) sd_bus_message_read(reply, "b", &has);
        sd_bus_message_unref(reply);
        sd_bus_error_free(&e);
        if (has) break;
        if (now_ns() > deadline) {
            printf("err 0 %s did not appear on the bus within 10 s\n", SERVICE);
            return 1;
        }
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    printf("ready\n");

    char line[512];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        if (strncmp(line, "trigger ", 8) == 0) {
            const char *event = line + 8;
            sd_bus_message *m = NULL, *reply = NULL;
            sd_bus_error e = SD_BUS_ERROR_NULL;
            r = sd_bus_message_new_method_call(bus, &m, SERVICE, PATH, IFACE, "TriggerFeedback");
            if (r >= 0) r = sd_bus_message_set_auto_start(m, 0);
            if (r >= 0) r = sd_bus_message_append(m, "ssa{sv}i", app, event, 0, -1);
            if (r < 0) {
                printf("err 0 building the call: %s\n", strerror(-r));
                sd_bus_message_unref(m);
                continue;
            }
            unsigned long long t0 = now_ns();
            r = sd_bus_call(bus, m, 5000000, &e, &reply);
            unsigned long long t1 = now_ns();
            unsigned id = 0;
            if (r >= 0 && sd_bus_message_read(reply, "u", &id) >= 0) {
                printf("ok %llu %llu %u\n", t0, t1, id);
            } else {
                printf("err %llu %s: %s\n", t0, e.name ? e.name : "error", e.message ? e.message : strerror(-r));
            }
            sd_bus_error_free(&e);
            sd_bus_message_unref(reply);
            sd_bus_message_unref(m);
        } else if (strncmp(line, "end ", 4) == 0 || strncmp(line, "wait ", 5) == 0) {
            int end = line[0] == 'e';
            unsigned id = 0;
            unsigned long long ms = 5000;
            if (end) sscanf(line + 4, "%u", &id);
            else sscanf(line + 5, "%u %llu", &id, &ms);
            if (end && !seen_ended(id)) {
                sd_bus_error e = SD_BUS_ERROR_NULL;
                r = sd_bus_call_method(bus, SERVICE, PATH, IFACE, "EndFeedback", &e, NULL, "u", id);
                sd_bus_error_free(&e); /* already ended: feedbackd answers with an error; the signal decides */
            }
            r = wait_ended(bus, id, ms);
            if (r > 0) printf("ended %u %llu\n", id, now_ns());
            else printf("ended %u -1\n", id);
        } else if (line[0]) {
            printf("err 0 unknown command\n");
        }
    }
    sd_bus_flush_close_unref(bus);
    return 0;
}
