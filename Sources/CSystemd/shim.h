#ifndef LAUNCHSERVICES_CSYSTEMD_H
#define LAUNCHSERVICES_CSYSTEMD_H
/* libsystemd, as the daemon uses it: readiness/status/watchdog notifications, socket
 * activation, structured journal entries, and sd-bus for the user manager's transient
 * scopes (only sd-bus's non-variadic calls work from Swift). */
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <sys/uio.h>

/* SD_LISTEN_FDS_START is a macro; give Swift a constant. */
static const int ls_sd_listen_fds_start = SD_LISTEN_FDS_START;
#endif
