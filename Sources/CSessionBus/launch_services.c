#include "session_bus.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The project's own interface (org.swift_launch_services.LaunchServices1); its methods,
 * property and signal are documented in docs/dbus/org.swift_launch_services.LaunchServices1.xml,
 * and a test holds the introspection of this vtable to that file. */

struct ls_service_object {
    ls_service_call call;
    void *context;
    char *version;
};

static int take(sd_bus_message *m, void *userdata, int member, const char *argument) {
    struct ls_service_object *object = userdata;
    return object->call(m, object->context, member, argument, NULL, 0, 0);
}

static int on_url_method(sd_bus_message *m, void *userdata, int member) {
    const char *url = NULL;
    int r = sd_bus_message_read_basic(m, 's', &url);
    if (r < 0) return r;
    return take(m, userdata, member, url);
}

/* Reads Open's a{sv}: up to LS_BUS_MAXIMUM_OPTIONS entries (a string or boolean value each,
 * else its signature only), the rest only counted. */
static int on_open(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    struct ls_service_object *object = userdata;
    const char *url = NULL;
    int r = sd_bus_message_read_basic(m, 's', &url);
    if (r < 0) return r;
    ls_bus_option options[LS_BUS_MAXIMUM_OPTIONS];
    size_t count = 0, total = 0;
    r = sd_bus_message_enter_container(m, 'a', "{sv}");
    if (r < 0) return r;
    while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
        const char *key = NULL;
        r = sd_bus_message_read_basic(m, 's', &key);
        if (r < 0) return r;
        char type = 0;
        const char *contents = NULL;
        r = sd_bus_message_peek_type(m, &type, &contents);
        if (r < 0) return r;
        total++;
        if (count < LS_BUS_MAXIMUM_OPTIONS) {
            ls_bus_option *option = &options[count++];
            memset(option, 0, sizeof *option);
            option->key = key;
            option->signature = contents ? contents : "";
            if (contents && strcmp(contents, "s") == 0) {
                r = sd_bus_message_read(m, "v", "s", &option->string);
                if (r < 0) return r;
                r = sd_bus_message_exit_container(m);
                if (r < 0) return r;
                continue;
            }
            if (contents && strcmp(contents, "b") == 0) {
                r = sd_bus_message_read(m, "v", "b", &option->boolean);
                if (r < 0) return r;
                r = sd_bus_message_exit_container(m);
                if (r < 0) return r;
                continue;
            }
        }
        r = sd_bus_message_skip(m, "v");
        if (r < 0) return r;
        r = sd_bus_message_exit_container(m);
        if (r < 0) return r;
    }
    if (r < 0) return r;
    r = sd_bus_message_exit_container(m);
    if (r < 0) return r;
    return object->call(m, object->context, LS_SERVICE_OPEN, url, options, count, total);
}

static int on_can_open(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    return on_url_method(m, userdata, LS_SERVICE_CAN_OPEN);
}

static int on_explain(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    return on_url_method(m, userdata, LS_SERVICE_EXPLAIN);
}

static int on_quit(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    return on_url_method(m, userdata, LS_SERVICE_QUIT);
}

static int on_apps(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    return take(m, userdata, LS_SERVICE_APPS, NULL);
}

static int on_running(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    return take(m, userdata, LS_SERVICE_RUNNING, NULL);
}

static int on_history(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    return take(m, userdata, LS_SERVICE_HISTORY, NULL);
}

static int get_version(sd_bus *bus, const char *path, const char *interface, const char *property, sd_bus_message *reply, void *userdata,
                       sd_bus_error *error) {
    (void)bus; (void)path; (void)interface; (void)property; (void)error;
    struct ls_service_object *object = userdata;
    return sd_bus_message_append_basic(reply, 's', object->version);
}

static const sd_bus_vtable service_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("Version", "s", get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_METHOD_WITH_ARGS("Open", SD_BUS_ARGS("s", url, "a{sv}", options), SD_BUS_RESULT("a{sv}", answer), on_open, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("CanOpen", SD_BUS_ARGS("s", url), SD_BUS_RESULT("b", can_open), on_can_open, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Explain", SD_BUS_ARGS("s", url), SD_BUS_RESULT("a{sv}", explanation), on_explain, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Apps", SD_BUS_NO_ARGS, SD_BUS_RESULT("aa{sv}", apps), on_apps, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Running", SD_BUS_NO_ARGS, SD_BUS_RESULT("aa{sv}", running), on_running, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("History", SD_BUS_NO_ARGS, SD_BUS_RESULT("aa{sv}", opens), on_history, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Quit", SD_BUS_ARGS("s", id), SD_BUS_RESULT("a{sv}", report), on_quit, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_SIGNAL_WITH_ARGS("AppStateChanged", SD_BUS_ARGS("s", id, "s", state, "u", pid), 0),
    SD_BUS_VTABLE_END
};

static void free_service(void *userdata) {
    struct ls_service_object *object = userdata;
    free(object->version);
    free(object);
}

int ls_bus_add_service(sd_bus *bus, sd_bus_slot **slot, const char *path, const char *interface, const char *version, ls_service_call call,
                       void *context) {
    struct ls_service_object *object = calloc(1, sizeof *object);
    if (!object) return -ENOMEM;
    object->version = strdup(version);
    if (!object->version) {
        free(object);
        return -ENOMEM;
    }
    object->call = call;
    object->context = context;
    int r = sd_bus_add_object_vtable(bus, slot, path, interface, service_vtable, object);
    if (r < 0) {
        free_service(object);
        return r;
    }
    sd_bus_slot_set_destroy_callback(*slot, free_service);
    return r;
}
