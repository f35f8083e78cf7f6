/* The session-bus row's caller: one libdbus connection to the bus named by
 * DBUS_SESSION_BUS_ADDRESS makes two kinds of blocking calls, timed inside this process
 * (CLOCK_MONOTONIC, from before the message is built until the reply is read and checked):
 *
 *   echo  org.lsbench.Echo.Echo(s) with a 16-byte string to the running C echo service,
 *         exactly as dbus_echo_client calls it (the baseline);
 *   open  org.swift_launch_services.LaunchServices1.Open(s URL, a{sv} {}) to launchservicesd
 *         with URL = PREFIX + N (a new URL each call), answered when the app has handled the
 *         URL; the answer must say opened=true, app=APP and launched=false (the app was
 *         already running: a warm open).
 *
 * Usage: dbus_ls_open_client COUNT WARMUP BLOCK PREFIX APP
 * It first waits (at most 10 s) until both names have an owner, makes WARMUP untimed calls
 * of each kind, then COUNT timed calls of each in alternating blocks of BLOCK (echo first,
 * then open, then open first, …), so a shared machine's load falls on both alike and each
 * runs as warm as in a loop of its own. Prints "echo NANOSECONDS" and "open NANOSECONDS"
 * lines, in the order taken. Exits non-zero, with the reason on stderr, if any call fails
 * or answers something else. */
#include <dbus/dbus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LS_NAME "org.swift_launch_services.LaunchServices"
#define LS_PATH "/org/swift_launch_services/LaunchServices"
#define LS_INTERFACE "org.swift_launch_services.LaunchServices1"

static unsigned long long now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

/* Waits (at most 10 s) until NAME has an owner. */
static int wait_for_owner(DBusConnection *connection, const char *name, DBusError *error) {
    for (int i = 0; i < 100000; i++) {
        dbus_bool_t owned = dbus_bus_name_has_owner(connection, name, error);
        if (dbus_error_is_set(error)) return 0;
        if (owned) return 1;
        usleep(100);
    }
    return 0;
}

/* One Echo call; 1 when the same string came back. */
static int echo(DBusConnection *connection, DBusError *error) {
    const char *text = "0123456789abcdef";
    DBusMessage *call = dbus_message_new_method_call("org.lsbench.Echo", "/org/lsbench/Echo", "org.lsbench.Echo", "Echo");
    if (!call || !dbus_message_append_args(call, DBUS_TYPE_STRING, &text, DBUS_TYPE_INVALID)) return 0;
    DBusMessage *reply = dbus_connection_send_with_reply_and_block(connection, call, 10000, error);
    dbus_message_unref(call);
    const char *echoed = NULL;
    int ok = reply && dbus_message_get_args(reply, error, DBUS_TYPE_STRING, &echoed, DBUS_TYPE_INVALID) && strcmp(echoed, text) == 0;
    if (reply) dbus_message_unref(reply);
    return ok;
}

/* Reads Open's answer (a{sv}): 1 when opened is true, app is APP and launched is false. */
static int check_answer(DBusMessage *reply, const char *app, char *why, size_t size) {
    DBusMessageIter top, array, entry, variant;
    int opened = 0, same_app = 0, launched = -1;
    if (!dbus_message_iter_init(reply, &top) || dbus_message_iter_get_arg_type(&top) != DBUS_TYPE_ARRAY) {
        snprintf(why, size, "the answer is not a{sv} (signature %s)", dbus_message_get_signature(reply));
        return 0;
    }
    dbus_message_iter_recurse(&top, &array);
    while (dbus_message_iter_get_arg_type(&array) == DBUS_TYPE_DICT_ENTRY) {
        const char *key = NULL;
        dbus_message_iter_recurse(&array, &entry);
        dbus_message_iter_get_basic(&entry, &key);
        dbus_message_iter_next(&entry);
        dbus_message_iter_recurse(&entry, &variant);
        int type = dbus_message_iter_get_arg_type(&variant);
        if (strcmp(key, "opened") == 0 && type == DBUS_TYPE_BOOLEAN) {
            dbus_bool_t value;
            dbus_message_iter_get_basic(&variant, &value);
            opened = value != 0;
        } else if (strcmp(key, "launched") == 0 && type == DBUS_TYPE_BOOLEAN) {
            dbus_bool_t value;
            dbus_message_iter_get_basic(&variant, &value);
            launched = value != 0;
        } else if (strcmp(key, "app") == 0 && type == DBUS_TYPE_STRING) {
            const char *value = NULL;
            dbus_message_iter_get_basic(&variant, &value);
            same_app = strcmp(value, app) == 0;
        }
        dbus_message_iter_next(&array);
    }
    if (!opened || !same_app || launched != 0) {
        snprintf(why, size, "the answer says opened=%d, app %s, launched=%d", opened, same_app ? app : "another", launched);
        return 0;
    }
    return 1;
}

