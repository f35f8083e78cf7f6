#ifndef LAUNCHSERVICES_SHIM_H
#define LAUNCHSERVICES_SHIM_H

#include <stdint.h>
#include <sys/types.h>

/// The layout of Linux's `struct ucred` (SO_PEERCRED), which Glibc's Swift overlay hides.
struct ls_ucred {
    int32_t pid;
    uint32_t uid;
    uint32_t gid;
};

/// SO_PEERCRED of a connected Unix socket. Returns 0, or -1 with errno set.
int ls_peer_credentials(int fd, struct ls_ucred *out);

/// pidfd_open(2): a descriptor that becomes readable when the process exits.
int ls_pidfd_open(pid_t pid);

/// Reaps the process behind a pidfd without blocking. Returns 1 and fills `code` and
/// `signaled` when it has exited, 0 when it still runs, -1 on error.
int ls_pidfd_reap(int pidfd, int *code, int *signaled);

/// Starts an app: `path` with `child_fd` as its fd 3, every other descriptor above 2
/// closed, the signal mask cleared, default dispositions restored, and, before exec,
/// PR_SET_PDEATHSIG set to SIGKILL (the child exits at once if the caller's process is
/// already gone). The death signal fires when the *thread* that called this exits, so call
/// it from a thread that lives as long as the process. Returns 0 and the pid, or an errno
/// value (a failed exec included: the child is reaped).
int ls_spawn_app(pid_t *pid, const char *path, char *const argv[], char *const envp[], int child_fd);

/// `ls_spawn_app`, with `out_fd` and `err_fd` (when not -1) placed at the app's fd 1 and 2
/// instead of the caller's stdout and stderr (the app's log pipe or journal stream). The
/// caller keeps its copies and closes them.
int ls_spawn_app_output(pid_t *pid, const char *path, char *const argv[], char *const envp[], int child_fd, int out_fd, int err_fd);

/// `ls_spawn_app_output`, also returning a pidfd for the child (close-on-exec), taken with
/// the clone itself (CLONE_PIDFD) when `pidfd` is not NULL.
int ls_spawn_app_pidfd(pid_t *pid, int *pidfd, const char *path, char *const argv[], char *const envp[], int child_fd, int out_fd, int err_fd);

/// posix_spawn of `path` with `in_fd`, `out_fd` and `err_fd` as its stdin, stdout and stderr
/// and every other descriptor closed (closefrom 3). Returns 0 and the pid, or an errno value.
int ls_spawn_stdio(pid_t *pid, const char *path, char *const argv[], char *const envp[], int in_fd, int out_fd, int err_fd);

/// Asks the kernel to send `sig` to the calling process when its parent dies
/// (PR_SET_PDEATHSIG), then checks the parent is still `expected_parent`. Returns 0, or -1
/// when the parent is already gone (or prctl failed).
int ls_die_with_parent(int sig, pid_t expected_parent);

/* Makes the calling process a child subreaper (PR_SET_CHILD_SUBREAPER): a process whose
 * parent dies is reparented to it rather than to init. 0 on success, -1 with errno. */
int ls_become_subreaper(void);

/* Sets (on = 1) or clears (on = 0) PR_SET_CHILD_SUBREAPER for the calling process, for a
 * caller that needs it only for a while (lsbench's desktop peers). 0, or -1 with errno. */
int ls_set_subreaper(int on);

/// Sends `sig` to the process behind a pidfd (no pid-reuse race). 0 or -1 with errno.
int ls_pidfd_send_signal(int pidfd, int sig);

/* An eventfd (close-on-exec, non-blocking) that a thread polls to be woken by another
 * (the session bus thread). Glibc's Swift overlay hides eventfd. The descriptor, or -1
 * with errno. */
int ls_wake_fd(void);

/* pipe2(2) with O_CLOEXEC: both ends made close-on-exec in the call (glibc declares pipe2
 * only under _GNU_SOURCE). Returns 0, or -1 with errno set. */
int ls_pipe_cloexec(int fds[2]);

/* Names the calling thread (PR_SET_NAME: at most 15 bytes are kept), as ps and gdb show it.
 * 0, or -1 with errno. */
int ls_name_thread(const char *name);

/* The app watch thread's epoll (`AppWatchThread`): registrations carry a 64-bit token
 * instead of a descriptor, so an event that arrives for a registration already removed
 * (its descriptor number perhaps reused) finds nothing. Glibc's packed `struct epoll_event`
 * stays on this side. Each returns 0 (`ls_epoll_wait`: the number of events), or -1 with
 * errno. `readable` false registers the descriptor disarmed (no events until armed). */
int ls_epoll_create(void);
int ls_epoll_add(int epoll_fd, int fd, uint64_t token, int readable);
int ls_epoll_arm(int epoll_fd, int fd, uint64_t token, int readable);
int ls_epoll_remove(int epoll_fd, int fd);
int ls_epoll_wait_tokens(int epoll_fd, uint64_t *tokens, int capacity, int timeout_ms);

/* CPU affinity for the bench's machine rows (lsbench pins an echo pair to one CPU, then to
 * two). `cpu_set_t` and its macros are not visible from Swift, so the mask travels as
 * LS_CPU_MASK_BYTES opaque bytes. Each returns 0, or -1 with errno. */
#define LS_CPU_MASK_BYTES 128
int ls_affinity_get(pid_t pid, unsigned char *mask);
int ls_affinity_set(pid_t pid, const unsigned char *mask);
/* Restricts `pid` (0: the calling thread) to `cpu` alone. */
int ls_affinity_pin(pid_t pid, int cpu);
/* The `index`-th CPU set in `mask` (counting from 0), or -1 when it has fewer. */
int ls_affinity_nth(const unsigned char *mask, int index);

#endif
