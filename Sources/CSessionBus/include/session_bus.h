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

/// Which method of the project's interface (launch_services.c) arrived.
enum {
    LS_SERVICE_OPEN = 1,
    LS_SERVICE_CAN_OPEN = 2,
    LS_SERVICE_EXPLAIN = 3,
    LS_SERVICE_APPS = 4,
    LS_SERVICE_RUNNING = 5,
    LS_SERVICE_HISTORY = 6,
    LS_SERVICE_QUIT = 7,
};

/// Entries of Open's options read, at most; more are only counted.
#define LS_BUS_MAXIMUM_OPTIONS 16

/// One entry of Open's a{sv}: `signature` is the variant's; `string` is set for "s",
/// `boolean` for "b". The pointers live as long as the message.
typedef struct {
    const char *key;
    const char *signature;
    const char *string;
    int boolean;
} ls_bus_option;

/// Called on the bus thread for each call of the project's interface, its signature checked
/// by sd-bus. `argument` is the method's string (Open's and CanOpen's url, Quit's id), else
/// NULL; for Open, `options` holds `count` entries of the `total` the dictionary had. Return 1
/// when the call was taken, or a negative errno for sd-bus to answer as an error.
typedef int (*ls_service_call)(sd_bus_message *message, void *context, int member, const char *argument, const ls_bus_option *options,
                               size_t count, size_t total);

/// Exports `interface` (the project's) at `path` on `bus`, its Version property `version`.
int ls_bus_add_service(sd_bus *bus, sd_bus_slot **slot, const char *path, const char *interface, const char *version, ls_service_call call,
                       void *context);
#endif
