/* The D-Bus peer of the warm open: a service that owns org.lsbench.Echo on the bus named by
 * DBUS_SESSION_BUS_ADDRESS (the bench's private bus, never the user's) and answers
 * org.lsbench.Echo.Echo(s) with the same string. Written for scripts/bench only; built by it
 * with libdbus, the library most D-Bus services on a desktop use. Prints "ready" once the
 * name is owned, so the bench starts timing only when calls can be answered. Exits when the
 * bus goes away or on SIGTERM. */
#include <dbus/dbus.h>
#include <stdio.h>
#include <string.h>

static DBusHandlerResult handle(DBusConnection *connection, DBusMessage *message, void *unused) {
    (void)unused;
    if (!dbus_message_is_method_call(message, "org.lsbench.Echo", "Echo"))
        return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
    const char *text = NULL;
    DBusMessage *reply;
    if (dbus_message_get_args(message, NULL, DBUS_TYPE_STRING, &text, DBUS_TYPE_INVALID)) {
        reply = dbus_message_new_method_return(message);
        if (reply) dbus_message_append_args(reply, DBUS_TYPE_STRING, &text, DBUS_TYPE_INVALID);
    } else {
        reply = dbus_message_new_error(message, DBUS_ERROR_INVALID_ARGS, "Echo takes one string");
    }
    if (reply) {
        dbus_connection_send(connection, reply, NULL);
        dbus_message_unref(reply);
    }
    return DBUS_HANDLER_RESULT_HANDLED;
}

int main(void) {
    DBusError error;
    dbus_error_init(&error);
    DBusConnection *connection = dbus_bus_get(DBUS_BUS_SESSION, &error);
    if (!connection) { fprintf(stderr, "dbus_echo_service: %s\n", error.message); return 1; }
    dbus_connection_set_exit_on_disconnect(connection, TRUE);
    int owned = dbus_bus_request_name(connection, "org.lsbench.Echo", DBUS_NAME_FLAG_DO_NOT_QUEUE, &error);
    if (owned != DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER) {
        fprintf(stderr, "dbus_echo_service: cannot own org.lsbench.Echo: %s\n", error.message ? error.message : "taken");
        return 1;
    }
    static const DBusObjectPathVTable vtable = { .message_function = handle };
    if (!dbus_connection_register_object_path(connection, "/org/lsbench/Echo", &vtable, NULL)) return 1;
    printf("ready\n");
    fflush(stdout);
    while (dbus_connection_read_write_dispatch(connection, -1)) {}
    return 0;
}
