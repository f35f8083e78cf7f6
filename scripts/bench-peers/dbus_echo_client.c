/* The D-Bus peer's caller: makes WARMUP untimed and then COUNT timed blocking calls of
 * org.lsbench.Echo.Echo(s) with a 16-byte string (the size of the bench's socketpair round
 * trip) through the bus named by DBUS_SESSION_BUS_ADDRESS, the way a libdbus client calls a
 * service, and prints each timed call's latency in nanoseconds, one a line, for lsbench to
 * read. Exits non-zero if any call fails or returns something else.
 * With a third argument "sync" (lsbench's throughput rows), after the warm-up it writes "R"
 * on fd 3 and waits there for one byte before the timed calls, so that many clients start
 * together, and first prints a line "FIRST LAST 0": the monotonic times of the first timed
 * call's start and the last one's end.
 * With a third argument "activate" (the D-Bus activation peer; WARMUP must be 0), each of
 * the COUNT samples is one call to a service that is not running, so the bus starts it
 * from its .service file: the client first waits until org.lsbench.Echo has no owner, then
 * times the call until the reply (CLOCK_MONOTONIC, inside this already connected process),
 * then asks the bus for the service's PID (GetConnectionUnixProcessID), sends it SIGTERM
 * and waits until the name is gone again. It prints "NANOSECONDS PID" a line: once the
 * service owns its name, dbus-daemon lets go of the process it started (it is reparented),
 * so lsbench, a child subreaper meanwhile, reaps each by that PID. */
#include <dbus/dbus.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static unsigned long long now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

/* Waits (at most 10 s) until no connection owns org.lsbench.Echo. */
static int wait_until_gone(DBusConnection *connection, DBusError *error) {
    for (int i = 0; i < 100000; i++) {
        dbus_bool_t owned = dbus_bus_name_has_owner(connection, "org.lsbench.Echo", error);
        if (dbus_error_is_set(error)) return 0;
        if (!owned) return 1;
        usleep(100);
    }
    return 0;
}

/* The PID of the process owning org.lsbench.Echo, or 0. */
static unsigned service_pid(DBusConnection *connection, DBusError *error) {
    const char *name = "org.lsbench.Echo";
    dbus_uint32_t pid = 0;
    DBusMessage *call = dbus_message_new_method_call(DBUS_SERVICE_DBUS, DBUS_PATH_DBUS, DBUS_INTERFACE_DBUS, "GetConnectionUnixProcessID");
    if (!call || !dbus_message_append_args(call, DBUS_TYPE_STRING, &name, DBUS_TYPE_INVALID)) return 0;
    DBusMessage *reply = dbus_connection_send_with_reply_and_block(connection, call, 10000, error);
    dbus_message_unref(call);
    if (!reply) return 0;
    if (!dbus_message_get_args(reply, error, DBUS_TYPE_UINT32, &pid, DBUS_TYPE_INVALID)) pid = 0;
    dbus_message_unref(reply);
    return pid;
}

int main(int argc, char **argv) {
    if (argc != 3 && !(argc == 4 && (strcmp(argv[3], "sync") == 0 || strcmp(argv[3], "activate") == 0))) {
        fprintf(stderr, "usage: dbus_echo_client COUNT WARMUP [sync|activate]\n");
        return 2;
    }
    int sync = argc == 4 && strcmp(argv[3], "sync") == 0;
    int activate = argc == 4 && !sync;
    unsigned long long first = 0, last = 0;
    long count = strtol(argv[1], NULL, 10), warmup = strtol(argv[2], NULL, 10);
    DBusError error;
    dbus_error_init(&error);
    DBusConnection *connection = dbus_bus_get(DBUS_BUS_SESSION, &error);
    if (!connection) { fprintf(stderr, "dbus_echo_client: %s\n", error.message); return 1; }
    unsigned long long *samples = calloc((size_t)count, sizeof *samples);
    unsigned *pids = calloc((size_t)count, sizeof *pids);
    if (!samples || !pids) return 1;
    const char *text = "0123456789abcdef";
    for (long i = 0; i < warmup + count; i++) {
        if (sync && i == warmup) {
            char byte = 'R';
            if (write(3, &byte, 1) != 1 || read(3, &byte, 1) != 1) return 1;
        }
        if (activate && !wait_until_gone(connection, &error)) {
            fprintf(stderr, "dbus_echo_client: org.lsbench.Echo still has an owner before call %ld %s\n", i, error.message ? error.message : "");
            return 1;
        }
        unsigned long long start = now();
        if (i == warmup) first = start;
        DBusMessage *call = dbus_message_new_method_call("org.lsbench.Echo", "/org/lsbench/Echo", "org.lsbench.Echo", "Echo");
        if (!call || !dbus_message_append_args(call, DBUS_TYPE_STRING, &text, DBUS_TYPE_INVALID)) return 1;
        DBusMessage *reply = dbus_connection_send_with_reply_and_block(connection, call, 10000, &error);
        dbus_message_unref(call);
        const char *echoed = NULL;
        if (!reply || !dbus_message_get_args(reply, &error, DBUS_TYPE_STRING, &echoed, DBUS_TYPE_INVALID) || strcmp(echoed, text) != 0) {
            fprintf(stderr, "dbus_echo_client: call %ld failed: %s\n", i, error.message ? error.message : "wrong reply");
            return 1;
        }
        dbus_message_unref(reply);
        last = now();
        if (i >= warmup) samples[i - warmup] = last - start;
        if (activate) {
            unsigned pid = service_pid(connection, &error);
            if (i >= warmup) pids[i - warmup] = pid;
            if (pid == 0 || kill((pid_t)pid, SIGTERM) != 0) {
                fprintf(stderr, "dbus_echo_client: cannot stop the activated service (pid %u) %s\n", pid, error.message ? error.message : "");
                return 1;
            }
        }
    }
    if (activate && !wait_until_gone(connection, &error)) {
        fprintf(stderr, "dbus_echo_client: the last activated service did not go away\n");
        return 1;
    }
    if (sync) printf("%llu %llu 0\n", first, last);
    for (long i = 0; i < count; i++) {
        if (activate) printf("%llu %u\n", samples[i], pids[i]);
        else printf("%llu\n", samples[i]);
    }
    return 0;
}
