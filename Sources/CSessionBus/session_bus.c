#include "session_bus.h"
#include <errno.h>
#include <stdlib.h>

struct ls_application_object {
    ls_application_call call;
    void *context;
};

static void free_strv(char **strv) {
    if (!strv) return;
    for (char **p = strv; *p; p++) free(*p);
    free(strv);
}

static int on_activate(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    struct ls_application_object *object = userdata;
    return object->call(m, object->context, LS_APPLICATION_ACTIVATE, NULL, NULL);
}

static int on_open(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    struct ls_application_object *object = userdata;
    char **uris = NULL;
    int r = sd_bus_message_read_strv(m, &uris);
    if (r < 0) return r;
    /* platform_data (a{sv}) is the window system's; nothing here uses it. */
    r = object->call(m, object->context, LS_APPLICATION_OPEN, uris, NULL);
    free_strv(uris);
    return r;
}

static int on_activate_action(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    struct ls_application_object *object = userdata;
    const char *action = NULL;
    int r = sd_bus_message_read_basic(m, 's', &action);
    if (r < 0) return r;
    return object->call(m, object->context, LS_APPLICATION_ACTIVATE_ACTION, NULL, action);
}

/* The interface as the Desktop Entry specification defines it; the argument names are the
 * specification's, so introspection shows them. */
static const sd_bus_vtable application_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD_WITH_ARGS("Activate", SD_BUS_ARGS("a{sv}", platform_data), SD_BUS_NO_RESULT, on_activate, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Open", SD_BUS_ARGS("as", uris, "a{sv}", platform_data), SD_BUS_NO_RESULT, on_open, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("ActivateAction", SD_BUS_ARGS("s", action_name, "av", parameter, "a{sv}", platform_data), SD_BUS_NO_RESULT,
                            on_activate_action, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_VTABLE_END
};

int ls_bus_add_application(sd_bus *bus, sd_bus_slot **slot, const char *path, ls_application_call call, void *context) {
    struct ls_application_object *object = malloc(sizeof *object);
    if (!object) return -ENOMEM;
    object->call = call;
    object->context = context;
    int r = sd_bus_add_object_vtable(bus, slot, path, "org.freedesktop.Application", application_vtable, object);
    if (r < 0) {
        free(object);
        return r;
    }
    /* The object's memory goes with its slot. */
    sd_bus_slot_set_destroy_callback(*slot, free);
    return r;
}

int ls_bus_reply_empty(sd_bus_message *call) {
    return sd_bus_reply_method_return(call, NULL);
}

int ls_bus_reply_error(sd_bus_message *call, const char *name, const char *text) {
    sd_bus_error error = SD_BUS_ERROR_MAKE_CONST(name, text);
    return sd_bus_reply_method_error(call, &error);
}

int ls_bus_read_name_owner_changed(sd_bus_message *message, const char **name, const char **old_owner, const char **new_owner) {
    int r = sd_bus_message_read_basic(message, 's', name);
    if (r >= 0) r = sd_bus_message_read_basic(message, 's', old_owner);
    if (r >= 0) r = sd_bus_message_read_basic(message, 's', new_owner);
    return r;
}

int ls_bus_read_uint32(sd_bus_message *message, uint32_t *result) {
    return sd_bus_message_read_basic(message, 'u', result);
}
