#ifndef LAUNCHSERVICES_DESKTOP_LAUNCH_H
#define LAUNCHSERVICES_DESKTOP_LAUNCH_H

#include <stdint.h>
#include <sys/types.h>

/* Starting desktop apps as the user's processes, not the daemon's (desktop_launch.c). */

/// One process of a desktop launch.
struct ls_desktop_process {
    /// What to exec (no PATH search: the caller resolved it).
    const char *path;
    char *const *argv;
    char *const *envp;
    /// The child's descriptors 0 to 3: -1 at 0-2 means /dev/null, at 3 none.
    int fds[4];
    /// The working directory, or NULL for the caller's.
    const char *directory;
    /// The index in `envp` of an entry `NAME=` followed by 20 placeholder characters that the
    /// child overwrites with its own pid (GIO_LAUNCHED_DESKTOP_FILE_PID), or -1.
    int pid_env_index;
    /// 1: SIGPIPE stays ignored across exec (the stderr forwarder: a reader of its copy that
    /// went away, the daemon, costs it that output, never its life); 0: every signal at its default.
    int ignore_sigpipe;
};

enum {
    /// The app runs: `pid`, `forwarder_pid` (0 if none), `value` = errno of a forwarder that
    /// failed to start (the app's stderr then went to `app_stderr_fallback`), and the app's
    /// pidfd travels with the message (SCM_RIGHTS).
    LS_DESKTOP_STARTED = 1,
    /// Nothing runs the app: `value` = errno, `stage` = LS_DESKTOP_STAGE_*.
    LS_DESKTOP_FAILED = 2,
    /// The app exited within the grace: `value` = its wait status (as waitpid reports it).
    LS_DESKTOP_EXITED = 3,
    /// The grace ended with the app alive; the waiter has let it go.
    LS_DESKTOP_DETACHED = 4,
};

enum {
    LS_DESKTOP_STAGE_WAITER = 1,
    LS_DESKTOP_STAGE_SETUP = 2,
    LS_DESKTOP_STAGE_CHDIR = 3,
    LS_DESKTOP_STAGE_EXEC = 4,
};

/// One message of the waiter (SOCK_SEQPACKET: one report per message).
struct ls_desktop_report {
    int32_t kind;
    int32_t pid;
    int32_t forwarder_pid;
    int32_t value;
    int32_t stage;
};

/// Starts `app` (and first `forwarder`, when not NULL: the process that carries the app's
/// stderr on) through a short-lived waiter process that is the caller's sibling
/// (CLONE_PARENT), in a session of its own. The waiter starts them as its children, reports
/// on `report_fd` (one end of a SOCK_SEQPACKET socketpair, which the waiter alone keeps
/// open), watches the app for `grace_ms`, reports EXITED (with the status, the app left
/// unreaped) or DETACHED, and exits: the app is then reparented to the caller's parent's
/// nearest subreaper or to init, never to the caller. Nothing the app starts is ever the
/// caller's descendant, so a caller that is a child subreaper neither adopts nor ends it.
///
/// The waiter gets a copy of the caller's memory and descriptors (a fork without exec); it
/// closes every descriptor it does not pass on and calls only system calls. `sibling` is set
/// to 1, or to 0 when the caller is the init of its PID namespace (or a sanitizer build),
/// where the waiter is the caller's own child. Returns 0 and the waiter's pid, or an errno
/// value. The caller closes its copies of every descriptor it passed.
int ls_desktop_launch(const struct ls_desktop_process *app, const struct ls_desktop_process *forwarder, int app_stderr_fallback,
                      int report_fd, int grace_ms, pid_t *waiter, int *sibling);

/// Reads one report from the waiter without blocking. Returns 1 with `report` filled (and
/// `pidfd` set to the app's pidfd, close-on-exec, for STARTED; else -1), 0 when none is
/// waiting, -1 when the waiter is gone (end of stream) or on error.
int ls_desktop_read_report(int fd, struct ls_desktop_report *report, int *pidfd);

/// The wait status of the process behind `pidfd`, which has exited (the pidfd polled
/// readable) and which the caller need not be the parent of. Linux 6.15 and later keep it
/// with the pidfd even once the parent reaped the process (PIDFD_INFO_EXIT); before, it is
/// read from /proc/PID/stat while the process is a zombie, and confirmed through the pidfd
/// so a reused pid is never read. Returns 1 and `status`, or 0 when it cannot be known (an
/// older kernel whose parent reaped the process first).
int ls_pidfd_exit_status(int pidfd, pid_t pid, int *status);

/// Whether this build starts desktop apps as siblings (0 in sanitizer builds, which fork).
int ls_desktop_launch_uses_siblings(void);

#endif
