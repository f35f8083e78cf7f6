#define _GNU_SOURCE
#include "shim.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

int ls_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

int ls_peer_credentials(int fd, struct ls_ucred *out) {
    struct ucred cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
    out->pid = cred.pid;
    out->uid = cred.uid;
    out->gid = cred.gid;
    return 0;
}

int ls_pidfd_open(pid_t pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

int ls_pidfd_reap(int pidfd, int *code, int *signaled) {
    siginfo_t info;
    memset(&info, 0, sizeof(info));
    if (waitid((idtype_t)P_PIDFD, (id_t)pidfd, &info, WEXITED | WNOHANG) != 0) return -1;
    if (info.si_pid == 0) return 0;
    if (info.si_code == CLD_EXITED) {
        *code = info.si_status;
        *signaled = 0;
    } else {
        *code = info.si_status;
        *signaled = 1;
    }
    return 1;
}

int ls_pidfd_send_signal(int pidfd, int sig) {
    return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

/* The child starts with no blocked signals and every disposition at its default, whatever
 * the parent blocked or ignored (NIO ignores SIGPIPE; test runners block others). */
static int ls_reset_signals(posix_spawnattr_t *attr) {
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    int rc = posix_spawnattr_setsigmask(attr, &none);
    if (rc == 0) rc = posix_spawnattr_setsigdefault(attr, &all);
    if (rc == 0) rc = posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    return rc;
}

int ls_spawn_stdio(pid_t *pid, const char *path, char *const argv[], char *const envp[], int in_fd, int out_fd, int err_fd) {
    posix_spawn_file_actions_t actions;
    int rc = posix_spawn_file_actions_init(&actions);
    if (rc != 0) return rc;
    rc = posix_spawn_file_actions_adddup2(&actions, in_fd, 0);
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
    if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    posix_spawnattr_t attr;
    int attr_rc = posix_spawnattr_init(&attr);
    if (rc == 0) rc = attr_rc;
    if (rc == 0) rc = ls_reset_signals(&attr);
    if (rc == 0) rc = posix_spawnp(pid, path, &actions, &attr, argv, envp);
    if (attr_rc == 0) posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
    return rc;
}

int ls_die_with_parent(int sig, pid_t expected_parent) {
    if (prctl(PR_SET_PDEATHSIG, sig) != 0) return -1;
    /* The parent may have died before prctl: then the signal will never come. */
    if (getppid() != expected_parent) return -1;
    return 0;
}

int ls_become_subreaper(void) {
    return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

int ls_set_subreaper(int on) {
    return prctl(PR_SET_CHILD_SUBREAPER, on ? 1 : 0, 0, 0, 0);
}

int ls_wake_fd(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

int ls_name_thread(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

_Static_assert(sizeof(cpu_set_t) == LS_CPU_MASK_BYTES, "cpu_set_t is LS_CPU_MASK_BYTES bytes");

int ls_affinity_get(pid_t pid, unsigned char *mask) {
    return sched_getaffinity(pid, sizeof(cpu_set_t), (cpu_set_t *)mask);
}

int ls_affinity_set(pid_t pid, const unsigned char *mask) {
    return sched_setaffinity(pid, sizeof(cpu_set_t), (const cpu_set_t *)mask);
}

int ls_affinity_pin(pid_t pid, int cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return sched_setaffinity(pid, sizeof(one), &one);
}

int ls_affinity_nth(const unsigned char *mask, int index) {
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (CPU_ISSET(cpu, (const cpu_set_t *)mask) && index-- == 0) return cpu;
    }
    return -1;
}

int ls_epoll_create(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

int ls_epoll_add(int epoll_fd, int fd, uint64_t token, int readable) {
    struct epoll_event event = {.events = readable ? EPOLLIN : 0, .data = {.u64 = token}};
    return epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event);
}

int ls_epoll_arm(int epoll_fd, int fd, uint64_t token, int readable) {
    struct epoll_event event = {.events = readable ? EPOLLIN : 0, .data = {.u64 = token}};
    return epoll_ctl(epoll_fd, EPOLL_CTL_MOD, fd, &event);
}

int ls_epoll_remove(int epoll_fd, int fd) {
    return epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, NULL);
}

int ls_epoll_wait_tokens(int epoll_fd, uint64_t *tokens, int capacity, int timeout_ms) {
    struct epoll_event events[64];
    if (capacity > 64) capacity = 64;
    /* Interrupted: no events; the caller works out its timeout again. */
    int n = epoll_wait(epoll_fd, events, capacity, timeout_ms);
    if (n < 0 && errno == EINTR) return 0;
    for (int i = 0; i < n; i++) tokens[i] = events[i].data.u64;
    return n;
}