/* One Open call of PREFIX + N; 1 when the answer is a warm open by APP. */
static int open_url(DBusConnection *connection, const char *prefix, long n, const char *app, DBusError *error, char *why, size_t size) {
    char url[512];
    snprintf(url, sizeof url, "%s%ld", prefix, n);
    const char *text = url;
    DBusMessage *call = dbus_message_new_method_call(LS_NAME, LS_PATH, LS_INTERFACE, "Open");
    if (!call) return 0;
    DBusMessageIter args, options;
    dbus_message_iter_init_append(call, &args);
    if (!dbus_message_iter_append_basic(&args, DBUS_TYPE_STRING, &text)
        || !dbus_message_iter_open_container(&args, DBUS_TYPE_ARRAY, "{sv}", &options)
        || !dbus_message_iter_close_container(&args, &options)) {
        dbus_message_unref(call);
        return 0;
    }
    DBusMessage *reply = dbus_connection_send_with_reply_and_block(connection, call, 10000, error);
    dbus_message_unref(call);
    if (!reply) return 0;
    int ok = check_answer(reply, app, why, size);
    dbus_message_unref(reply);
    return ok;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: dbus_ls_open_client COUNT WARMUP BLOCK PREFIX APP\n");
        return 2;
    }
    long count = strtol(argv[1], NULL, 10), warmup = strtol(argv[2], NULL, 10), block = strtol(argv[3], NULL, 10);
    const char *prefix = argv[4], *app = argv[5];
    if (count < 1 || warmup < 0 || block < 1) {
        fprintf(stderr, "dbus_ls_open_client: COUNT and BLOCK must be at least 1, WARMUP at least 0\n");
        return 2;
    }
    DBusError error;
    dbus_error_init(&error);
    char why[256] = "";
    DBusConnection *connection = dbus_bus_get(DBUS_BUS_SESSION, &error);
    if (!connection) { fprintf(stderr, "dbus_ls_open_client: %s\n", error.message); return 1; }
    const char *names[] = {"org.lsbench.Echo", LS_NAME};
    for (int i = 0; i < 2; i++) {
        if (!wait_for_owner(connection, names[i], &error)) {
            fprintf(stderr, "dbus_ls_open_client: %s has no owner after 10 s %s\n", names[i], error.message ? error.message : "");
            return 1;
        }
    }
    unsigned long long *samples = calloc((size_t)count * 2, sizeof *samples);
    char *kinds = calloc((size_t)count * 2, 1);
    if (!samples || !kinds) return 1;
    long taken = 0, opened = 0;
    for (long i = 0; i < warmup; i++) {
        if (!echo(connection, &error) || !open_url(connection, prefix, opened++, app, &error, why, sizeof why)) {
            fprintf(stderr, "dbus_ls_open_client: warm-up call %ld failed: %s\n", i, error.message ? error.message : why);
            return 1;
        }
    }
    for (long start = 0, number = 0; start < count; start += block, number++) {
        long end = start + block < count ? start + block : count;
        for (int side = 0; side < 2; side++) {
            int is_open = (number % 2 == 0) ? side == 1 : side == 0;
            for (long i = start; i < end; i++) {
                unsigned long long began = now();
                int ok = is_open ? open_url(connection, prefix, opened++, app, &error, why, sizeof why) : echo(connection, &error);
                unsigned long long took = now() - began;
                if (!ok) {
                    fprintf(stderr, "dbus_ls_open_client: %s call %ld failed: %s\n", is_open ? "Open" : "Echo", i, error.message ? error.message : (why[0] ? why : "wrong reply"));
                    return 1;
                }
                samples[taken] = took;
                kinds[taken++] = is_open;
            }
        }
    }
    for (long i = 0; i < taken; i++) printf("%s %llu\n", kinds[i] ? "open" : "echo", samples[i]);
    return 0;
}
