#ifndef LAUNCHSERVICES_SESSION_BUS_H
#define LAUNCHSERVICES_SESSION_BUS_H
/* The daemon's objects on the session bus (session_bus.c). sd-bus's vtables are C macros and
 * its replies variadic calls, so both are written here; only the daemon links this target
 * (and libsystemd), never lsopen or the apps. */
#include <systemd/sd-bus.h>

/// Which method of org.freedesktop.Application arrived.
enum {
    LS_APPLICATION_ACTIVATE = 1,
    LS_APPLICATION_OPEN = 2,
    LS_APPLICATION_ACTIVATE_ACTION = 3,
};

/// Called on the bus thread for each call of the exported object, its signature already
/// checked by sd-bus. `uris` (NULL-terminated) is set for Open, `action` for ActivateAction;
/// both are freed when it returns. Return 1 when the call was taken (and will be answered
/// later, with `ls_bus_reply_*`), or a negative errno for sd-bus to answer as an error.
typedef int (*ls_application_call)(sd_bus_message *message, void *context, int member, char **uris, const char *action);

/// Exports org.freedesktop.Application at `path` on `bus`; `call` gets every method call
/// with `context`. The slot (released with sd_bus_slot_unref) removes the object.
int ls_bus_add_application(sd_bus *bus, sd_bus_slot **slot, const char *path, ls_application_call call, void *context);

/// An empty method return to `call`.
int ls_bus_reply_empty(sd_bus_message *call);

/// The error `name` with `text` as the reply to `call`.
int ls_bus_reply_error(sd_bus_message *call, const char *name, const char *text);

/// Reads the three strings of a NameOwnerChanged signal (name, old owner, new owner); the
/// pointers live as long as the message.
int ls_bus_read_name_owner_changed(sd_bus_message *message, const char **name, const char **old_owner, const char **new_owner);

/// Reads the `u` reply of RequestName into `result`.
int ls_bus_read_uint32(sd_bus_message *message, uint32_t *result);
#endif
